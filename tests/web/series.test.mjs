/*
 * The Series, Schedules and Alerts pages in headless Chromium against a real
 * loadlabd: two series are filled by jobs whose results a fake agent posts
 * over HTTP (as tests/integration/test_series.py does), each with one
 * deliberately slower job that opens an alert. The Series page's charts
 * hold the points GET /api/v1/series/NAME returns (read back from echarts'
 * options), pin the alert, and lead to a job and to compare; the header's
 * badge counts the open alerts and Ack closes one; the Schedules page lists
 * a schedule, pauses and resumes it, and "Run now" submits a job. Nothing
 * logs a console error. Screenshots land in LOADLAB_WEB_ARTIFACTS and /tmp.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { startDaemon, apiClient, waitFor, samples, screenshot, openDashboard, enrollAgent } from "./lib.mjs";

const FACTS = { os: "winxp", disk: "ssd", cpu_model: "lab cpu", runner: "wine" };
const JOB = { name: "nightly", family: "pe", generator: { dlls: 2, exports: 10 }, variants: ["default", "rebase"] };

let daemon, url, admin, agentToken, api, context, page;
const series = { "perf/nightly": [], "ci/main": [] }; /* name -> job ids in order */
const consoleErrors = [];

/* Submits a job of series NAME and posts its one task's result, REBASE_SHIFT
 * times slower for the rebase variant; waits until the job is done. */
async function seriesJob(name, revision, seed, rebaseShift = 1) {
  const created = await api("POST", "/api/v1/jobs", { ...JOB, series: name, revision });
  assert.equal(created.status, 201, created.text);
  const lease = await waitFor("a lease", async () => (await api("POST", "/api/v1/lease", {}, agentToken)).body);
  const variants = [
    { name: "default", valid: true, warm: { runs: 30, samples_us: samples(1000, seed) } },
    { name: "rebase", valid: true, warm: { runs: 30, samples_us: samples(1100 * rebaseShift, seed + 1) } }];
  const r = await api("POST", `/api/v1/tasks/${lease.task_id}/result`, { attempt: lease.attempt, facts: FACTS, variants }, agentToken);
  assert.equal(r.status, 200, r.text);
  await waitFor("job done", async () => (await api("GET", "/api/v1/jobs/" + created.body.id)).body.state === "done");
  series[name].push(created.body.id);
  return created.body.id;
}

async function shot(name) {
  await screenshot(page, name);
  await page.screenshot({ path: path.join(os.tmpdir(), "loadlab-" + name + ".png"), fullPage: true });
}

async function go(hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
}

function assertNoConsoleErrors(where) {
  assert.deepEqual(consoleErrors.splice(0), [], `console errors on ${where}`);
}

/* What the chart in EL holds: the x labels, the line, the band and pins. */
async function chartData(selector) {
  return page.$eval(selector, (el) => {
    const o = echarts.getInstanceByDom(el).getOption();
    const byName = (n) => o.series.find((s) => s.name === n);
    const line = o.series[2];
    return {
      labels: o.xAxis[0].data,
      line: line.data.map((d) => d.value), jobs: line.data.map((d) => d.job_id), lineName: line.name,
      low: byName("ci_low").data, width: byName("ci_width").data,
      pins: (line.markPoint.data || []).map((m) => ({ coord: m.coord, alert: m.alert_id })),
    };
  });
}

before(async () => {
  let enroll;
  ({ daemon, url, admin, enroll } = await startDaemon("loadlab-web-series-", ["--schedule-tick-ms", "100"]));
  api = apiClient(url, admin);
  agentToken = await enrollAgent(api, enroll, "lab-1", FACTS);

  await seriesJob("perf/nightly", "r1", 1);
  await seriesJob("perf/nightly", "r2", 11);
  await seriesJob("perf/nightly", "r3", 21, 1.2); /* opens an alert against r2 */
  await seriesJob("perf/nightly", "r4", 31, 1.2); /* as slow as r3: none */
  await seriesJob("ci/main", null, 41);
  await seriesJob("ci/main", null, 51, 1.3);
  await waitFor("two alerts", async () => (await api("GET", "/api/v1/alerts?open=true")).body.alerts.length === 2);

  /* The token as the header's form stores it (dashboard.test.mjs types it). */
  ({ context, page } = await openDashboard(admin, consoleErrors));
  await page.goto(url + "/#/series");
});

after(async () => {
  if (context) await context.close();
  if (daemon) daemon.kill("SIGTERM");
});

test("the series list names each series with its job count and last job", async () => {
  await page.waitForSelector("#series-list tr[data-series]");
  const listed = (await api("GET", "/api/v1/series")).body.series;
  const rows = await page.$$eval("#series-list tr[data-series]", (trs) => trs.map((tr) =>
    [tr.dataset.series, tr.children[1].textContent, tr.children[2].querySelector("a").textContent]));
  assert.deepEqual(rows, listed.map((s) => [s.name, String(s.jobs), String(s.last_job.id)]));
  assert.deepEqual(listed.map((s) => s.jobs).sort(), [2, 4]);
  assertNoConsoleErrors("series list");
});

test("the Series page's charts hold the points of GET /api/v1/series/NAME, alerts pinned", async () => {
  await page.click(`#series-list a[href="#/series/${encodeURIComponent("perf/nightly")}"]`);
  await page.waitForSelector(".series-chart canvas");
  const s = (await api("GET", "/api/v1/series/perf%2Fnightly")).body;
  const alert = s.alerts.find((a) => a.job_id === series["perf/nightly"][2]);
  assert.ok(alert, "r3 opened an alert");
  assert.equal(s.traces.length, 2);
  assert.equal(await page.$$eval(".series-chart", (els) => els.length), s.traces.length);
  for (const t of s.traces) {
    const d = await chartData(`.series-chart[data-variant="${t.variant}"][data-cell="${t.cell}"]`);
    assert.equal(d.lineName, "median");
    assert.deepEqual(d.labels, ["r1", "r2", "r3", "r4"]);
    assert.deepEqual(d.labels, t.points.map((p) => p.revision));
    assert.deepEqual(d.jobs, series["perf/nightly"]);
    assert.deepEqual(d.line, t.points.map((p) => p.value_us));
    assert.deepEqual(d.line, t.points.map((p) => p.median_us));
    assert.deepEqual(d.low, t.points.map((p) => p.ci_low_us));
    d.width.forEach((w, i) => assert.ok(Math.abs(d.low[i] + w - t.points[i].ci_high_us) < 1e-9, `band top of point ${i}`));
    const pinned = alert.rows.some((r) => r.variant === t.variant && r.cell === t.cell);
    assert.deepEqual(d.pins, pinned ? [{ coord: [2, t.points[2].value_us], alert: alert.id }] : []);
  }
  assert.deepEqual(alert.rows.map((r) => r.variant), ["rebase"]);
  await page.waitForTimeout(300);
  await shot("series");

  /* "compare with" the job before: the compare page of the two jobs. */
  const [r3, r4] = series["perf/nightly"].slice(2);
  const href = await page.getAttribute(`#series-jobs tr[data-job="${r4}"] a.compare-prev`, "href");
  assert.equal(href, `#/compare?baseline=${r3}&candidate=${r4}&max_regression=${s.threshold_pct}`);
  assert.equal(await page.$(`#series-jobs tr[data-job="${series["perf/nightly"][0]}"] a.compare-prev`), null);
  await page.click(`#series-jobs tr[data-job="${r4}"] a.compare-prev`);
  await page.waitForSelector("#verdict");
  assert.equal(await page.getAttribute("#verdict", "data-verdict"), "ok");

  /* The minimum instead of the median: the line follows ?metric=min. */
  await go(`#/series/${encodeURIComponent("perf/nightly")}?metric=min`);
  await page.waitForSelector(".series-chart canvas");
  const m = (await api("GET", "/api/v1/series/perf%2Fnightly?metric=min")).body;
  const rebase = m.traces.find((t) => t.variant === "rebase");
  const d = await chartData('.series-chart[data-variant="rebase"]');
  assert.equal(d.lineName, "min");
  assert.deepEqual(d.line, rebase.points.map((p) => p.min_us));

  /* A click on a point opens its job. */
  const [x, y] = await page.$eval('.series-chart[data-variant="rebase"]', (el) => {
    const c = echarts.getInstanceByDom(el), o = c.getOption();
    const p = c.convertToPixel({ seriesIndex: 2 }, [1, o.series[2].data[1].value]);
    const box = el.getBoundingClientRect();
    return [box.left + p[0], box.top + p[1]];
  });
  await page.mouse.click(x, y);
  await page.waitForFunction((id) => location.hash === "#/job/" + id, series["perf/nightly"][1]);

  /* Jobs without a revision are placed by job id. */
  await go(`#/series/${encodeURIComponent("ci/main")}`);
  await page.waitForSelector(".series-chart canvas");
  assert.deepEqual((await chartData(".series-chart")).labels, series["ci/main"].map((id) => "#" + id));
  assertNoConsoleErrors("series");
});

test("the header's badge counts the open alerts; Ack closes one", async () => {
  await go("#/alerts");
  await page.waitForSelector("#alerts tr[data-alert]");
  const open = (await api("GET", "/api/v1/alerts?open=true")).body.alerts;
  assert.equal(open.length, 2);
  await page.waitForFunction(() => document.querySelector("#alert-count").textContent === "2");
  assert.ok(await page.$("#alert-count.open"));
  assert.deepEqual(await page.$$eval("#alerts tr[data-alert]", (trs) => trs.map((tr) => +tr.dataset.alert).sort()),
    open.map((a) => a.id).sort());
  await shot("alerts");
  const target = open.find((a) => a.series === "ci/main");
  await page.click(`#alerts tr[data-alert="${target.id}"] button.ack`);
  await page.waitForFunction((id) => !document.querySelector(`#alerts tr[data-alert="${id}"]`), target.id);
  await page.waitForFunction(() => document.querySelector("#alert-count").textContent === "1");
  const after = (await api("GET", "/api/v1/alerts")).body.alerts;
  const acked = after.find((a) => a.id === target.id);
  assert.ok(acked.acked_at && acked.acked_by, JSON.stringify(acked));
  assert.equal(after.filter((a) => !a.acked_at).length, 1);
  /* Acknowledged alerts stay listed on request, without a button. */
  await page.check("#alerts-all");
  await page.waitForSelector(`#alerts tr[data-alert="${target.id}"] .badge.state-acked`);
  assert.equal(await page.$(`#alerts tr[data-alert="${target.id}"] button.ack`), null);
  assertNoConsoleErrors("alerts");
});

test("the Schedules page lists a schedule, pauses and resumes it, and Run now submits a job", async () => {
  const created = await api("POST", "/api/v1/schedules", { series: "weekly/xp", cron: "0 3 * * 1", job: JOB });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id, row = `#schedules tr[data-schedule="${id}"]`;
  await page.click("#nav a[data-page=schedules]");
  await page.waitForSelector(row);
  const next = created.body.next_run_at;
  assert.equal(await page.textContent(`${row} .next-run`), next.replace("T", " ").replace(/\.\d+Z$/, " UTC"));
  assert.match(await page.textContent(row), /0 3 \* \* 1/);
  assert.match(await page.textContent(`${row} .last-job`), /none yet/);

  await page.click(`${row} button.toggle`);
  await page.waitForSelector(`${row} .badge.state-paused`);
  assert.equal((await api("GET", "/api/v1/schedules/" + id)).body.enabled, false);
  assert.equal(await page.textContent(`${row} .next-run`), "—");
  await page.click(`${row} button.toggle`);
  await page.waitForSelector(`${row} .badge.state-enabled`);
  assert.equal((await api("GET", "/api/v1/schedules/" + id)).body.enabled, true);

  await page.click(`${row} button.run-now`);
  await page.waitForSelector("#run-job");
  const jobId = +(await page.textContent("#run-job"));
  const s = (await api("GET", "/api/v1/schedules/" + id)).body;
  assert.equal(s.last_job_id, jobId);
  const job = (await api("GET", "/api/v1/jobs/" + jobId)).body;
  assert.equal(job.spec.series, "weekly/xp");
  assert.equal(job.submitted_by, "schedule:" + id);
  await page.waitForSelector(`${row} .last-job a[href="#/job/${jobId}"]`);
  await shot("schedules");

  /* Again while that job is queued: the daemon refuses, the page says why. */
  await page.click(`${row} button.run-now`);
  await page.waitForSelector("#schedule-note.error");
  assert.ok((await page.textContent("#schedule-note")).length > 0);
  consoleErrors.splice(0).forEach((e) => assert.match(e, /status of 409/));
});
