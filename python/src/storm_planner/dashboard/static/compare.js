// The comparison view: a benchmark table's schedulers side by side for one workload.
"use strict";

const params = new URLSearchParams(location.search);
let table = null;
let chart = null;
const PREFERRED = ["processed_tps", "emitted_tps", "latency_p99_ms", "latency_p50_ms", "lost", "migrations"];

function option(value, text, selected) {
  const o = el("option", {value}, text);
  if (selected) o.selected = true;
  return o;
}

async function loadTables() {
  const response = await fetch("/api/benchmarks", {cache: "no-store"});
  const tables = await response.json();
  const wanted = params.get("table");
  $("table").replaceChildren(...tables.map((t) => option(t.table, t.table, t.table === wanted)));
  if (!tables.length) { $("status").textContent = "no benchmark tables found (--reports)"; return; }
  $("table").onchange = () => loadTable(tables);
  await loadTable(tables);
}

async function loadTable(tables) {
  const chosen = tables.find((t) => t.table === $("table").value) || tables[0];
  const link = $("report-link");
  link.textContent = chosen.report_url ? "the report" : "";
  if (chosen.report_url) link.href = chosen.report_url; else link.removeAttribute("href");
  const response = await fetch(`/api/benchmarks/table?path=${encodeURIComponent(chosen.table)}`, {cache: "no-store"});
  table = await response.json();
  if (!response.ok) { $("status").textContent = table.error; return; }
  const workloads = Object.keys(table.workloads);
  const wanted = params.get("workload");
  $("workload").replaceChildren(...workloads.map((w) => option(w, w, w === wanted)));
  const metric = PREFERRED.find((m) => table.numeric.includes(m)) || table.numeric[0];
  $("metric").replaceChildren(...table.numeric.map((m) => option(m, m, m === metric)));
  $("workload").onchange = render;
  $("metric").onchange = render;
  $("status").textContent = `${table.rows} rows` + (table.not_run ? `, ${table.not_run} not run` : "");
  render();
}

function render() {
  const bySched = table.workloads[$("workload").value] || {};
  const schedulers = Object.keys(bySched);
  const head = $("comparison").querySelector("thead");
  head.replaceChildren(el("tr", {}, el("th", {}, "figure"), ...schedulers.map((s) =>
    el("th", {"data-testid": "scheduler"}, s))));
  const body = $("comparison").querySelector("tbody");
  body.replaceChildren();
  for (const column of table.columns) {
    const cells = schedulers.map((s) => {
      const f = bySched[s][column] || {};
      const text = f.median !== undefined ? `${fmt(f.median, 2)}${f.n > 1 ? ` (n=${f.n})` : ""}` : (f.text || []).join("; ");
      return el("td", {"data-testid": "cell", "data-column": column, "data-scheduler": s}, text);
    });
    body.append(el("tr", {}, el("td", {}, column), ...cells));
  }
  const metric = $("metric").value;
  const datasets = [{label: `${metric} (median)`, data: schedulers.map((s) => (bySched[s][metric] || {}).median ?? null),
    backgroundColor: schedulers.map((_, i) => colour(i))}];
  if (chart) { chart.data.labels = schedulers; chart.data.datasets = datasets; chart.update("none"); return; }
  chart = new Chart($("compare-chart"), {type: "bar", data: {labels: schedulers, datasets},
    options: {maintainAspectRatio: false, scales: {y: {beginAtZero: true}}}});
}

loadTables().catch((error) => { $("status").textContent = `not shown: ${error.message}`; });
