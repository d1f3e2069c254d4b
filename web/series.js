/*
 * The dashboard's series, schedules and alerts pages (#/series,
 * #/series/NAME, #/schedules, #/alerts) and the header's alert badge.
 * Loaded before app.js, whose helpers (api, chart, poll...; esc and the
 * formats of helpers.js) these functions call when they run; app.js's
 * route table names them.
 */
"use strict";

/* ---------------------------------------------- series, schedules, alerts */

function seriesHref(name) { return "#/series/" + encodeURIComponent(name); }
function jobLink(id) { return id ? `<a href="#/job/${id}">${id}</a>` : ""; }
function utc(time) { return time ? time.replace("T", " ").replace(/\.\d+Z$/, " UTC") : "—"; }
/* A point's place on a series' x axis: its revision, else its job id. */
function pointLabel(p) { return p.revision || "#" + p.job_id; }

/* The header's badge: how many alerts are open, refreshed on every page and
 * every 30 s. Quiet on a refused token: the page itself says so. */
async function refreshAlertCount() {
  try {
    const { alerts } = await api("/api/v1/alerts?open=true", { quiet: true });
    $("#alert-count").textContent = String(alerts.length);
    $("#alert-count").classList.toggle("open", alerts.length > 0);
  } catch (e) { if (!(e instanceof ApiError)) console.warn(e); }
}

async function seriesListPage() {
  const { series } = await api("/api/v1/series");
  pageEl().innerHTML = `<h1>Series</h1>
    <p class="muted small">The jobs that name a <code>series</code> form its history; <a href="#/schedules">schedules</a> submit them on time.</p>
    <div class="scroll"><table id="series-list"><thead><tr><th>series</th><th class="num">jobs</th><th>last job</th><th>revision</th>
    <th>submitted</th><th class="num">alert threshold</th><th>webhook</th></tr></thead><tbody>${series.map((s) => `<tr data-series="${esc(s.name)}">
      <td><a href="${esc(seriesHref(s.name))}">${esc(s.name)}</a></td><td class="num">${s.jobs}</td>
      <td>${jobLink(s.last_job.id)} ${badge("state", s.last_job.state)}</td><td>${esc(s.last_job.revision || "")}</td>
      <td title="${esc(s.last_job.created_at)}">${esc(age(s.last_job.created_at))}</td><td class="num">${s.threshold_pct} %</td>
      <td class="small">${esc(s.webhook_url || "")}</td></tr>`).join("") ||
      `<tr><td colspan="7" class="muted">No series yet: submit a job with "series": "NAME".</td></tr>`}</tbody></table></div>`;
}

/* The vertical marks of a trace (GET /api/v1/series/NAME/change-points):
 * one line at the first job of each change point (red: a regression, green:
 * faster, grey: slower within the threshold), labelled with its change; a
 * dashed grey line where the machine's facts changed. */
function changeMarks(trace, pts, changes) {
  const at = (side) => pts.findIndex((p) => p.job_id === side.job_id), lines = [];
  const mine = (c) => c.variant === trace.variant && c.cell === trace.cell;
  for (const c of (changes ? changes.change_points : []).filter(mine)) {
    const i = at(c.after);
    if (i < 0) continue;
    const color = c.machine_changed ? "#667085" : c.regression ? "#b42318" : c.magnitude_pct < 0 ? "#067647" : "#98a2b3";
    lines.push({ xAxis: i, kind: "change", p_value: c.p_value, magnitude_pct: c.magnitude_pct,
      name: `${c.before.revision || "#" + c.before.job_id} → ${c.after.revision || "#" + c.after.job_id}`,
      label: { formatter: (c.magnitude_pct > 0 ? "+" : "") + c.magnitude_pct.toFixed(1) + "%" + (c.machine_changed ? " (machine)" : ""), fontSize: 9 },
      lineStyle: { color, type: "solid", width: 2 } });
  }
  for (const m of (changes ? changes.machine_changes : []).filter(mine)) {
    const i = at(m.after);
    if (i < 0) continue;
    lines.push({ xAxis: i, kind: "machine", facts: m.facts_changed.map((f) => f.fact),
      name: "machine changed: " + m.facts_changed.map((f) => f.fact).join(", "),
      label: { formatter: "machine", position: "insideEndTop", fontSize: 9 }, lineStyle: { color: "#667085", type: "dashed", width: 1 } });
  }
  return lines;
}

/* One trace: the median's 95 % interval as a band (the low bound, then the
 * width stacked on it and filled), the metric as a line, one point per job,
 * a pin on each job whose alert names this variant and cell, and the
 * change points and machine changes as vertical lines (changeMarks()). */
function drawTrace(el, trace, alerts, metric, changes) {
  const pts = trace.points, marks = [];
  /* the report's unit rule (helpers.js unitOf(): ms from 10 ms), one unit per trace */
  const unit = unitOf(Math.max(0, ...pts.flatMap((p) => [p.value_us, p.ci_high_us]).filter((v) => typeof v === "number")));
  const inUnit = (v) => (typeof v === "number" && unit === "ms" ? v / 1000 : v), label = unitLabel(unit);
  for (const a of alerts) {
    const i = pts.findIndex((p) => p.job_id === a.job_id);
    const row = a.rows.find((r) => r.variant === trace.variant && r.cell === trace.cell);
    if (i >= 0 && row) marks.push({ name: "alert " + a.id, coord: [i, inUnit(pts[i].value_us)], alert_id: a.id,
      value: (row.change_pct > 0 ? "+" : "") + Math.round(row.change_pct) + "%", itemStyle: { color: a.acked_at ? "#98a2b3" : "#b42318" } });
  }
  const c = chart(el);
  c.setOption({
    animation: false,
    tooltip: { trigger: "axis", formatter: (items) => {
      const p = pts[items[0].dataIndex];
      return `job ${p.job_id}${p.revision ? " · " + esc(p.revision) : ""}<br>${metric} ${us(p.value_us, unit)} ${label}<br>median ${us(p.median_us, unit)} ${label} ` +
        `[${us(p.ci_low_us, unit)}, ${us(p.ci_high_us, unit)}]<br>min ${us(p.min_us, unit)} ${label} · n ${p.n}<br>${esc(utc(p.created_at))}`;
    } },
    grid: { left: 70, right: 30, top: 40, bottom: 40 },
    xAxis: { type: "category", data: pts.map(pointLabel), boundaryGap: false },
    yAxis: { type: "value", name: label, scale: true },
    series: [
      { name: "ci_low", type: "line", stack: "ci", data: pts.map((p) => inUnit(p.ci_low_us)), symbol: "none", lineStyle: { opacity: 0 }, silent: true },
      { name: "ci_width", type: "line", stack: "ci", data: pts.map((p) => inUnit(p.ci_high_us - p.ci_low_us)), symbol: "none",
        lineStyle: { opacity: 0 }, areaStyle: { color: "#2456c7", opacity: 0.15 }, silent: true },
      { name: metric, type: "line", data: pts.map((p) => ({ value: inUnit(p.value_us), job_id: p.job_id })), symbolSize: 8,
        itemStyle: { color: "#2456c7" }, markPoint: { symbol: "pin", symbolSize: 42, data: marks, label: { fontSize: 9 } },
        markLine: { symbol: "none", data: changeMarks(trace, pts, changes) } },
    ],
  });
  c.on("click", (p) => {
    if (p.componentType === "markPoint") location.hash = "#/alerts?all=1";
    else if (p.seriesIndex === 2 && p.data && p.data.job_id) location.hash = "#/job/" + p.data.job_id;
  });
}

async function seriesPage(name) {
  const metric = hashQuery().get("metric") === "min" ? "min" : "median";
  const s = await api(`/api/v1/series/${encodeURIComponent(name)}?metric=${metric}`);
  /* the marks are a help: the page draws without them if they fail */
  const changes = await api(`/api/v1/series/${encodeURIComponent(name)}/change-points`, { quiet: true }).catch(() => null);
  const jobs = s.jobs;
  const rows = jobs.map((j, i) => {
    const prev = jobs.slice(0, i).reverse().find((p) => p.state === "done"), alert = s.alerts.find((a) => a.job_id === j.id);
    return `<tr data-job="${j.id}"><td>${jobLink(j.id)}</td><td>${esc(j.name)}</td><td>${esc(j.revision || "")}</td><td>${badge("state", j.state)}</td>
      <td title="${esc(j.created_at)}">${esc(age(j.created_at))}</td>
      <td>${alert ? `<a href="#/alerts?all=1">${pct(alert.worst_change_pct)}</a> ${badge("state", alert.acked_at ? "acked" : "open")}` : ""}</td>
      <td>${prev ? `<a class="compare-prev" href="#/compare?baseline=${prev.id}&candidate=${j.id}&max_regression=${s.threshold_pct}">compare with ${esc(prev.revision || "job " + prev.id)}</a>` : ""}</td></tr>`;
  }).reverse().join("");
  pageEl().innerHTML = `<h1>Series ${esc(s.series)}</h1>
    <div class="toolbar"><label>Line <select id="series-metric"><option value="median">median</option><option value="min"${metric === "min" ? " selected" : ""}>minimum</option></select></label>
      <span class="muted small" title="Vertical lines: change points (red: a regression, green: faster); dashed: the machine changed">Band: 95 % interval of the median. Pins: alerts (red: open). Lines: change points. Click a point for its job.</span>
      <span class="muted">CLI: <code class="cmd">loadlab series ${esc(s.series)}</code></span></div>
    <form id="series-settings" class="toolbar"><label>Alert when <input name="threshold_pct" type="number" step="any" min="0.5" value="${s.threshold_pct}"> % slower</label>
      <label>Webhook <input name="webhook_url" size="40" value="${esc(s.webhook_url || "")}" placeholder="https://… (empty: none)"></label>
      <button>Save</button><span id="settings-note" class="small"></span></form>
    <div id="series-charts">${s.traces.map((t, i) => `<div class="chart-title">${esc(t.variant)} <span class="muted">· ${esc(t.cell)} · ${t.points.length} points</span></div>
      <div class="chart series-chart" id="trace-${i}" data-variant="${esc(t.variant)}" data-cell="${esc(t.cell)}"></div>`).join("") ||
      `<p class="muted">No job of this series has results yet.</p>`}</div>
    <h2>Jobs (newest first)</h2>
    <div class="scroll"><table id="series-jobs"><thead><tr><th>job</th><th>name</th><th>revision</th><th>state</th><th>submitted</th>
      <th>alert</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`;
  s.traces.forEach((t, i) => drawTrace($("#trace-" + i), t, s.alerts, metric, changes));
  $("#series-metric").addEventListener("change", (ev) => { location.hash = seriesHref(name) + (ev.target.value === "min" ? "?metric=min" : ""); });
  $("#series-settings").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = ev.target, note = $("#settings-note"), hook = f.webhook_url.value.trim();
    try {
      await api(`/api/v1/series/${encodeURIComponent(name)}`, { method: "PUT", body: { threshold_pct: +f.threshold_pct.value, webhook_url: hook || null } });
      note.className = "small muted";
      note.textContent = "Saved.";
    } catch (e) { note.className = "small error"; note.textContent = e.message; }
  });
}

async function schedulesPage() {
  pageEl().innerHTML = `<h1>Schedules</h1>
    <p class="muted small">A schedule submits its job to its series when due (five-field cron in UTC, or an interval); a job still queued or
      running is not doubled. Pause, resume and run now need a user or admin token. Add one with <code class="cmd">loadlab schedule add</code>.</p>
    <div class="scroll"><table id="schedules"><thead><tr><th>id</th><th>series</th><th>job</th><th>when</th><th>state</th><th>next run</th>
      <th>last job</th><th>skipped</th><th></th></tr></thead><tbody></tbody></table></div>
    <p id="schedule-note" class="small"></p>`;
  const draw = async () => {
    const { schedules } = await api("/api/v1/schedules");
    $("#schedules tbody").innerHTML = schedules.map((s) => `<tr data-schedule="${s.id}"><td>${s.id}</td>
      <td><a href="${esc(seriesHref(s.series))}">${esc(s.series)}</a></td><td>${esc(s.job.name)}</td>
      <td>${s.cron ? `<code>${esc(s.cron)}</code> UTC` : `every ${s.interval_s} s`}</td>
      <td class="schedule-state">${badge("state", s.enabled ? "enabled" : "paused")}</td>
      <td class="next-run" title="${esc(s.next_run_at || "")}">${esc(utc(s.next_run_at))}</td>
      <td class="last-job">${s.last_job_id ? `${jobLink(s.last_job_id)}${s.last_due_at ? ` <span class="muted small">due ${esc(age(s.last_due_at))}</span>` : ""}` : `<span class="muted">none yet</span>`}</td>
      <td class="small">${s.skipped ? s.skipped + (s.last_skip && s.last_skip.reason ? ": " + esc(s.last_skip.reason) : "") : ""}</td>
      <td><button class="toggle" data-id="${s.id}" data-on="${s.enabled ? 0 : 1}">${s.enabled ? "Pause" : "Resume"}</button>
        <button class="run-now" data-id="${s.id}">Run now</button></td></tr>`).join("") ||
      `<tr><td colspan="9" class="muted">No schedule.</td></tr>`;
  };
  $("#schedules").addEventListener("click", async (ev) => {
    const b = ev.target.closest("button"), note = $("#schedule-note");
    if (!b) return;
    try {
      if (b.classList.contains("run-now")) {
        const r = await api(`/api/v1/schedules/${b.dataset.id}/run`, { method: "POST", body: {} });
        note.className = "small";
        note.innerHTML = `Schedule ${r.schedule_id} submitted job <a id="run-job" href="#/job/${r.job_id}">${r.job_id}</a>.`;
      } else {
        await api("/api/v1/schedules/" + b.dataset.id, { method: "PATCH", body: { enabled: b.dataset.on === "1" } });
        note.textContent = "";
      }
      await draw();
    } catch (e) { note.className = "small error"; note.textContent = e.message; }
  });
  await draw();
  poll(draw, 5000);
}

/* Whether JOB can be one end of a bisection (docs/bisect.md): a program
 * job of one build (its manifest, not an A/B job's builds) that names a
 * revision of a series. */
function bisectableJob(job) {
  const program = job && job.spec && job.spec.program;
  return !!(program && program.files && !program.builds && job.spec.series && job.spec.revision);
}

async function alertsPage() {
  const all = hashQuery().get("all") === "1";
  pageEl().innerHTML = `<h1>Regression alerts</h1>
    <div class="toolbar"><label><input type="checkbox" id="alerts-all"${all ? " checked" : ""}> show acknowledged</label>
      <span class="muted small">A confirmed change point of a series, slower by more than the series' threshold (before a history has
      10 jobs: a job slower than the one before it, by the statistics of compare).
      Ack needs a user or admin token.</span></div>
    <div class="scroll"><table id="alerts"><thead><tr><th>id</th><th>series</th><th>job</th><th>against</th><th class="num">worst</th>
      <th>slower</th><th>opened</th><th>webhook</th><th>state</th></tr></thead><tbody></tbody></table></div>
    <p id="alert-note" class="error small"></p>`;
  /* Job id -> job, for the Bisect button: a job's spec does not change,
   * so each is fetched once per page. */
  const jobsById = new Map();
  const canBisect = (a) => bisectableJob(jobsById.get(a.job_id)) && bisectableJob(jobsById.get(a.baseline_id)) &&
    jobsById.get(a.job_id).spec.revision !== jobsById.get(a.baseline_id).spec.revision;
  const draw = async () => {
    const { alerts } = await api("/api/v1/alerts" + (all ? "" : "?open=true"));
    const missing = [...new Set(alerts.flatMap((a) => [a.job_id, a.baseline_id]))].filter((id) => id && !jobsById.has(id));
    await Promise.all(missing.map((id) => api("/api/v1/jobs/" + id, { quiet: true }).then((j) => jobsById.set(id, j), () => jobsById.set(id, null))));
    $("#alerts tbody").innerHTML = alerts.map((a) => `<tr data-alert="${a.id}"><td>${a.id}</td>
      <td><a href="${esc(seriesHref(a.series))}">${esc(a.series)}</a></td><td>${jobLink(a.job_id)}</td>
      <td>${jobLink(a.baseline_id)} · <a href="#/compare?baseline=${a.baseline_id}&candidate=${a.job_id}&max_regression=${a.threshold_pct}">compare</a></td>
      <td class="num">${pct(a.worst_change_pct)}</td>
      <td>${a.rows.map((r) => `<span class="chip">${esc(r.variant)} · ${esc(r.cell)} ${pct(r.change_pct)}</span>`).join("")}</td>
      <td title="${esc(a.created_at)}">${esc(age(a.created_at))}</td><td class="small">${esc(a.webhook || "")}</td>
      <td class="alert-state">${a.acked_at ? `${badge("state", "acked")} <span class="small muted">by ${esc(a.acked_by)}</span>` :
        `${badge("state", "open")} <button class="ack" data-id="${a.id}">Ack</button>`}
        ${canBisect(a) ? `<button class="bisect" data-id="${a.id}" title="Find the revision between the two jobs that did it (A/B jobs on one agent)">Bisect</button>` : ""}</td></tr>`).join("") ||
      `<tr><td colspan="9" class="muted">${all ? "No alert." : "No open alert."}</td></tr>`;
  };
  $("#alerts-all").addEventListener("change", (ev) => { location.hash = "#/alerts" + (ev.target.checked ? "?all=1" : ""); });
  $("#alerts").addEventListener("click", async (ev) => {
    const bisect = ev.target.closest("button.bisect");
    if (bisect) {
      try {
        const { alerts } = await api("/api/v1/alerts" + (all ? "" : "?open=true"));
        const a = alerts.find((x) => x.id === +bisect.dataset.id);
        const good = jobsById.get(a.baseline_id), bad = jobsById.get(a.job_id);
        const body = { good: good.revision ?? good.spec.revision, bad: bad.revision ?? bad.spec.revision, variant: a.rows[0].variant, cell: a.rows[0].cell };
        const b = await api(`/api/v1/series/${encodeURIComponent(a.series)}/bisect`, { method: "POST", body });
        location.hash = `#/bisections/${b.id}`;
      } catch (e) { $("#alert-note").textContent = e.message; }
      return;
    }
    const b = ev.target.closest("button.ack");
    if (!b) return;
    try {
      await api(`/api/v1/alerts/${b.dataset.id}/ack`, { method: "POST", body: {} });
      $("#alert-note").textContent = "";
      await Promise.all([draw(), refreshAlertCount()]);
    } catch (e) { $("#alert-note").textContent = e.message; }
  });
  await draw();
  poll(draw, 10000);
}

/* #/bisections/ID: a bisection as it goes (docs/bisect.md): its steps, each
 * step's A/B job, and the culprit or why there is none. */
async function bisectionPage(id) {
  const draw = async () => {
    const b = await api(`/api/v1/bisections/${id}`);
    const r = b.result || {}, e = r.effect || {};
    const fix = (v) => (typeof v === "number" ? v.toFixed(4) : "");
    pageEl().innerHTML = `<h1>Bisection ${b.id} ${badge("state", b.state)}</h1>
      <p><a href="${esc(seriesHref(b.series))}">${esc(b.series)}</a>: ${esc(b.good)} (good) .. ${esc(b.bad)} (bad),
        variant ${esc(b.variant)}, cell ${esc(b.cell)}, agent ${esc(b.agent)}.
        ${b.state === "running" ? `<button id="bisect-cancel">Cancel</button>` : ""}</p>
      ${b.state === "done" ? `<p id="bisect-culprit">Culprit: <b>${esc(r.culprit)}</b> (last good ${esc(r.last_good)}),
        ${pct(e.change_pct)} [${fix(e.ci_low)}, ${fix(e.ci_high)}] in ${r.steps} steps.</p>` : ""}
      ${r.reason ? `<p class="error">${esc(r.reason)}</p>` : ""}
      <div class="scroll"><table id="bisect-steps"><thead><tr><th>step</th><th>kind</th><th>candidate</th><th>base</th>
        <th class="num">runs</th><th>job</th><th class="num">ratio</th><th>95 % CI</th><th>verdict</th></tr></thead><tbody>
        ${b.steps.map((s) => `<tr><td>${s.step}</td><td>${esc(s.kind)}</td><td>${esc(s.candidate)}</td><td>${esc(s.base)}</td>
          <td class="num">${s.runs}</td><td>${jobLink(s.job_id)}</td><td class="num">${fix(s.ratio)}</td>
          <td>${s.ci_low ? `${fix(s.ci_low)} .. ${fix(s.ci_high)}` : ""}</td><td>${esc(s.verdict || "measuring")}</td></tr>`).join("")}
      </tbody></table></div><p id="bisect-note" class="error small"></p>`;
    const c = $("#bisect-cancel");
    if (c) c.addEventListener("click", async () => {
      try { await api(`/api/v1/bisections/${id}/cancel`, { method: "POST", body: {} }); await draw(); }
      catch (err) { $("#bisect-note").textContent = err.message; }
    });
  };
  await draw();
  poll(draw, 5000);
}
