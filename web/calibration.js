/*
 * The fleet page's calibration column (#/fleet): each agent's last
 * calibration, as GET /api/v1/agents gives it ("last_calibration",
 * docs/rest-bodies.md): the cost injected and the cost recovered with
 * their ratio, the interval, whether the figure was paired by pass (the
 * median of per-pass differences) or not (the difference of medians), the
 * noise the runs saw, when, and a link to the calibration job. Loaded before app.js, whose helpers (helpers.js's esc, age) it
 * calls; fleet.js's fleet page calls calibrationCell(agent) per row.
 */
"use strict";

/* A number of microseconds as text: "1012 µs", "12.5 µs". */
function calibrationMicros(us) {
  if (typeof us !== "number" || !isFinite(us)) return "?";
  return (Math.abs(us) >= 100 ? Math.round(us).toString() : us.toFixed(1)) + " µs";
}

/* The cell of AGENT's last calibration (HTML). */
function calibrationCell(agent) {
  const c = agent && agent.last_calibration;
  if (!c) return `<span class="muted calibration-none">never calibrated</span>`;
  const pct = Math.round(100 * c.ratio);
  const good = Math.abs(c.ratio - 1) <= 0.1;
  const ci = Array.isArray(c.ci_us) ? ` [${esc(calibrationMicros(c.ci_us[0]))}, ${esc(calibrationMicros(c.ci_us[1]))}]` : "";
  const noise = c.noise || {};
  const cpu = typeof noise.max_other_cpu_pct === "number" ? Math.round(noise.max_other_cpu_pct) + " %" : "unknown";
  /* "paired" is absent from calibrations recorded before it existed. */
  const how = c.paired === true ? "median of per-pass differences" : "median(X) − median(0)";
  const paired = typeof c.paired === "boolean"
    ? ` · <span class="calibration-paired" title="${esc(how)}">${c.paired ? "paired" : "unpaired"}</span>` : "";
  return `<div class="calibration" data-job="${esc(c.job_id)}">
    <span class="calibration-figure ${good ? "" : "warn"}" title="${esc(how)}; 95 % interval${ci}">${esc(calibrationMicros(c.injected_us))} → ${esc(calibrationMicros(c.recovered_us))} (${pct} %)</span>
    <div class="muted small calibration-noise">noise: other CPU max ${esc(cpu)}, flagged ${esc(noise.flagged ?? 0)}, retaken ${esc(noise.retaken ?? 0)}</div>
    <div class="muted small"><span title="${esc(c.at)}">${esc(age(c.at))}</span> · ${esc(c.family)}${c.runner ? " (" + esc(c.runner) + ")" : ""}${paired} ·
    <a class="calibration-job" href="#/job/${esc(c.job_id)}">job ${esc(c.job_id)}</a></div></div>`;
}
