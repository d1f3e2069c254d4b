/*
 * Two rough edges of the dashboard (issue 27), in headless Chromium
 * against a real loadlabd: the token lives for the tab unless the user
 * ticks "remember on this browser" (offered while a token is to be given),
 * which keeps it in localStorage for the next tab until Forget; a cancelled job's progress bar is not full (its
 * cancelled tasks never ran: the bar holds only the done ones, and the
 * text counts the cancelled), on the jobs list and on the job page.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startDaemon, apiClient, samples, launchChromium, screenshot, watchConsole } from "./lib.mjs";

let daemon, url, admin, enrollToken, api, context;
const consoleErrors = [];
let expectHttpErrors = false;

/* PAGE, its console errors going to consoleErrors (a 401's while
 * expectHttpErrors). */
function watch(page) {
  return watchConsole(page, consoleErrors, (text) =>
    expectHttpErrors && /Failed to load resource: the server responded with a status of 401/.test(text));
}

before(async () => {
  ({ daemon, url, admin, enroll: enrollToken } = await startDaemon("loadlab-web-token-"));
  api = apiClient(url, admin);
  context = await launchChromium();
});

after(async () => {
  if (context) await context.close();
  if (daemon) daemon.kill("SIGTERM");
});

const storage = (page) => page.evaluate(() => ({
  session: sessionStorage.getItem("loadlab.token"), local: localStorage.getItem("loadlab.token") }));

test("the token lives for the tab unless 'remember on this browser' is ticked", async () => {
  expectHttpErrors = true;
  const first = watch(await context.newPage());
  await first.goto(url + "/#/fleet");
  await first.waitForSelector("#global-error:has-text('needs a token')");
  assert.equal(await first.isVisible("#remember"), true, "no token: the choice is offered");
  assert.equal(await first.isChecked("#remember-token"), false, "remembering is not the default");
  await first.fill("#token", admin);
  await first.click("#use-token");
  await first.waitForSelector("#who:has-text('token set for this session')");
  assert.deepEqual(await storage(first), { session: admin, local: null });
  /* A new tab has no token: sessionStorage is the tab's own. */
  const second = watch(await context.newPage());
  await second.goto(url + "/#/fleet");
  await second.waitForSelector("#global-error:has-text('needs a token')");
  assert.equal(await second.textContent("#who"), "no token");
  /* Remembered: the next tab starts with it. */
  await second.check("#remember-token");
  await second.fill("#token", admin);
  await second.click("#use-token");
  await second.waitForSelector("#who:has-text('token remembered on this browser')");
  assert.deepEqual(await storage(second), { session: null, local: admin });
  await second.close();
  const third = watch(await context.newPage());
  consoleErrors.splice(0);
  expectHttpErrors = false;
  await third.goto(url + "/#/fleet");
  await third.waitForSelector("#who:has-text('token remembered on this browser')");
  await third.waitForSelector("#agents");
  assert.equal(await third.isChecked("#remember-token"), true);
  assert.equal(await third.textContent("#global-error"), "");
  /* With a token set the choice is put away, and offered again while
   * another is typed. */
  assert.equal(await third.isHidden("#remember"), true);
  await third.fill("#token", "another");
  assert.equal(await third.isVisible("#remember"), true);
  await third.fill("#token", "");
  assert.equal(await third.isHidden("#remember"), true);
  await screenshot(third, "token-remembered");
  assert.deepEqual(consoleErrors, []);
  /* Forget removes it from this browser (and the page asks again: a 401). */
  expectHttpErrors = true;
  await third.click("#forget-token");
  await third.waitForSelector("#who:has-text('no token')");
  assert.deepEqual(await storage(third), { session: null, local: null });
  await first.close();
  await third.close();
});

test("a cancelled job's bar holds only its done tasks", async () => {
  consoleErrors.splice(0);
  expectHttpErrors = false;
  /* Two jobs of four tasks, one cell each a fake agent can take: one
   * cancelled before anything ran, one cancelled after one task was done. */
  const job = (name) => ({ name, family: "pe", generator: { dlls: 2, exports: 3 }, variants: ["default", "rebase"],
    measure: { warm: { runs: 30, warmup: 1 } }, matrix: { cells: { os: ["bar-a", "bar-b", "bar-c", "bar-d"] } } });
  const none = await api("POST", "/api/v1/jobs", job("cancelled-at-once"));
  assert.equal(none.status, 201, none.text);
  const enrolled = await api("POST", "/api/v1/agents/enroll", { name: "bar-agent", facts: { os: "bar-a" }, labels: {} }, enrollToken);
  assert.equal(enrolled.status, 201, enrolled.text);
  assert.equal((await api("POST", `/api/v1/jobs/${none.body.id}/cancel`, {})).status, 200);
  const one = await api("POST", "/api/v1/jobs", job("one-done"));
  assert.equal(one.status, 201, one.text);
  const lease = await api("POST", "/api/v1/lease", {}, enrolled.body.token);
  assert.equal(lease.status, 200, lease.text);
  assert.equal(lease.body.job_id, one.body.id);
  const variants = ["default", "rebase"].map((name, i) => ({ name, valid: true, warm: { runs: 30, samples_us: samples(1000 + 100 * i, 7 + i) } }));
  const posted = await api("POST", `/api/v1/tasks/${lease.body.task_id}/result`, { attempt: lease.body.attempt, facts: { os: "bar-a" }, variants }, enrolled.body.token);
  assert.equal(posted.status, 200, posted.text);
  assert.equal((await api("POST", `/api/v1/jobs/${one.body.id}/cancel`, {})).status, 200);

  const page = watch(await context.newPage());
  await page.addInitScript((t) => sessionStorage.setItem("loadlab.token", t), admin);
  await page.goto(url + "/#/jobs");
  const bar = async (sel) => page.$eval(sel, (e) => ({
    done: e.querySelector(".bar > .done").style.width, dead: e.querySelector(".bar > .dead").style.width,
    text: e.querySelector(".progress-text").textContent }));
  await page.waitForSelector(`tr[data-job="${one.body.id}"] .job-progress`);
  assert.deepEqual(await bar(`tr[data-job="${none.body.id}"] .job-progress`), { done: "0%", dead: "0%", text: "0/4 done, 4 cancelled" });
  assert.deepEqual(await bar(`tr[data-job="${one.body.id}"] .job-progress`), { done: "25%", dead: "0%", text: "1/4 done, 3 cancelled" });
  await screenshot(page, "jobs-cancelled-bars");
  await page.goto(url + `/#/job/${one.body.id}`);
  await page.waitForSelector("#job-progress .progress-text");
  assert.deepEqual(await bar("#job-progress"), { done: "25%", dead: "0%", text: "1/4 done, 3 cancelled" });
  await page.close();
  assert.deepEqual(consoleErrors, []);
});
