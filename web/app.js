/*
 * The loadlab dashboard's frame: one page, views chosen by the URL hash
 * (#/fleet, #/jobs, #/job/ID, #/submit, #/report/ID, #/compare?...,
 * #/series, #/series/NAME, #/schedules, #/alerts, #/bisections/ID), all
 * drawn from the public REST API (/api/v1). This file holds the API call
 * and the token, the route table and the router (polling, charts); each
 * page has a file of its own, loaded before this one (index.html):
 * fleet.js, jobs.js, job.js, submit.js, report.js, compare.js, series.js
 * (series, schedules, alerts, bisections), with the parts they draw in
 * program.js, calibration.js, notes.js, cold.js and churn.js, and the
 * shared formats in helpers.js. Charts use echarts, embedded into loadlabd
 * from web/node_modules at build time.
 */
"use strict";

const TOKEN_KEY = "loadlab.token";

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
    if (r.status === 401 && !options.quiet) askForToken();
    throw new ApiError(r.status, err.code, err.message);
  }
  return body;
}

/* A 401: one plain sentence above the page (the page itself draws
 * nothing else, route()), not the server's HTTP wording. */
function askForToken() {
  showError(token() ? "This lab refused the token you gave (revoked or mistyped): paste another in the box above."
    : "This lab needs a token before it shows anything: paste one in the box above (the admin's is DATA_DIR/admin.token).", "plain");
  $("#token").focus();
}

/* MESSAGE above the page, in red unless KIND is "plain" ("" clears it). */
function showError(message, kind) {
  const el = document.getElementById("global-error");
  el.textContent = message || "";
  el.className = kind === "plain" ? "login-needed" : "error";
}

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
      /* a 401 is said once, above the page (askForToken) */
      pageEl().innerHTML = e instanceof ApiError && e.status === 401 ? ""
        : `<p class="error">Could not load this page: ${esc(e.message)}</p>`;
    }
    return;
  }
  location.hash = "#/fleet";
}

window.addEventListener("hashchange", route);
setInterval(refreshAlertCount, 30000);
window.addEventListener("resize", () => charts.forEach((c) => c.resize()));

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
