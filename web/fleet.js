/*
 * The fleet page (#/fleet): every agent with its state, facts, labels,
 * last contact, current task and last calibration (calibration.js), and
 * the admin's label and quarantine buttons; refreshed every 5 s.
 */
"use strict";

/* Task id -> {job, phase, percent} for the tasks that agents hold now,
 * from the running jobs (one request per running job, not per agent). */
async function heldTasks(agents) {
  const held = new Map();
  if (!agents.some((a) => a.current_task)) return held;
  const running = await api("/api/v1/jobs?state=running&limit=20");
  const jobs = await Promise.all(running.jobs.map((j) => api("/api/v1/jobs/" + j.id)));
  for (const job of jobs)
    for (const t of job.tasks) held.set(t.id, { job: job.id, phase: t.phase, percent: t.percent });
  return held;
}

/* Facts whose "key=value" is longer than this fold behind a disclosure
 * ("+2 long facts", e.g. toolchain_paths=/usr/bin/...): the short ones
 * (os, arch, disk, runner...) stay in sight and no fact sets the table's
 * width. */
const FACT_SHOWN_CHARS = 24;

/* A fact or label as a chip (HTML): a short one never breaks, a long one
 * ("chip long") breaks anywhere, so that no chip sets its column's width. */
function agentChip([k, v]) {
  const text = `${k}=${Array.isArray(v) ? v.join(",") : v}`;
  return `<span class="chip${text.length > FACT_SHOWN_CHARS ? " long" : ""}">${esc(text)}</span>`;
}

/* AGENT's facts as chips: the short ones, then the long ones in a
 * <details> that opens in place (HTML). */
function factsCell(agent) {
  const chip = agentChip;
  const text = ([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : v}`;
  const all = Object.entries(agent.facts || {});
  const short = all.filter((f) => text(f).length <= FACT_SHOWN_CHARS), long = all.filter((f) => text(f).length > FACT_SHOWN_CHARS);
  return short.map(chip).join("") + (long.length ? `<details class="facts-long"><summary>+${plural(long.length, "long fact")}</summary>` +
    `${long.map(chip).join("")}</details>` : "");
}

/* "loadlabd 0.3.0; agents: 0.3.0 ×2, 0.2.0 ×1" (agent_version: the
 * version an agent reports; "unknown" for those that report none). */
function fleetVersions(daemonVersion, agents) {
  const counts = new Map();
  for (const a of agents) {
    const v = a.agent_version || "unknown";
    counts.set(v, (counts.get(v) || 0) + 1);
  }
  const list = [...counts].sort((x, y) => y[1] - x[1]).map(([v, n]) => `${v} ×${n}`).join(", ");
  return `loadlabd ${daemonVersion || "?"}` + (agents.length ? `; agents: ${list}` : "");
}

async function fleetPage() {
  pageEl().innerHTML = `<h1>Fleet</h1>
    <div class="toolbar"><span class="muted" id="fleet-summary"></span>
    <span class="muted small" id="fleet-versions"></span>
    <span class="muted small">Refreshed every 5 s. Labels, quarantine and the builder mark need the admin token.</span></div>
    <div class="scroll"><table id="agents"><thead><tr><th>id</th><th>name</th><th>state</th><th>facts</th>
    <th>labels</th><th>last seen</th><th>current task</th><th>calibration</th><th>admin</th></tr></thead><tbody></tbody></table></div>
    <p class="error" id="fleet-error"></p>`;
  let drawn = "";
  /* #/fleet?agent=ID (the job page's agent links): that row is marked and
   * scrolled to once. */
  const wanted = hashQuery().get("agent");
  let shown = false;
  const draw = async () => {
    const { agents, daemon_version: daemonVersion } = await api("/api/v1/agents");
    const held = await heldTasks(agents).catch(() => new Map());
    $("#fleet-versions").textContent = fleetVersions(daemonVersion, agents);
    const count = (s) => agents.filter((a) => a.state === s).length;
    $("#fleet-summary").textContent = `${plural(agents.length, "agent")}: ${count("online")} online, ` +
      `${count("offline")} offline, ${count("quarantined")} quarantined`;
    const editing = document.activeElement && document.activeElement.closest("#agents input");
    if (editing) return; /* do not redraw under someone typing labels */
    /* Rows are drawn again only when something in them changed (not
     * under a reader's pointer every 5 s); the "last seen" ages, which
     * change every poll, are written into the rows in place. */
    const tbody = $("#agents tbody");
    const rows = agents.map((a) => {
      const labels = Object.entries(a.labels || {}).map(agentChip).join("");
      let task = `<span class="muted">idle</span>`;
      if (a.current_task) {
        const h = held.get(a.current_task);
        task = h ? `<a href="#/job/${h.job}">task ${a.current_task}</a> (job ${h.job}) ${esc(h.phase || "")} ` +
          (h.percent !== null && h.percent !== undefined ? progressBar(h.percent, 100) + h.percent + " %" : "")
          : `task ${a.current_task}`;
      }
      const quarantined = a.state === "quarantined";
      return `<tr data-agent="${a.id}"><td>${a.id}</td><td class="agent-name">${esc(a.name)}</td>
        <td>${badge("state", a.state)}${a.builder ? ` <span class="badge builder" title="an admin marked it a builder: it builds pe and elf jobs' programs (docs/builds.md)">builder</span>` : ""}</td>
        <td class="agent-facts">${factsCell(a)}</td><td>${labels}</td>
        <td class="agent-seen"></td><td>${task}</td>
        <td>${calibrationCell(a) /* web/calibration.js */}</td>
        <td class="agent-admin"><input class="label-edit" placeholder="key=value, key=" aria-label="labels for ${esc(a.name)}">
        <button class="label-save" data-id="${a.id}">Set labels</button>
        <button class="quarantine" data-id="${a.id}" data-on="${quarantined ? 0 : 1}">${quarantined ? "Release" : "Quarantine"}</button>
        <button class="builder-mark" data-id="${a.id}" data-on="${a.builder ? 0 : 1}" title="${a.builder ? "stop leasing build tasks to it" : "let it lease build tasks: its programs run on every measuring agent (docs/builds.md)"}">${a.builder ? "Unmark builder" : "Mark builder"}</button></td></tr>`;
    }).join("") || `<tr><td colspan="9" class="muted">No agent has enrolled yet.</td></tr>`;
    if (drawn !== rows || !tbody.firstElementChild) {
      tbody.innerHTML = rows;
      drawn = rows;
    }
    const row = wanted && tbody.querySelector(`tr[data-agent="${CSS.escape(wanted)}"]`);
    if (row && !shown) {
      row.classList.add("wanted");
      row.scrollIntoView({ block: "center" });
      shown = true;
    }
    for (const a of agents) {
      const seen = tbody.querySelector(`tr[data-agent="${a.id}"] .agent-seen`);
      if (!seen) continue;
      seen.textContent = age(a.last_seen);
      seen.title = a.last_seen || "";
    }
  };
  $("#agents").addEventListener("click", async (ev) => {
    const b = ev.target.closest("button");
    if (!b) return;
    const body = {};
    if (b.classList.contains("quarantine")) {
      body.quarantined = b.dataset.on === "1";
    } else if (b.classList.contains("builder-mark")) {
      body.builder = b.dataset.on === "1";
    } else {
      const text = b.parentElement.querySelector("input").value.trim();
      if (!text) return;
      body.labels = {};
      for (const part of text.split(",")) {
        const [k, ...rest] = part.split("=");
        if (!k.trim()) continue;
        const v = rest.join("=").trim();
        body.labels[k.trim()] = v === "" ? null : v;
      }
    }
    try {
      await api("/api/v1/agents/" + b.dataset.id, { method: "PATCH", body });
      $("#fleet-error").textContent = "";
      document.activeElement.blur();
      await draw();
    } catch (e) {
      $("#fleet-error").textContent = e.message;
    }
  });
  await draw();
  poll(draw, 5000);
}
