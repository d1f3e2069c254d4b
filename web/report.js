/*
 * The report page (#/report/ID): the warm table with its change heatmap,
 * the samples per variant as box plots, and the cold (cold.js) and churn
 * (churn.js) sections, with each cell's notes and noise (notes.js).
 */
"use strict";

/* [min, q1, median, q3, max] with linear interpolation between ranks. */
function fiveNumbers(samples) {
  const s = samples.slice().sort((a, b) => a - b);
  const q = (p) => { const i = (s.length - 1) * p, lo = Math.floor(i), hi = Math.ceil(i); return s[lo] + (s[hi] - s[lo]) * (i - lo); };
  return [s[0], q(0.25), q(0.5), q(0.75), s[s.length - 1]];
}

function tableHtml(table, kind, cells) {
  const unit = table.unit;
  const head = `<tr><th>variant</th>${cells.map((c) => `<th>${esc(c.key)}</th>`).join("")}</tr>`;
  const body = table.variants.map((row) => `<tr><th>${esc(row.variant)}${row.variant === table.baseline ? ' <span class="muted small">baseline</span>' : ""}</th>${row.cells.map((c) => {
    const attrs = `data-variant="${esc(row.variant)}" data-cell="${esc(c.cell)}" data-status="${esc(c.status)}"`;
    if (c.status !== "ok") return `<td ${attrs} class="muted small">${esc(c.status)}${c.reason ? ": " + esc(c.reason) : ""}</td>`;
    if (kind === "warm") {
      const sig = c.significant === true;
      return `<td ${attrs} class="num ${c.change_pct === undefined ? "" : sig ? "sig" : "insig"}">
        <div>min <span class="v-min">${us(c.min_us, unit)}</span> · median <span class="v-median">${us(c.median_us, unit)}</span> ${unitLabel(unit)}</div>
        <div class="small muted">CI [<span class="v-ci-low">${us(c.ci_low_us, unit)}</span>, <span class="v-ci-high">${us(c.ci_high_us, unit)}</span>] · n <span class="v-n">${c.n}</span></div>
        ${c.change_pct === undefined ? "" : `<div><span class="v-change">${pct(c.change_pct)}</span> <span class="small muted">[<span class="v-ratio-ci">${ratio(c.ratio_ci_low)}, ${ratio(c.ratio_ci_high)}</span>] p <span class="v-p">${pval(c.p_value)}</span></span><span class="v-star">${sig ? " *" : ""}</span></div>`}
        ${noiseHtml(c.noise)}${notesHtml(c.notes)}</td>`;
    }
    return coldCellHtml(c, attrs, unit);
  }).join("")}</tr>`).join("");
  return `<div class="scroll"><table class="report-table" id="${kind}-table"><thead>${head}</thead><tbody>${body}</tbody></table></div>`;
}

async function reportPage(id) {
  const [report, job] = await Promise.all([api(`/api/v1/jobs/${id}/report?modules=1`), api("/api/v1/jobs/" + id)]);
  const cells = report.cells;
  const resultOf = new Map(job.tasks.map((t) => [t.id, t.result_id]));
  /* A cold-only or churn-only job took no warm samples: no warm table,
   * heatmap or warm samples (an older server said so by "no warm samples"
   * in every cell). */
  const hasTable = (t) => t && t.variants.some((row) => row.cells.some((c) => c.status === "ok"));
  const warm = report.warm && (report.warm.measured === undefined ? hasTable(report.warm) || !report.cold : report.warm.measured) ? report.warm : null;
  const samplesShown = warm || report.cold;
  pageEl().innerHTML = `<h1>Report: job ${id} ${esc(job.name)} ${badge("state", job.state)}</h1>
    <div class="toolbar"><a href="#/job/${id}">Job and tasks</a> <a href="#/compare?baseline=${id}">Compare with…</a>
      <span class="muted">CLI: <code class="cmd">loadlab report ${id}</code></span></div>
    ${report.findings && report.findings.length ? `<div class="card"><b>Findings</b><ul id="findings">${report.findings.map((f) => `<li>${esc(f)}</li>`).join("")}</ul></div>` : ""}
    ${warm ? `<h2>Warm start (baseline ${esc(report.warm.baseline)})</h2>
      <p class="muted small">Each change is shown with the 95 % interval of the ratio of medians and the Mann-Whitney p that decide its star. * significant: p &lt; 0.05, that interval excludes 1, and |change| ≥ 1 %.</p>
      ${tableHtml(report.warm, "warm", cells)}
      <h2>Change against ${esc(report.warm.baseline)} (grey: not significant)</h2><div class="chart" id="heatmap"></div>` : ""}
    ${samplesShown ? `<h2>Samples per variant</h2>
    <div class="toolbar"><label>Cell <select id="box-cell">${cells.map((c, i) => `<option value="${i}">${esc(c.key)} (${esc(c.state)})</option>`).join("")}</select></label>
      <label>Measurement <select id="box-measure">${warm ? '<option value="warm">warm</option>' : ""}${report.cold ? '<option value="cold">cold</option>' : ""}</select></label>
      <span class="muted small" id="box-note"></span></div>
    <div class="chart" id="boxplot"></div>` : ""}
    ${report.cold ? `<h2>Cold start (baseline ${esc(report.cold.baseline)})</h2>${tableHtml(report.cold, "cold", cells)}${coldSectionHtml(report.cold)}` : ""}
    ${report.churn ? churnSectionHtml(report.churn) : ""}`;
  if (warm) drawHeatmap(warm, cells);
  if (report.cold) drawColdBars(report.cold, cells);
  if (report.churn) drawChurnChart(report.churn);
  if (!samplesShown) return;
  const box = chart($("#boxplot"));
  const samplesCache = new Map();
  const drawBox = async () => {
    const c = cells[+$("#box-cell").value], measure = $("#box-measure").value;
    const rid = c ? resultOf.get(c.task_id) : null;
    box.clear();
    if (!rid) { $("#box-note").textContent = "This cell has no result yet."; return; }
    if (!samplesCache.has(rid)) samplesCache.set(rid, await api("/api/v1/results/" + rid));
    const result = samplesCache.get(rid);
    const rows = (result.variants || []).filter((v) => v[measure] && Array.isArray(v[measure].samples_us) && v[measure].samples_us.length);
    $("#box-note").textContent = rows.length ? `${rows.length} variants, raw samples of result ${rid}; ▲ marks each minimum` : "No samples for this measurement in this cell.";
    if (!rows.length) return;
    const names = rows.map((v) => v.name);
    /* In the unit of the measurement's table, as its figures. */
    const unit = (report[measure] || {}).unit, per = unit === "ms" ? 1000 : 1;
    const fig = (v) => us(v * per, unit) + " " + unitLabel(unit);
    const stats = rows.map((v) => fiveNumbers(v[measure].samples_us).map((x) => x / per));
    box.setOption({
      animation: false,
      tooltip: { trigger: "item" },
      grid: { left: 80, right: 30, top: 30, bottom: 50 },
      xAxis: { type: "category", data: names },
      yAxis: { type: "value", name: unitLabel(unit), scale: true },
      series: [
        { name: "samples", type: "boxplot", data: stats,
          tooltip: { formatter: (p) => `${p.name}<br>min ${fig(p.data[1])}<br>q1 ${fig(p.data[2])}<br>median ${fig(p.data[3])}<br>q3 ${fig(p.data[4])}<br>max ${fig(p.data[5])}` } },
        { name: "minimum", type: "scatter", symbol: "triangle", symbolSize: 11, itemStyle: { color: "#b42318" },
          data: stats.map((s, i) => [names[i], s[0]]), tooltip: { formatter: (p) => `${p.value[0]} minimum ${fig(p.value[1])}` } },
      ],
    });
  };
  $("#box-cell").addEventListener("change", drawBox);
  $("#box-measure").addEventListener("change", drawBox);
  const firstOk = cells.findIndex((c) => resultOf.get(c.task_id));
  if (firstOk > 0) $("#box-cell").value = String(firstOk);
  await drawBox();
}

function drawHeatmap(warm, cells) {
  const variants = warm.variants.map((v) => v.variant).filter((v) => v !== warm.baseline);
  const sig = [], insig = [], other = [];
  let extent = 1;
  warm.variants.forEach((row) => {
    const y = variants.indexOf(row.variant);
    if (y < 0) return;
    row.cells.forEach((c, x) => {
      if (c.status === "ok" && typeof c.change_pct === "number") {
        (c.significant ? sig : insig).push([x, y, +c.change_pct.toFixed(2)]);
        if (c.significant) extent = Math.max(extent, Math.abs(c.change_pct));
      } else {
        other.push({ value: [x, y, 0], status: c.status });
      }
    });
  });
  const label = { show: true, formatter: (p) => (p.data.status ? p.data.status : pct(p.value[2])) };
  chart($("#heatmap")).setOption({
    animation: false,
    tooltip: { formatter: (p) => `${esc(variants[p.value[1]])} · ${esc(cells[p.value[0]].key)}: ${p.data.status || pct(p.value[2])}${p.seriesIndex === 1 ? " (not significant)" : ""}` },
    grid: { left: 130, right: 110, top: 20, bottom: 40 },
    xAxis: { type: "category", data: cells.map((c) => c.key), splitArea: { show: true } },
    yAxis: { type: "category", data: variants, splitArea: { show: true } },
    visualMap: { seriesIndex: 0, min: -extent, max: extent, calculable: false, orient: "vertical", right: 0, top: "middle",
      text: ["slower", "faster"], inRange: { color: ["#1a7f37", "#f7f7f7", "#c0392b"] } },
    series: [
      { name: "significant", type: "heatmap", data: sig, label },
      { name: "not significant", type: "heatmap", data: insig, label, itemStyle: { color: "#d0d4da" } },
      { name: "no figure", type: "heatmap", data: other, label: { show: true, color: "#888", formatter: (p) => p.data.status }, itemStyle: { color: "#f2f3f5" } },
    ],
  });
}
