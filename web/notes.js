/*
 * What the report page says beside a figure (#/report/N): the noise the
 * agent saw while the cell was measured (the warm cell's "noise": other
 * processes' CPU, runs flagged and retaken) and what the runner that took
 * it cannot show (the cell's or churn row's "notes", e.g. that Wine
 * ignores bound imports). Loaded before cold.js, churn.js and report.js,
 * which call noiseHtml and notesHtml; uses helpers.js's esc when called.
 */
"use strict";

/* "noise: other CPU max 12.0 % (median 3.1 %) · 2 flagged, 1 retaken", or
 * "" when the cell recorded none. */
function noiseHtml(noise) {
  if (!noise || typeof noise !== "object") return "";
  const parts = [];
  if (typeof noise.max_other_cpu_pct === "number")
    parts.push(`other CPU max <span class="v-noise-cpu">${noise.max_other_cpu_pct.toFixed(1)}</span> %` +
      (typeof noise.other_cpu_pct === "number" ? ` (median ${noise.other_cpu_pct.toFixed(1)} %)` : ""));
  if (typeof noise.flagged === "number")
    parts.push(`<span class="v-noise-flagged">${noise.flagged}</span> flagged, <span class="v-noise-retaken">${typeof noise.retaken === "number" ? noise.retaken : 0}</span> retaken`);
  if (!parts.length) return "";
  const busy = typeof noise.max_other_cpu_pct === "number" && noise.max_other_cpu_pct >= 25;
  return `<div class="small v-noise ${busy ? "noise-busy" : "muted"}" title="what the agent saw of the machine's other work while the cell was measured">noise: ${parts.join(" · ")}</div>`;
}

/* The notes of a figure: one line each, "⚠" and the reason. */
function notesHtml(notes) {
  if (!Array.isArray(notes) || !notes.length) return "";
  return notes.map((n) => `<div class="small v-note note">⚠ ${esc(n)}</div>`).join("");
}
