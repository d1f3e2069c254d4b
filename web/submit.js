/*
 * The submit page (#/submit): a form for a pe or elf job (generator,
 * variants, measurements, the matrix from the fleet's facts and labels)
 * with the request body it sends and the count of tasks it makes; the
 * server's validation error is shown next to the field it names.
 */
"use strict";

const PE_PRESETS = ["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind", "reorder", "no-rebase"];
const ELF_PRESETS = ["default", "now", "relr", "hidden", "symbolic", "symbolic+relr", "reorder", "sysv-hash"];
const DLL_SETS = ["none", "user32", "user32+gdi32", "generated"];
const KEY_RE = /^[a-z][a-z0-9_]{0,31}$/;

/* KEY -> sorted values, from the agents' string facts and labels. */
function fleetKeys(agents) {
  const keys = new Map();
  const add = (k, v) => {
    if (!KEY_RE.test(k) || (typeof v !== "string" && typeof v !== "number") || String(v).length === 0 || String(v).length > 64) return;
    if (!keys.has(k)) keys.set(k, new Set());
    keys.get(k).add(String(v));
  };
  for (const a of agents) {
    for (const [k, v] of Object.entries(a.facts || {})) add(k, v);
    for (const [k, v] of Object.entries(a.labels || {})) add(k, v);
  }
  return new Map([...keys.entries()].sort().map(([k, s]) => [k, [...s].sort()]));
}

function agentHas(agent, key, value) {
  const f = agent.facts && agent.facts[key], l = agent.labels && agent.labels[key];
  return (f !== undefined && String(f) === value) || (l !== undefined && l === value);
}

async function submitPage() {
  const { agents } = await api("/api/v1/agents");
  const keys = fleetKeys(agents);
  pageEl().innerHTML = `<h1>Submit a job</h1>
  <form id="submit-form" novalidate>
  <div class="grid2"><div>
    <fieldset data-field="name"><legend>Job</legend>
      <label>Name <input name="name" value="my-experiment" size="28"></label>
      <label>Family <select name="family" data-field="family"><option>pe</option><option>elf</option></select></label>
      <label data-field="priority">Priority <input name="priority" type="number" value="0"></label>
    </fieldset>
    <fieldset data-field="generator"><legend>Generator</legend>
      <label data-field="dlls">DLLs <input name="dlls" type="number" value="10"></label>
      <label data-field="exports">Exports each <input name="exports" type="number" value="100"></label>
      <label data-field="globals_per_function">Globals per function <input name="globals_per_function" type="number" value="0"></label>
      <label data-field="main">Main <select name="main"><option>reference</option><option>call</option></select></label>
    </fieldset>
    <fieldset data-field="variants"><legend>Variants</legend>
      <div id="presets"></div>
      <div id="knobs"></div>
      <button type="button" id="add-knobs">Add a variant from knobs</button>
    </fieldset>
    <fieldset data-field="measure"><legend>Measurements</legend>
      <div data-field="measure.warm"><label><input type="checkbox" name="warm" checked> warm</label>
        <label data-field="measure.warm.runs">runs <input name="warm_runs" type="number" value="30"></label>
        <label data-field="measure.warm.warmup">warmup <input name="warm_warmup" type="number" value="3"></label></div>
      <div data-field="measure.cold"><label><input type="checkbox" name="cold"> cold</label>
        <label data-field="measure.cold.runs">runs <input name="cold_runs" type="number" value="10"></label></div>
      <div data-field="measure.churn"><label><input type="checkbox" name="churn"> churn</label>
        <label data-field="measure.churn.processes">processes <input name="churn_processes" type="number" value="1000"></label>
        <span data-field="measure.churn.dll_sets">${DLL_SETS.map((s) => `<label><input type="checkbox" name="dll_set" value="${s}"${s === "none" || s === "user32" ? " checked" : ""}> ${s}</label>`).join("")}</span></div>
    </fieldset>
  </div><div>
    <fieldset data-field="matrix"><legend>Matrix</legend>
      <label><input type="radio" name="matrix_mode" value="any" checked> one task on any agent</label>
      <label><input type="radio" name="matrix_mode" value="cells"> cells (cartesian product)</label>
      <label><input type="radio" name="matrix_mode" value="each_agent"> each matching agent</label>
      <p class="muted small">Keys and values the fleet has (facts and labels of ${plural(agents.length, "agent")}):</p>
      <div id="matrix-keys">${[...keys.entries()].map(([k, vals]) => `<div data-field="matrix.${esc(k)}"><b>${esc(k)}</b>:
        ${vals.map((v) => `<label><input type="checkbox" class="matrix-value" data-key="${esc(k)}" value="${esc(v)}"> ${esc(v)}</label>`).join("")}</div>`).join("") ||
        `<p class="muted">No agent has enrolled: the job will wait for one.</p>`}</div>
    </fieldset>
    <div class="card"><b>Tasks: <span id="task-total">1</span></b> <span class="muted" id="task-note"></span></div>
    <p><button id="submit-job">Submit job</button> <span class="error" id="submit-error"></span></p>
    <details open><summary>Request body</summary><pre id="submit-preview"></pre></details>
  </div></div>
  </form>`;
  const form = $("#submit-form");
  const drawPresets = () => {
    const list = form.family.value === "pe" ? PE_PRESETS : ELF_PRESETS;
    $("#presets").innerHTML = list.map((p) => `<label><input type="checkbox" class="preset" value="${p}"${p === "default" ? " checked" : ""}> ${p}</label>`).join("");
    $("#knobs").innerHTML = "";
    $("#add-knobs").hidden = form.family.value !== "pe";
  };
  drawPresets();
  $("#add-knobs").addEventListener("click", () => {
    const div = document.createElement("div");
    div.className = "knob-row";
    div.innerHTML = `<label>name <input class="knob-name" size="12" value="custom-${$("#knobs").children.length + 1}"></label>
      <label>bases <select class="knob-bases"><option>same</option><option>unique</option><option>toolchain</option></select></label>
      <label><input type="checkbox" class="knob-bind"> bind</label>
      <label>imports <select class="knob-imports"><option>name</option><option>ordinal</option></select></label>
      <label>order <select class="knob-order"><option>link</option><option>trace</option></select></label>
      <button type="button" class="knob-remove">remove</button>`;
    $("#knobs").appendChild(div);
    update();
  });
  $("#knobs").addEventListener("click", (ev) => {
    if (ev.target.classList.contains("knob-remove")) { ev.target.closest(".knob-row").remove(); update(); }
  });
  const intOf = (name) => { const v = form[name].value.trim(); return v === "" ? undefined : Number(v); };
  const build = () => {
    const job = { name: form.name.value, family: form.family.value,
      generator: { dlls: intOf("dlls"), exports: intOf("exports"), globals_per_function: intOf("globals_per_function"), main: form.main.value },
      variants: [...form.querySelectorAll(".preset:checked")].map((c) => c.value) };
    for (const row of form.querySelectorAll(".knob-row"))
      job.variants.push({ name: $(".knob-name", row).value, bases: $(".knob-bases", row).value, bind: $(".knob-bind", row).checked,
        imports: $(".knob-imports", row).value, order: $(".knob-order", row).value });
    const measure = {};
    if (form.warm.checked) measure.warm = { runs: intOf("warm_runs"), warmup: intOf("warm_warmup") };
    if (form.cold.checked) measure.cold = { runs: intOf("cold_runs") };
    if (form.churn.checked) measure.churn = { processes: intOf("churn_processes"), dll_sets: [...form.querySelectorAll("[name=dll_set]:checked")].map((c) => c.value) };
    job.measure = measure;
    const mode = form.querySelector("[name=matrix_mode]:checked").value;
    const chosen = {};
    for (const c of form.querySelectorAll(".matrix-value:checked")) (chosen[c.dataset.key] = chosen[c.dataset.key] || []).push(c.value);
    if (mode !== "any") job.matrix = { [mode]: chosen };
    if (intOf("priority")) job.priority = intOf("priority");
    return job;
  };
  const update = () => {
    const job = build();
    $("#submit-preview").textContent = JSON.stringify(job, null, 2);
    let total = 1, note = "";
    if (job.matrix && job.matrix.cells) {
      const lists = Object.entries(job.matrix.cells);
      total = lists.reduce((n, [, v]) => n * v.length, 1);
      if (!lists.length) { total = 1; note = "no key chosen: the server will say what it takes"; }
      else {
        let empty = 0;
        const walk = (i, cell) => {
          if (i === lists.length) { if (!agents.some((a) => a.state !== "quarantined" && Object.entries(cell).every(([k, v]) => agentHas(a, k, v)))) empty++; return; }
          for (const v of lists[i][1]) walk(i + 1, { ...cell, [lists[i][0]]: v });
        };
        if (total <= 4096) walk(0, {});
        note = `one per cell${empty ? `; ${empty} cell(s) match no agent now and will wait` : ""}`;
      }
    } else if (job.matrix && job.matrix.each_agent) {
      const sel = Object.entries(job.matrix.each_agent);
      total = agents.filter((a) => a.state !== "quarantined" && sel.every(([k, vals]) => vals.some((v) => agentHas(a, k, v)))).length;
      note = "one per enrolled, non-quarantined agent matching";
    } else {
      note = "one task, leased by any agent";
    }
    $("#task-total").textContent = total;
    $("#task-note").textContent = note;
  };
  form.addEventListener("input", (ev) => {
    const field = ev.target.closest("[data-field]");
    if (field) field.querySelectorAll(".field-error").forEach((e) => e.remove());
    update();
  });
  form.addEventListener("change", (ev) => { if (ev.target.name === "family") { drawPresets(); } update(); });
  update();
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    form.querySelectorAll(".field-error").forEach((e) => e.remove());
    $("#submit-error").textContent = "";
    try {
      const created = await api("/api/v1/jobs", { method: "POST", body: build() });
      location.hash = "#/job/" + created.id;
    } catch (e) {
      showFieldError(form, e.message);
    }
  });
}

/* Puts the server's message next to the field it names ("Field 'dlls'
 * must be ...", "Field 'measure.warm.runs' ...", "Unknown pe variant 'x'."). */
function showFieldError(form, message) {
  let target = null;
  const m = message.match(/Field '([^']+)'/);
  const fields = [...form.querySelectorAll("[data-field]")];
  if (m) {
    const name = m[1];
    const parts = name.split(".");
    for (let i = parts.length; i > 0 && !target; i--) {
      const want = parts.slice(0, i).join(".");
      target = fields.find((f) => f.dataset.field === want) ||
        fields.find((f) => f.dataset.field.endsWith("." + want));
    }
  } else if (/variant/i.test(message)) {
    target = fields.find((f) => f.dataset.field === "variants");
  } else if (/matrix|cell|agent/i.test(message)) {
    target = fields.find((f) => f.dataset.field === "matrix");
  }
  const span = document.createElement("span");
  span.className = "field-error";
  span.setAttribute("role", "alert");
  span.textContent = message;
  if (target) target.appendChild(span);
  else $("#submit-error").textContent = message;
}
