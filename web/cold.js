/*
 * The report page's cold start (#/report/N): the cold table's cells and
 * the bars of page faults and bytes read, each variant's median per cell,
 * with the differences against the cold baseline that are significant
 * marked (the report's page_faults_significant and read_bytes_significant:
 * Mann-Whitney p < 0.05, the bootstrap 95 % interval of the ratio of
 * medians excluding 1, at least 1 %; docs/statistics.md), and, when the
 * agents reported them, the same counts per module. Loaded before app.js,
 * whose helpers (helpers.js's $, esc, us, unitLabel, pct, pval, bytes;
 * app.js's chart) and notes.js's notesHtml it calls; report.js's report
 * page calls coldCellHtml, coldSectionHtml and drawColdBars.
 */
"use strict";

/* The counts the cold table compares: the report's field prefix, what the
 * page calls it, the class of its figures, how a value reads. */
const COLD_COUNTS = [
  { key: "page_faults", label: "page faults", cls: "faults", fmt: (v) => (typeof v === "number" ? v.toFixed(0) : "") },
  { key: "read_bytes", label: "bytes read", cls: "read", fmt: (v) => bytes(v) },
];

/* COUNT's figure in the cold cell C: its median, else (an older report)
 * its mean. */
function coldFigure(c, count) {
  const median = c[count.key + "_median"];
  return typeof median === "number" ? median : c[count.key + "_mean"];
}

/* COUNT's change against the baseline in cell C, or null: {change,
 * significant, p}. */
function coldChange(c, count) {
  const change = c[count.key + "_change_pct"];
  if (typeof change !== "number") return null;
  return { change, significant: c[count.key + "_significant"] === true, p: c[count.key + "_p_value"] };
}

/* " (−32.10 % *)", the change as HTML with its significance. */
function coldChangeHtml(d, cls) {
  if (!d) return "";
  return ` <span class="v-${cls}-change ${d.significant ? "cold-sig" : "cold-insig"}" data-significant="${d.significant}"
    title="${d.significant ? "significant" : "not significant"}, p ${esc(pval(d.p))}">(${esc(pct(d.change))}${d.significant ? " *" : ""})</span>`;
}

/* The cold table's cell C (status "ok") with the td's ATTRS, its times in
 * the table's UNIT. */
function coldCellHtml(c, attrs, unit) {
  const time = typeof c.change_pct === "number"
    ? ` <span class="v-change ${c.significant ? "cold-sig" : "cold-insig"}" data-significant="${c.significant === true}">${esc(pct(c.change_pct))}${c.significant ? " *" : ""}</span>
      <span class="small muted">p ${esc(pval(c.p_value))}</span>` : "";
  const ci = typeof c.ci_low_us === "number" ? ` <span class="small muted">[${us(c.ci_low_us, unit)}, ${us(c.ci_high_us, unit)}]</span>` : "";
  const counts = COLD_COUNTS.map((k) => `${k.label} <span class="v-${k.cls}">${esc(k.fmt(coldFigure(c, k)))}</span>${coldChangeHtml(coldChange(c, k), k.cls)}`);
  return `<td ${attrs} class="num">${c.cold === false ? `<div class="error small">NOT COLD (${esc(c.method || "")})</div>` : ""}
    <div>median <span class="v-median">${us(c.median_us, unit)}</span> ${unitLabel(unit)}${ci}${time}</div>
    <div class="small">${counts.join(" · ")}</div>
    <div class="small muted">mean <span class="v-mean">${us(c.mean_us, unit)}</span> ${unitLabel(unit)} ± ${us(c.stddev_us, unit)} · n <span class="v-n">${esc(c.n)}</span></div>${notesHtml(c.notes)}</td>`;
}

/* The significant differences of the table COLD against its baseline, as
 * [{variant, cell, label, change, p}]. */
function coldSignificant(cold) {
  const out = [];
  for (const row of cold.variants) {
    if (row.variant === cold.baseline) continue;
    for (const c of row.cells) {
      if (c.status !== "ok") continue;
      for (const k of COLD_COUNTS) {
        const d = coldChange(c, k);
        if (d && d.significant) out.push({ variant: row.variant, cell: c.cell, key: k.key, label: k.label, change: d.change, p: d.p });
      }
    }
  }
  return out;
}

/* The cold section of the report page (after the table). */
function coldSectionHtml(cold) {
  const sig = coldSignificant(cold);
  const modules = (cold.modules || []).some((m) => typeof m.page_faults === "number" || typeof m.read_bytes === "number");
  return `<h2>Cold start: page faults and bytes read (medians against ${esc(cold.baseline)})</h2>
    <p class="muted small">Bars with a dark border and * differ significantly from ${esc(cold.baseline)} in the same cell (Mann-Whitney p &lt; 0.05,
      the bootstrap 95 % CI of the ratio of medians excludes 1, and |change| ≥ 1 %); faded bars do not.</p>
    <div class="grid2"><div class="chart" id="cold-faults"></div><div class="chart" id="cold-bytes"></div></div>
    <ul id="cold-significant" class="small">${sig.length ? sig.map((s) => `<li data-variant="${esc(s.variant)}" data-cell="${esc(s.cell)}" data-count="${esc(s.key)}">
      ${esc(s.variant)} · ${esc(s.cell)}: ${esc(s.label)} ${esc(pct(s.change))} * (p ${esc(pval(s.p))})</li>`).join("")
    : `<li class="muted">No page-fault or bytes-read difference against ${esc(cold.baseline)} is significant.</li>`}</ul>
    ${modules ? `<h2>Cold start per module</h2><div class="grid2"><div class="chart" id="cold-module-faults"></div><div class="chart" id="cold-module-bytes"></div></div>` : ""}`;
}

/* One bar chart in EL: categories and series as echarts takes them. */
function coldBarChart(el, title, categories, series, fmt) {
  chart(el).setOption({
    animation: false, title: { text: title, textStyle: { fontSize: 13 } },
    tooltip: { trigger: "item", formatter: (p) => `${esc(p.seriesName)} · ${esc(p.name)}: ${esc(fmt(p.value))}${p.data && p.data.change !== undefined ? ` (${esc(pct(p.data.change))}${p.data.significant ? ", significant" : ", not significant"})` : ""}` },
    legend: { type: "scroll", bottom: 0 },
    grid: { left: 80, right: 20, top: 40, bottom: 60 },
    xAxis: { type: "category", data: categories }, yAxis: { type: "value", axisLabel: { formatter: fmt } }, series,
  });
}

/* The bars of the report's cold table COLD over CELLS: per count, each
 * variant's median in each cell; a bar that differs significantly from
 * the baseline has a dark border and a "*" label, one that does not is
 * faded. Each bar's data item carries its change and significance. */
function drawColdBars(cold, cells) {
  for (const k of COLD_COUNTS) {
    const series = cold.variants.map((row) => ({
      name: row.variant, type: "bar",
      data: cells.map((cell) => {
        const c = row.cells.find((x) => x.cell === cell.key);
        const value = c && c.status === "ok" ? coldFigure(c, k) : undefined;
        if (typeof value !== "number") return { value: null };
        const d = row.variant === cold.baseline ? null : coldChange(c, k);
        if (!d) return { value, baseline: row.variant === cold.baseline };
        return { value, change: d.change, significant: d.significant,
          itemStyle: d.significant ? { borderColor: "#1d2430", borderWidth: 2 } : { opacity: 0.4 },
          label: { show: true, position: "top", fontSize: 11, formatter: pct(d.change).replace(/\.\d+ %/, " %") + (d.significant ? " *" : "") } };
      }),
    }));
    coldBarChart($(k.key === "page_faults" ? "#cold-faults" : "#cold-bytes"), k.label + " (median)", cells.map((c) => c.key), series, k.fmt);
  }
  const modules = cold.modules || [];
  for (const k of COLD_COUNTS) {
    const el = $(k.key === "page_faults" ? "#cold-module-faults" : "#cold-module-bytes");
    if (!el) continue;
    const names = [...new Set(modules.map((m) => m.name))];
    const groups = [...new Set(modules.map((m) => m.variant + " · " + m.cell))];
    coldBarChart(el, k.label + " per module", names, groups.map((g) => ({ name: g, type: "bar",
      data: names.map((name) => { const m = modules.find((x) => x.name === name && x.variant + " · " + x.cell === g); return m && typeof m[k.key] === "number" ? m[k.key] : null; }) })), k.fmt);
  }
}
