// xdoe dashboard: live learning curves (Plotly), the lineage graph, htmx error display.
(function () {
  "use strict";
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                  "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  const POLL_MS = 2000;

  function ema(ys, weight) {
    // exponential moving average with debiasing (as TensorBoard's smoothing)
    const out = new Array(ys.length);
    let last = 0, n = 0;
    for (let i = 0; i < ys.length; i++) {
      const y = ys[i];
      if (y === null || !isFinite(y)) { out[i] = null; continue; }
      last = last * weight + (1 - weight) * y;
      n++;
      out[i] = last / (1 - Math.pow(weight, n));
    }
    return out;
  }

  class Curves {
    constructor(el) {
      this.el = el;
      this.sources = JSON.parse(el.dataset.curves || "[]");
      this.series = new Map();   // key -> {label, color, dash, x, reward, objective}
      this.after = new Map();    // instance id -> newest row seen
      this.colors = new Map();
      const card = el.closest("section") || document;
      this.metricInput = card.querySelector(".curve-metric");
      this.smoothInput = card.querySelector(".curve-smooth");
      for (const input of [this.metricInput, this.smoothInput]) {
        if (input) input.addEventListener("input", () => this.draw());
      }
      this.poll();
    }
    color(key) {
      if (!this.colors.has(key)) this.colors.set(key, COLORS[this.colors.size % COLORS.length]);
      return this.colors.get(key);
    }
    async fetchSource(src) {
      const after = this.after.get(src.id) || 0;
      const bins = src.k ? `&k=${src.k}` : "";  // new points binned like the first read
      const response = await fetch(`/api/instances/${src.id}/curves?after=${after}${bins}`);
      if (!response.ok) { src.running = false; return false; }
      const data = await response.json();
      this.after.set(src.id, data.last);
      if (!src.k) src.k = data.k;
      src.running = data.status === "running";
      // per phase one series per agent (and, with several agents, the one pooled over them: agent null),
      // x the run's environment steps so far (each phase after the earlier ones), episodes cut by a
      // budget without a point (xdoe.store.views._curves)
      for (const s of data.series) {
        const agent = s.agent === null ? "all agents" : s.agent;
        const key = `${src.id}|${s.phase_index}|${agent}`;
        if (!this.series.has(key)) {
          const parts = [...(this.sources.length > 1 ? [src.label] : []), s.phase, ...(s.agents > 1 ? [agent] : [])];
          const color = s.agent === null && s.agents > 1 ? "#37474f"
            : this.color(this.sources.length > 1 ? `${src.id}|${agent}` : agent);
          this.series.set(key, {label: parts.join(" · "), color: color,
                                dash: s.mode === "test" ? "dot" : "solid",
                                x: [], reward: [], objective: []});
        }
        const t = this.series.get(key);
        t.x.push(...s.x); t.reward.push(...s.reward); t.objective.push(...s.objective);
      }
      return data.series.length > 0;
    }
    async poll() {
      let changed = !this.drawn;
      try {
        for (const src of this.sources) {
          if (src.running || !this.after.has(src.id)) changed = (await this.fetchSource(src)) || changed;
        }
      } catch (err) {
        console.warn("curves: " + err);  // the server went away; try again later
      }
      if (changed) this.draw();
      if (this.sources.some((s) => s.running) && document.body.contains(this.el)) {
        this.timer = setTimeout(() => this.poll(), POLL_MS);
      }
    }
    draw() {
      const metric = this.metricInput ? this.metricInput.value : "objective";
      const weight = this.smoothInput ? Number(this.smoothInput.value) : 0.8;
      const traces = [];
      let points = 0;
      for (const t of this.series.values()) {
        points += t.x.length;
        traces.push({x: t.x, y: t[metric], mode: "lines", name: t.label, showlegend: false,
                     hoverinfo: "skip", line: {color: t.color, width: 1, dash: t.dash}, opacity: 0.25});
        traces.push({x: t.x, y: ema(t[metric], weight), mode: "lines", name: t.label,
                     line: {color: t.color, width: 2, dash: t.dash}});
      }
      this.el.dataset.points = String(points);
      const small = this.el.classList.contains("small");
      const layout = {margin: {l: 55, r: 10, t: 10, b: 45}, height: small ? 300 : 400,
                      xaxis: {title: {text: "environment steps", standoff: 4}}, yaxis: {title: {text: `${metric} per episode`}},
                      legend: {orientation: "h", x: 0, y: small ? -0.3 : -0.22, yanchor: "top"},
                      font: {size: 12}, hovermode: "x unified"};
      Plotly.react(this.el, traces, layout, {responsive: true, displaylogo: false});
      this.drawn = true;
    }
  }

  const STATUS_COLORS = {finished: "#2e7d32", running: "#f9a825", failed: "#c62828",
                         interrupted: "#8e24aa", missing: "#9e9e9e"};

  const HEALTH_COLORS = {healthy: "#43a047", dead: "#e91e63", goal: "#ffb300", running: "#fdd835",
                         pending: "#ffffff", failed: "#c62828", interrupted: "#8e24aa"};

  function openNode(el, uid) {
    const tree = el.dataset.tree ? `?tree=${encodeURIComponent(el.dataset.tree)}` : "";
    htmx.ajax("GET", `/fragments/tree/${encodeURIComponent(uid)}${tree}`, {target: "#node", swap: "innerHTML"});
  }

  function treeTraces(data) {
    const sessions = data.kind === "sessions";
    const at = new Map(data.nodes.map((n) => [n.id, n]));
    const ex = [], ey = [];
    for (const [a, b] of data.edges) {
      ex.push(at.get(a).x, at.get(b).x, null); ey.push(at.get(a).y, at.get(b).y, null);
    }
    const edges = {x: ex, y: ey, mode: "lines", line: {color: "#90a4ae", width: sessions ? 2 : 1}, hoverinfo: "skip", showlegend: false};
    const metric = (n) => (n.metric === null || n.metric === undefined ? "–" : String(Number(n.metric.toPrecision(4))));
    const nodes = {
      x: data.nodes.map((n) => n.x), y: data.nodes.map((n) => n.y), customdata: data.nodes.map((n) => n.id),
      text: data.nodes.map((n) => (sessions ? `<b>${n.label}</b><br>${n.health} · ${metric(n)}` : n.label)),
      mode: "markers+text", textposition: sessions ? "bottom center" : "middle right",
      textfont: {size: 11},
      hovertext: data.nodes.map((n) => (sessions
        ? [`<b>${n.id}</b> (${n.health})`, `metric ${metric(n)}`, n.reason, n.edge && `from parent: ${n.edge}`]
        : [`${n.id} (${n.status})`, n.detail, ...n.phases, ...n.sources]).filter(Boolean).join("<br>")),
      hoverinfo: "text", showlegend: false,
      marker: sessions
        ? {size: 22, color: data.nodes.map((n) => HEALTH_COLORS[n.health] || "#607d8b"), line: {color: "#37474f", width: 1.5},
           symbol: data.nodes.map((n) => (n.health === "goal" ? "star" : "circle"))}
        : {size: 14, color: data.nodes.map((n) => STATUS_COLORS[n.status] || "#607d8b"), line: {color: "#fff", width: 1}},
    };
    // edge labels (the overrides) just above each child, where they cannot collide with a sibling's
    const labels = sessions ? data.edges.filter((e) => e[2]).map(([, b, text]) => ({
      x: at.get(b).x, y: at.get(b).y + 0.2, yanchor: "bottom", text: text.length > 40 ? text.slice(0, 39) + "…" : text,
      hovertext: text, showarrow: false, font: {size: 10, color: "#37474f"}, bgcolor: "rgba(238,242,246,0.95)",
      borderpad: 2})) : [];
    const columns = Math.max(0, ...data.nodes.map((n) => n.x)) + 1;
    const rows = Math.max(1, ...data.nodes.map((n) => 1 - n.y));
    const title = sessions ? `tree ${data.tree}: ${data.total} sessions`
      : (data.shown < data.total ? `first ${data.shown} of ${data.total} runs` : `${data.total} runs`);
    const layout = sessions
      ? {margin: {l: 10, r: 10, t: 30, b: 10}, height: 120 + 110 * rows, hovermode: "closest", annotations: labels,
         title: {text: title, font: {size: 13}},
         xaxis: {visible: false, range: [-0.7, columns - 0.3]}, yaxis: {visible: false, range: [0.5 - rows, 0.45]}}
      : {margin: {l: 10, r: 10, t: 30, b: 10}, height: 60 + 30 * rows, hovermode: "closest",
         title: {text: title, font: {size: 13}},
         xaxis: {visible: false, range: [-0.3, columns + 0.3]}, yaxis: {visible: false, range: [0.5 - rows, 0.5]}};
    return [[edges, nodes], layout];
  }

  async function drawTree(el) {
    const query = el.dataset.tree ? `tree=${encodeURIComponent(el.dataset.tree)}`
      : `experiment=${encodeURIComponent(el.dataset.experiment)}`;
    let last = "";
    const draw = async () => {
      const response = await fetch(`/api/tree?${query}`);
      if (!response.ok) return;
      const text = await response.text();
      if (text === last) return;  // nothing changed since the last poll
      last = text;
      const data = JSON.parse(text);
      data.tree = el.dataset.tree;
      const [traces, layout] = treeTraces(data);
      await Plotly.react(el, traces, layout, {responsive: true, displaylogo: false});
      el.dataset.nodes = String(data.nodes.length);
      el.dataset.health = JSON.stringify(Object.fromEntries(data.nodes.map((n) => [n.id, n.health || n.status])));
    };
    await draw();
    el.on("plotly_click", (event) => {
      const uid = event.points[0] && event.points[0].customdata;
      if (uid) openNode(el, uid);
    });
    if (el.dataset.node) openNode(el, el.dataset.node);
    setInterval(draw, 3000);  // new sessions (a branch, xrun grow) and health changes appear
  }

  function init(root) {
    for (const el of root.querySelectorAll("[data-curves]")) {
      if (!el._curves) el._curves = new Curves(el);
    }
    const tree = root.querySelector ? root.querySelector("#tree-graph") : null;
    if (tree && !tree._drawn) { tree._drawn = true; drawTree(tree); }
  }

  document.addEventListener("DOMContentLoaded", () => {
    init(document);
    // the tree page's choice of tree or lineage (no inline handler: the CSP allows none)
    const choice = document.getElementById("tree-choice");
    if (choice) choice.addEventListener("change", () => { location.search = choice.value; });
  });
  document.addEventListener("htmx:afterSettle", (event) => init(event.target));
  document.addEventListener("htmx:beforeRequest", (event) => {
    // keep the runs the user is selecting for a comparison: no table refresh meanwhile
    if (event.detail.elt.classList.contains("refresh") && document.querySelector("#runs-table input:checked")) {
      event.preventDefault();
    }
  });
  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    let text = xhr.responseText;
    try { text = JSON.parse(text).detail || text; } catch (e) { /* HTML fragment */ }
    const box = document.getElementById(event.detail.elt.dataset.errors || "messages");
    if (box) {
      box.innerHTML = "";
      let div;
      if (text.trim().startsWith("<div")) {  // an HTML message fragment: shown as it is
        box.innerHTML = text;
        div = box.firstElementChild;
      } else {
        div = document.createElement("div");
        div.className = "message error";
        div.textContent = `refused (${xhr.status}): ${text}`;
        box.appendChild(div);
      }
      div.id = "action-error";
    }
  });
})();
