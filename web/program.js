/*
 * The job page's part for a program job (#/job/ID of family "program"):
 * the program's files (path, size, hash) and, per variant, every module
 * the debug probe saw with its preferred and actual base, from one done
 * task's result (a select picks the cell). Loaded before app.js, whose
 * helpers (api; helpers.js's esc, bytes, badge, cellKey, $) it calls; job.js's job
 * page calls programSection(job) on each poll.
 */
"use strict";

/* Which result the section shows: "TASK:RESULT", so a poll that finds the
 * same one draws nothing. */
let programShown = "";

/* The files of a result's variant (as-built when it has one: its files are
 * the manifest's, untouched) by manifest path: {sha256, size}. */
function programFileSizes(result) {
  const variants = (result && result.variants) || [];
  const asBuilt = variants.find((v) => v.name === "as-built" && v.files) || variants.find((v) => v.files);
  return new Map(((asBuilt && asBuilt.files) || []).map((f) => [f.name, f]));
}

function programFilesTable(spec, sizes) {
  const files = Object.entries(spec.files || {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rows = files.map(([path, ref]) => {
    const f = sizes.get(path);
    return `<tr><td><code>${esc(path)}</code>${path === spec.exe ? ` <span class="badge">exe</span>` : ""}</td>
      <td class="num">${f ? esc(bytes(f.size)) : `<span class="muted">—</span>`}</td>
      <td><code class="small">${esc(String(ref).replace(/^sha256:/, ""))}</code></td></tr>`;
  }).join("");
  return `<div class="scroll" style="max-height:20em"><table id="program-files"><thead><tr><th>path</th>
    <th class="num">size</th><th>sha256</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function programVariantModules(v) {
  const verify = v.verify || {};
  const head = `<h3>${esc(v.name)} ${v.valid ? badge("status", "valid") : badge("state", "failed")}
    <span class="muted small">${esc(Object.entries(v.knobs || {}).map(([k, x]) => k + "=" + x).join(" "))}</span></h3>`;
  if (!v.valid && !(verify.modules || []).length)
    return `<div class="program-variant" data-variant="${esc(v.name)}">${head}<p class="error">${esc(v.invalid_reason || "invalid")}</p></div>`;
  const rows = (verify.modules || []).map((m) => `<tr class="${m.program_file ? "" : "muted"}">
    <td title="${esc(m.path || "")}">${esc(m.name)}</td><td>${m.file ? `<code>${esc(m.file)}</code>`
      : m.instead_of ? `<b class="error">loaded in place of</b> <code>${esc(m.instead_of)}</code>` : "system"}</td>
    <td><code>${esc(m.preferred)}</code></td><td><code>${esc(m.actual)}</code></td>
    <td>${m.relocated ? `<b class="error">relocated</b>` : "at its base"}</td></tr>`).join("");
  return `<div class="program-variant" data-variant="${esc(v.name)}">${head}
    ${v.valid ? "" : `<p class="error">${esc(v.invalid_reason)}</p>`}
    <p class="small muted">${esc(verify.dlls_loaded ?? "?")} of ${esc(verify.dll_count ?? "?")} DLLs of the program loaded,
      ${esc(verify.dlls_relocated ?? 0)} relocated; ${esc(verify.system_modules_relocated ?? 0)} system modules relocated.</p>
    <div class="scroll" style="max-height:22em"><table class="program-modules"><thead><tr><th>module</th><th>file</th>
      <th>preferred base</th><th>actual base</th><th></th></tr></thead><tbody>${rows}</tbody></table></div></div>`;
}

/* Draws (or leaves as drawn) #program for JOB, a program job. */
async function programSection(job) {
  const el = $("#program");
  const spec = job.spec && job.spec.program;
  if (!el || !spec) return;
  const done = job.tasks.filter((t) => t.result_id);
  const picked = $("#program-cell") ? +$("#program-cell").value : 0;
  const task = done.find((t) => t.id === picked) || done[0];
  const key = task ? `${task.id}:${task.result_id}:${done.length}` : "none";
  if (key === programShown && el.innerHTML) return;
  programShown = key;
  const result = task ? await api("/api/v1/results/" + task.result_id) : null;
  const select = done.length > 1 ? `<label>Cell <select id="program-cell">${done.map((t) =>
    `<option value="${t.id}"${t === task ? " selected" : ""}>${esc(cellKey(t.cell))} (task ${t.id})</option>`).join("")}</select></label>` : "";
  el.innerHTML = `<h2>Program</h2>
    <p class="small">runs <code>${esc(spec.exe)}</code> ${(spec.args || []).map((a) => `<code>${esc(a)}</code>`).join(" ")}
      until <b>${esc(spec.until)}</b> (at most ${esc(spec.timeout_s)} s); ${Object.keys(spec.files || {}).length} files.</p>
    ${programFilesTable(spec, programFileSizes(result))}
    <h2>Modules per variant</h2>
    <div class="toolbar">${select}<span class="muted small">${task ? `from task ${task.id}'s result (${esc(cellKey(task.cell))}): each module's preferred base (its file's ImageBase) and where the loader put it, as the debug probe saw them`
      : "no result yet: sizes and modules come with the first one"}</span></div>
    <div id="program-variants">${result ? (result.variants || []).map(programVariantModules).join("") : ""}</div>`;
  if ($("#program-cell")) $("#program-cell").addEventListener("change", () => { programShown = ""; programSection(job); });
}
