/*
 * The loadlab dashboard: one page, views chosen by the URL hash (#/fleet,
 * #/jobs, #/job/ID, #/submit, #/report/ID, #/compare?..., #/series,
 * #/series/NAME, #/schedules, #/alerts), all
 * drawn from the public REST API (/api/v1). Charts use echarts, embedded
 * into loadlabd from web/node_modules at build time.
 */
"use strict";

const TOKEN_KEY = "loadlab.token";
const PE_PRESETS = ["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind", "reorder", "no-rebase"];
const ELF_PRESETS = ["default", "now", "relr", "hidden", "symbolic", "symbolic+relr", "reorder", "sysv-hash"];
const DLL_SETS = ["none", "user32", "user32+gdi32", "generated"];
const KEY_RE = /^[a-z][a-z0-9_]{0,31}$/;

/* ------------------------------------------------------------ utilities */

const $ = (sel, root = document) => root.querySelector(sel);
const pageEl = () => document.getElementById("page");

/* "1 agent", "2 agents". */
function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function esc(v) {
  return String(v === null || v === undefined ? "" : v)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/* Numbers as the tables show them; the tests format the API's figures the
 * same way (tests/web/dashboard.test.mjs). */
function us(v, unit) {
  if (typeof v !== "number") return "";
  return unit === "ms" ? (v / 1000).toFixed(2) : v.toFixed(1);
}
/* The unit rule of every output (docs/cli.md "Units"; common's
 * report_text.h): a table in one unit, ms when its largest duration is
 * 10 ms or more, else µs. The report names each table's unit; compare's
 * table is measured here. */
function unitOf(largestUs) { return largestUs >= 10000 ? "ms" : "us"; }
function unitLabel(unit) { return unit === "ms" ? "ms" : "µs"; }
function pct(v) { return typeof v === "number" ? (v > 0 ? "+" : "") + v.toFixed(2) + " %" : ""; }
function ratio(v) { return typeof v === "number" ? v.toFixed(4) : ""; }
function pval(v) {
  if (typeof v !== "number") return "";
  return v !== 0 && v < 0.001 ? v.toExponential(1) : v.toFixed(3);
}
function bytes(v) {
  if (typeof v !== "number") return "";
  if (v >= 1 << 20) return (v / (1 << 20)).toFixed(1) + " MiB";
  if (v >= 1 << 10) return (v / (1 << 10)).toFixed(1) + " KiB";
  return v + " B";
}
function badge(kind, value) { return `<span class="badge ${kind}-${esc(value)}">${esc(value)}</span>`; }
function progressBar(done, total) {
  const p = total ? Math.round((100 * done) / total) : 0;
  return `<span class="bar" title="${p} %"><span style="width:${p}%"></span></span>`;
}
/* A job's tasks: the bar fills with the done ones (and the dead ones, in
 * red); cancelled tasks never ran, so they leave the bar empty and are
 * only counted in the text ("1/4 done, 3 cancelled"). */
function jobProgress(by, total) {
  const done = by.done || 0, dead = by.dead || 0, cancelled = by.cancelled || 0;
  const w = (n) => (total ? Math.round((100 * n) / total) : 0);
  const text = `${done}/${total} done` + (dead ? `, ${dead} dead` : "") + (cancelled ? `, ${cancelled} cancelled` : "");
  return `<span class="bar" title="${esc(text)}"><span class="done" style="width:${w(done)}%"></span>` +
    `<span class="dead" style="width:${w(dead)}%"></span></span><span class="progress-text">${esc(text)}</span>`;
}
function age(time) {
  if (!time) return "never";
  const s = Math.max(0, (Date.now() - Date.parse(time)) / 1000);
  if (s < 60) return Math.round(s) + " s ago";
  if (s < 3600) return Math.round(s / 60) + " min ago";
  if (s < 86400) return (s / 3600).toFixed(1) + " h ago";
  return (s / 86400).toFixed(1) + " d ago";
}
function cellKey(cell) { return Object.entries(cell || {}).map(([k, v]) => k + "=" + v).join(" ") || "(any agent)"; }
function hashQuery() {
  const h = location.hash, i = h.indexOf("?");
  return new URLSearchParams(i < 0 ? "" : h.slice(i + 1));
}

/* ------------------------------------------------------------------ API */

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

/* The token lives for the tab (sessionStorage) unless the user ticked
 * "remember on this browser" (localStorage, kept after the tab closes). */
function token() { return sessionStorage.getItem(TOKEN_KEY) || localStorage.getItem(TOKEN_KEY) || ""; }
function tokenRemembered() { return !sessionStorage.getItem(TOKEN_KEY) && !!localStorage.getItem(TOKEN_KEY); }

async function api(path, options = {}) {
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = "Bearer " + token();
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, {
    method: options.method || "GET", headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (!r.ok) {
    const err = body && body.error ? body.error : { code: "http_" + r.status, message: r.statusText };
    if (r.status === 401 && !options.quiet) askForToken(err.message);
    throw new ApiError(r.status, err.code, err.message);
  }
  return body;
}

function askForToken(message) {
  showError((token() ? "The token was refused: " : "This daemon needs a token: ") + message +
    " Paste one (DATA_DIR/admin.token, or one the admin made) above.");
  $("#token").focus();
}

function showError(message) { document.getElementById("global-error").textContent = message || ""; }

/* ---------------------------------------------------------------- router */

let pollTimer = null;
let charts = [];
let renderSerial = 0;

function poll(fn, ms) {
  const serial = renderSerial;
  const tick = async () => {
    if (serial !== renderSerial) return;
    try { await fn(); } catch (e) { if (!(e instanceof ApiError)) console.warn(e); }
    if (serial === renderSerial) pollTimer = setTimeout(tick, ms);
  };
  pollTimer = setTimeout(tick, ms);
}

function chart(el) {
  const c = echarts.init(el, null, { renderer: "canvas" });
  charts.push(c);
  return c;
}

const routes = [
  [/^#\/fleet$/, "fleet", () => fleetPage()],
  [/^#\/jobs$/, "jobs", () => jobsPage()],
  [/^#\/job\/(\d+)$/, "jobs", (m) => jobPage(+m[1])],
  [/^#\/submit$/, "submit", () => submitPage()],
  [/^#\/report\/(\d+)$/, "jobs", (m) => reportPage(+m[1])],
  [/^#\/compare$/, "compare", () => comparePage()],
  [/^#\/series$/, "series", () => seriesListPage()],
  [/^#\/series\/(.+)$/, "series", (m) => seriesPage(decodeURIComponent(m[1]))],
  [/^#\/schedules$/, "schedules", () => schedulesPage()],
  [/^#\/alerts$/, "alerts", () => alertsPage()],
  [/^#\/bisections\/(\d+)$/, "alerts", (m) => bisectionPage(+m[1])],
];

async function route() {
  renderSerial++;
  clearTimeout(pollTimer);
  charts.forEach((c) => c.dispose());
  charts = [];
  showError("");
  const full = location.hash || "#/fleet";
  const path = full.split("?")[0];
  refreshAlertCount();
  for (const [re, nav, fn] of routes) {
    const m = path.match(re);
    if (!m) continue;
    document.querySelectorAll("#nav a").forEach((a) => a.classList.toggle("active", a.dataset.page === nav));
    pageEl().innerHTML = `<p class="muted">Loading…</p>`;
    const serial = renderSerial;
    try {
      await fn(m);
    } catch (e) {
      /* A page left while it still awaited the API finds its elements
       * gone (the next page's are there): that failure is not the next
       * page's, and must not overwrite it. */
      if (serial !== renderSerial) return;
      if (!(e instanceof ApiError)) console.warn(e);
      pageEl().innerHTML = `<p class="error">Could not load this page: ${esc(e.message)}</p>`;
    }
    return;
  }
  location.hash = "#/fleet";
}

window.addEventListener("hashchange", route);
setInterval(refreshAlertCount, 30000);
window.addEventListener("resize", () => charts.forEach((c) => c.resize()));

/* ----------------------------------------------------------------- fleet */

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
    <span class="muted small">Refreshed every 5 s. Labels and quarantine need the admin token.</span></div>
    <div class="scroll"><table id="agents"><thead><tr><th>id</th><th>name</th><th>state</th><th>facts</th>
    <th>labels</th><th>last seen</th><th>current task</th><th>calibration</th><th>admin</th></tr></thead><tbody></tbody></table></div>
    <p class="error" id="fleet-error"></p>`;
  let drawn = "";
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
      const facts = Object.entries(a.facts || {}).map(([k, v]) => `<span class="chip">${esc(k)}=${esc(Array.isArray(v) ? v.join(",") : v)}</span>`).join("");
      const labels = Object.entries(a.labels || {}).map(([k, v]) => `<span class="chip">${esc(k)}=${esc(v)}</span>`).join("");
      let task = `<span class="muted">idle</span>`;
      if (a.current_task) {
        const h = held.get(a.current_task);
        task = h ? `<a href="#/job/${h.job}">task ${a.current_task}</a> (job ${h.job}) ${esc(h.phase || "")} ` +
          (h.percent !== null && h.percent !== undefined ? progressBar(h.percent, 100) + h.percent + " %" : "")
          : `task ${a.current_task}`;
      }
      const quarantined = a.state === "quarantined";
      return `<tr data-agent="${a.id}"><td>${a.id}</td><td class="agent-name">${esc(a.name)}</td>
        <td>${badge("state", a.state)}</td><td>${facts}</td><td>${labels}</td>
        <td class="agent-seen"></td><td>${task}</td>
        <td>${calibrationCell(a) /* web/calibration.js */}</td>
        <td><input class="label-edit" size="14" placeholder="key=value, key=" aria-label="labels for ${esc(a.name)}">
        <button class="label-save" data-id="${a.id}">Set labels</button>
        <button class="quarantine" data-id="${a.id}" data-on="${quarantined ? 0 : 1}">${quarantined ? "Release" : "Quarantine"}</button></td></tr>`;
    }).join("") || `<tr><td colspan="9" class="muted">No agent has enrolled yet.</td></tr>`;
    if (drawn !== rows || !tbody.firstElementChild) {
      tbody.innerHTML = rows;
      drawn = rows;
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

/* ------------------------------------------------------------------ jobs */

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

/* ------------------------------------------------------------------- job */

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
  const draw = async () => {
    job = await api("/api/v1/jobs/" + id);
    $("#job-name").textContent = job.name;
    $("#job-state").innerHTML = badge("state", job.state);
    $("#job-progress").innerHTML = jobProgress(job.tasks_by_state || {}, job.task_count);
    $("#job-meta").innerHTML = `family <b>${esc(job.family)}</b> · submitted by ${esc(job.submitted_by)} ${esc(age(job.created_at))} ·
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
    $("#task-count").textContent = `${tasks.length} of ${job.tasks.length} tasks`;
    /* One string for all rows: a 1,000-task job redraws in one DOM write. */
    const rows = tasks.map((t) => `<tr data-task="${t.id}"><td>${t.id}</td><td>${esc(cellKey(t.cell))}</td>
      <td class="task-state">${badge("state", t.state)}</td><td class="num">${t.attempt}</td><td>${t.agent_id || ""}</td>
      <td class="task-phase">${esc(t.phase || "")}</td>
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

/* ---------------------------------------------------------------- submit */

/* KEY -> sorted values, from the agents' string facts and labels. */
function fleetKeys(agents) {
  const keys = new Map();
  const add = (k, v) => {
    if (!KEY_RE.test(k) || (typeof v !== "string" && typeof v !== "number") || String(v).length === 0 || String(v).length > 64) return;
    if (!keys.has(k)) keys.set(k, new Set());
    keys.get(k).add(String(v));
  };
  for (const a of agents) {
    for (const [k, v] of Object.entries(a.facts || {})) add(k, v);
    for (const [k, v] of Object.entries(a.labels || {})) add(k, v);
  }
  return new Map([...keys.entries()].sort().map(([k, s]) => [k, [...s].sort()]));
}

function agentHas(agent, key, value) {
  const f = agent.facts && agent.facts[key], l = agent.labels && agent.labels[key];
  return (f !== undefined && String(f) === value) || (l !== undefined && l === value);
}

async function submitPage() {
  const { agents } = await api("/api/v1/agents");
  const keys = fleetKeys(agents);
  pageEl().innerHTML = `<h1>Submit a job</h1>
  <form id="submit-form" novalidate>
  <div class="grid2"><div>
    <fieldset data-field="name"><legend>Job</legend>
      <label>Name <input name="name" value="my-experiment" size="28"></label>
      <label>Family <select name="family" data-field="family"><option>pe</option><option>elf</option></select></label>
      <label data-field="priority">Priority <input name="priority" type="number" value="0"></label>
    </fieldset>
    <fieldset data-field="generator"><legend>Generator</legend>
      <label data-field="dlls">DLLs <input name="dlls" type="number" value="10"></label>
      <label data-field="exports">Exports each <input name="exports" type="number" value="100"></label>
      <label data-field="globals_per_function">Globals per function <input name="globals_per_function" type="number" value="0"></label>
      <label data-field="main">Main <select name="main"><option>reference</option><option>call</option></select></label>
    </fieldset>
    <fieldset data-field="variants"><legend>Variants</legend>
      <div id="presets"></div>
      <div id="knobs"></div>
      <button type="button" id="add-knobs">Add a variant from knobs</button>
    </fieldset>
    <fieldset data-field="measure"><legend>Measurements</legend>
      <div data-field="measure.warm"><label><input type="checkbox" name="warm" checked> warm</label>
        <label data-field="measure.warm.runs">runs <input name="warm_runs" type="number" value="30"></label>
        <label data-field="measure.warm.warmup">warmup <input name="warm_warmup" type="number" value="3"></label></div>
      <div data-field="measure.cold"><label><input type="checkbox" name="cold"> cold</label>
        <label data-field="measure.cold.runs">runs <input name="cold_runs" type="number" value="10"></label></div>
      <div data-field="measure.churn"><label><input type="checkbox" name="churn"> churn</label>
        <label data-field="measure.churn.processes">processes <input name="churn_processes" type="number" value="1000"></label>
        <span data-field="measure.churn.dll_sets">${DLL_SETS.map((s) => `<label><input type="checkbox" name="dll_set" value="${s}"${s === "none" || s === "user32" ? " checked" : ""}> ${s}</label>`).join("")}</span></div>
    </fieldset>
  </div><div>
    <fieldset data-field="matrix"><legend>Matrix</legend>
      <label><input type="radio" name="matrix_mode" value="any" checked> one task on any agent</label>
      <label><input type="radio" name="matrix_mode" value="cells"> cells (cartesian product)</label>
      <label><input type="radio" name="matrix_mode" value="each_agent"> each matching agent</label>
      <p class="muted small">Keys and values the fleet has (facts and labels of ${plural(agents.length, "agent")}):</p>
      <div id="matrix-keys">${[...keys.entries()].map(([k, vals]) => `<div data-field="matrix.${esc(k)}"><b>${esc(k)}</b>:
        ${vals.map((v) => `<label><input type="checkbox" class="matrix-value" data-key="${esc(k)}" value="${esc(v)}"> ${esc(v)}</label>`).join("")}</div>`).join("") ||
        `<p class="muted">No agent has enrolled: the job will wait for one.</p>`}</div>
    </fieldset>
    <div class="card"><b>Tasks: <span id="task-total">1</span></b> <span class="muted" id="task-note"></span></div>
    <p><button id="submit-job">Submit job</button> <span class="error" id="submit-error"></span></p>
    <details open><summary>Request body</summary><pre id="submit-preview"></pre></details>
  </div></div>
  </form>`;
  const form = $("#submit-form");
  const drawPresets = () => {
    const list = form.family.value === "pe" ? PE_PRESETS : ELF_PRESETS;
    $("#presets").innerHTML = list.map((p) => `<label><input type="checkbox" class="preset" value="${p}"${p === "default" ? " checked" : ""}> ${p}</label>`).join("");
    $("#knobs").innerHTML = "";
    $("#add-knobs").hidden = form.family.value !== "pe";
  };
  drawPresets();
  $("#add-knobs").addEventListener("click", () => {
    const div = document.createElement("div");
    div.className = "knob-row";
    div.innerHTML = `<label>name <input class="knob-name" size="12" value="custom-${$("#knobs").children.length + 1}"></label>
      <label>bases <select class="knob-bases"><option>same</option><option>unique</option><option>toolchain</option></select></label>
      <label><input type="checkbox" class="knob-bind"> bind</label>
      <label>imports <select class="knob-imports"><option>name</option><option>ordinal</option></select></label>
      <label>order <select class="knob-order"><option>link</option><option>trace</option></select></label>
      <button type="button" class="knob-remove">remove</button>`;
    $("#knobs").appendChild(div);
    update();
  });
  $("#knobs").addEventListener("click", (ev) => {
    if (ev.target.classList.contains("knob-remove")) { ev.target.closest(".knob-row").remove(); update(); }
  });
  const intOf = (name) => { const v = form[name].value.trim(); return v === "" ? undefined : Number(v); };
  const build = () => {
    const job = { name: form.name.value, family: form.family.value,
      generator: { dlls: intOf("dlls"), exports: intOf("exports"), globals_per_function: intOf("globals_per_function"), main: form.main.value },
      variants: [...form.querySelectorAll(".preset:checked")].map((c) => c.value) };
    for (const row of form.querySelectorAll(".knob-row"))
      job.variants.push({ name: $(".knob-name", row).value, bases: $(".knob-bases", row).value, bind: $(".knob-bind", row).checked,
        imports: $(".knob-imports", row).value, order: $(".knob-order", row).value });
    const measure = {};
    if (form.warm.checked) measure.warm = { runs: intOf("warm_runs"), warmup: intOf("warm_warmup") };
    if (form.cold.checked) measure.cold = { runs: intOf("cold_runs") };
    if (form.churn.checked) measure.churn = { processes: intOf("churn_processes"), dll_sets: [...form.querySelectorAll("[name=dll_set]:checked")].map((c) => c.value) };
    job.measure = measure;
    const mode = form.querySelector("[name=matrix_mode]:checked").value;
    const chosen = {};
    for (const c of form.querySelectorAll(".matrix-value:checked")) (chosen[c.dataset.key] = chosen[c.dataset.key] || []).push(c.value);
    if (mode !== "any") job.matrix = { [mode]: chosen };
    if (intOf("priority")) job.priority = intOf("priority");
    return job;
  };
  const update = () => {
    const job = build();
    $("#submit-preview").textContent = JSON.stringify(job, null, 2);
    let total = 1, note = "";
    if (job.matrix && job.matrix.cells) {
      const lists = Object.entries(job.matrix.cells);
      total = lists.reduce((n, [, v]) => n * v.length, 1);
      if (!lists.length) { total = 1; note = "no key chosen: the server will say what it takes"; }
      else {
        let empty = 0;
        const walk = (i, cell) => {
          if (i === lists.length) { if (!agents.some((a) => a.state !== "quarantined" && Object.entries(cell).every(([k, v]) => agentHas(a, k, v)))) empty++; return; }
          for (const v of lists[i][1]) walk(i + 1, { ...cell, [lists[i][0]]: v });
        };
        if (total <= 4096) walk(0, {});
        note = `one per cell${empty ? `; ${empty} cell(s) match no agent now and will wait` : ""}`;
      }
    } else if (job.matrix && job.matrix.each_agent) {
      const sel = Object.entries(job.matrix.each_agent);
      total = agents.filter((a) => a.state !== "quarantined" && sel.every(([k, vals]) => vals.some((v) => agentHas(a, k, v)))).length;
      note = "one per enrolled, non-quarantined agent matching";
    } else {
      note = "one task, leased by any agent";
    }
    $("#task-total").textContent = total;
    $("#task-note").textContent = note;
  };
  form.addEventListener("input", (ev) => {
    const field = ev.target.closest("[data-field]");
    if (field) field.querySelectorAll(".field-error").forEach((e) => e.remove());
    update();
  });
  form.addEventListener("change", (ev) => { if (ev.target.name === "family") { drawPresets(); } update(); });
  update();
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    form.querySelectorAll(".field-error").forEach((e) => e.remove());
    $("#submit-error").textContent = "";
    try {
      const created = await api("/api/v1/jobs", { method: "POST", body: build() });
      location.hash = "#/job/" + created.id;
    } catch (e) {
      showFieldError(form, e.message);
    }
  });
}

/* Puts the server's message next to the field it names ("Field 'dlls'
 * must be ...", "Field 'measure.warm.runs' ...", "Unknown pe variant 'x'."). */
function showFieldError(form, message) {
  let target = null;
  const m = message.match(/Field '([^']+)'/);
  const fields = [...form.querySelectorAll("[data-field]")];
  if (m) {
    const name = m[1];
    const parts = name.split(".");
    for (let i = parts.length; i > 0 && !target; i--) {
      const want = parts.slice(0, i).join(".");
      target = fields.find((f) => f.dataset.field === want) ||
        fields.find((f) => f.dataset.field.endsWith("." + want));
    }
  } else if (/variant/i.test(message)) {
    target = fields.find((f) => f.dataset.field === "variants");
  } else if (/matrix|cell|agent/i.test(message)) {
    target = fields.find((f) => f.dataset.field === "matrix");
  }
  const span = document.createElement("span");
  span.className = "field-error";
  span.setAttribute("role", "alert");
  span.textContent = message;
  if (target) target.appendChild(span);
  else $("#submit-error").textContent = message;
}

/* ---------------------------------------------------------------- report */

/* [min, q1, median, q3, max] with linear interpolation between ranks. */
function fiveNumbers(samples) {
  const s = samples.slice().sort((a, b) => a - b);
  const q = (p) => { const i = (s.length - 1) * p, lo = Math.floor(i), hi = Math.ceil(i); return s[lo] + (s[hi] - s[lo]) * (i - lo); };
  return [s[0], q(0.25), q(0.5), q(0.75), s[s.length - 1]];
}

function tableHtml(table, kind, cells) {
  const unit = table.unit;
  const head = `<tr><th>variant</th>${cells.map((c) => `<th>${esc(c.key)}</th>`).join("")}</tr>`;
  const body = table.variants.map((row) => `<tr><th>${esc(row.variant)}${row.variant === table.baseline ? ' <span class="muted small">baseline</span>' : ""}</th>${row.cells.map((c) => {
    const attrs = `data-variant="${esc(row.variant)}" data-cell="${esc(c.cell)}" data-status="${esc(c.status)}"`;
    if (c.status !== "ok") return `<td ${attrs} class="muted small">${esc(c.status)}${c.reason ? ": " + esc(c.reason) : ""}</td>`;
    if (kind === "warm") {
      const sig = c.significant === true;
      return `<td ${attrs} class="num ${c.change_pct === undefined ? "" : sig ? "sig" : "insig"}">
        <div>min <span class="v-min">${us(c.min_us, unit)}</span> · median <span class="v-median">${us(c.median_us, unit)}</span> ${unitLabel(unit)}</div>
        <div class="small muted">CI [<span class="v-ci-low">${us(c.ci_low_us, unit)}</span>, <span class="v-ci-high">${us(c.ci_high_us, unit)}</span>] · n <span class="v-n">${c.n}</span></div>
        ${c.change_pct === undefined ? "" : `<div><span class="v-change">${pct(c.change_pct)}</span>${sig ? " *" : ""} <span class="small muted">p <span class="v-p">${pval(c.p_value)}</span></span></div>`}
        ${noiseHtml(c.noise)}${notesHtml(c.notes)}</td>`;
    }
    return coldCellHtml(c, attrs, unit);
  }).join("")}</tr>`).join("");
  return `<div class="scroll"><table class="report-table" id="${kind}-table"><thead>${head}</thead><tbody>${body}</tbody></table></div>`;
}

async function reportPage(id) {
  const [report, job] = await Promise.all([api(`/api/v1/jobs/${id}/report?modules=1`), api("/api/v1/jobs/" + id)]);
  const cells = report.cells;
  const resultOf = new Map(job.tasks.map((t) => [t.id, t.result_id]));
  /* A cold-only or churn-only job took no warm samples: no warm table,
   * heatmap or warm samples (an older server said so by "no warm samples"
   * in every cell). */
  const hasTable = (t) => t && t.variants.some((row) => row.cells.some((c) => c.status === "ok"));
  const warm = report.warm && (report.warm.measured === undefined ? hasTable(report.warm) || !report.cold : report.warm.measured) ? report.warm : null;
  const samplesShown = warm || report.cold;
  pageEl().innerHTML = `<h1>Report: job ${id} ${esc(job.name)} ${badge("state", job.state)}</h1>
    <div class="toolbar"><a href="#/job/${id}">Job and tasks</a> <a href="#/compare?baseline=${id}">Compare with…</a>
      <span class="muted">CLI: <code class="cmd">loadlab report ${id}</code></span></div>
    ${report.findings && report.findings.length ? `<div class="card"><b>Findings</b><ul id="findings">${report.findings.map((f) => `<li>${esc(f)}</li>`).join("")}</ul></div>` : ""}
    ${warm ? `<h2>Warm start (baseline ${esc(report.warm.baseline)})</h2>
      <p class="muted small">* significant: Mann-Whitney p &lt; 0.05, the bootstrap 95 % CI of the ratio of medians excludes 1, and |change| ≥ 1 %.</p>
      ${tableHtml(report.warm, "warm", cells)}
      <h2>Change against ${esc(report.warm.baseline)} (grey: not significant)</h2><div class="chart" id="heatmap"></div>` : ""}
    ${samplesShown ? `<h2>Samples per variant</h2>
    <div class="toolbar"><label>Cell <select id="box-cell">${cells.map((c, i) => `<option value="${i}">${esc(c.key)} (${esc(c.state)})</option>`).join("")}</select></label>
      <label>Measurement <select id="box-measure">${warm ? '<option value="warm">warm</option>' : ""}${report.cold ? '<option value="cold">cold</option>' : ""}</select></label>
      <span class="muted small" id="box-note"></span></div>
    <div class="chart" id="boxplot"></div>` : ""}
    ${report.cold ? `<h2>Cold start (baseline ${esc(report.cold.baseline)})</h2>${tableHtml(report.cold, "cold", cells)}${coldSectionHtml(report.cold)}` : ""}
    ${report.churn ? churnSectionHtml(report.churn) : ""}`;
  if (warm) drawHeatmap(warm, cells);
  if (report.cold) drawColdBars(report.cold, cells);
  if (report.churn) drawChurnChart(report.churn);
  if (!samplesShown) return;
  const box = chart($("#boxplot"));
  const samplesCache = new Map();
  const drawBox = async () => {
    const c = cells[+$("#box-cell").value], measure = $("#box-measure").value;
    const rid = c ? resultOf.get(c.task_id) : null;
    box.clear();
    if (!rid) { $("#box-note").textContent = "This cell has no result yet."; return; }
    if (!samplesCache.has(rid)) samplesCache.set(rid, await api("/api/v1/results/" + rid));
    const result = samplesCache.get(rid);
    const rows = (result.variants || []).filter((v) => v[measure] && Array.isArray(v[measure].samples_us) && v[measure].samples_us.length);
    $("#box-note").textContent = rows.length ? `${rows.length} variants, raw samples of result ${rid}; ▲ marks each minimum` : "No samples for this measurement in this cell.";
    if (!rows.length) return;
    const names = rows.map((v) => v.name);
    /* In the unit of the measurement's table, as its figures. */
    const unit = (report[measure] || {}).unit, per = unit === "ms" ? 1000 : 1;
    const fig = (v) => us(v * per, unit) + " " + unitLabel(unit);
    const stats = rows.map((v) => fiveNumbers(v[measure].samples_us).map((x) => x / per));
    box.setOption({
      animation: false,
      tooltip: { trigger: "item" },
      grid: { left: 80, right: 30, top: 30, bottom: 50 },
      xAxis: { type: "category", data: names },
      yAxis: { type: "value", name: unitLabel(unit), scale: true },
      series: [
        { name: "samples", type: "boxplot", data: stats,
          tooltip: { formatter: (p) => `${p.name}<br>min ${fig(p.data[1])}<br>q1 ${fig(p.data[2])}<br>median ${fig(p.data[3])}<br>q3 ${fig(p.data[4])}<br>max ${fig(p.data[5])}` } },
        { name: "minimum", type: "scatter", symbol: "triangle", symbolSize: 11, itemStyle: { color: "#b42318" },
          data: stats.map((s, i) => [names[i], s[0]]), tooltip: { formatter: (p) => `${p.value[0]} minimum ${fig(p.value[1])}` } },
      ],
    });
  };
  $("#box-cell").addEventListener("change", drawBox);
  $("#box-measure").addEventListener("change", drawBox);
  const firstOk = cells.findIndex((c) => resultOf.get(c.task_id));
  if (firstOk > 0) $("#box-cell").value = String(firstOk);
  await drawBox();
}

function drawHeatmap(warm, cells) {
  const variants = warm.variants.map((v) => v.variant).filter((v) => v !== warm.baseline);
  const sig = [], insig = [], other = [];
  let extent = 1;
  warm.variants.forEach((row) => {
    const y = variants.indexOf(row.variant);
    if (y < 0) return;
    row.cells.forEach((c, x) => {
      if (c.status === "ok" && typeof c.change_pct === "number") {
        (c.significant ? sig : insig).push([x, y, +c.change_pct.toFixed(2)]);
        if (c.significant) extent = Math.max(extent, Math.abs(c.change_pct));
      } else {
        other.push({ value: [x, y, 0], status: c.status });
      }
    });
  });
  const label = { show: true, formatter: (p) => (p.data.status ? p.data.status : pct(p.value[2])) };
  chart($("#heatmap")).setOption({
    animation: false,
    tooltip: { formatter: (p) => `${esc(variants[p.value[1]])} · ${esc(cells[p.value[0]].key)}: ${p.data.status || pct(p.value[2])}${p.seriesIndex === 1 ? " (not significant)" : ""}` },
    grid: { left: 130, right: 110, top: 20, bottom: 40 },
    xAxis: { type: "category", data: cells.map((c) => c.key), splitArea: { show: true } },
    yAxis: { type: "category", data: variants, splitArea: { show: true } },
    visualMap: { seriesIndex: 0, min: -extent, max: extent, calculable: false, orient: "vertical", right: 0, top: "middle",
      text: ["slower", "faster"], inRange: { color: ["#1a7f37", "#f7f7f7", "#c0392b"] } },
    series: [
      { name: "significant", type: "heatmap", data: sig, label },
      { name: "not significant", type: "heatmap", data: insig, label, itemStyle: { color: "#d0d4da" } },
      { name: "no figure", type: "heatmap", data: other, label: { show: true, color: "#888", formatter: (p) => p.data.status }, itemStyle: { color: "#f2f3f5" } },
    ],
  });
}

/* --------------------------------------------------------------- compare */

async function comparePage() {
  const q = hashQuery();
  const { jobs } = await api("/api/v1/jobs?limit=200");
  const options = (sel) => `<option value="">choose a job</option>` + jobs.map((j) => `<option value="${j.id}"${String(j.id) === sel ? " selected" : ""}>${j.id} · ${esc(j.name)} (${esc(j.state)})</option>`).join("");
  pageEl().innerHTML = `<h1>Compare two jobs</h1>
    <form id="compare-form" class="toolbar">
      <label>Baseline <select name="baseline">${options(q.get("baseline"))}</select></label>
      <label>Candidate <select name="candidate">${options(q.get("candidate"))}</select></label>
      <label>Max regression <input name="max_regression" type="number" step="any" min="0" value="${esc(q.get("max_regression") || "0")}"> %</label>
      <button>Compare</button>
    </form>
    <div id="compare-out"></div>`;
  const form = $("#compare-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams({ baseline: form.baseline.value, candidate: form.candidate.value, max_regression: form.max_regression.value || "0" });
    location.hash = "#/compare?" + p;
  });
  const base = q.get("baseline"), cand = q.get("candidate");
  if (!base || !cand) {
    $("#compare-out").innerHTML = `<p class="muted">Choose a baseline and a candidate job.</p>`;
    return;
  }
  const max = q.get("max_regression") || "0";
  const cmp = await api(`/api/v1/compare?baseline=${encodeURIComponent(base)}&candidate=${encodeURIComponent(cand)}&max_regression=${encodeURIComponent(max)}`);
  const link = location.origin + location.pathname + "#/compare?" + new URLSearchParams({ baseline: base, candidate: cand, max_regression: max });
  const counts = Object.entries(cmp.counts || {}).map(([k, v]) => `${esc(k)} ${v}`).join(" · ");
  const unit = unitOf(Math.max(0, ...cmp.rows.flatMap((r) => [r.baseline_median_us, r.candidate_median_us]).filter((v) => typeof v === "number")));
  $("#compare-out").innerHTML = `
    <div class="card"><b>Verdict:</b> <span id="verdict" data-verdict="${esc(cmp.verdict)}" class="badge verdict-${esc(cmp.verdict)}">${esc(cmp.verdict)}</span>
      <span class="muted">(max regression ${esc(cmp.max_regression_pct)} %) ${counts}</span>
      <p>Command line: <code class="cmd" id="compare-cmd">loadlab compare ${esc(base)} ${esc(cand)} --max-regression ${esc(max)}</code></p>
      <p>Link: <a id="compare-link" href="${esc(link)}">${esc(link)}</a> <button type="button" id="copy-link">Copy</button></p></div>
    <div class="chart" id="compare-chart"></div>
    <h2>Rows</h2>
    <div class="scroll"><table id="compare-table"><thead><tr><th>variant</th><th>cell</th><th>status</th><th>regression</th>
      <th class="num">baseline median ${unitLabel(unit)}</th><th class="num">candidate median ${unitLabel(unit)}</th><th class="num">ratio</th><th class="num">ratio 95 % CI</th>
      <th class="num">change</th><th class="num">min change</th><th class="num">p</th><th>reason</th></tr></thead>
      <tbody>${cmp.rows.map((r) => `<tr data-variant="${esc(r.variant)}" data-cell="${esc(r.cell)}"><td>${esc(r.variant)}</td><td>${esc(r.cell)}</td>
        <td>${badge("status", r.status)}</td><td>${r.regression ? '<b class="error">yes</b>' : "no"}</td>
        <td class="num">${us(r.baseline_median_us, unit)}</td><td class="num">${us(r.candidate_median_us, unit)}</td>
        <td class="num v-ratio">${ratio(r.ratio)}</td><td class="num">${typeof r.ratio_ci_low === "number" ? `[${ratio(r.ratio_ci_low)}, ${ratio(r.ratio_ci_high)}]` : ""}</td>
        <td class="num">${pct(r.change_pct)}</td><td class="num">${pct(r.min_change_pct)}</td><td class="num">${pval(r.p_value)}</td>
        <td class="small muted">${esc(r.reason || "")}</td></tr>`).join("")}</tbody></table></div>`;
  $("#copy-link").addEventListener("click", () => { if (navigator.clipboard) navigator.clipboard.writeText(link).catch(() => {}); });
  compareChart($("#compare-chart"), cmp);
}

/* The figure each metric judges: its ratio (candidate over baseline) and
 * the ends of its 95 % interval, as compare's rows name them. The minimum
 * has no ratio field of its own: 1 + its change. */
const COMPARE_METRICS = {
  "median": { title: "median", ratio: (r) => r.ratio, low: "ratio_ci_low", high: "ratio_ci_high" },
  "min": { title: "fastest run", ratio: (r) => (typeof r.min_change_pct === "number" ? 1 + r.min_change_pct / 100 : null),
    low: "min_ratio_ci_low", high: "min_ratio_ci_high" },
  "over-floor": { title: "median over the floor", ratio: (r) => r.over_floor_ratio, low: "over_floor_ratio_ci_low", high: "over_floor_ratio_ci_high" },
  "floor-ratio": { title: "median divided by the floor", ratio: (r) => r.floor_ratio, low: "floor_ratio_ci_low", high: "floor_ratio_ci_high" },
};

/* What a row was judged by: its own metric when it names one (metric
 * auto judges each row by floor-ratio or the median), else the
 * comparison's; the interval that decided the verdict (interval_low and
 * _high: widened by the spread between jobs when the row's
 * interval_scope says so), else the metric's within-job one. */
function judgedFigure(row, cmp) {
  const m = COMPARE_METRICS[row.metric] || COMPARE_METRICS[cmp.metric] || COMPARE_METRICS.median;
  const ratio = m.ratio(row);
  const low = typeof row.interval_low === "number" ? row.interval_low : row[m.low];
  const high = typeof row.interval_high === "number" ? row.interval_high : row[m.high];
  if (![ratio, low, high].every((x) => typeof x === "number")) return null;
  return { title: m.title, ratio, low, high, across: row.interval_scope === "within-and-between-jobs" };
}

/* The compare chart: per row, a bar from 1.0 (no change) to the judged
 * ratio and its whole 95 % interval, on an axis that holds 1.0 and every
 * interval's two ends; the same warnings as the CLI's Markdown above it. */
function compareChart(el, cmp) {
  const notes = [];
  if (cmp.generator && cmp.generator.same === false)
    notes.push(`The jobs' generators differ: baseline <code>${esc(JSON.stringify(cmp.generator.baseline))}</code>, candidate <code>${esc(JSON.stringify(cmp.generator.candidate))}</code>.`);
  const rows = cmp.rows.map((r) => ({ r, f: judgedFigure(r, cmp) })).filter((x) => x.f);
  const titles = [...new Set(rows.map((x) => x.f.title))];
  if (titles.length) notes.push(`Judged by the ${esc(titles.join(" / "))}.`);
  const across = rows.filter((x) => x.f.across).length;
  if (rows.length) notes.push(across ? `Intervals hold what varies between jobs in ${across} of ${rows.length} rows (from earlier jobs of the same spec or series).`
    : "Intervals are within-job only: no earlier jobs of the same spec or series to say how much whole jobs vary.");
  el.insertAdjacentHTML("beforebegin", notes.map((n) => `<p class="compare-note">${n}</p>`).join(""));
  const colors = { faster: "#1a7f37", slower: "#c0392b", no_significant_change: "#9aa3ae" };
  const ends = rows.flatMap((x) => [x.f.low, x.f.high, x.f.ratio]).concat([1]);
  const lo = Math.min(...ends), hi = Math.max(...ends), pad = Math.max((hi - lo) * 0.08, 0.005);
  const bounds = { min: +(lo - pad).toFixed(4), max: +(hi + pad).toFixed(4) };
  el.dataset.axisMin = bounds.min;
  el.dataset.axisMax = bounds.max;
  el.dataset.barsFrom = "1";
  chart(el).setOption({
    animation: false,
    title: { text: `candidate / baseline (${titles.join(" / ") || "no comparable rows"}), from 1.0, with 95 % CI`, textStyle: { fontSize: 13 } },
    tooltip: { trigger: "item", formatter: (p) => `${esc(p.name)}<br>ratio ${ratio(p.value[1])} [${ratio(p.value[2])}, ${ratio(p.value[3])}]` },
    grid: { left: 220, right: 40, top: 40, bottom: 30 },
    yAxis: { type: "category", data: rows.map((x) => x.r.variant + " · " + x.r.cell), inverse: true },
    xAxis: { type: "value", name: "ratio", min: bounds.min, max: bounds.max, axisLabel: { showMinLabel: false, showMaxLabel: false } },
    series: [
      { type: "custom", name: "ratio from 1.0",
        renderItem: (params, api2) => {
          const y = api2.value(0), size = api2.size([0, 1])[1] * 0.55;
          const a = api2.coord([1, y]), b = api2.coord([api2.value(1), y]);
          const color = colors[rows[params.dataIndex].r.status] || "#9aa3ae";
          return { type: "rect", shape: { x: Math.min(a[0], b[0]), y: a[1] - size / 2, width: Math.abs(b[0] - a[0]), height: size },
            style: { fill: color } };
        },
        encode: { x: 1, y: 0 },
        data: rows.map((x, i) => ({ name: x.r.variant + " · " + x.r.cell, value: [i, x.f.ratio, x.f.low, x.f.high] })),
        markLine: { silent: true, symbol: "none", data: [{ xAxis: 1 }], lineStyle: { color: "#333" } } },
      { type: "custom", name: "95 % CI",
        renderItem: (params, api2) => {
          const y = api2.value(0), a = api2.coord([api2.value(2), y]), b = api2.coord([api2.value(3), y]);
          const cap = api2.size([0, 1])[1] * 0.2;
          return { type: "group", children: [
            { type: "line", shape: { x1: a[0], y1: a[1], x2: b[0], y2: b[1] }, style: { stroke: "#1d2430", lineWidth: 2 } },
            { type: "line", shape: { x1: a[0], y1: a[1] - cap, x2: a[0], y2: a[1] + cap }, style: { stroke: "#1d2430", lineWidth: 2 } },
            { type: "line", shape: { x1: b[0], y1: b[1] - cap, x2: b[0], y2: b[1] + cap }, style: { stroke: "#1d2430", lineWidth: 2 } }] };
        },
        encode: { x: [2, 3], y: 0 },
        data: rows.map((x, i) => ({ name: x.r.variant + " · " + x.r.cell, value: [i, x.f.ratio, x.f.low, x.f.high] })) },
    ],
  });
}

/* ----------------------------------------------------------------- token */

function showWho() {
  $("#who").textContent = !token() ? "no token" : tokenRemembered() ? "token remembered on this browser" : "token set for this session";
  $("#forget-token").hidden = !token();
  $("#remember-token").checked = tokenRemembered();
  showRemember();
}
/* The choice is offered while a token is to be given: none is set, or one
 * is being typed (the header keeps to one line otherwise). */
function showRemember() { $("#remember").hidden = !!token() && !$("#token").value; }
$("#token").addEventListener("input", showRemember);

$("#login").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const t = $("#token").value.trim();
  if (!t) return;
  if ($("#remember-token").checked) {
    localStorage.setItem(TOKEN_KEY, t);
    sessionStorage.removeItem(TOKEN_KEY);
  } else {
    sessionStorage.setItem(TOKEN_KEY, t);
    localStorage.removeItem(TOKEN_KEY);
  }
  $("#token").value = "";
  showWho();
  route();
});
$("#forget-token").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(TOKEN_KEY);
  showWho();
  route();
});

showWho();
route();
