/*
 * The Series page's change-point marks in headless Chromium against a real
 * loadlabd: a series of 30 jobs whose results a fake agent posts over HTTP
 * (as tests/integration/test_change_points.py does), 10 % slower from r10
 * on (a regression: an alert) and 10 % slower again from r20 on, where the
 * agent's CPU model changed (a machine change: no alert). The chart's
 * vertical lines (read back from echarts' options) stand where
 * GET /api/v1/series/NAME/change-points puts them, coloured by kind, with
 * a dashed line where the machine changed. Nothing logs a console error.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startDaemon, apiClient, waitFor, samples, screenshot, openDashboard, enrollAgent } from "./lib.mjs";

const FACTS = { os: "winxp", disk: "ssd", cpu_model: "lab cpu", runner: "wine" };
const JOB = { name: "nightly", family: "pe", generator: { dlls: 2, exports: 10 }, variants: ["default"] };

let daemon, url, admin, api, context, page;
const jobs = [];
const consoleErrors = [];

before(async () => {
  let enroll;
  ({ daemon, url, admin, enroll } = await startDaemon("loadlab-web-cp-", ["--schedule-tick-ms", "100"]));
  api = apiClient(url, admin);
  const agent = await enrollAgent(api, enroll, "lab-1", FACTS), byJob = new Map();
  for (let i = 0; i < 30; i++) {
    const created = await api("POST", "/api/v1/jobs", { ...JOB, series: "cp/web", revision: "r" + String(i).padStart(2, "0") });
    assert.equal(created.status, 201, created.text);
    jobs.push(created.body.id);
    byJob.set(created.body.id, i);
  }
  for (let k = 0; k < 30; k++) {
    const lease = await waitFor("a lease", async () => (await api("POST", "/api/v1/lease", {}, agent)).body);
    const i = byJob.get(lease.job_id), level = 1000 * (i < 10 ? 1 : i < 20 ? 1.1 : 1.21);
    const facts = i < 20 ? FACTS : { ...FACTS, cpu_model: "other cpu" };
    const variants = [{ name: "default", valid: true, warm: { runs: 30, samples_us: samples(level, 7 + i) } }];
    const posted = await api("POST", `/api/v1/tasks/${lease.task_id}/result`, { attempt: lease.attempt, facts, variants }, agent);
    assert.equal(posted.status, 200, posted.text);
  }
  await waitFor("the alert", async () => (await api("GET", "/api/v1/alerts")).body.alerts.length === 1, 60000);
  ({ context, page } = await openDashboard(admin, consoleErrors));
  await page.goto(url + "/#/series/" + encodeURIComponent("cp/web"));
});

after(async () => {
  if (context) await context.close();
  if (daemon) daemon.kill("SIGTERM");
});

test("the series chart marks each change point and where the machine changed", async () => {
  await page.waitForSelector(".series-chart canvas");
  const c = (await api("GET", "/api/v1/series/cp%2Fweb/change-points")).body;
  assert.deepEqual(c.change_points.map((x) => [x.after.revision, x.regression, x.machine_changed]),
    [["r10", true, false], ["r20", false, true]]);
  await page.waitForFunction(() => {
    const o = echarts.getInstanceByDom(document.querySelector(".series-chart")).getOption();
    return (o.series[2].markLine.data || []).length === 3;
  });
  const lines = await page.$eval(".series-chart", (el) => echarts.getInstanceByDom(el).getOption().series[2].markLine.data
    .map((m) => [m.kind, m.xAxis, m.lineStyle.color, m.lineStyle.type]));
  assert.deepEqual(lines, [["change", 10, "#b42318", "solid"], ["change", 20, "#667085", "solid"], ["machine", 20, "#667085", "dashed"]]);
  const alert = (await api("GET", "/api/v1/alerts")).body.alerts[0];
  assert.equal(alert.job_id, jobs[10]);
  assert.equal(alert.baseline_id, jobs[9]);
  await page.waitForTimeout(300);
  await screenshot(page, "series-change-points");
  assert.deepEqual(consoleErrors, []);
});
