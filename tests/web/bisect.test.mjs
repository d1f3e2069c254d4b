/*
 * The Alerts page's Bisect button and the bisection page in headless
 * Chromium against a real loadlabd (docs/bisect.md, "On the dashboard"):
 * a program series of two revisions, each a real submit of a folder by the
 * `loadlab` CLI (its blobs uploaded), whose results a fake agent posts over
 * HTTP, r1 10 % slower than r0: an alert. Clicking Bisect on it starts a
 * bisection from r0 (good) to r1 (bad) in the alert's variant and cell and
 * opens #/bisections/ID, whose step 1 is the reproducing A/B job (r1's
 * build against r0's, pinned to the agent that measured r1). Cancel stops
 * the bisection and its step's job. Nothing logs a console error.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { BUILD, startDaemon, apiClient, waitFor, samples, screenshot, openDashboard, enrollAgent } from "./lib.mjs";

const FACTS = { os: "win10", disk: "ssd", cpu_model: "lab cpu", runner: "wine" };
const SERIES = "bisect/web";

let daemon, url, admin, api, context, page, tmp;
const jobs = [];
const consoleErrors = [];

/* Submits revision REV of the series with `loadlab submit --program-dir`:
 * a folder whose app.exe starts with MZ (the CLI's rule for a PE program)
 * and differs by revision. Resolves to the job's id. */
function submitRevision(rev) {
  const folder = path.join(tmp, rev);
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, "app.exe"), Buffer.concat([Buffer.from("MZ"), Buffer.alloc(510, rev)]));
  const jobPath = path.join(tmp, rev + ".json");
  fs.writeFileSync(jobPath, JSON.stringify({ name: "startup-" + rev, family: "program", series: SERIES, revision: rev,
    program: { exe: "app.exe" }, variants: ["as-built"] }));
  const out = execFileSync(path.join(BUILD, "cli/loadlab"), ["submit", jobPath, "--program-dir", folder],
    { env: { ...process.env, LOADLAB_SERVER: url, LOADLAB_TOKEN: admin }, encoding: "utf8" });
  const m = out.match(/job (\d+):/);
  assert.ok(m, out);
  return +m[1];
}

before(async () => {
  let enroll;
  ({ daemon, url, admin, enroll } = await startDaemon("loadlab-web-bisect-", ["--schedule-tick-ms", "100"]));
  api = apiClient(url, admin);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "loadlab-web-bisect-builds-"));
  const agent = await enrollAgent(api, enroll, "lab-1", FACTS);
  for (const [i, rev] of ["r0", "r1"].entries()) {
    jobs.push(submitRevision(rev));
    const lease = await waitFor("a lease", async () => (await api("POST", "/api/v1/lease", {}, agent)).body);
    assert.equal(lease.job_id, jobs[i]);
    const variants = [{ name: "as-built", valid: true, warm: { runs: 30, samples_us: samples(1000 * (i ? 1.1 : 1), 11 + i) } }];
    const posted = await api("POST", `/api/v1/tasks/${lease.task_id}/result`, { attempt: lease.attempt, facts: FACTS, variants }, agent);
    assert.equal(posted.status, 200, posted.text);
  }
  await waitFor("the alert", async () => (await api("GET", "/api/v1/alerts")).body.alerts.length === 1, 60000);
  ({ context, page } = await openDashboard(admin, consoleErrors));
});

after(async () => {
  if (context) await context.close();
  if (daemon) daemon.kill("SIGTERM");
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test("Bisect on an alert starts a bisection of its two revisions and opens its page; Cancel stops it", async () => {
  const alert = (await api("GET", "/api/v1/alerts")).body.alerts[0];
  assert.deepEqual([alert.baseline_id, alert.job_id], jobs);
  await page.goto(url + "/#/alerts");
  await page.click(`tr[data-alert="${alert.id}"] button.bisect`);
  await page.waitForURL(/#\/bisections\/\d+$/);
  const id = +page.url().match(/#\/bisections\/(\d+)$/)[1];
  const b = (await api("GET", `/api/v1/bisections/${id}`)).body;
  assert.deepEqual([b.series, b.good, b.bad, b.variant, b.state], [SERIES, "r0", "r1", "as-built", "running"]);
  assert.equal(b.cell, alert.rows[0].cell);
  assert.equal(b.agent, "lab-1");
  await waitFor("step 1's job", async () => (await api("GET", `/api/v1/bisections/${id}`)).body.steps.length === 1);
  const step = (await api("GET", `/api/v1/bisections/${id}`)).body.steps[0];
  const job = (await api("GET", `/api/v1/jobs/${step.job_id}`)).body;
  assert.deepEqual(job.spec.program.builds.map((x) => x.label), ["base", "candidate"]);
  await page.waitForFunction((jobId) => {
    const rows = [...document.querySelectorAll("#bisect-steps tbody tr")];
    return rows.length === 1 && rows[0].textContent.includes("measuring") && rows[0].innerHTML.includes(`#/job/${jobId}`);
  }, step.job_id, { timeout: 15000 });
  await screenshot(page, "bisection-running");
  await page.click("#bisect-cancel");
  await page.waitForFunction(() => document.querySelector("h1").textContent.includes("cancelled") &&
    !document.querySelector("#bisect-cancel"), null, { timeout: 15000 });
  assert.equal((await api("GET", `/api/v1/bisections/${id}`)).body.state, "cancelled");
  assert.equal((await api("GET", `/api/v1/jobs/${step.job_id}`)).body.state, "cancelled");
  await screenshot(page, "bisection-cancelled");
  assert.deepEqual(consoleErrors, []);
});
