/*
 * The compare page (#/compare?baseline=&candidate=&max_regression=&metric=):
 * the verdict of GET /api/v1/compare, the CLI command and a link that give
 * it again, the judged ratio of every row with its interval as a chart, and
 * the rows as a table with what each could have seen (detectable_pct, its
 * words when above the threshold) and its run counters beside its times.
 */
"use strict";

async function comparePage() {
  const q = hashQuery();
  const { jobs } = await api("/api/v1/jobs?limit=200");
  const options = (sel) => `<option value="">choose a job</option>` + jobs.map((j) => `<option value="${j.id}"${String(j.id) === sel ? " selected" : ""}>${j.id} · ${esc(j.name)} (${esc(j.state)})</option>`).join("");
  pageEl().innerHTML = `<h1>Compare two jobs</h1>
    <form id="compare-form" class="toolbar">
      <label>Baseline <select name="baseline">${options(q.get("baseline"))}</select></label>
      <label>Candidate <select name="candidate">${options(q.get("candidate"))}</select></label>
      <label>Max regression <input name="max_regression" type="number" step="any" min="0" value="${esc(q.get("max_regression") || "0")}"> %</label>
      <label>Metric <select name="metric">${COMPARE_METRIC_CHOICES.map((m) => `<option${m === (q.get("metric") || "auto") ? " selected" : ""}>${m}</option>`).join("")}</select></label>
      <button>Compare</button>
    </form>
    <div id="compare-out"></div>`;
  const form = $("#compare-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams({ baseline: form.baseline.value, candidate: form.candidate.value, max_regression: form.max_regression.value || "0" });
    if (form.metric.value !== "auto") p.set("metric", form.metric.value);
    location.hash = "#/compare?" + p;
  });
  const base = q.get("baseline"), cand = q.get("candidate");
  if (!base || !cand) {
    $("#compare-out").innerHTML = `<p class="muted">Choose a baseline and a candidate job.</p>`;
    return;
  }
  const max = q.get("max_regression") || "0";
  const metric = COMPARE_METRIC_CHOICES.includes(q.get("metric")) ? q.get("metric") : "auto";
  const cmp = await api(`/api/v1/compare?baseline=${encodeURIComponent(base)}&candidate=${encodeURIComponent(cand)}&max_regression=${encodeURIComponent(max)}&metric=${metric}`);
  const link = location.origin + location.pathname + "#/compare?" + new URLSearchParams(Object.assign({ baseline: base, candidate: cand, max_regression: max }, metric === "auto" ? {} : { metric }));
  const counts = Object.entries(cmp.counts || {}).map(([k, v]) => `${esc(statusWords(k))} ${v}`).join(" · ");
  /* one unit for the table: its judged durations and the raw medians */
  const judged = cmp.rows.map((r) => judgedFigure(r, cmp));
  const unit = unitOf(Math.max(0, ...cmp.rows.flatMap((r, i) => [r.baseline_median_us, r.candidate_median_us]
    .concat(judged[i] && judged[i].duration ? [judged[i].base, judged[i].cand] : []))
    .filter((v) => typeof v === "number")));
  const side = (f, v) => (f.duration ? `${us(v, unit)} ${unitLabel(unit)}` : f.count ? `${typeof v === "number" ? Math.round(v).toLocaleString("en-US") : "?"} ${esc(f.count)}`
    : `${typeof v === "number" ? v.toFixed(3) : "?"} × floor`);
  const power = cmp.power && cmp.power.underpowered_rows
    ? `<p class="compare-note" id="compare-power">${cmp.power.underpowered_rows} row${cmp.power.underpowered_rows === 1 ? "" : "s"} could not see a change of ${esc(cmp.max_regression_pct)} %${cmp.power.required ? ": power is required, so the gate fails." : "; --require-power would fail the gate."}</p>` : "";
  $("#compare-out").innerHTML = `
    <div class="card"><b>Verdict:</b> <span id="verdict" data-verdict="${esc(cmp.verdict)}" class="badge verdict-${esc(cmp.verdict)}">${esc(cmp.verdict)}</span>
      <span class="muted">(max regression ${esc(cmp.max_regression_pct)} %) ${counts}</span>
      <p>Command line: <code class="cmd" id="compare-cmd">loadlab compare ${esc(base)} ${esc(cand)} --max-regression ${esc(max)}${metric === "auto" ? "" : " --metric " + esc(metric)}</code></p>
      <p>Link: <a id="compare-link" href="${esc(link)}">${esc(link)}</a> <button type="button" id="copy-link">Copy</button></p></div>
    ${power}<div class="chart" id="compare-chart"></div>
    <h2>Rows</h2>
    <p class="small muted" id="compare-legend">Each row in the figures of the metric that judged it (the one judge, docs/statistics.md):
      baseline and candidate, their ratio, the 95 % interval and change the verdict used, and p where the Mann-Whitney test decides beside
      the interval (–: the interval alone decides). Detectable: the least change the row could see (95 % level, 80 % power). The raw medians
      and the run counters' median differences are context only.</p>
    <div class="scroll"><table id="compare-table"><thead><tr><th>variant</th><th>cell</th><th>verdict (judged by)</th>
      <th class="num">baseline</th><th class="num">candidate</th><th class="num">ratio</th><th class="num">ratio 95 % CI</th>
      <th class="num">change</th><th class="num">p</th><th class="num">detectable</th><th class="num">context: medians ${unitLabel(unit)}, counts</th></tr></thead>
      <tbody>${cmp.rows.map((r, i) => { const f = judged[i]; return `<tr data-variant="${esc(r.variant)}" data-cell="${esc(r.cell)}"><td>${esc(r.variant)}</td><td>${esc(r.cell)}</td>
        <td><span class="badge status-${esc(r.status)} v-status" data-status="${esc(r.status)}">${esc(statusWords(r.status))}</span>${r.regression ? ' <b class="error v-regression">regression</b>' : ""}
          <div class="small muted v-metric">${f ? esc(f.title) : esc(r.reason || "")}</div></td>
        <td class="num v-base">${f ? side(f, f.base) : ""}</td><td class="num v-cand">${f ? side(f, f.cand) : ""}</td>
        <td class="num v-ratio">${f ? ratio(f.ratio) : ""}</td><td class="num v-ci">${f ? `[${ratio(f.low)}, ${ratio(f.high)}]${f.across ? " across jobs" : ""}` : ""}</td>
        <td class="num v-change">${f ? pct(f.change) : ""}</td><td class="num v-p">${f ? (f.hasP ? pval(f.p) : "–") : ""}</td>
        <td class="num v-detectable${r.underpowered ? " error" : ""}">${r.detectable_note ? esc(r.detectable_note) : typeof r.detectable_pct === "number" ? `${r.detectable_pct.toFixed(1)} %` : ""}</td>
        <td class="num small muted"><div class="v-medians">${typeof r.baseline_median_us === "number" ? `${us(r.baseline_median_us, unit)} → ${us(r.candidate_median_us, unit)}` : ""}</div>
          <div class="v-counts">${countsText(r.counters)}</div></td></tr>`; }).join("")}</tbody></table></div>`;
  $("#copy-link").addEventListener("click", () => { if (navigator.clipboard) navigator.clipboard.writeText(link).catch(() => {}); });
  compareChart($("#compare-chart"), cmp);
}

/* The figure each metric judges: its ratio (candidate over baseline) and
 * the ends of its 95 % interval, as compare's rows name them. The minimum
 * has no ratio field of its own: 1 + its change. */
const COMPARE_METRICS = {
  "median": { title: "median", ratio: (r) => r.ratio, low: "ratio_ci_low", high: "ratio_ci_high" },
  "min": { title: "fastest run", ratio: (r) => (typeof r.min_change_pct === "number" ? 1 + r.min_change_pct / 100 : null),
    low: "min_ratio_ci_low", high: "min_ratio_ci_high" },
  "over-floor": { title: "median over the floor", ratio: (r) => r.over_floor_ratio, low: "over_floor_ratio_ci_low", high: "over_floor_ratio_ci_high" },
  "floor-ratio": { title: "median divided by the floor", ratio: (r) => r.floor_ratio, low: "floor_ratio_ci_low", high: "floor_ratio_ci_high" },
};

/* The metrics compare takes (docs/statistics.md), auto first. */
const COMPARE_METRIC_CHOICES = ["auto", "median", "min", "over-floor", "floor-ratio", "cpu", "faults", "instructions"];
Object.assign(COMPARE_METRICS, {
  "cpu": { title: "CPU time (user + system) per run", ratio: (r) => r.cpu_ratio, low: "cpu_ratio_ci_low", high: "cpu_ratio_ci_high" },
  "faults": { title: "page faults per run", ratio: (r) => r.faults_ratio, low: "faults_ratio_ci_low", high: "faults_ratio_ci_high" },
  "instructions": { title: "instructions per run", ratio: (r) => r.instructions_ratio, low: "instructions_ratio_ci_low",
    high: "instructions_ratio_ci_high" },
});

/* A row's run counters beside its times, as the CLI says them: "+17.8 µs
 * CPU (+2.2 %), +1,900 faults (+15.8 %)"; "" without counters. */
function countsText(counters) {
  if (!counters) return "";
  const signed = (v) => (v > 0 ? "+" : v < 0 ? "-" : "+") + Math.round(Math.abs(v)).toLocaleString("en-US");
  return [["cpu_us", "µs CPU"], ["faults", "faults"], ["instructions", "instructions"]]
    .filter(([k]) => counters[k] && typeof counters[k].delta === "number")
    .map(([k, name]) => `${k === "cpu_us" ? (counters[k].delta >= 0 ? "+" : "") + counters[k].delta.toFixed(1) : signed(counters[k].delta)} ${name}`
      + (typeof counters[k].change_pct === "number" ? ` (${pct(counters[k].change_pct)})` : ""))
    .map(esc).join(", ");
}

/* A row's status in the words the CLI and the Markdown use. */
function statusWords(status) {
  return { no_significant_change: "no significant change", not_comparable: "not comparable" }[status] || status;
}

/* What a row was judged by: the one judge's figures (row.judged: the
 * metric, each side's figure of it, their ratio, the interval the verdict
 * used, the change, p where a test decided, the scope), or for a server
 * before them the metric's own fields and interval_low .. _high. */
function judgedFigure(row, cmp) {
  const j = row.judged;
  if (j && typeof j === "object") {
    const m = COMPARE_METRICS[j.metric] || COMPARE_METRICS.median;
    return { title: m.title, metric: j.metric, duration: j.unit === "us", count: j.unit !== "us" && j.unit !== "x_floor" ? j.unit : null,
      base: j.baseline, cand: j.candidate, ratio: j.ratio,
      low: j.ci_low, high: j.ci_high, change: j.change_pct, p: j.p_value, hasP: typeof j.p_value === "number",
      across: j.scope === "within-and-between-jobs" };
  }
  const m = COMPARE_METRICS[row.metric] || COMPARE_METRICS[cmp.metric] || COMPARE_METRICS.median;
  const ratio = m.ratio(row);
  const low = typeof row.interval_low === "number" ? row.interval_low : row[m.low];
  const high = typeof row.interval_high === "number" ? row.interval_high : row[m.high];
  if (![ratio, low, high].every((x) => typeof x === "number")) return null;
  return { title: m.title, metric: row.metric || cmp.metric, duration: false, base: null, cand: null, ratio, low, high,
    change: (ratio - 1) * 100, p: null, hasP: false, across: row.interval_scope === "within-and-between-jobs" };
}

/* The compare chart: per row, a bar from 1.0 (no change) to the judged
 * ratio and its whole 95 % interval, on an axis that holds 1.0 and every
 * interval's two ends; the same warnings as the CLI's Markdown above it. */
function compareChart(el, cmp) {
  const notes = [];
  if (cmp.generator && cmp.generator.same === false)
    notes.push(`The jobs' generators differ: baseline <code>${esc(JSON.stringify(cmp.generator.baseline))}</code>, candidate <code>${esc(JSON.stringify(cmp.generator.candidate))}</code>.`);
  const rows = cmp.rows.map((r) => ({ r, f: judgedFigure(r, cmp) })).filter((x) => x.f);
  const titles = [...new Set(rows.map((x) => x.f.title))];
  if (titles.length) notes.push(`Judged by the ${esc(titles.join(" / "))}.`);
  const across = rows.filter((x) => x.f.across).length;
  if (rows.length) notes.push(across ? `Intervals hold what varies between jobs in ${across} of ${rows.length} rows (from earlier jobs of the same spec or series).`
    : "Intervals are within-job only: no earlier jobs of the same spec or series to say how much whole jobs vary.");
  el.insertAdjacentHTML("beforebegin", notes.map((n) => `<p class="compare-note">${n}</p>`).join(""));
  const colors = { faster: "#1a7f37", slower: "#c0392b", no_significant_change: "#9aa3ae" };
  const ends = rows.flatMap((x) => [x.f.low, x.f.high, x.f.ratio]).concat([1]);
  const lo = Math.min(...ends), hi = Math.max(...ends), pad = Math.max((hi - lo) * 0.08, 0.005);
  const bounds = { min: +(lo - pad).toFixed(4), max: +(hi + pad).toFixed(4) };
  el.dataset.axisMin = bounds.min;
  el.dataset.axisMax = bounds.max;
  el.dataset.barsFrom = "1";
  chart(el).setOption({
    animation: false,
    title: { text: `candidate / baseline (${titles.join(" / ") || "no comparable rows"}), from 1.0, with 95 % CI`, textStyle: { fontSize: 13 } },
    tooltip: { trigger: "item", formatter: (p) => `${esc(p.name)}<br>ratio ${ratio(p.value[1])} [${ratio(p.value[2])}, ${ratio(p.value[3])}]` },
    grid: { left: 220, right: 40, top: 40, bottom: 30 },
    yAxis: { type: "category", data: rows.map((x) => x.r.variant + " · " + x.r.cell), inverse: true },
    xAxis: { type: "value", name: "ratio", min: bounds.min, max: bounds.max, axisLabel: { showMinLabel: false, showMaxLabel: false } },
    series: [
      { type: "custom", name: "ratio from 1.0",
        renderItem: (params, api2) => {
          const y = api2.value(0), size = api2.size([0, 1])[1] * 0.55;
          const a = api2.coord([1, y]), b = api2.coord([api2.value(1), y]);
          const color = colors[rows[params.dataIndex].r.status] || "#9aa3ae";
          return { type: "rect", shape: { x: Math.min(a[0], b[0]), y: a[1] - size / 2, width: Math.abs(b[0] - a[0]), height: size },
            style: { fill: color } };
        },
        encode: { x: 1, y: 0 },
        data: rows.map((x, i) => ({ name: x.r.variant + " · " + x.r.cell, value: [i, x.f.ratio, x.f.low, x.f.high] })),
        markLine: { silent: true, symbol: "none", data: [{ xAxis: 1 }], lineStyle: { color: "#333" } } },
      { type: "custom", name: "95 % CI",
        renderItem: (params, api2) => {
          const y = api2.value(0), a = api2.coord([api2.value(2), y]), b = api2.coord([api2.value(3), y]);
          const cap = api2.size([0, 1])[1] * 0.2;
          return { type: "group", children: [
            { type: "line", shape: { x1: a[0], y1: a[1], x2: b[0], y2: b[1] }, style: { stroke: "#1d2430", lineWidth: 2 } },
            { type: "line", shape: { x1: a[0], y1: a[1] - cap, x2: a[0], y2: a[1] + cap }, style: { stroke: "#1d2430", lineWidth: 2 } },
            { type: "line", shape: { x1: b[0], y1: b[1] - cap, x2: b[0], y2: b[1] + cap }, style: { stroke: "#1d2430", lineWidth: 2 } }] };
        },
        encode: { x: [2, 3], y: 0 },
        data: rows.map((x, i) => ({ name: x.r.variant + " · " + x.r.cell, value: [i, x.f.ratio, x.f.low, x.f.high] })) },
    ],
  });
}
