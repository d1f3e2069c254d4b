/*
 * The helpers every page of the dashboard calls: the DOM lookup ($, the
 * page's element), escaping, the number, size and time formats of the
 * tables, badges and progress bars, a cell's key and the hash's query.
 * Loaded first: the page files (fleet.js, jobs.js, ...) and the frame
 * (app.js) call these when they run.
 */
"use strict";

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
