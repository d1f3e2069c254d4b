/*
 * The report page says what the figures cannot show and what they were
 * taken in (issue 27), in headless Chromium against a real loadlabd whose
 * fake agents post results known in advance:
 * - the column study timed under Wine (facts runner=wine): bind's and
 *   ordinal+bind's cells carry the note that Wine ignores bound imports,
 *   the other variants' do not; every warm cell shows the noise its result
 *   recorded (other CPU max, runs flagged and retaken) as the API gives it;
 * - a churn-only job: no warm table, heatmap or samples chart; the churn
 *   table against none with each ratio, in the table's one unit (ms here),
 *   the Wine row's note, the findings, and the churn charts drawn by
 *   echarts with each bar's ratio;
 * - a cold-only job shows its cold table and its samples chart in ms and
 *   no warm table.
 * No page logs a console error.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { SOURCE, startDaemon, apiClient, samples, screenshot, openDashboard } from "./lib.mjs";

let daemon, url, admin, enrollToken, api, context, page;
const consoleErrors = [];
const jobs = {};

/* The dashboard's figures in a table's unit (web/helpers.js's us()). */
const inUnit = (v, unit) => (unit === "ms" ? (v / 1000).toFixed(2) : v.toFixed(1));

async function enroll(name, facts) {
  const r = await api("POST", "/api/v1/agents/enroll", { name, facts }, enrollToken);
  assert.equal(r.status, 201, r.text);
  return { token: r.body.token, facts };
}

async function leaseAndPost(agent, body) {
  const lease = await api("POST", "/api/v1/lease", {}, agent.token);
  assert.equal(lease.status, 200, lease.text);
  const r = await api("POST", `/api/v1/tasks/${lease.body.task_id}/result`, { ...body, attempt: lease.body.attempt }, agent.token);
  assert.equal(r.status, 200, r.text);
}

async function submit(spec) {
  const created = await api("POST", "/api/v1/jobs", spec);
  assert.equal(created.status, 201, created.text);
  return created.body.id;
}

const example = (name) => JSON.parse(fs.readFileSync(path.join(SOURCE, "schemas/examples", name), "utf8"));

before(async () => {
  ({ daemon, url, admin, enroll: enrollToken } = await startDaemon("loadlab-web-notes-"));
  api = apiClient(url, admin);
  /* The column study on one Wine agent, each variant with its noise. */
  const wine = await enroll("wine-1", { os: "linux", runner: "wine", cpu_model: "lab cpu", bench: "notes" });
  jobs.column = await submit({ ...example("pietrek-2000.json"), matrix: { cells: { bench: ["notes"] } } });
  const centers = { default: 1000, rebase: 1100, bind: 1000, ordinal: 950, "ordinal+rebase": 1050, "ordinal+bind": 950 };
  await leaseAndPost(wine, { facts: wine.facts, variants: Object.entries(centers).map(([name, c], i) => ({ name, valid: true,
    warm: { runs: 30, samples_us: samples(c, 100 + i), noise: { other_cpu_pct: [100 + i, 120 + i, 150 - i], flagged: i, retaken: i > 0 ? i - 1 : 0 } } })) });
  /* The churn study: one native cell, one under Wine. */
  jobs.churn = await submit({ ...example("churn.json"), matrix: { cells: { bench: ["churn-xp", "churn-wine"] } } });
  for (const [bench, runner] of [["churn-xp", "native"], ["churn-wine", "wine"]]) {
    const a = await enroll(bench, { os: "win", runner, bench });
    const method = { runner, platform: runner === "wine" ? "wine" : "windows" };
    await leaseAndPost(a, { facts: a.facts, variants: [{ name: "default" }], churn: [
      { dll_set: "none", processes: 1000, create_us: 2448000, destroy_us: 801000, blocked_total_ms: 8, blocked_max_ms: 1, method },
      { dll_set: "user32", processes: 1000, create_us: 3154000, destroy_us: 2240000, blocked_total_ms: 1991, blocked_max_ms: 864, method }] });
  }
  /* A cold-only job. */
  jobs.cold = await submit({ ...example("office-cold-start.json"), matrix: { cells: { bench: ["cold"] } } });
  const c = await enroll("cold-1", { os: "linux", runner: "native", bench: "cold" });
  const cold = (mean, seed) => ({ method: "posix_fadvise", cold: true, samples_us: samples(mean, seed, 10, mean * 0.01),
    page_faults: Array(10).fill(900), read_bytes: Array(10).fill(1 << 20) });
  await leaseAndPost(c, { facts: c.facts, variants: [{ name: "rebase", cold: cold(90000, 1) }, { name: "reorder", cold: cold(60000, 2) },
    { name: "no-rebase", cold: cold(89000, 3) }] });

  ({ context, page } = await openDashboard(admin, consoleErrors));
});

after(async () => {
  if (context) await context.close();
  if (daemon) daemon.kill("SIGTERM");
});

/* The findings the page lists. */
const pageFindings = () => page.$$eval("#findings li", (li) => li.map((e) => e.textContent));

/* A screenshot NAME of the page, which logged no error. */
async function shotWithoutErrors(name) {
  await screenshot(page, name);
  assert.deepEqual(consoleErrors.splice(0), []);
}

/* Job ID's report, which took no warm samples and whose PART is in ms,
 * opened until SELECTOR shows. */
async function openWithoutWarm(id, part, selector) {
  const report = (await api("GET", `/api/v1/jobs/${id}/report`)).body;
  assert.equal(report.warm.measured, false);
  assert.equal(report[part].unit, "ms");
  await open(id, selector);
  return report;
}

async function open(id, selector) {
  await page.goto(`${url}/#/report/${id}`);
  await page.waitForSelector(selector);
}

test("bind timed under Wine carries the note beside its figures, and every cell its noise", async () => {
  const report = (await api("GET", `/api/v1/jobs/${jobs.column}/report`)).body;
  await open(jobs.column, "#warm-table");
  let noted = 0, noisy = 0;
  for (const row of report.warm.variants) {
    const c = row.cells[0];
    const td = `#warm-table td[data-variant="${row.variant}"][data-cell="${c.cell}"]`;
    const notes = await page.$$eval(`${td} .v-note`, (els) => els.map((e) => e.textContent));
    if (row.variant === "bind" || row.variant === "ordinal+bind") {
      assert.equal(c.notes.length, 1, row.variant);
      assert.deepEqual(notes, [`⚠ ${c.notes[0]}`], row.variant);
      assert.match(notes[0], /Wine ignores bound imports/);
      noted++;
    } else {
      assert.deepEqual(notes, [], row.variant);
    }
    if (c.status !== "ok") continue;
    assert.equal(await page.$eval(`${td} .v-median`, (e) => e.textContent), inUnit(c.median_us, report.warm.unit));
    assert.equal(await page.$eval(`${td} .v-noise-cpu`, (e) => e.textContent), c.noise.max_other_cpu_pct.toFixed(1));
    assert.equal(await page.$eval(`${td} .v-noise-flagged`, (e) => e.textContent), String(c.noise.flagged));
    assert.equal(await page.$eval(`${td} .v-noise-retaken`, (e) => e.textContent), String(c.noise.retaken));
    noisy++;
  }
  assert.equal(noted, 2);
  assert.equal(noisy, 6);
  const findings = await pageFindings();
  assert.ok(findings.some((f) => /^bind \(warm\): timed under Wine in 1 cell, which ignores bound imports/.test(f)), findings.join("\n"));
  await shotWithoutErrors("report-notes");
});

test("the churn report: no empty warm table, the table against none with its ratios, the finding and the charts", async () => {
  const report = await openWithoutWarm(jobs.churn, "churn", "#churn-table");
  await page.waitForSelector("#churn-chart canvas");
  for (const gone of ["#warm-table", "#heatmap", "#boxplot", "#box-cell"])
    assert.equal(await page.$(gone), null, `${gone} is not on a churn-only report`);
  assert.doesNotMatch(await page.textContent("#page"), /no warm samples/);
  assert.match(await page.textContent("#churn-table thead"), /destroy \/ process ms/);
  for (const r of report.churn.rows) {
    const tr = `#churn-table tr[data-cell="${r.cell}"][data-set="${r.dll_set}"]`;
    assert.equal(await page.textContent(`${tr} .v-destroy`), `${inUnit(r.destroy_us_per_process, "ms")} (${r.destroy_ratio.toFixed(2)}×)`);
    assert.equal(await page.textContent(`${tr} .v-create`), `${inUnit(r.create_us_per_process, "ms")} (${r.create_ratio.toFixed(2)}×)`);
    assert.equal(await page.textContent(`${tr} .v-blocked`), `${inUnit(r.blocked_total_us, "ms")} (${r.blocked_total_ratio.toFixed(2)}×)`);
    const notes = await page.$$eval(`${tr} .v-note`, (els) => els.map((e) => e.textContent));
    assert.equal(notes.length, r.cell === "bench=churn-wine" ? 1 : 0, r.cell);
    if (notes.length) assert.match(notes[0], /win32k/);
  }
  const user32 = report.churn.rows.find((r) => r.cell === "bench=churn-xp" && r.dll_set === "user32");
  assert.equal(user32.destroy_ratio, 2.797);
  const findings = await pageFindings();
  assert.deepEqual(findings, report.findings);
  assert.ok(findings.includes("user32 against none on bench=churn-xp: destroying a process took 2.80× as long (2240.0 µs against 801.0 µs), "
    + "creating one took 1.29× as long (3154.0 µs against 2448.0 µs); the input lock was blocked in total 1991.00 ms against 8.00 ms (248.9×)."), findings.join("\n"));
  const series = await page.evaluate(() => ["#churn-chart", "#churn-blocked-chart"].map((sel) =>
    echarts.getInstanceByDom(document.querySelector(sel)).getOption().series.map((s) => ({ name: s.name, data: s.data }))));
  const destroy = series[0].find((s) => s.name === "destroy · bench=churn-xp");
  assert.deepEqual(destroy.data.map((d) => [d.value, d.label.formatter]), [[0.8, "1.00×"], [2.24, "2.80×"]]);
  const blocked = series[1].find((s) => s.name === "blocked · bench=churn-wine");
  assert.deepEqual(blocked.data.map((d) => d.value), [8, 1991]);
  await page.locator("#churn-chart").scrollIntoViewIfNeeded();
  await page.waitForTimeout(300);
  await shotWithoutErrors("report-churn");
});

test("a cold-only report shows its cold table in its unit and no warm table", async () => {
  const report = await openWithoutWarm(jobs.cold, "cold", "#cold-table");
  assert.equal(await page.$("#warm-table"), null);
  assert.equal(await page.$("#heatmap"), null);
  const c = report.cold.variants.find((v) => v.variant === "reorder").cells[0];
  const td = `#cold-table td[data-variant="reorder"][data-cell="${c.cell}"]`;
  assert.equal(await page.textContent(`${td} .v-median`), inUnit(c.median_us, "ms"));
  assert.match(await page.textContent(td), /ms/);
  /* The samples chart offers the cold samples only, in the table's unit. */
  assert.deepEqual(await page.$$eval("#box-measure option", (o) => o.map((e) => e.value)), ["cold"]);
  await page.waitForFunction(() => /raw samples of result/.test(document.querySelector("#box-note").textContent));
  const box = await page.evaluate(() => {
    const o = echarts.getInstanceByDom(document.querySelector("#boxplot")).getOption();
    return { axis: o.yAxis[0].name, highest: Math.max(...o.series[0].data.map((d) => d[4])) };
  });
  assert.equal(box.axis, "ms");
  assert.ok(box.highest > 80 && box.highest < 120, `the slowest cold sample in ms: ${box.highest}`);
  assert.deepEqual(consoleErrors.splice(0), []);
});
