/*
 * What the browser tests share: a real loadlabd in a fresh data directory,
 * a small REST client, an agent's enrollment, deterministic samples,
 * polling, headless Debian Chromium, a page's console errors and the
 * screenshot folder (LOADLAB_WEB_ARTIFACTS/screenshots).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { spawn } from "node:child_process";
import { chromium } from "playwright-core";

export const BUILD = process.env.LOADLAB_BUILD_DIR || path.resolve("build");
export const SOURCE = process.env.LOADLAB_SOURCE_DIR || path.resolve(".");
const ARTIFACTS = process.env.LOADLAB_WEB_ARTIFACTS || path.join(BUILD, "tests", "web");
export const SHOTS = path.join(ARTIFACTS, "screenshots");

/* Starts loadlabd on 127.0.0.1 with a new data directory named after PREFIX
 * and EXTRA_ARGS (and --each-agent-build: these tests play their agents
 * over REST, none of them a builder, docs/builds.md); resolves once it printed its URL (rejects after 20 s or
 * when it exits first, stopping it) to {daemon, dataDir, url, admin, enroll}: the child
 * process, the directory, the base URL and the admin and enroll tokens. */
export async function startDaemon(prefix, extraArgs = []) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const daemon = spawn(path.join(BUILD, "server/loadlabd"), ["--listen", "127.0.0.1:0", "--data-dir", dataDir, "--each-agent-build", ...extraArgs],
    { stdio: ["ignore", "pipe", fs.openSync(path.join(dataDir, "loadlabd.log"), "a")] });
  const url = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: daemon.stdout });
    const timer = setTimeout(() => reject(new Error("loadlabd did not print its URL")), 20000);
    rl.on("line", (line) => { const m = line.match(/listening on (http:\/\/\S+)/); if (m) { clearTimeout(timer); resolve(m[1]); } });
    daemon.on("exit", (code) => reject(new Error("loadlabd exited with " + code)));
  }).catch((e) => { daemon.kill("SIGTERM"); throw e; });
  const token = (name) => fs.readFileSync(path.join(dataDir, name), "utf8").trim();
  return { daemon, dataDir, url, admin: token("admin.token"), enroll: token("enroll.token") };
}

/* A REST client of the daemon at URL: api(method, path, body, token) sends
 * BODY as JSON (none when undefined) with TOKEN (DEFAULT_TOKEN when left
 * out, none when null) and resolves to {status, body (parsed), text}. */
export function apiClient(url, defaultToken) {
  return async function api(method, p, body, token = defaultToken) {
    const headers = {};
    if (token) headers.Authorization = "Bearer " + token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const r = await fetch(url + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null, text };
  };
}

/* Enrolls an agent NAME with FACTS and LABELS through API (apiClient())
 * with the enrollment token ENROLL; asserts 201 and resolves to the
 * agent's token. */
export async function enrollAgent(api, enroll, name, facts, labels = {}) {
  const r = await api("POST", "/api/v1/agents/enroll", { name, facts, labels }, enroll);
  assert.equal(r.status, 201, r.text);
  return r.body.token;
}

/* Resolves to FN's first truthy value, polling every 100 ms; rejects with
 * "timed out waiting for WHAT" after MS. */
export async function waitFor(what, fn, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/* Deterministic samples around CENTER (a small LCG, not Math.random). */
export function samples(center, seed, n = 30, spread = 5) {
  let x = seed >>> 0;
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < 6; k++) { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; s += x / 2 ** 32; }
    out.push(Math.round((center + (s - 3) * spread * 1.4) * 10) / 10);
  }
  return out;
}

/* Headless /usr/bin/chromium at 1280x900 in a new, empty profile:
 * playwright takes it as launchPersistentContext's userDataDir (it refuses
 * --user-data-dir among the args). Resolves to the browser context. */
export function launchChromium() {
  return chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), "loadlab-chromium-")), {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/* Saves a full-page screenshot of PAGE as SHOTS/NAME.png. */
export async function screenshot(page, name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, name + ".png"), fullPage: true });
}

/* Pushes PAGE's console errors and uncaught exceptions onto ERRORS, except
 * the console errors whose text IGNORED(text) is true for (the HTTP errors
 * a test expects). Returns PAGE. */
export function watchConsole(page, errors, ignored = () => false) {
  page.on("console", (msg) => {
    if (msg.type() === "error" && !ignored(msg.text())) errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push("page error: " + err.message));
  return page;
}

/* Headless Chromium (launchChromium()) with TOKEN in every page's session
 * storage, as the dashboard's "Use token" leaves it, and one page whose
 * console errors and uncaught exceptions are pushed onto ERRORS
 * (watchConsole()). Resolves to {context, page}. */
export async function openDashboard(token, errors) {
  const context = await launchChromium();
  await context.addInitScript((t) => sessionStorage.setItem("loadlab.token", t), token);
  const page = watchConsole(await context.newPage(), errors);
  return { context, page };
}
