/*
 * The job page (#/job/ID): the job's state and progress, why its queued
 * tasks wait, its failures, every task and the normalized spec; a program
 * job's files and modules (program.js). Polled while the job runs. It
 * names each task's agent (by name, linked to its row on the fleet page)
 * and the job's series and revision (linked to the series page).
 */
"use strict";

/* Agent id -> name, for the tasks' agent column: fetched once per page
 * (GET /api/v1/agents), again only when a task names an agent not in it,
 * at most every 30 s; a poll of the job stays one request. */
function agentNames() {
  let names = new Map(), fetchedAt = 0;
  return async (ids) => {
    if (ids.every((id) => names.has(id)) || Date.now() - fetchedAt < 30000) return names;
    fetchedAt = Date.now();
    const { agents } = await api("/api/v1/agents");
    names = new Map(agents.map((a) => [a.id, a.name]));
    return names;
  };
}

/* An agent by name, linked to its row on the fleet page ("#7" when the
 * name is not known). */
function agentLink(id, names) {
  if (!id) return "";
  return `<a class="agent-link" href="#/fleet?agent=${id}" title="agent ${id}">${esc(names.get(id) || "#" + id)}</a>`;
}

/* What the phase column says: the phase a leased task reports; for a task
 * that ended, nothing (its state says it), but where a dead one died. */
function taskPhase(t) {
  if (!t.phase) return "";
  if (t.state === "leased") return esc(t.phase);
  return t.state === "dead" ? `<span class="muted small">died in ${esc(t.phase)}</span>` : "";
}

async function jobPage(id) {
  pageEl().innerHTML = `<h1>Job ${id} <span id="job-name"></span> <span id="job-state"></span></h1>
    <div class="toolbar"><span id="job-progress"></span><a href="#/report/${id}">Report</a>
      <a href="#/compare?candidate=${id}">Compare with…</a> <a href="#/jobs">All jobs</a>
      <button id="cancel-job" hidden>Cancel job</button><span class="error" id="job-error"></span></div>
    <div class="card small" id="job-meta"></div>
    <div id="waiting"></div>
    <div id="failures"></div>
    <div id="program"></div>
    <h2>Tasks</h2>
    <div class="toolbar"><label>Show <select id="task-filter"><option value="">all</option>
      <option>queued</option><option>leased</option><option>done</option><option>dead</option><option>cancelled</option></select></label>
      <span class="muted small" id="task-count"></span></div>
    <div class="scroll"><table id="tasks"><thead><tr><th>task</th><th>cell</th><th>state</th><th>attempt</th><th>agent</th>
      <th>phase</th><th>progress</th><th>lease / retry</th><th>last error</th></tr></thead><tbody></tbody></table></div>
    <details><summary>Normalized spec</summary><pre id="job-spec"></pre></details>`;
  let lastRows = null;
  let job = null;
  const namesOf = agentNames();
  const draw = async () => {
    job = await api("/api/v1/jobs/" + id);
    const builds = job.builds || [];
    const ids = [...new Set(job.tasks.concat(builds).map((t) => t.agent_id).filter((x) => x))];
    const names = ids.length ? await namesOf(ids).catch(() => new Map()) : new Map();
    const series = job.spec.series, revision = job.spec.revision;
    const builders = [...new Set(builds.map((b) => b.agent_id).filter((x) => x))];
    $("#job-name").textContent = job.name;
    $("#job-state").innerHTML = badge("state", job.state);
    $("#job-progress").innerHTML = jobProgress(job.tasks_by_state || {}, job.task_count);
    $("#job-meta").innerHTML = `family <b>${esc(job.family)}</b> · submitted by ${esc(job.submitted_by)} ${esc(age(job.created_at))} ·
      ${series ? `series <a id="job-series" href="${esc(seriesHref(series))}">${esc(series)}</a> · ` : ""}
      ${revision ? `revision ${series ? `<a id="job-revision" href="${esc(seriesHref(series))}" title="the series' jobs by revision">${esc(revision)}</a>` : esc(revision)} · ` : ""}
      ${builders.length ? `built by ${builders.map((a) => agentLink(a, names)).join(", ")} · ` : ""}
      priority ${job.priority} · variants ${job.spec.variants.map((v) => esc(v.name || v)).join(", ")} ·
      measure ${esc(Object.keys(job.spec.measure || {}).join(", "))}`;
    $("#cancel-job").hidden = !["queued", "running"].includes(job.state);
    /* Why queued tasks wait (TASK.waiting): one line per reason. */
    const waiting = new Map();
    for (const t of job.tasks) {
      if (!t.waiting || t.waiting.could_run || !t.waiting.reason) continue;
      waiting.set(t.waiting.reason, (waiting.get(t.waiting.reason) || []).concat(t.id));
    }
    $("#waiting").innerHTML = waiting.size ? `<h2>Waiting</h2><ul id="waiting-list">${[...waiting].map(([reason, ids]) =>
      `<li><span class="error">${esc(reason)}</span> <span class="muted small">(task${ids.length === 1 ? "" : "s"} ${ids.join(", ")})</span></li>`).join("")}</ul>` : "";
    const failures = job.tasks.filter((t) => t.last_error);
    $("#failures").innerHTML = failures.length ? `<h2>Failures (${failures.length})</h2><div class="scroll" style="max-height:14em"><table id="failure-list">
      <tbody>${failures.map((t) => `<tr><td>task ${t.id}</td><td>${esc(cellKey(t.cell))}</td><td>${badge("state", t.state)}</td>
      <td class="error">${esc(t.last_error)}</td></tr>`).join("")}</tbody></table></div>` : "";
    const filter = $("#task-filter").value;
    const tasks = filter ? job.tasks.filter((t) => t.state === filter) : job.tasks;
    $("#task-count").textContent = `${tasks.length} of ${plural(job.tasks.length, "task")}`;
    /* One string for all rows: a 1,000-task job redraws in one DOM write. */
    const rows = tasks.map((t) => `<tr data-task="${t.id}"><td>${t.id}</td><td>${esc(cellKey(t.cell))}</td>
      <td class="task-state">${badge("state", t.state)}</td><td class="num">${t.attempt}</td><td class="task-agent">${agentLink(t.agent_id, names)}</td>
      <td class="task-phase">${taskPhase(t)}</td>
      <td class="task-percent">${t.percent === null || t.percent === undefined ? "" : t.state === "cancelled" ? `<span class="muted small">cancelled at ${t.percent} %</span>` : progressBar(t.percent, 100) + t.percent + " %"}</td>
      <td class="small">${esc(t.lease_expires_at || (t.retry_at ? "retry " + t.retry_at : "") ||
        (t.waiting && t.waiting.reason ? "waits: " + t.waiting.reason : ""))}</td>
      <td class="error small">${esc(t.last_error || "")}</td></tr>`).join("");
    if (rows !== lastRows) {
      $("#tasks tbody").innerHTML = rows || `<tr><td colspan="9" class="muted">No tasks.</td></tr>`;
      lastRows = rows;
    }
    if (!$("#job-spec").textContent) $("#job-spec").textContent = JSON.stringify(job.spec, null, 2);
    if (job.family === "program") await programSection(job); /* web/program.js */
    return ["queued", "running"].includes(job.state);
  };
  $("#task-filter").addEventListener("change", () => { lastRows = null; draw(); });
  $("#cancel-job").addEventListener("click", async () => {
    if (!confirm(`Cancel job ${id}? Leased tasks are told at their next heartbeat.`)) return;
    try { await api(`/api/v1/jobs/${id}/cancel`, { method: "POST", body: {} }); await draw(); }
    catch (e) { $("#job-error").textContent = e.message; }
  });
  await draw();
  poll(draw, 1500);
}
