// Helpers the dashboard's pages share: DOM building (text only, never HTML), number and time formats,
// a Chart.js time axis (times as clock times, no date adapter needed) and plan markers on it.
"use strict";

const $ = (id) => document.getElementById(id);
const fmt = (v, digits = 2) => (v === null || v === undefined) ? "–" :
  (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(digits)) : String(v));
const when = (t) => t ? new Date(t * 1000).toLocaleTimeString() : "–";
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    // A style through the DOM, not as an attribute: the Content-Security-Policy allows no inline styles.
    if (k === "class") node.className = v; else if (k === "style") Object.assign(node.style, v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
};
const palette = ["#4a90d9", "#e08a2c", "#5cb85c", "#d9534f", "#9b59b6", "#16a085", "#c0a000", "#7f8c8d"];
const colour = (i) => palette[i % palette.length];

// Chart.js' defaults are small for a dashboard read from a distance.
if (window.Chart) {
  Chart.defaults.font.size = 13;
  Chart.defaults.animation = false;
}

// x in milliseconds since the epoch, labelled as clock times.
function timeScale(title) {
  return {type: "linear", title: {display: true, text: title || "time"},
    ticks: {maxTicksLimit: 8, callback: (value) => new Date(value).toLocaleTimeString()}};
}

const markerColours = {"plan": "#4a90d9", "re-plan": "#2e9d4f", "rebalance": "#9b59b6", "fallback": "#b00020",
  "drain": "#e67e22"};

// Draws each marker (chart.options.plugins.markers.items: [{time_ms, kind}]) as a vertical line.
const markerLines = {
  id: "markers",
  afterDatasetsDraw(chart, _args, options) {
    const {ctx, chartArea, scales} = chart;
    for (const m of (options && options.items) || []) {
      const x = scales.x.getPixelForValue(m.time_ms);
      if (x < chartArea.left || x > chartArea.right) continue;
      ctx.save();
      ctx.strokeStyle = markerColours[m.kind] || "#555";
      ctx.lineWidth = 2;
      ctx.setLineDash(m.kind === "fallback" ? [4, 3] : []);
      ctx.beginPath();
      ctx.moveTo(x, chartArea.top);
      ctx.lineTo(x, chartArea.bottom);
      ctx.stroke();
      ctx.restore();
    }
  },
};
