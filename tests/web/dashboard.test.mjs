/*
 * The dashboard in headless Chromium against a real loadlabd holding real
 * results (fake agents enroll, lease and post samples known in advance
 * over HTTP, as tests/integration/test_reports.py does): the fleet lists
 * the agents and an admin can quarantine one; a job submitted through the
 * form shows the server's validation error next to its field, then appears
 * and its tasks advance while the page polls; the report shows the API's
 * numbers, and marks which cold page-fault and bytes-read differences are
 * significant; the compare page gives the CLI's verdict and a link that
 * reproduces it; every page is reachable from the first by links, none logs
 * a console error; a screenshot of each page is saved at 1280 px.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { BUILD, SOURCE, startDaemon, apiClient, samples, launchChromium, screenshot, watchConsole } from "./lib.mjs";

const CELLS = [["winxp", "hdd"], ["winxp", "ssd"], ["win10", "hdd"], ["win10", "ssd"]];

/* The tables' number formats (web/helpers.js). */
const us = (v, unit) => (unit === "ms" ? (v / 1000).toFixed(2) : v.toFixed(1));
const pct = (v) => (v > 0 ? "+" : "") + v.toFixed(2) + " %";

let daemon, url, admin, enrollToken, api, context, page;
const agents = {};           /* "winxp-hdd" -> {id, token, facts} */
const jobs = {};             /* base, slower, same, cold */
const consoleErrors = [];
let expectHttpErrors = false;

function warmVariants(seed, shift = {}) {
  const centers = { default: 1000, rebase: 1100, bind: 1005, "ordinal+bind": 900 };
  const variants = Object.entries(centers).map(([name, c], i) => ({
    name, valid: true, warm: { runs: 30, samples_us: samples(c * (shift[name] || 1), seed * 31 + i) } }));
  variants.push({ name: "ordinal", valid: false, invalid_reason: "probe: 3 imports resolved by name" });
  return variants;
}

async function leaseAndPost(agent, body) {
  const lease = await api("POST", "/api/v1/lease", {}, agent.token);
  assert.equal(lease.status, 200, lease.text);
  const r = await api("POST", `/api/v1/tasks/${lease.body.task_id}/result`, { ...body, attempt: lease.body.attempt }, agent.token);
  assert.equal(r.status, 200, r.text);
  return lease.body;
}

async function columnJob(seed, shift, generator) {
  const spec = JSON.parse(fs.readFileSync(path.join(SOURCE, "schemas/examples/pietrek-2000.json"), "utf8"));
  if (generator) spec.generator = { ...spec.generator, ...generator };
  const created = await api("POST", "/api/v1/jobs", spec);
  assert.equal(created.status, 201, created.text);
  for (const [o, d] of CELLS) {
    const a = agents[`${o}-${d}`];
    await leaseAndPost(a, { facts: a.facts, variants: warmVariants(seed, shift) });
  }
  return created.body.id;
}

async function coldJob() {
  const spec = JSON.parse(fs.readFileSync(path.join(SOURCE, "schemas/examples/office-cold-start.json"), "utf8"));
  const created = await api("POST", "/api/v1/jobs", spec);
  assert.equal(created.status, 201, created.text);
  let seed = 7;
  for (const disk of ["hdd", "ssd"]) {
    const a = agents[`winxp-${disk}`];
    const cold = (mean, faults, read) => ({ method: "posix_fadvise", cold: disk === "hdd",
      samples_us: samples(mean, seed++, 10, mean * 0.01), page_faults: Array(10).fill(faults), read_bytes: Array(10).fill(read),
      modules: [{ name: "lib0.dll", page_faults: faults / 2, read_bytes: read / 2 }, { name: "lib1.dll", page_faults: faults / 4, read_bytes: read / 4 }] });
    await leaseAndPost(a, { facts: a.facts, variants: [
      { name: "rebase", cold: cold(100000, 1000, 4 << 20) },
      { name: "reorder", cold: cold(80000, 600, 3 << 20) },
      { name: "no-rebase", cold: cold(78400, 900, 2 << 20) }] });
  }
  return created.body.id;
}

/* A program job (family "program"): its two files uploaded as blobs, the
 * job submitted with their manifest, and a result posted with the shape the
 * agent gives (tests/agent/test_program_family.py checks the real one):
 * per variant the files and the debug probe's modules with both bases. */
const PROGRAM_FILES = { "bin/app.exe": "MZ app.exe of the dashboard test", "bin/core.dll": "MZ core.dll, twice as long as the exe's text" };
const sha256 = (text) => crypto.createHash("sha256").update(text).digest("hex");

async function programJob() {
  const files = {};
  for (const [p, text] of Object.entries(PROGRAM_FILES)) {
    const r = await fetch(`${url}/api/v1/blobs/${sha256(text)}`, { method: "PUT", body: text, headers: { Authorization: "Bearer " + admin } });
    assert.ok(r.status === 201 || r.status === 200, await r.text());
    files[p] = "sha256:" + sha256(text);
  }
  const created = await api("POST", "/api/v1/jobs", { name: "app-1.4.2", family: "program",
    program: { files, exe: "bin/app.exe", args: ["--selftest"], until: "exit", timeout_s: 30 },
    variants: ["as-built", "rebase"], measure: { warm: { runs: 30, warmup: 1 } } });
  assert.equal(created.status, 201, created.text);
  const fileList = Object.entries(PROGRAM_FILES).map(([name, text]) => ({ name, sha256: sha256(text), size: text.length }));
  const module = (name, file, preferred, actual) => ({ name, path: "Z:\\w\\" + (file || name), kind: file ? "program" : "system",
    preferred, actual, relocated: preferred !== actual, program_file: !!file, ...(file ? { file } : {}) });
  const variant = (name, bases, dllActual, seed) => ({ name, knobs: { bases, bind: false, aslr: "off" }, valid: true, files: fileList,
    verify: { ended: "exit", exit_code: 0, dll_count: 1, dlls_loaded: 1, dlls_relocated: dllActual === "0x10000000" ? 0 : 1,
      system_modules_relocated: 0, relocated: dllActual === "0x10000000" ? [] : ["bin/core.dll"],
      modules: [module("app.exe", "bin/app.exe", "0x140000000", "0x140000000"), module("ntdll.dll", null, "0x170000000", "0x170000000"),
        module("core.dll", "bin/core.dll", "0x10000000", dllActual)] },
    warm: { runs: 30, samples_us: samples(20000, seed) } });
  const a = agents["winxp-hdd"];
  await leaseAndPost(a, { facts: a.facts, variants: [variant("as-built", "as-built", "0x7ff0000", 41), variant("rebase", "unique", "0x10000000", 42)] });
  return created.body.id;
}

async function shot(name) {
  await screenshot(page, name);
}

async function go(hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
}

function assertNoConsoleErrors(where) {
  const errors = consoleErrors.splice(0);
  assert.deepEqual(errors, [], `console errors on ${where}`);
}

before(async () => {
  ({ daemon, url, admin, enroll: enrollToken } = await startDaemon("loadlab-web-"));
  api = apiClient(url, admin);
  for (const [o, d] of CELLS) {
    const facts = { os: o, disk: d, cpu_model: "lab cpu", runner: "wine", arch: "x86_64" };
    const r = await api("POST", "/api/v1/agents/enroll", { name: `${o}-${d}`, facts, labels: { rack: o === "winxp" ? "a" : "b" } }, enrollToken);
    assert.equal(r.status, 201, r.text);
    agents[`${o}-${d}`] = { id: r.body.id, token: r.body.token, facts };
  }
  jobs.base = await columnJob(1);
  jobs.same = await columnJob(2);
  /* One more library: the compare page must say the generators differ. */
  jobs.slower = await columnJob(3, { default: 1.1, bind: 1.1 }, { dlls: 11 });
  jobs.cold = await coldJob();
  jobs.program = await programJob();

  context = await launchChromium();
  page = watchConsole(await context.newPage(), consoleErrors, (text) =>
    expectHttpErrors && /Failed to load resource: the server responded with a status of 4\d\d/.test(text));
});

after(async () => {
  if (context) await context.close();
  if (daemon) daemon.kill("SIGTERM");
});

test("GET /api/v1/results/{id} returns the stored result body to readers", async () => {
  const job = (await api("GET", `/api/v1/jobs/${jobs.base}`)).body;
  const task = job.tasks.find((t) => t.result_id);
  const r = await api("GET", `/api/v1/results/${task.result_id}`);
  assert.equal(r.status, 200);
  const posted = r.body.variants.find((v) => v.name === "rebase");
  const cell = `${task.cell.os}-${task.cell.disk}`;
  assert.deepEqual(r.body.facts, agents[cell].facts);
  assert.equal(posted.warm.samples_us.length, 30);
  assert.equal((await api("GET", "/api/v1/results/999999")).status, 404);
  assert.equal((await api("GET", `/api/v1/results/${task.result_id}`, undefined, null)).status, 401);
});

test("token asked once; the fleet page lists the enrolled agents; an admin quarantines one", async () => {
  expectHttpErrors = true; /* the first load, before the token, is a 401 */
  await page.goto(url + "/");
  await page.waitForSelector("#global-error:has-text('needs a token')");
  await page.fill("#token", admin);
  await page.click("#use-token");
  await page.waitForSelector("#agents tbody tr[data-agent]");
  consoleErrors.splice(0);
  expectHttpErrors = false;
  assert.equal(await page.evaluate(() => sessionStorage.getItem("loadlab.token")), admin);
  const names = await page.$$eval("#agents .agent-name", (els) => els.map((e) => e.textContent).sort());
  assert.deepEqual(names, Object.keys(agents).sort());
  const row = `#agents tr[data-agent="${agents["win10-ssd"].id}"]`;
  assert.match(await page.textContent(row), /disk=ssd/);
  assert.match(await page.textContent(row), /rack=b/);
  /* The daemon's version and the agents' (docs/operations.md, "Upgrades"). */
  const daemonVersion = (await api("GET", "/api/v1/agents")).body.daemon_version;
  assert.match(await page.textContent("#fleet-versions"), new RegExp(`^loadlabd ${daemonVersion}; agents: \\S+ ×\\d`));
  await shot("fleet");

  await page.click(`${row} button.quarantine`);
  await page.waitForSelector(`${row} .badge.state-quarantined`);
  const listed = (await api("GET", "/api/v1/agents")).body.agents.find((a) => a.id === agents["win10-ssd"].id);
  assert.equal(listed.state, "quarantined");
  await page.click(`${row} button.quarantine`);
  await page.waitForFunction((sel) => !document.querySelector(sel + " .badge.state-quarantined"), row);
  await page.fill(`${row} input.label-edit`, "pool=nightly");
  await page.click(`${row} button.label-save`);
  await page.waitForSelector(`${row} .chip:has-text('pool=nightly')`);
  const relabeled = (await api("GET", "/api/v1/agents")).body.agents.find((a) => a.id === agents["win10-ssd"].id);
  assert.equal(relabeled.labels.pool, "nightly");
  assert.notEqual(relabeled.state, "quarantined");
  assertNoConsoleErrors("fleet");
});

test("a job submitted through the form: server errors beside the field, then its tasks advance", async () => {
  await page.click("#nav a[data-page=submit]");
  await page.waitForSelector("#submit-form");
  await page.fill("input[name=name]", "from-the-form");
  await page.fill("input[name=dlls]", "0");
  await page.check("input[name=matrix_mode][value=cells]");
  await page.check(".matrix-value[data-key=os][value=winxp]");
  await page.check(".matrix-value[data-key=os][value=win10]");
  await page.check(".matrix-value[data-key=disk][value=hdd]");
  assert.equal(await page.textContent("#task-total"), "2");
  expectHttpErrors = true; /* the 400 is the point */
  await page.click("#submit-job");
  const err = await page.waitForSelector("[data-field=dlls] .field-error");
  assert.match(await err.textContent(), /Field 'dlls'/);
  expectHttpErrors = false;
  await page.fill("input[name=dlls]", "2");
  await page.fill("input[name=exports]", "10");
  await shot("submit");
  await page.click("#submit-job");
  await page.waitForFunction(() => /^#\/job\/\d+$/.test(location.hash));
  const id = +(await page.evaluate(() => location.hash.split("/")[2]));
  const job = (await api("GET", `/api/v1/jobs/${id}`)).body;
  assert.equal(job.name, "from-the-form");
  assert.equal(job.task_count, 2);
  assert.deepEqual(job.spec.generator.dlls, 2);
  await page.waitForSelector("#tasks tr[data-task]");
  assert.equal(await page.$$eval("#tasks tr[data-task]", (rows) => rows.length), 2);

  /* A fake agent takes the winxp cell and reports progress while the page polls. */
  const agent = agents["winxp-hdd"];
  const lease = (await api("POST", "/api/v1/lease", {}, agent.token)).body;
  assert.equal(lease.job_id, id);
  const row = `#tasks tr[data-task="${lease.task_id}"]`;
  await page.waitForSelector(`${row} .badge.state-leased`);
  const p = await api("POST", `/api/v1/tasks/${lease.task_id}/progress`, { attempt: lease.attempt, phase: "warm", percent: 40 }, agent.token);
  assert.equal(p.status, 200, p.text);
  await page.waitForFunction((sel) => {
    const r = document.querySelector(sel);
    return r && r.querySelector(".task-phase").textContent === "warm" && r.querySelector(".task-percent").textContent.includes("40 %");
  }, row);
  await shot("job-running");
  /* The fleet shows the agent's current task with its phase and progress. */
  await page.click("#nav a[data-page=fleet]");
  const agentRow = `#agents tr[data-agent="${agent.id}"]`;
  await page.waitForSelector(`${agentRow} a[href="#/job/${id}"]:has-text('task ${lease.task_id}')`);
  assert.match(await page.textContent(agentRow), /warm\s.*40 %/s);
  await shot("fleet-busy");
  await go(`#/job/${id}`);
  await page.waitForSelector(`${row} .badge.state-leased`);
  const r = await api("POST", `/api/v1/tasks/${lease.task_id}/result`,
    { attempt: lease.attempt, facts: agent.facts, variants: [{ name: "default", warm: { runs: 30, samples_us: samples(500, 99) } }] }, agent.token);
  assert.equal(r.status, 200, r.text);
  await page.waitForSelector(`${row} .badge.state-done`);
  /* The other cell fails for good: its reason is shown. */
  const other = agents["win10-hdd"];
  const lease2 = (await api("POST", "/api/v1/lease", {}, other.token)).body;
  assert.equal(lease2.job_id, id);
  await api("POST", `/api/v1/tasks/${lease2.task_id}/fail`, { attempt: lease2.attempt, reason: "mingw ran out of memory", retryable: false }, other.token);
  await page.waitForSelector("#failure-list:has-text('mingw ran out of memory')");
  await page.waitForSelector(`#tasks tr[data-task="${lease2.task_id}"] .badge.state-dead`);
  assertNoConsoleErrors("submit and job");
});

test("the report shows the numbers the API returns", async () => {
  await page.click("#nav a[data-page=jobs]");
  await page.waitForSelector(`#jobs tr[data-job="${jobs.base}"]`);
  await shot("jobs");
  await page.click(`#jobs tr[data-job="${jobs.base}"] a[href="#/report/${jobs.base}"]`);
  await page.waitForSelector("#warm-table");
  const report = (await api("GET", `/api/v1/jobs/${jobs.base}/report`)).body;
  let checked = 0;
  for (const row of report.warm.variants) {
    for (const c of row.cells) {
      const td = await page.$(`#warm-table td[data-variant="${row.variant}"][data-cell="${c.cell}"]`);
      assert.ok(td, `${row.variant} ${c.cell} is shown`);
      assert.equal(await td.getAttribute("data-status"), c.status);
      if (c.status !== "ok") {
        if (c.reason) assert.ok((await td.textContent()).includes(c.reason));
        continue;
      }
      assert.equal(await td.$eval(".v-median", (e) => e.textContent), us(c.median_us));
      assert.equal(await td.$eval(".v-min", (e) => e.textContent), us(c.min_us));
      assert.equal(await td.$eval(".v-ci-low", (e) => e.textContent), us(c.ci_low_us));
      assert.equal(await td.$eval(".v-n", (e) => e.textContent), String(c.n));
      if (c.change_pct !== undefined) {
        assert.equal(await td.$eval(".v-change", (e) => e.textContent), pct(c.change_pct));
        /* the star beside the interval and p that decide it (issue 39) */
        assert.equal(await td.$eval(".v-ratio-ci", (e) => e.textContent), `${c.ratio_ci_low.toFixed(4)}, ${c.ratio_ci_high.toFixed(4)}`);
        const rule = c.p_value < 0.05 && (c.ratio_ci_low > 1 || c.ratio_ci_high < 1) && Math.abs(c.change_pct) >= 1;
        assert.equal(rule, c.significant === true, JSON.stringify(c));
        assert.equal(await td.$eval(".v-star", (e) => e.textContent), rule ? " *" : "");
      }
      checked++;
    }
  }
  assert.ok(checked >= 16, `checked ${checked} cells`);
  assert.deepEqual(await page.$$eval("#findings li", (li) => li.map((e) => e.textContent)), report.findings);
  /* The box plot read the raw samples of a result. */
  await page.waitForFunction(() => /variants, raw samples of result/.test(document.querySelector("#box-note").textContent));
  assert.ok(await page.$("#heatmap canvas"));
  assert.ok(await page.$("#boxplot canvas"));
  await page.waitForTimeout(300);
  await shot("report");
  assertNoConsoleErrors("report");

  await go(`#/report/${jobs.cold}`);
  await page.waitForSelector("#cold-table");
  const cold = (await api("GET", `/api/v1/jobs/${jobs.cold}/report`)).body;
  const nr = cold.cold.variants.find((v) => v.variant === "no-rebase").cells[0];
  assert.equal(await page.$eval(`#cold-table td[data-variant="no-rebase"][data-cell="${nr.cell}"] .v-mean`, (e) => e.textContent), us(nr.mean_us, cold.cold.unit));
  assert.ok(await page.$("#cold-faults canvas"));
  await page.waitForTimeout(300);
  await shot("report-cold");
  assertNoConsoleErrors("cold report");
});

function cliCompare(base, cand, max) {
  const r = spawnSync(path.join(BUILD, "cli/loadlab"), ["--server", url, "--token", admin, "compare", String(base), String(cand),
    "--max-regression", String(max), "--format", "json"], { encoding: "utf8", timeout: 60000 });
  return { code: r.status, verdict: JSON.parse(r.stdout).verdict };
}

test("the compare page gives the CLI's verdict, its command line and a link that reproduces it", async () => {
  for (const [cand, max, expected] of [[jobs.slower, 5, "regression"], [jobs.same, 0, "ok"]]) {
    await page.click("#nav a[data-page=compare]");
    await page.waitForSelector("#compare-form");
    await page.selectOption("#compare-form select[name=baseline]", String(jobs.base));
    await page.selectOption("#compare-form select[name=candidate]", String(cand));
    await page.fill("#compare-form input[name=max_regression]", String(max));
    await page.click("#compare-form button");
    await page.waitForSelector("#verdict", { timeout: 10000 }).catch(async (e) => { await shot("compare-failed"); throw e; });
    const verdict = await page.getAttribute("#verdict", "data-verdict");
    const cli = cliCompare(jobs.base, cand, max);
    assert.equal(verdict, cli.verdict);
    assert.equal(verdict, expected);
    assert.equal(cli.code, expected === "regression" ? 1 : 0);
    assert.equal(await page.textContent("#compare-cmd"), `loadlab compare ${jobs.base} ${cand} --max-regression ${max}`);
    const cmp = (await api("GET", `/api/v1/compare?baseline=${jobs.base}&candidate=${cand}&max_regression=${max}`)).body;
    assert.equal(await page.$$eval("#compare-table tbody tr", (r) => r.length), cmp.rows.length);
    const slow = cmp.rows.find((r) => r.judged);
    assert.equal(await page.$eval(`#compare-table tr[data-variant="${slow.variant}"][data-cell="${slow.cell}"] .v-ratio`, (e) => e.textContent), slow.judged.ratio.toFixed(4));
    /* Every row shows the figures that judged it (issue 39): the ratio,
     * interval, change and p of its verdict, the verdict in words, and
     * never a significant interval beside "no significant change". */
    const shown = await page.$$eval("#compare-table tbody tr", (trs) => trs.map((tr) => ({
      status: tr.querySelector(".v-status").textContent, ratio: tr.querySelector(".v-ratio").textContent,
      ci: tr.querySelector(".v-ci").textContent, change: tr.querySelector(".v-change").textContent, p: tr.querySelector(".v-p").textContent })));
    const words = { faster: "faster", slower: "slower", no_significant_change: "no significant change", not_comparable: "not comparable" };
    for (const [i, r] of cmp.rows.entries()) {
      const s = shown[i], j = r.judged;
      assert.equal(s.status, words[r.status]);
      if (!j) continue;
      assert.equal(s.ratio, j.ratio.toFixed(4));
      assert.equal(s.ci, `[${j.ci_low.toFixed(4)}, ${j.ci_high.toFixed(4)}]` + (j.scope === "within-and-between-jobs" ? " across jobs" : ""));
      assert.deepEqual([j.ci_low, j.ci_high], [r.interval_low, r.interval_high]);
      assert.equal(s.change, (j.change_pct > 0 ? "+" : "") + j.change_pct.toFixed(2) + " %");
      assert.equal(s.p, typeof j.p_value === "number" ? (j.p_value !== 0 && j.p_value < 0.001 ? j.p_value.toExponential(1) : j.p_value.toFixed(3)) : "–");
      const called = typeof j.p_value === "number" ? j.p_value < 0.05 && (j.ci_low > 1 || j.ci_high < 1) && Math.abs(j.change_pct) >= 1
        : (j.ci_low > 1.01 || j.ci_high < 0.99) && Math.abs(j.change_pct) >= 1;
      assert.equal(called, r.status !== "no_significant_change", JSON.stringify(r));
    }
    /* The chart draws each row's judged ratio as a bar from 1.0 (no
     * change) with its whole interval on the axis, and says what the CLI
     * says above the table. */
    const drawn = await page.evaluate(() => {
      const el = document.querySelector("#compare-chart");
      const option = echarts.getInstanceByDom(el).getOption();
      return { barsFrom: el.dataset.barsFrom, min: option.xAxis[0].min, max: option.xAxis[0].max,
        bars: option.series[0].data.map((d) => d.value), notes: [...document.querySelectorAll(".compare-note")].map((n) => n.textContent) };
    });
    const comparable = cmp.rows.filter((r) => typeof r.ratio === "number");
    assert.equal(drawn.barsFrom, "1");
    assert.equal(drawn.bars.length, comparable.length);
    /* the chart's bars are the judged figures, the table's */
    assert.deepEqual(drawn.bars.map((b) => b.slice(1)), cmp.rows.filter((r) => r.judged).map((r) => [r.judged.ratio, r.judged.ci_low, r.judged.ci_high]));
    assert.ok(drawn.min < 1 && drawn.max > 1, JSON.stringify(drawn));
    for (const [, figure, low, high] of drawn.bars) {
      assert.ok(drawn.min <= low && low <= figure && figure <= high && high <= drawn.max, JSON.stringify([drawn.min, low, figure, high, drawn.max]));
    }
    assert.equal(drawn.notes.some((n) => n.startsWith("The jobs' generators differ")), cand === jobs.slower, drawn.notes.join(" | "));
    assert.ok(drawn.notes.some((n) => n.startsWith("Judged by the ")), drawn.notes.join(" | "));
    /* Jobs of one spec: the earlier ones are the later compares' history. */
    const across = cmp.rows.filter((r) => r.interval_scope === "within-and-between-jobs").length;
    assert.ok(drawn.notes.some((n) => n.startsWith(across ? "Intervals hold what varies between jobs" : "Intervals are within-job only")),
      drawn.notes.join(" | "));
    await page.waitForTimeout(300);
    if (expected === "regression") await shot("compare");

    /* The link, opened in a new tab (its own browser session: the token is
     * asked for, the first load is a 401), says the same. */
    const link = await page.getAttribute("#compare-link", "href");
    const tab = await context.newPage();
    const tabErrors = [];
    tab.on("console", (m) => {
      if (m.type() === "error" && !/status of 401/.test(m.text())) tabErrors.push(m.text());
    });
    await tab.goto(link);
    await tab.waitForSelector("#global-error:has-text('needs a token')");
    await tab.fill("#token", admin);
    await tab.click("#use-token");
    await tab.waitForSelector("#verdict");
    assert.equal(await tab.getAttribute("#verdict", "data-verdict"), verdict);
    await tab.close();
    assert.deepEqual(tabErrors, []);
  }
  assertNoConsoleErrors("compare");
});

test("a program job's page lists its files and each variant's modules with both bases", async () => {
  const job = (await api("GET", `/api/v1/jobs/${jobs.program}`)).body;
  assert.equal(job.state, "done");
  const result = (await api("GET", `/api/v1/results/${job.tasks[0].result_id}`)).body;
  await go(`#/job/${jobs.program}`);
  await page.waitForSelector("#program-files tbody tr");
  const files = await page.$$eval("#program-files tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
  assert.deepEqual(files, Object.entries(PROGRAM_FILES).sort().map(([p, text]) =>
    [p === "bin/app.exe" ? p + " exe" : p, text.length + " B", sha256(text)]));
  await page.waitForSelector(".program-variant");
  for (const v of result.variants) {
    const rows = await page.$$eval(`.program-variant[data-variant="${v.name}"] .program-modules tbody tr`,
      (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
    assert.deepEqual(rows.map((r) => [r[0], r[2], r[3]]), v.verify.modules.map((m) => [m.name, m.preferred, m.actual]), v.name);
    assert.deepEqual(rows.map((r) => r[4] === "relocated"), v.verify.modules.map((m) => m.relocated), v.name);
  }
  /* The API's claim, drawn: as built the DLL moved, rebased it did not. */
  assert.match(await page.textContent('.program-variant[data-variant="as-built"]'), /core\.dll\s*bin\/core\.dll\s*0x10000000\s*0x7ff0000\s*relocated/);
  await shot("job-program");
  /* Its report works as for a generated job, with the as-built baseline. */
  const report = await api("GET", `/api/v1/jobs/${jobs.program}/report`);
  assert.equal(report.status, 200, report.text);
  assert.equal(report.body.job.family, "program");
  assert.equal(report.body.job.program.exe, "bin/app.exe");
  assert.equal(report.body.warm.baseline, "as-built");
  assertNoConsoleErrors("program job");
});

test("every page is reachable from the first by links, none logs an error", async () => {
  const seen = new Set();
  const kinds = new Set();
  const queue = ["#/fleet"];
  await page.goto(url + "/");
  await page.waitForSelector("#agents tbody tr");
  const first = await page.$$eval("a[href^='#/']", (as) => as.map((a) => a.getAttribute("href")));
  queue.push(...first);
  while (queue.length && seen.size < 30) {
    const hash = queue.shift();
    const kind = hash.replace(/^#\/([a-z]+).*$/, "$1");
    if (seen.has(hash) || (kinds.has(kind) && kind !== "job" && kind !== "report") || (kind === "job" || kind === "report") && [...seen].filter((h) => h.startsWith("#/" + kind + "/")).length >= 2) continue;
    seen.add(hash);
    kinds.add(kind);
    await go(hash);
    await page.waitForFunction(() => !document.querySelector("#page").textContent.startsWith("Loading"));
    await page.waitForTimeout(150);
    assert.equal(await page.textContent("#global-error"), "", `no error on ${hash}`);
    const text = await page.textContent("#page");
    assert.ok(!text.includes("Could not load this page"), `${hash} loaded: ${text.slice(0, 300)}`);
    const links = await page.$$eval("a[href^='#/']", (as) => as.map((a) => a.getAttribute("href")));
    queue.push(...links.filter((h) => !seen.has(h)));
    assertNoConsoleErrors(hash);
  }
  for (const k of ["fleet", "jobs", "job", "submit", "report", "compare"]) assert.ok(kinds.has(k), `page ${k} reachable (${[...kinds]})`);
});

test("a page left while it awaited the API does not overwrite the next one with its failure", async () => {
  /* The jobs list held back until the job page is drawn: the jobs page
   * then finds its table gone, a failure of the page already left. */
  let release;
  const held = new Promise((r) => { release = r; });
  const hold = async (route) => { await held; await route.continue(); };
  await page.route("**/api/v1/jobs?limit=*", hold);
  try {
    const id = (await api("GET", "/api/v1/jobs?limit=1")).body.jobs[0].id;
    await go("#/jobs");
    await page.waitForSelector("#jobs");
    await go(`#/job/${id}`);
    await page.waitForFunction((n) => document.querySelector("#job-name") && document.querySelector("#job-name").textContent !== "" &&
      document.querySelector("h1").textContent.startsWith(`Job ${n}`), id);
    release();
    await page.waitForTimeout(500);
    const text = await page.textContent("#page");
    assert.ok(!text.includes("Could not load this page"), text.slice(0, 300));
    assert.ok((await page.textContent("h1")).startsWith(`Job ${id}`));
  } finally {
    release();
    await page.unroute("**/api/v1/jobs?limit=*", hold);
  }
  consoleErrors.splice(0);
});

test("a job of 1,000 tasks stays responsive: one request per poll, all rows drawn quickly", async () => {
  /* 1,000 agents for an each_agent matrix, enrolled 50 at a time. */
  for (let i = 0; i < 1000; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, k) => api("POST", "/api/v1/agents/enroll",
      { name: `bulk-${i + k}`, facts: { os: "win10" }, labels: { bulk: "yes" } }, enrollToken).then((r) => assert.equal(r.status, 201, r.text))));
  }
  const created = await api("POST", "/api/v1/jobs", { name: "thousand", family: "pe", generator: { dlls: 2, exports: 10 },
    variants: ["default"], matrix: { each_agent: { bulk: ["yes"] } } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.task_count, 1000);
  const requests = [];
  /* The header's open-alert count (/api/v1/alerts) is fetched on each page, apart from the poll. */
  const onRequest = (r) => { if (r.url().includes("/api/") && !r.url().includes("/api/v1/alerts")) requests.push(r.url()); };
  page.on("request", onRequest);
  const started = Date.now();
  await go(`#/job/${created.body.id}`);
  await page.waitForFunction(() => document.querySelectorAll("#tasks tr[data-task]").length === 1000);
  const drawn = Date.now() - started;
  await page.waitForTimeout(3200); /* two more polls */
  page.off("request", onRequest);
  assert.ok(drawn < 5000, `1,000 tasks drawn in ${drawn} ms`);
  /* the agents' names, once per page (job.js, agentNames) */
  const polls = requests.filter((u) => !u.endsWith("/api/v1/agents"));
  assert.ok(requests.length - polls.length <= 1, requests.join(" "));
  assert.ok(polls.every((u) => u.endsWith(`/api/v1/jobs/${created.body.id}`)), requests.join(" "));
  assert.ok(polls.length >= 2 && polls.length <= 5, `${polls.length} requests`);
  /* The page answers input while it polls: filtering redraws at once. */
  const t0 = Date.now();
  await page.selectOption("#task-filter", "leased");
  await page.waitForFunction(() => document.querySelectorAll("#tasks tr[data-task]").length === 0);
  assert.ok(Date.now() - t0 < 2000);
  await go("#/fleet");
  await page.waitForFunction(() => document.querySelectorAll("#agents tr[data-agent]").length === 1004);
  assertNoConsoleErrors("1,000 tasks");
});

test("the job page says why a queued task waits, until an agent that can take it enrolls", async () => {
  const created = await api("POST", "/api/v1/jobs", { name: "waits-for-win2000", family: "pe",
    generator: { dlls: 2, exports: 10 }, variants: ["default"], matrix: { cells: { os: ["win2000"] } } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.body.warnings, ["1 task: no agent has os=win2000"]);
  await go(`#/job/${created.body.id}`);
  await page.waitForSelector("#waiting-list li", { timeout: 10000 }).catch(async (e) => { await shot("waiting-failed"); throw e; });
  assert.match(await page.textContent("#waiting-list"), /no agent has os=win2000 \(task \d+\)/);
  assert.match(await page.textContent("#tasks tr[data-task]"), /waits: no agent has os=win2000/);
  await shot("job-waiting");
  const r = await api("POST", "/api/v1/agents/enroll", { name: "w2k-1", facts: { os: "win2000" }, labels: {} }, enrollToken);
  assert.equal(r.status, 201, r.text);
  /* The page polls: the reason goes away without a reload. */
  await page.waitForFunction(() => !document.querySelector("#waiting-list"), null, { timeout: 10000 });
  assert.doesNotMatch(await page.textContent("#tasks tr[data-task]"), /waits:/);
  assert.equal((await api("POST", `/api/v1/jobs/${created.body.id}/cancel`, {})).status, 200);
  assertNoConsoleErrors("waiting job");
});

test("the fleet page shows each agent's last calibration: injected → recovered, noise, when, its job", async () => {
  /* An agent runs a calibration job pinned to it by name (as `loadlab
   * calibrate` submits it) and posts samples known in advance. */
  const facts = { os: "linux", runner: "native", arch: "x86_64" };
  const enrolled = await api("POST", "/api/v1/agents/enroll", { name: "calib-1", facts, labels: {} }, enrollToken);
  assert.equal(enrolled.status, 201, enrolled.text);
  const delay = 1000;
  const created = await api("POST", "/api/v1/jobs", { name: "calibrate elf 1000 us", family: "elf", priority: 100,
    generator: { dlls: 2, exports: 16 }, calibration: { delay_us: delay },
    variants: [0, 1, 2].map((k) => ({ name: k ? `delay-${k * delay}` : "delay-0", preset: "default", delay_us: k * delay })),
    matrix: { each_agent: { agent: ["calib-1"] } } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.task_count, 1);
  const warm = (center, seed, noise) => ({ runs: 30, round_sizes: [10, 10, 10], samples_us: samples(center, seed), noise });
  const posted = [warm(400, 71, { max_other_cpu_pct: 31.5, flagged: 4, retaken: 3 }), warm(1420, 72, { max_other_cpu_pct: 12, flagged: 1, retaken: 1 }),
    warm(2430, 73, { max_other_cpu_pct: 8, flagged: 0, retaken: 0 })];
  const lease = await leaseAndPost({ token: enrolled.body.token }, { facts, runner: "native",
    variants: posted.map((w, k) => ({ name: k ? `delay-${k * delay}` : "delay-0", valid: true, warm: w })) });
  assert.equal(lease.job_id, created.body.id);

  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
  /* Same counts and rounds: paired by pass, the median of per-pass differences. */
  const recovered = median(posted[1].samples_us.map((x, k) => x - posted[0].samples_us[k]));
  const listed = (await api("GET", `/api/v1/agents/${enrolled.body.id}`)).body;
  const cal = listed.last_calibration;
  assert.ok(cal, JSON.stringify(listed));
  assert.equal(cal.job_id, created.body.id);
  assert.equal(cal.injected_us, delay);
  assert.ok(Math.abs(cal.recovered_us - recovered) < 1e-6, `${cal.recovered_us} vs ${recovered}`);
  assert.equal(cal.noise.max_other_cpu_pct, 31.5);
  assert.equal(cal.noise.flagged, 5);
  assert.equal(cal.paired, true);

  await go("#/fleet");
  const row = `#agents tr[data-agent="${enrolled.body.id}"]`;
  await page.waitForSelector(`${row} .calibration`);
  const figure = `${delay} µs → ${Math.round(recovered)} µs (${Math.round(100 * recovered / delay)} %)`;
  assert.equal((await page.textContent(`${row} .calibration-figure`)).trim(), figure);
  assert.match(await page.textContent(`${row} .calibration-noise`), /other CPU max 32 %, flagged 5, retaken 4/);
  assert.match(await page.textContent(`${row} .calibration`), /elf \(native\) · paired/);
  assert.equal(await page.getAttribute(`${row} a.calibration-job`, "href"), `#/job/${created.body.id}`);
  /* An agent never calibrated says so. */
  assert.match(await page.textContent(`#agents tr[data-agent="${agents["winxp-hdd"].id}"] td:nth-child(8)`), /never calibrated/);
  await page.locator(row).scrollIntoViewIfNeeded();
  await shot("fleet-calibration");
  await page.click(`${row} a.calibration-job`);
  await page.waitForFunction((id) => location.hash === `#/job/${id}`, created.body.id);
  assertNoConsoleErrors("fleet calibration");
});

test("the cold report marks which page-fault and bytes-read differences against the cold baseline are significant", async () => {
  /* The office study's job (schemas/examples/office-cold-start.json) on one
   * agent of its own, with cold runs shaped like the real ones
   * (tests/agent/test_office_report.py): reorder well below rebase in page
   * faults and bytes read; no-rebase rebase's own runs in another order. */
  const facts = { os: "winxp", disk: "ssd", cpu_model: "lab cpu", runner: "wine", arch: "x86_64" };
  const enrolled = await api("POST", "/api/v1/agents/enroll", { name: "office-1", facts, labels: { bench: "office" } }, enrollToken);
  assert.equal(enrolled.status, 201, enrolled.text);
  const spec = JSON.parse(fs.readFileSync(path.join(SOURCE, "schemas/examples/office-cold-start.json"), "utf8"));
  const created = await api("POST", "/api/v1/jobs", { ...spec, priority: 100, matrix: { cells: { bench: ["office"] } } });
  assert.equal(created.status, 201, created.text);
  const runs = 5;
  const counts = (faults, read, seed) => ({ page_faults: samples(faults, seed, runs, faults * 0.01).map(Math.round),
    read_bytes: samples(read, seed + 1, runs, read * 0.005).map(Math.round) });
  const rebase = { method: "posix_fadvise", cold: true, samples_us: samples(91000, 81, runs, 900), ...counts(1273, 71.5e6, 82) };
  const reversed = Object.fromEntries(Object.entries(rebase).map(([k, v]) => [k, Array.isArray(v) ? [...v].reverse() : v]));
  const lease = await leaseAndPost({ token: enrolled.body.token }, { facts, variants: [
    { name: "rebase", valid: true, cold: rebase },
    { name: "reorder", valid: true, cold: { method: "posix_fadvise", cold: true, samples_us: samples(40000, 83, runs, 400), ...counts(868, 45.8e6, 84) } },
    { name: "no-rebase", valid: true, cold: reversed }] });
  assert.equal(lease.job_id, created.body.id);

  const cold = (await api("GET", `/api/v1/jobs/${created.body.id}/report`)).body.cold;
  assert.equal(cold.baseline, "rebase");
  const cellOf = (variant) => cold.variants.find((v) => v.variant === variant).cells[0];
  const reorder = cellOf("reorder"), same = cellOf("no-rebase");
  /* What the API says, which the page must show. */
  assert.equal(reorder.page_faults_significant, true);
  assert.equal(reorder.read_bytes_significant, true);
  assert.ok(reorder.page_faults_change_pct < -25 && reorder.read_bytes_change_pct < -25, JSON.stringify(reorder));
  assert.equal(same.page_faults_significant, false);
  assert.equal(same.read_bytes_significant, false);

  await go(`#/report/${created.body.id}`);
  await page.waitForSelector("#cold-table");
  const td = (variant, c) => `#cold-table td[data-variant="${variant}"][data-cell="${c.cell}"]`;
  for (const [variant, c] of [["reorder", reorder], ["no-rebase", same]]) {
    for (const [cls, key] of [["faults", "page_faults"], ["read", "read_bytes"]]) {
      const mark = await page.$eval(`${td(variant, c)} .v-${cls}-change`, (e) => ({ sig: e.dataset.significant, text: e.textContent }));
      assert.equal(mark.sig, String(c[`${key}_significant`]), `${variant} ${key}`);
      assert.equal(mark.text, `(${pct(c[`${key}_change_pct`])}${c[`${key}_significant`] ? " *" : ""})`);
    }
  }
  assert.equal(await page.$eval(`${td("reorder", reorder)} .v-faults`, (e) => e.textContent), reorder.page_faults_median.toFixed(0));
  /* The list under the bars names exactly the significant differences. */
  assert.deepEqual(await page.$$eval("#cold-significant li[data-count]", (li) => li.map((e) => `${e.dataset.variant} ${e.dataset.count}`)),
    ["reorder page_faults", "reorder read_bytes"]);
  /* The bars: each variant's median per cell, the significant ones bordered
   * and starred, the others faded. */
  const bars = await page.evaluate(() => ["#cold-faults", "#cold-bytes"].map((sel) =>
    echarts.getInstanceByDom(document.querySelector(sel)).getOption().series.map((s) => ({ name: s.name, data: s.data }))));
  for (const [i, key] of [[0, "page_faults"], [1, "read_bytes"]]) {
    const byName = Object.fromEntries(bars[i].map((s) => [s.name, s.data[0]]));
    assert.equal(byName.rebase.value, cellOf("rebase")[`${key}_median`]);
    assert.equal(byName.reorder.value, reorder[`${key}_median`]);
    assert.equal(byName.reorder.significant, true);
    assert.equal(byName.reorder.itemStyle.borderWidth, 2);
    assert.match(byName.reorder.label.formatter, /^-\d+ % \*$/);
    assert.equal(byName["no-rebase"].significant, false);
    assert.equal(byName["no-rebase"].itemStyle.opacity, 0.4);
    assert.doesNotMatch(byName["no-rebase"].label.formatter, /\*/);
  }
  await page.locator("#cold-faults").scrollIntoViewIfNeeded();
  await page.waitForTimeout(300);
  await shot("report-cold-significance");
  assertNoConsoleErrors("cold significance");
});
