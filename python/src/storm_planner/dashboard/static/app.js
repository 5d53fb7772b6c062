// The dashboard page: fetches /api/snapshot, renders it, and refreshes while the cluster runs.
// Charts with Chart.js, graphs with Cytoscape.js (both vendored under /static/vendor).
"use strict";

let historyChart = null;
const graphs = {};
let lastKey = null;

function renderSupervisors(snap) {
  const box = $("supervisors");
  box.replaceChildren();
  if (!snap.supervisors.length) { box.append(el("p", {class: "muted"}, "no supervisors known yet")); return; }
  const byType = {};
  for (const s of snap.supervisors) (byType[s.machine_type] ||= []).push(s);
  for (const [type, sups] of Object.entries(byType).sort()) {
    const cards = el("div", {class: "cards"});
    for (const s of sups) {
      const cpu = s.cpu ? `${fmt(s.cpu, 0)}% CPU` : "capacity unknown";
      const mem = s.memory_mb ? `, ${fmt(s.memory_mb, 0)} MB` : "";
      const card = el("div", {class: "card supervisor", "data-testid": "supervisor", "data-id": s.id},
        el("strong", {}, s.id), el("div", {class: "muted"}, `${s.host || ""} ${cpu}${mem}`),
        el("div", {"data-testid": "supervisor-counts"}, `slots used ${s.used_slots.length} / ${s.slots.length || s.num_slots || "?"}` +
          `, executors ${snap.cluster && snap.cluster.connected ? "running" : "planned"} ${s.planned_executors}`));
      if (s.cpu && s.declared_cpu !== undefined && s.declared_cpu !== null) {
        const pct = Math.min(100, 100 * s.declared_cpu / s.cpu);
        card.append(el("div", {}, `declared CPU ${fmt(s.declared_cpu, 0)}%`),
          el("div", {class: "bar"}, el("div", {style: {width: `${pct}%`}})));
      }
      if (s.cpu && s.measured_cpu !== undefined && s.measured_cpu !== null) {
        const pct = Math.min(100, 100 * s.measured_cpu / s.cpu);
        card.append(el("div", {}, `measured CPU ${fmt(s.measured_cpu, 0)}%`),
          el("div", {class: "bar measured"}, el("div", {style: {width: `${pct}%`}})));
      }
      if (s.host_mbit !== undefined && s.host_mbit !== null) {
        const rate = s.link_mbit ? ` of ${fmt(s.link_mbit, 1)} (emulated)` : "";
        card.append(el("div", {"data-testid": "link-use"}, `link ${fmt(s.host_mbit, 3)}${rate} Mbit/s`));
        if (s.link_mbit) card.append(el("div", {class: "bar measured"},
          el("div", {style: {width: `${Math.min(100, 100 * s.host_mbit / s.link_mbit)}%`}})));
      } else if (s.link_mbit) {
        card.append(el("div", {class: "muted"}, `link ${fmt(s.link_mbit, 1)} Mbit/s (emulated)`));
      }
      card.append(el("div", {class: "muted"}, s.used_slots.join(" ")));
      cards.append(card);
    }
    box.append(el("div", {class: "machine-type"}, el("h3", {}, `machine type ${type}`), cards));
  }
}

function placementElements(topo) {
  const comps = topo.components.map((c) => c.id);
  // Preset positions: supervisors side by side, their slots stacked, a slot's executors in rows
  // (force-directed layouts overlap compound nodes that share no edges).
  const elements = [];
  let x0 = 0;
  for (const node of topo.nodes) {
    elements.push({data: {id: `n:${node.node}`, label: node.node}, classes: "node"});
    let y = 0;
    const perRow = Math.max(2, Math.ceil(Math.sqrt(Math.max(...node.slots.map((s) => s.executors.length)))));
    for (const slot of node.slots) {
      elements.push({data: {id: `s:${slot.slot}`, parent: `n:${node.node}`, label: slot.slot}, classes: "slot"});
      slot.executors.forEach((ex, k) => {
        const position = {x: x0 + (k % perRow) * 90, y: y + Math.floor(k / perRow) * 55};
        elements.push({data: {id: `e:${ex}`, parent: `s:${slot.slot}`, label: ex, colour: colour(
          comps.indexOf((topo.components.find((c) => c.executors.includes(ex)) || {id: ex}).id))},
          classes: "executor", position});
      });
      y += (Math.ceil(slot.executors.length / perRow)) * 55 + 70;
    }
    x0 += perRow * 90 + 100;
  }
  for (const t of topo.node_traffic) {
    elements.push({data: {id: `t:${t.from}->${t.to}`, source: `n:${t.from}`, target: `n:${t.to}`,
      label: fmt(t.rate)}, classes: "traffic"});
  }
  return elements;
}

function componentElements(topo) {
  const elements = topo.components.map((c, i) => ({data: {id: `c:${c.id}`,
    label: `${c.id} ×${c.executors.length}`, colour: colour(i)}, classes: "component"}));
  const known = new Set(topo.components.map((c) => c.id));
  for (const s of topo.streams) {
    if (known.has(s.from) && known.has(s.to)) {
      elements.push({data: {id: `st:${s.from}->${s.to}:${s.stream || ""}`, source: `c:${s.from}`,
        target: `c:${s.to}`, label: s.grouping || ""}});
    }
  }
  return elements;
}

// Font sizes in model units: at the fitted default zoom of a few supervisors they read at 12-14 px.
const graphStyle = [
  {selector: "node", style: {label: "data(label)", "font-size": 14, "text-valign": "top",
    "text-background-color": "#fff", "text-background-opacity": 0.7, "text-background-padding": 1}},
  {selector: ".node", style: {"background-color": "#f3f6fa", "border-color": "#1f3a5f", "border-width": 2,
    "font-size": 16, "font-weight": "bold"}},
  {selector: ".slot", style: {"background-color": "#fff", "border-color": "#aaa", "border-width": 1, "font-size": 13}},
  {selector: ".executor, [colour]", style: {"background-color": "data(colour)", "text-valign": "center",
    "font-size": 12, width: 26, height: 26}},
  {selector: "edge", style: {label: "data(label)", "font-size": 13, "curve-style": "bezier",
    "target-arrow-shape": "triangle", width: 1.5, "line-color": "#999", "target-arrow-color": "#999",
    "text-background-color": "#fff", "text-background-opacity": 0.8}},
  {selector: ".traffic", style: {"line-color": "#e08a2c", "target-arrow-color": "#e08a2c", width: 3}},
  {selector: ".component", style: {"font-size": 16, "text-valign": "top", width: 30, height: 30}},
];
// Fitting a wide graph into its box can zoom out until its labels are unreadable: not below this.
const MIN_FIT_ZOOM = 0.8;

function readable(cy) {
  if (cy.zoom() < MIN_FIT_ZOOM) { cy.zoom(MIN_FIT_ZOOM); cy.center(); }
  return cy;
}

function renderTopologies(snap) {
  const box = $("topologies");
  const key = JSON.stringify([snap.topologies, snap.finished_topologies]);
  if (key === lastKey) return;  // unchanged: keep the graphs (and whatever the user zoomed)
  lastKey = key;
  for (const g of Object.values(graphs)) g.destroy();
  box.replaceChildren();
  const finished = snap.finished_topologies || [];
  if (finished.length) {
    box.append(el("p", {class: "muted", "data-testid": "finished"},
      `no longer running (their plans stay in the history): ${finished.join(", ")}`));
  }
  if (!snap.topologies.length) { box.append(el("p", {class: "muted"}, "no plans yet")); return; }
  snap.topologies.forEach((topo, i) => {
    const title = el("h3", {}, `${topo.name} `, el("span", {class: "algorithm", "data-testid": "algorithm"},
      topo.algorithm || "?"), " ", el("a", {href: `/topology?id=${encodeURIComponent(topo.id)}`,
      "data-testid": "topology-link"}, "live figures and plans over time ›"));
    const section = el("div", {class: "topology", "data-testid": "topology", "data-id": topo.id}, title);
    if (topo.last_round_fallback) {
      const err = topo.last_error || {};
      section.append(el("p", {class: "fallback"},
        `last round fell back to DefaultScheduler: ${err.kind || ""} ${err.message || ""}`));
    }
    section.append(el("p", {class: "muted"}, `${topo.rounds} planning round(s), last at ${when(topo.time)}; ` +
      `figures: ${Object.entries(topo.figures).map(([k, v]) => `${k} ${fmt(v)}`).join(", ") || "none"}`));
    const cg = el("div", {class: "component-graph", id: `cg-${i}`});
    const pg = el("div", {class: "graph", id: `pg-${i}`});
    const rows = el("tbody");
    for (const node of topo.nodes) for (const slot of node.slots) {
      rows.append(el("tr", {"data-testid": "slot-row"}, el("td", {"data-testid": "slot"}, slot.slot),
        el("td", {}, slot.components.join(", ")), el("td", {}, slot.executors.join(" "))));
    }
    const table = el("table", {class: "slots"},
      el("thead", {}, el("tr", {}, el("th", {}, "slot"), el("th", {}, "components"), el("th", {}, "executors"))), rows);
    const traffic = topo.traffic_source ? `orange: traffic between nodes, ${topo.traffic_source}` : "no traffic known";
    section.append(el("h4", {}, "component graph"), cg,
      el("h4", {}, `placement (supervisor › slot › executor; ${traffic})`), pg, table);
    box.append(section);
    graphs[`cg-${i}`] = readable(cytoscape({container: cg, elements: componentElements(topo), style: graphStyle,
      layout: {name: "breadthfirst", directed: true, padding: 30, spacingFactor: 0.8}, maxZoom: 2}));
    graphs[`pg-${i}`] = readable(cytoscape({container: pg, elements: placementElements(topo), style: graphStyle,
      layout: {name: "preset", fit: true, padding: 20}, maxZoom: 2}));
  });
}

function renderPlans(snap) {
  const body = $("plans").querySelector("tbody");
  body.replaceChildren();
  for (const p of [...snap.plans].reverse()) {
    const f = p.figures;
    const cause = p.error ? `${p.error.kind}: ${p.error.message}` : p.notes.join("; ");
    body.append(el("tr", {class: p.fallback ? "fallback-row" : "", "data-testid": "plan-row"},
      el("td", {}, p.index), el("td", {}, when(p.time)), el("td", {}, p.topology || "–"),
      el("td", {}, p.algorithm || "–"), el("td", {}, p.executors), el("td", {}, fmt(f.imc_gain)),
      el("td", {}, fmt(f.load_distance)), el("td", {}, fmt(f.migrations)), el("td", {}, fmt(p.solve_ms)),
      el("td", {}, cause)));
  }
  // Every plan at its time (ms since the epoch on a clock-time axis), rebalances at theirs.
  const ok = snap.plans.filter((p) => !p.fallback && p.time !== null);
  const points = (fn) => ok.map((p) => ({x: p.time * 1000, y: fn(p), plan: p}));
  const datasets = [
    {label: "solve ms", data: points((p) => p.solve_ms), borderColor: colour(0), yAxisID: "y"},
    {label: "load distance", data: points((p) => p.figures.load_distance ?? null), borderColor: colour(1), yAxisID: "y1"},
    {label: "migrations", data: points((p) => p.figures.migrations ?? null), borderColor: colour(2), yAxisID: "y1"},
    {label: "fallback", data: snap.plans.filter((p) => p.fallback && p.time !== null).map((p) => ({x: p.time * 1000, y: 0, plan: p})),
      borderColor: "#b00020", backgroundColor: "#b00020", showLine: false, pointRadius: 6, pointStyle: "crossRot", yAxisID: "y"},
    {label: "rebalance", data: snap.rebalances.filter((r) => typeof r.time === "number").map((r) => ({x: r.time * 1000, y: 0})),
      borderColor: "#9b59b6", backgroundColor: "#9b59b6", showLine: false, pointRadius: 6, pointStyle: "triangle", yAxisID: "y"},
  ];
  if (historyChart) { historyChart.data.datasets = datasets; historyChart.update("none"); return; }
  historyChart = new Chart($("history-chart"), {type: "line", data: {datasets},
    options: {maintainAspectRatio: false, parsing: true,
      plugins: {tooltip: {callbacks: {title: (items) => items.length ? new Date(items[0].parsed.x).toLocaleTimeString() : "",
        afterLabel: (ctx) => ctx.raw && ctx.raw.plan ? `#${ctx.raw.plan.index} ${ctx.raw.plan.topology || ""} ` +
          `(${ctx.raw.plan.algorithm || "?"})` : ""}}},
      scales: {x: timeScale("time of the plan"),
               y: {position: "left", title: {display: true, text: "ms"}},
               y1: {position: "right", grid: {drawOnChartArea: false}}}}});
}

function renderTrendLinks(snap) {
  // Topologies with metrics but no plan (submitted without the plugin) get their page too.
  const planned = new Set(snap.topologies.map((t) => t.id));
  const others = (snap.trends || []).filter((id) => !planned.has(id));
  const box = $("trend-links");
  box.replaceChildren();
  if (!others.length) return;
  box.append("with metrics, not planned by the plugin: ");
  others.forEach((id, i) => box.append(i ? ", " : "", el("a", {href: `/topology?id=${encodeURIComponent(id)}`,
    "data-testid": "topology-link"}, id)));
}

function renderList(id, items, render, empty) {
  const box = $(id);
  box.replaceChildren();
  if (!items.length) { box.append(el("li", {class: "muted"}, empty)); return; }
  for (const it of items) box.append(render(it));
}

function render(snap) {
  const src = snap.sources || {};
  $("sources").textContent = [src.plan_log && `plan log ${src.plan_log}`, src.nimbus && `Nimbus ${src.nimbus}`]
    .filter(Boolean).join(" · ");
  const clusterErr = snap.cluster && snap.cluster.error;
  $("status").textContent = clusterErr ? `cluster: ${clusterErr}` : `updated ${new Date().toLocaleTimeString()}`;
  const log = snap.plan_log || {};
  $("bad-lines").textContent = log.bad_lines ?
    `${log.bad_lines} bad plan-log line(s) skipped (last: ${log.last_bad_line})` : "";
  $("plans-shown").textContent = snap.plans_total > snap.plans.length ?
    `the last ${snap.plans.length} of ${snap.plans_total} plans` : "";
  renderSupervisors(snap);
  renderTrendLinks(snap);
  renderTopologies(snap);
  renderPlans(snap);
  renderList("fallbacks", snap.fallbacks, (p) => el("li", {"data-testid": "fallback"},
    `${when(p.time)} ${p.topology || "(request)"} (${p.algorithm || "?"}): `,
    el("span", {class: "fallback", "data-testid": "fallback-reason"}, `${p.error.kind}: ${p.error.message}`)),
    "none: every round was planned");
  renderList("rebalances", snap.rebalances, (r) => el("li", {"data-testid": "rebalance"},
    `${when(r.time)} ${r.name || r.topology}: ${JSON.stringify(r.executors || {})} → ${r.outcome}` +
    (r.message ? ` (${r.message})` : "")), "none");
  renderList("reports", [...(snap.benchmark_tables || []).map((t) => ({table: t})), ...snap.reports],
    (r) => r.table ? el("li", {}, `${r.table.report}: `, el("a", {href: `/compare?table=${encodeURIComponent(r.table.table)}`,
      "data-testid": "compare-table"}, `${r.table.table.split("/").pop()}: schedulers side by side`)) :
      el("li", {}, `${r.report}: `, el("a", {href: r.url, target: "_blank"}, r.name)), "no benchmark reports found");
}

async function refresh() {
  try {
    const response = await fetch("/api/snapshot", {cache: "no-store"});
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const snap = await response.json();
    render(snap);
    setTimeout(refresh, 1000 * (snap.refresh_s || 3));
  } catch (error) {
    $("status").textContent = `dashboard server unreachable (${error.message}); retrying`;
    setTimeout(refresh, 5000);
  }
}

refresh();
