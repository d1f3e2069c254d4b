/*
 * The jobs page (#/jobs): the newest jobs with their state and progress,
 * filtered by state (the API) and by name or submitter (here), with older
 * ones on request; refreshed every 5 s.
 */
"use strict";

function jobRow(j) {
  const by = j.tasks_by_state || {};
  return `<tr data-job="${j.id}"><td><a href="#/job/${j.id}">${j.id}</a></td><td><a href="#/job/${j.id}">${esc(j.name)}</a></td>
    <td>${esc(j.family)}</td><td>${badge("state", j.state)}</td>
    <td class="job-progress">${jobProgress(by, j.task_count)}</td>
    <td class="small">${["queued", "leased", "done", "dead", "cancelled"].filter((s) => by[s]).map((s) => s + " " + by[s]).join(", ")}</td>
    <td>${esc(j.submitted_by)}</td><td title="${esc(j.created_at)}">${esc(age(j.created_at))}</td>
    <td><a href="#/report/${j.id}">report</a></td></tr>`;
}

async function jobsPage() {
  const q = hashQuery();
  pageEl().innerHTML = `<h1>Jobs</h1>
    <div class="toolbar">
      <label>State <select id="state-filter"><option value="">any</option>
        ${["queued", "running", "done", "failed", "cancelled"].map((s) => `<option${q.get("state") === s ? " selected" : ""}>${s}</option>`).join("")}
      </select></label>
      <label>Name or submitter <input id="text-filter" value="${esc(q.get("q") || "")}" placeholder="filter"></label>
      <a href="#/submit">Submit a job</a> <a href="#/compare">Compare two jobs</a>
    </div>
    <div class="scroll"><table id="jobs"><thead><tr><th>id</th><th>name</th><th>family</th><th>state</th><th>progress</th>
    <th>tasks</th><th>submitter</th><th>age</th><th></th></tr></thead><tbody></tbody></table></div>
    <div class="toolbar"><button id="older" hidden>Older jobs</button></div>`;
  let jobs = [], next = null;
  const render = () => {
    const text = $("#text-filter").value.trim().toLowerCase();
    const shown = jobs.filter((j) => !text || j.name.toLowerCase().includes(text) || String(j.submitted_by).toLowerCase().includes(text));
    $("#jobs tbody").innerHTML = shown.map(jobRow).join("") || `<tr><td colspan="9" class="muted">No jobs.</td></tr>`;
    $("#older").hidden = !next;
  };
  const load = async () => {
    const state = $("#state-filter").value;
    const r = await api("/api/v1/jobs?limit=100" + (state ? "&state=" + state : ""));
    const older = jobs.filter((j) => !r.jobs.some((x) => x.id === j.id) && r.jobs.length && j.id < r.jobs[r.jobs.length - 1].id);
    jobs = r.jobs.concat(older);
    if (!older.length) next = r.next_before;
    render();
  };
  const setQuery = () => {
    const p = new URLSearchParams();
    if ($("#state-filter").value) p.set("state", $("#state-filter").value);
    if ($("#text-filter").value.trim()) p.set("q", $("#text-filter").value.trim());
    history.replaceState(null, "", "#/jobs" + (p.toString() ? "?" + p : ""));
  };
  $("#state-filter").addEventListener("change", async () => { setQuery(); jobs = []; await load(); });
  $("#text-filter").addEventListener("input", () => { setQuery(); render(); });
  $("#older").addEventListener("click", async () => {
    const state = $("#state-filter").value;
    const r = await api(`/api/v1/jobs?limit=100&before=${next}` + (state ? "&state=" + state : ""));
    jobs = jobs.concat(r.jobs);
    next = r.next_before;
    render();
  });
  await load();
  poll(load, 5000);
}
