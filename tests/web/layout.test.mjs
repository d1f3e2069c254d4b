/*
 * Every page of the dashboard fits a laptop (issue 41): headless Chromium
 * against a real loadlabd, at 1,000 and 1,400 px wide (800 high: a
 * 1,280 × 800 laptop lies between; the layout is fluid),
 * loads the fleet (agents with a long toolchain_paths fact and a long CPU
 * name, one quarantined), jobs, a job, submit, a report,
 * compare, the series list and a series, schedules and alerts, and on
 * each asserts that nothing is cut off: the page has no horizontal scroll,
 * every table is as wide as its container at most (scrollWidth ≤
 * clientWidth), and the fleet's state column and admin buttons lie inside
 * the viewport. A screenshot of each page at each width is saved in a new
 * temporary folder, printed at the start ("screenshots in ...").
 *
 * Also what a newcomer reads on those pages: before a token, one plain
 * sentence (not red, no HTTP words) and nothing else; the job page names
 * each task's agent by name, linked, and the job's series and revision,
 * linked, and a done task shows no phase; an alert of a pe series (which
 * cannot be bisected) has no Bisect button; an admin sets the builder mark
 * from the fleet page.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startDaemon, apiClient, waitFor, samples, launchChromium, watchConsole } from "./lib.mjs";

const WIDTHS = [1000, 1400];
const HEIGHT = 800;
const SERIES = "layout/main";
/* Facts as a real Linux builder reports them: toolchain_paths is one
 * unbreakable string of 200 characters. */
const LONG_FACTS = {
  arch: "x86_64", disk: "ssd", runner: "wine",
  cpu_model: "Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz (family 6 model 142 stepping 10)",
  toolchain: ["gcc+ld", "i686-w64-mingw32-gcc", "x86_64-w64-mingw32-gcc"],
  toolchain_paths: "/usr/bin/gcc:/usr/bin/ld:/usr/bin/i686-w64-mingw32-gcc:/usr/bin/x86_64-w64-mingw32-gcc:" +
    "/usr/lib/gcc/x86_64-linux-gnu/12/cc1:/usr/lib/gcc-cross/i686-w64-mingw32/12-win32/cc1",
};

let daemon, url, admin, api, context, page, shots;
const agents = {};          /* os -> {id, token, facts} */
const jobs = [];            /* r1, r2 */
let scheduleId;
const consoleErrors = [];
let expectHttpErrors = false;

/* Submits revision REV of the series (a pe job, one cell per os) and
 * posts each cell's result from the agent of its os, the warm samples
 * around CENTER µs. Resolves to the job's id. */
async function revisionJob(rev, center) {
  const created = await api("POST", "/api/v1/jobs", { name: "layout-" + rev, family: "pe", series: SERIES, revision: rev,
    generator: { dlls: 2, exports: 10 }, variants: ["default", "rebase"], measure: { warm: { runs: 30, warmup: 1 } },
    matrix: { cells: { os: ["winxp", "win10"] } } });
  assert.equal(created.status, 201, created.text);
  for (const [i, o] of ["winxp", "win10"].entries()) {
    const a = agents[o];
    const lease = await api("POST", "/api/v1/lease", {}, a.token);
    assert.equal(lease.status, 200, lease.text);
    const variants = ["default", "rebase"].map((name, k) => ({ name, valid: true,
      warm: { runs: 30, samples_us: samples(center * (1 + k / 10), 100 * jobs.length + 10 * i + k) } }));
    const posted = await api("POST", `/api/v1/tasks/${lease.body.task_id}/result`, { attempt: lease.body.attempt, facts: a.facts, variants }, a.token);
    assert.equal(posted.status, 200, posted.text);
  }
  return created.body.id;
}

before(async () => {
  let enroll;
  ({ daemon, url, admin, enroll } = await startDaemon("loadlab-web-layout-"));
  api = apiClient(url, admin);
  shots = fs.mkdtempSync(path.join(os.tmpdir(), "loadlab-web-layout-shots-"));
  console.log(`screenshots in ${shots}`);
  for (const o of ["winxp", "win10", "win7"]) {
    const facts = { ...LONG_FACTS, os: o };
    const r = await api("POST", "/api/v1/agents/enroll", { name: `lab-${o}-with-a-longer-name`, facts, labels: { rack: "a", pool: "nightly" } }, enroll);
    assert.equal(r.status, 201, r.text);
    agents[o] = { id: r.body.id, token: r.body.token, facts };
  }
  assert.equal((await api("PATCH", `/api/v1/agents/${agents.win7.id}`, { quarantined: true })).status, 200);
  jobs.push(await revisionJob("r1", 1000));
  jobs.push(await revisionJob("r2", 1150));
  const sched = await api("POST", "/api/v1/schedules", { series: SERIES, interval_s: 86400, enabled: false,
    job: { name: "nightly", family: "pe", series: SERIES, generator: { dlls: 2, exports: 10 }, variants: ["default"] } });
  assert.equal(sched.status, 201, sched.text);
  scheduleId = sched.body.id;
  await waitFor("the alert of r2", async () => (await api("GET", "/api/v1/alerts")).body.alerts.length === 1, 20000);

  context = await launchChromium();
  page = await watchedPage();
  /* the token as "Use token" leaves it (the first test has a page without) */
  await page.addInitScript((t) => sessionStorage.setItem("loadlab.token", t), admin);
  await page.goto(url + "/#/fleet");
});

/* A new tab whose console errors and uncaught exceptions go to
 * consoleErrors (a 401's while expectHttpErrors). */
async function watchedPage() {
  return watchConsole(await context.newPage(), consoleErrors, (text) =>
    expectHttpErrors && /Failed to load resource: the server responded with a status of 401/.test(text));
}

after(async () => {
  if (context) await context.close();
  if (daemon) daemon.kill("SIGTERM");
});

/* Shows HASH and resolves once its page is drawn: no "Loading…" left,
 * READY (a selector) present, and the charts given a moment to lay out. */
async function show(hash, ready) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForFunction((h) => location.hash === h && !document.getElementById("page").textContent.includes("Loading…"), hash);
  await page.waitForSelector(ready);
  await page.waitForTimeout(150);
}

/* What is cut off on the page shown now, as sentences ([] when nothing). */
function cutOff() {
  return page.evaluate(() => {
    const out = [];
    const vw = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > vw + 1)
      out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px in ${vw}`);
    for (const t of document.querySelectorAll("#page table")) {
      const box = t.closest(".scroll") || t.parentElement;
      if (t.scrollWidth > box.clientWidth + 1)
        out.push(`table ${t.id || t.className || "?"} is ${t.scrollWidth} px in a ${box.clientWidth} px box`);
    }
    const inside = (el, what) => {
      const r = el.getBoundingClientRect();
      if (r.width && (r.left < 0 || r.right > vw + 1)) out.push(`${what} at ${Math.round(r.left)}..${Math.round(r.right)} px of ${vw}`);
    };
    document.querySelectorAll("#agents thead th").forEach((th) => inside(th, `the fleet's column '${th.textContent}'`));
    document.querySelectorAll("#agents td.agent-admin button, #agents td.agent-admin input").forEach((b) =>
      inside(b, `admin control '${b.textContent || b.placeholder}' of agent ${b.closest("tr").dataset.agent}`));
    document.querySelectorAll("header a, header button, header input").forEach((b) => inside(b, `header item '${b.textContent || b.placeholder}'`));
    return out;
  });
}

test("before a token: one plain sentence, nothing red, no HTTP words", async () => {
  expectHttpErrors = true;
  const bare = await watchedPage();
  await bare.setViewportSize({ width: 1000, height: HEIGHT });
  await bare.goto(url + "/#/fleet");
  await bare.waitForSelector("#global-error:has-text('needs a token')");
  await bare.waitForFunction(() => !document.getElementById("page").textContent.includes("Loading…"));
  const said = await bare.evaluate(() => ({
    text: document.getElementById("global-error").textContent,
    color: getComputedStyle(document.getElementById("global-error")).color,
    page: document.getElementById("page").textContent.trim(),
    red: [...document.querySelectorAll(".error")].filter((e) => e.textContent.trim()).length,
  }));
  await bare.screenshot({ path: path.join(shots, "login-1000.png") });
  assert.equal(said.page, "", "the page adds nothing to the sentence");
  assert.equal(said.red, 0, `nothing in red: ${JSON.stringify(said)}`);
  assert.equal(said.text.trim().split(/(?<=[.!?])\s+/).length, 1, `one sentence: ${said.text}`);
  assert.doesNotMatch(said.text, /HTTP|401|Bearer|Authorization|unauthorized/i);
  await bare.fill("#token", admin);
  await bare.click("#use-token");
  await bare.waitForSelector("#agents tr[data-agent]");
  await bare.close();
  expectHttpErrors = false;
  consoleErrors.splice(0);
});

test("every page at 1,000 and 1,400 px: nothing cut off, admin buttons in view", async () => {
  const [r1, r2] = jobs;
  const pages = [
    ["fleet", "#/fleet", "#agents tr[data-agent]"],
    ["jobs", "#/jobs", "#jobs tr[data-job]"],
    ["job", `#/job/${r2}`, "#tasks tr[data-task]"],
    ["submit", "#/submit", "#submit-form"],
    ["report", `#/report/${r2}`, "#warm-table"],
    ["compare", `#/compare?baseline=${r1}&candidate=${r2}&max_regression=0`, "#compare-table"],
    ["series-list", "#/series", "#page table"],
    ["series", `#/series/${encodeURIComponent(SERIES)}`, "#series-jobs"],
    ["schedules", "#/schedules", `#page tr[data-schedule="${scheduleId}"]`],
    ["alerts", "#/alerts", "#alerts tr[data-alert]"],
  ];
  const problems = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: HEIGHT });
    for (const [name, hash, ready] of pages) {
      await show(hash, ready);
      await page.screenshot({ path: path.join(shots, `${name}-${width}.png`), fullPage: true });
      for (const p of await cutOff()) problems.push(`${name} at ${width} px: ${p}`);
    }
  }
  assert.deepEqual(problems, [], problems.join("\n"));
  assert.deepEqual(consoleErrors.splice(0), []);
});

test("the fleet folds the long facts, shows the builder mark and lets an admin set it", async () => {
  await page.setViewportSize({ width: 1000, height: HEIGHT });
  await show("#/fleet", "#agents tr[data-agent]");
  const row = `#agents tr[data-agent="${agents.winxp.id}"]`;
  /* toolchain_paths is behind the disclosure, os in sight */
  assert.equal(await page.$eval(row, (r) => !!r.querySelector("details.facts-long .chip") &&
    r.querySelector("details.facts-long").textContent.includes("toolchain_paths=")), true);
  assert.equal(await page.$eval(row, (r) => [...r.querySelectorAll("td.agent-facts > .chip")].some((c) => c.textContent === "os=winxp")), true);
  assert.equal(await page.$$eval(`${row} .badge.builder`, (b) => b.length), 0);
  await page.click(`${row} button.builder-mark`);
  await page.waitForSelector(`${row} .badge.builder`);
  assert.equal((await api("GET", `/api/v1/agents/${agents.winxp.id}`)).body.builder, true);
  assert.match(await page.textContent(`${row} button.builder-mark`), /Unmark builder/);
  await page.screenshot({ path: path.join(shots, "fleet-builder-1000.png") });
  await page.click(`${row} button.builder-mark`);
  await page.waitForFunction((sel) => !document.querySelector(sel + " .badge.builder"), row);
  assert.equal((await api("GET", `/api/v1/agents/${agents.winxp.id}`)).body.builder, false);
  assert.deepEqual(consoleErrors.splice(0), []);
});

test("the job page names each task's agent, the series and the revision, linked; a done task shows no phase", async () => {
  const id = jobs[1];
  await show(`#/job/${id}`, "#tasks tr[data-task] a.agent-link");
  const job = (await api("GET", `/api/v1/jobs/${id}`)).body;
  for (const t of job.tasks) {
    assert.equal(t.agent_id, agents[t.cell.os].id);
    const name = `lab-${t.cell.os}-with-a-longer-name`;
    const link = await page.$eval(`#tasks tr[data-task="${t.id}"] a.agent-link`, (a) => [a.textContent, a.getAttribute("href")]);
    assert.deepEqual(link, [name, `#/fleet?agent=${t.agent_id}`]);
    assert.equal(t.state, "done");
    assert.equal(await page.textContent(`#tasks tr[data-task="${t.id}"] .task-phase`), "");
  }
  assert.deepEqual(await page.$eval("#job-series", (a) => [a.textContent, a.getAttribute("href")]), [SERIES, "#/series/" + encodeURIComponent(SERIES)]);
  assert.equal(await page.textContent("#job-revision"), "r2");
  assert.match(await page.textContent("#task-count"), /^2 of 2 tasks$/);
  /* the agent's link marks its row on the fleet page */
  await page.click(`#tasks tr[data-task="${job.tasks[0].id}"] a.agent-link`);
  await page.waitForSelector(`#agents tr.wanted[data-agent="${job.tasks[0].agent_id}"]`);
  assert.deepEqual(consoleErrors.splice(0), []);
});

test("an alert of a series that cannot be bisected (pe jobs) offers no Bisect", async () => {
  const alert = (await api("GET", "/api/v1/alerts")).body.alerts[0];
  assert.deepEqual([alert.baseline_id, alert.job_id], jobs);
  await show("#/alerts", `tr[data-alert="${alert.id}"]`);
  await page.waitForTimeout(300);
  assert.equal(await page.$$eval(`tr[data-alert="${alert.id}"] button.bisect`, (b) => b.length), 0);
  assert.equal(await page.$$eval(`tr[data-alert="${alert.id}"] button.ack`, (b) => b.length), 1);
  assert.deepEqual(consoleErrors.splice(0), []);
});
