/*
 * cold_marks.mjs URL TOKEN JOB_ID - what the dashboard's job report shows
 * of a job's cold table, read from the page in headless Chromium: prints
 * one JSON object, {"cells": [{variant, cell, faults, faults_change,
 * faults_significant, read_change, read_significant}...], "significant":
 * ["VARIANT KEY"...], "console_errors": [...]}. tests/agent/test_office_report.py
 * runs it against the real office job (a real agent under Wine) and
 * compares it with the report's JSON. Exit 0 when the page showed the
 * table, 1 (with a message on stderr) when it did not.
 */
import { launchChromium, screenshot } from "./lib.mjs";

const [url, token, jobId] = process.argv.slice(2);
if (!url || !token || !/^\d+$/.test(jobId || "")) {
  console.error("usage: cold_marks.mjs URL TOKEN JOB_ID");
  process.exit(2);
}

const context = await launchChromium();
try {
  const page = context.pages()[0] || (await context.newPage());
  const consoleErrors = [];
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  /* The dashboard keeps its token in sessionStorage; set it before the app reads it. */
  await page.addInitScript((t) => sessionStorage.setItem("loadlab.token", t), token);
  await page.goto(`${url}/#/report/${jobId}`);
  await page.waitForSelector("#cold-table td[data-variant]", { timeout: 30000 });
  const cells = await page.$$eval("#cold-table td[data-variant]", (tds) => tds.map((td) => {
    const text = (sel) => td.querySelector(sel)?.textContent ?? null;
    const sig = (sel) => td.querySelector(sel)?.dataset.significant ?? null;
    return { variant: td.dataset.variant, cell: td.dataset.cell, faults: text(".v-faults"),
      faults_change: text(".v-faults-change"), faults_significant: sig(".v-faults-change"),
      read_change: text(".v-read-change"), read_significant: sig(".v-read-change") };
  }));
  const significant = await page.$$eval("#cold-significant li[data-count]",
    (li) => li.map((e) => `${e.dataset.variant} ${e.dataset.count}`));
  await screenshot(page, "office-report-cold");
  console.log(JSON.stringify({ cells, significant, console_errors: consoleErrors }));
} catch (e) {
  console.error("cold_marks.mjs: " + e.message);
  process.exitCode = 1;
} finally {
  await context.close();
}
