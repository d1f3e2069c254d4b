/*
 * The report page's process churn (#/report/N; the seed's study of
 * creating and destroying many processes with and without user32.dll):
 * the table against `none` of the same cell (per process, the ratio
 * beside each figure, the input lock's blocked time), with what the
 * runner cannot show beside its rows, and two bar charts: create and
 * destroy per process, and the blocked time, per DLL set and cell, each
 * bar labelled with its ratio against none. All in the table's one unit
 * (its "unit"). Loaded before app.js, whose helpers (helpers.js's $, esc, us,
 * unitLabel; app.js's chart) and notes.js's notesHtml it calls; report.js's report
 * page calls churnSectionHtml and drawChurnChart.
 */
"use strict";

/* " (2.80×)" beside a figure, or "". */
function churnRatio(v) {
  return typeof v === "number" ? ` <span class="small muted v-ratio">(${v.toFixed(2)}×)</span>` : "";
}

function churnSectionHtml(churn) {
  const unit = churn.unit, label = unitLabel(unit);
  const rows = churn.rows.map((r) => `<tr data-cell="${esc(r.cell)}" data-set="${esc(r.dll_set)}">
    <td>${esc(r.cell)}</td><td>${esc(r.dll_set)}</td><td class="num">${esc(r.processes)}</td>
    <td class="num v-create">${us(r.create_us_per_process, unit)}${churnRatio(r.create_ratio)}</td>
    <td class="num v-destroy">${us(r.destroy_us_per_process, unit)}${churnRatio(r.destroy_ratio)}</td>
    ${typeof r.blocked_total_us === "number"
    ? `<td class="num v-blocked">${us(r.blocked_total_us, unit)}${churnRatio(r.blocked_total_ratio)}</td><td class="num">${us(r.blocked_max_us, unit)}</td>`
    : `<td class="muted small" colspan="2">${esc(r.blocked || "not measured")}</td>`}
    <td>${notesHtml(r.notes)}</td></tr>`).join("");
  return `<h2>Process churn (against ${esc(churn.baseline || "none")})</h2>
    <p class="muted small">Per process, in ${label}: the time to create it and to destroy it, with its ratio against ${esc(churn.baseline || "none")}
      in the same cell (one run of every process: no interval), and the time the probe found the input lock blocked while they were destroyed.</p>
    <div class="scroll"><table id="churn-table"><thead><tr><th>cell</th><th>DLL set</th><th class="num">processes</th>
      <th class="num">create / process ${label}</th><th class="num">destroy / process ${label}</th>
      <th class="num">blocked total ${label}</th><th class="num">blocked max ${label}</th><th>cannot show</th></tr></thead>
      <tbody>${rows}</tbody></table></div>
    <div class="grid2"><div class="chart" id="churn-chart"></div><div class="chart" id="churn-blocked-chart"></div></div>`;
}

/* One bar per DLL set and cell of FIGURE (a row's key), labelled with
 * RATIO (its key) against none. */
function churnSeries(churn, sets, name, figure, ratioKey) {
  const cells = [...new Set(churn.rows.map((r) => r.cell))];
  return cells.map((cell) => ({
    name: `${name} · ${cell}`, type: "bar",
    data: sets.map((set) => {
      const r = churn.rows.find((x) => x.cell === cell && x.dll_set === set);
      if (!r || typeof r[figure] !== "number") return { value: null };
      const v = +us(r[figure], churn.unit);
      return { value: v, ratio: r[ratioKey],
        label: { show: typeof r[ratioKey] === "number", position: "top", fontSize: 11, formatter: typeof r[ratioKey] === "number" ? r[ratioKey].toFixed(2) + "×" : "" } };
    }),
  }));
}

function drawChurnChart(churn) {
  const sets = [...new Set(churn.rows.map((r) => r.dll_set))];
  const label = unitLabel(churn.unit);
  const draw = (el, title, series) => chart(el).setOption({
    animation: false, title: { text: title, textStyle: { fontSize: 13 } },
    tooltip: { trigger: "item", formatter: (p) => `${esc(p.seriesName)} · ${esc(p.name)}: ${p.value} ${label}${typeof p.data.ratio === "number" ? ` (${p.data.ratio.toFixed(2)}× ${esc(churn.baseline || "none")})` : ""}` },
    legend: { type: "scroll", bottom: 0 }, grid: { left: 80, right: 20, top: 40, bottom: 60 },
    xAxis: { type: "category", data: sets }, yAxis: { type: "value", name: label }, series,
  });
  draw($("#churn-chart"), `per process, ${label} (× ${churn.baseline || "none"})`,
    [...churnSeries(churn, sets, "create", "create_us_per_process", "create_ratio"),
      ...churnSeries(churn, sets, "destroy", "destroy_us_per_process", "destroy_ratio")]);
  draw($("#churn-blocked-chart"), `input lock blocked in total, ${label}`,
    churnSeries(churn, sets, "blocked", "blocked_total_us", "blocked_total_ratio"));
}
