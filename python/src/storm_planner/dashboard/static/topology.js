// The topology page: /api/topology?id=..., Storm UI's figures from the kit's metrics, the trend over
// time with every plan on the same axis, and each plan's before/after.
"use strict";

const topologyId = new URLSearchParams(location.search).get("id") || "";
const charts = {};
window.topologyPage = {charts, data: null};   // for the browser tests: what the page drew

const capacityClass = (c) => c === null || c === undefined ? "" : (c >= 0.8 ? "hot" : (c >= 0.5 ? "warm" : ""));

function card(label, value, testid, raw) {
  const attrs = {class: "card figure", "data-testid": testid};
  if (raw !== undefined && raw !== null) attrs["data-value"] = String(raw);
  return el("div", attrs, el("div", {class: "muted"}, label), el("strong", {}, value));
}

function duration(s) {
  if (s === null || s === undefined) return "–";
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.floor(s % 60);
  return h ? `${h}h ${m}m` : (m ? `${m}m ${sec}s` : `${sec}s`);
}

function renderSummary(page) {
  const s = page.summary, now = s.now || {}, t = s.totals || {};
  $("step-time").textContent = s.now ?
    `newest step ${new Date(now.start_ms).toLocaleTimeString()}–${new Date(now.end_ms).toLocaleTimeString()}` :
    "waiting for the first complete time step (every task's window must reach past it)";
  $("summary").replaceChildren(
    card(`uptime (${s.uptime_source})`, duration(s.uptime_s), "uptime", s.uptime_s),
    card("workers", fmt(s.workers), "workers", s.workers),
    card("executors", fmt(s.executors), "executors", s.executors),
    card("emitted /s", fmt(now.emitted_per_s, 1), "emitted", now.emitted_per_s),
    card("transferred /s", fmt(now.transferred_per_s, 1), "transferred", now.transferred_per_s),
    card("acked /s (throughput)", fmt(now.acked_per_s, 1), "acked", now.acked_per_s),
    card("failed /s", fmt(now.failed_per_s, 1), "failed", now.failed_per_s),
    card("complete latency p50 ms", fmt(now.complete_p50_ms, 1), "p50", now.complete_p50_ms),
    card("complete latency p99 ms", fmt(now.complete_p99_ms, 1), "p99", now.complete_p99_ms),
    card("tuples between workers /s", fmt(now.inter_worker_per_s, 1), "inter-worker", now.inter_worker_per_s),
    card("tuples between nodes /s", fmt(now.inter_node_per_s, 1), "inter-node", now.inter_node_per_s),
    card("since the workers started", `${fmt(t.emitted)} emitted, ${fmt(t.transferred)} transferred, ` +
      `${fmt(t.acked)} acked, ${fmt(t.failed)} failed`, "totals"),
  );
}

function renderComponents(page) {
  const body = $("components").querySelector("tbody");
  body.replaceChildren();
  for (const c of page.components) {
    const cell = (v, testid, digits = 2, cls = "") => el("td", {"data-testid": testid, class: cls,
      "data-value": v === null || v === undefined ? "" : String(v)}, fmt(v, digits));
    body.append(el("tr", {"data-testid": "component-row", "data-component": c.component,
        class: c.system ? "system" : ""},
      el("td", {}, c.component), el("td", {}, c.system ? "Storm's" : (c.spout ? "spout" : "bolt")),
      el("td", {}, fmt(c.executors)), cell(c.emitted_per_s, "emitted-rate", 1),
      cell(c.executed_per_s, "processed-rate", 1), cell(c.execute_latency_ms, "execute-latency", 3),
      cell(c.capacity, "capacity", 3, `capacity ${capacityClass(c.capacity)}`), cell(c.cpu_percent, "cpu", 1),
      cell(c.acked_per_s, "acked-rate", 1), cell(c.failed_per_s, "failed-rate", 1),
      cell(c.complete_latency_ms, "complete-latency", 1)));
  }
  if (!page.components.length) body.append(el("tr", {}, el("td", {colspan: 11, class: "muted"}, "no metrics yet")));
}

function renderSupervisors(page) {
  const body = $("supervisors").querySelector("tbody");
  body.replaceChildren();
  for (const s of page.supervisors) {
    const pct = (v) => v === null || v === undefined ? "–" : `${fmt(v, 0)} %`;
    const used = s.cpu && s.measured_cpu !== null && s.measured_cpu !== undefined ?
      el("div", {class: "bar measured"}, el("div", {style: {width: `${Math.min(100, 100 * s.measured_cpu / s.cpu)}%`}})) : "";
    body.append(el("tr", {"data-testid": "topology-supervisor", "data-id": s.id},
      el("td", {}, s.id), el("td", {}, s.machine_type || "–"), el("td", {}, fmt(s.tasks)),
      el("td", {}, pct(s.cpu)), el("td", {}, pct(s.declared_cpu)), el("td", {}, pct(s.measured_cpu), used),
      el("td", {}, pct(s.topology_cpu)), el("td", {}, s.link_mbit ? `${fmt(s.link_mbit)} (emulated)` : "not emulated"),
      el("td", {}, s.host_mbit === null || s.host_mbit === undefined ? "–" : fmt(s.host_mbit, 3)),
      el("td", {}, fmt(s.topology_mbit, 3))));
  }
  if (!page.supervisors.length) body.append(el("tr", {}, el("td", {colspan: 10, class: "muted"}, "no metrics yet")));
}

function markerItems(page) {
  return page.markers.map((m) => ({time_ms: m.time * 1000, kind: m.kind}));
}

// One scatter point per marker at the top of the chart: its tooltip is the marker's reason.
function markerDataset(page, top) {
  return {label: "plans", type: "scatter", data: page.markers.map((m) => ({x: m.time * 1000, y: top, marker: m})),
    pointStyle: "triangle", rotation: 180, pointRadius: 7, pointHoverRadius: 9,
    backgroundColor: page.markers.map((m) => markerColours[m.kind] || "#555"), borderColor: "#333"};
}

function lineChart(id, title, yTitle, series, page) {
  const steps = page.steps;
  const mid = (s) => (s.start_ms + s.end_ms) / 2;
  const datasets = series.map(([label, key, i]) => ({label, data: steps.map((s) => ({x: mid(s), y: s[key]})),
    borderColor: colour(i), backgroundColor: colour(i), pointRadius: 0, borderWidth: 2, spanGaps: false}));
  const values = datasets.flatMap((d) => d.data.map((p) => p.y)).filter((v) => v !== null && v !== undefined);
  const top = values.length ? Math.max(...values) * 1.05 || 1 : 1;
  datasets.push(markerDataset(page, top));
  const xs = [...steps.map(mid), ...page.markers.map((m) => m.time * 1000)];
  const x = timeScale("time");
  if (xs.length) { x.min = Math.min(...xs) - 1000; x.max = Math.max(...xs) + 1000; }
  const options = {maintainAspectRatio: false, parsing: true, scales: {x, y: {beginAtZero: true, title: {display: true, text: yTitle}}},
    plugins: {title: {display: true, text: title}, markers: {items: markerItems(page)},
      tooltip: {callbacks: {label: (ctx) => ctx.raw && ctx.raw.marker ?
        `${ctx.raw.marker.kind} (${ctx.raw.marker.algorithm || "?"}) at ${when(ctx.raw.marker.time)}: ${ctx.raw.marker.reason}` :
        `${ctx.dataset.label}: ${fmt(ctx.parsed.y)}`}}}};
  if (charts[id]) {
    charts[id].data.datasets = datasets;
    charts[id].options.scales.x = x;
    charts[id].options.plugins.markers.items = options.plugins.markers.items;
    charts[id].update("none");
    return;
  }
  charts[id] = new Chart($(id), {type: "line", data: {datasets}, options, plugins: [markerLines]});
}

function renderTimelines(page) {
  $("history-note").textContent = page.step_s ?
    `${page.steps.length} steps of ${fmt(page.step_s, 1)} s kept since the dashboard started (--metrics-history)` :
    "no steps yet";
  lineChart("chart-throughput", "throughput", "tuples/s",
    [["acked at spouts /s", "acked_per_s", 0], ["processed by bolts /s", "executed_per_s", 1]], page);
  lineChart("chart-latency", "complete latency", "ms",
    [["p99", "complete_p99_ms", 3], ["p50", "complete_p50_ms", 0], ["mean", "complete_latency_ms", 7]], page);
  lineChart("chart-traffic", "tuples between nodes and workers", "tuples/s",
    [["between nodes /s", "inter_node_per_s", 1], ["between workers /s", "inter_worker_per_s", 2]], page);
  lineChart("chart-capacity", "busiest component's capacity", "busy fraction",
    [["capacity", "busiest_capacity", 3]], page);
}

function renderMarkers(page) {
  $("settle-note").textContent = `mean of up to 6 steps before each, and after it settled (${fmt(page.settle_s, 0)} s, --settle)`;
  const body = $("markers").querySelector("tbody");
  body.replaceChildren();
  const pair = (m, key, digits = 1) => {
    const b = m.before[key], a = m.after[key];
    const text = m.settled ? `${fmt(b, digits)} → ${fmt(a, digits)}` : `${fmt(b, digits)} → settling…`;
    return el("td", {"data-testid": `ba-${key}`, "data-before": b === null ? "" : String(b),
      "data-after": a === null ? "" : String(a)}, text);
  };
  for (const m of [...page.markers].reverse()) {
    body.append(el("tr", {"data-testid": "marker", "data-kind": m.kind, "data-time": String(m.time),
        class: `marker-${m.kind}`, title: m.reason},
      el("td", {}, when(m.time)), el("td", {}, m.kind + (m.phase ? `: ${m.phase} ${fmt(m.seconds, 1)} s` : "")
        + (m.kept_rounds ? ` (after ${m.kept_rounds} kept)` : "")),
      el("td", {}, m.algorithm || "–"), el("td", {class: "reason"}, m.reason),
      pair(m, "acked_per_s"), pair(m, "executed_per_s"), pair(m, "complete_p99_ms"),
      pair(m, "inter_node_per_s"), pair(m, "busiest_capacity", 3)));
  }
  if (!page.markers.length) body.append(el("tr", {}, el("td", {colspan: 9, class: "muted"}, "no plans in the plan log")));
}

function renderStatus(page) {
  $("name").textContent = page.name;
  document.title = `${page.name} · storm-planner dashboard`;
  const m = page.metrics || {};
  let text = "";
  if (!m.available) text = "metrics: no ZooKeeper given (--zookeeper)";
  else if (!m.connected) text = `metrics: ZooKeeper unreachable since ${when(m.disconnected_since)}; ` +
    "showing what was read until then";
  else text = `metrics: ${m.corrupt_windows ? `${m.corrupt_windows} bad window(s) skipped` : "ZooKeeper connected"}` +
    (m.problems && m.problems.length ? ` (${m.problems[0]})` : "") +
    (m.future_windows_ignored ? `; ${m.future_windows_ignored} window(s) ending in the future ignored` : "");
  $("metrics-status").textContent = text;
  $("metrics-status").className = m.available && !m.connected ? "fallback" : "";
  $("status").textContent = page.cluster_error ? `cluster: ${page.cluster_error}` : `updated ${new Date().toLocaleTimeString()}`;
}

async function refresh() {
  let wait = 5000;
  try {
    const response = await fetch(`/api/topology?id=${encodeURIComponent(topologyId)}`, {cache: "no-store"});
    const page = await response.json();
    if (!response.ok) throw new Error(page.error || `HTTP ${response.status}`);
    window.topologyPage.data = page;
    renderStatus(page);
    renderSummary(page);
    renderComponents(page);
    renderSupervisors(page);
    renderTimelines(page);
    renderMarkers(page);
    window.topologyPage.rendered = (window.topologyPage.rendered || 0) + 1;
    wait = 1000 * (page.refresh_s || 3);
  } catch (error) {
    $("status").textContent = `not shown: ${error.message}; retrying`;
  }
  setTimeout(refresh, wait);
}

refresh();
