// tpsbench report plots: inline SVG, no dependencies. Sets
// data-plots="ok" on <html> once every plot is drawn, data-error on failure.
(function () {
  const root = document.documentElement;
  const status = document.getElementById("status");
  function fail(msg) {
    root.setAttribute("data-error", msg);
    status.textContent = "plot error: " + msg;
    status.className = "error";
  }
  window.addEventListener("error", function (e) { fail(String(e.message || e)); });

  const NS = "http://www.w3.org/2000/svg";
  const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d", "#4d7c0f"];
  const D = TPSBENCH;
  function color(name) {
    const i = D.targets.indexOf(name);
    return COLORS[(i < 0 ? 0 : i) % COLORS.length];
  }
  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, anchor, extra) {
    const t = el("text", Object.assign({ x: x, y: y, "text-anchor": anchor || "middle" }, extra || {}), parent);
    t.textContent = s;
    return t;
  }
  function niceStep(span, n) {
    const raw = span / Math.max(1, n);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  }
  function ticks(lo, hi, n) {
    if (!(hi > lo)) hi = lo + 1;
    const step = niceStep(hi - lo, n);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  function fmtNum(v) {
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(0);
    if (a >= 1) return v.toFixed(1);
    return v.toPrecision(2);
  }
  function fmtSec(v) {
    if (v === 0) return "0";
    if (Math.abs(v) < 1) return (v * 1000).toFixed(0) + "ms";
    return fmtNum(v) + "s";
  }
  // frame draws axes and grid and returns scales.
  function frame(container, o) {
    const W = container.clientWidth || 520, H = o.height || 280;
    const m = { l: 56, r: 14, t: 10, b: 40 };
    const svg = el("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" }, container);
    const w = W - m.l - m.r, h = H - m.t - m.b;
    const x = function (v) { return m.l + (v - o.x0) / (o.x1 - o.x0 || 1) * w; };
    const y = function (v) { return m.t + h - (v - o.y0) / (o.y1 - o.y0 || 1) * h; };
    const g = el("g", {}, svg);
    if (!o.xCategories) {
      for (const v of ticks(o.x0, o.x1, 6)) {
        el("line", { class: "grid", x1: x(v), x2: x(v), y1: m.t, y2: m.t + h }, g);
        text(g, x(v), m.t + h + 14, (o.xFmt || fmtNum)(v));
      }
    }
    for (const v of ticks(o.y0, o.y1, 5)) {
      el("line", { class: "grid", x1: m.l, x2: m.l + w, y1: y(v), y2: y(v) }, g);
      text(g, m.l - 6, y(v) + 4, (o.yFmt || fmtNum)(v), "end");
    }
    el("line", { class: "axis", x1: m.l, x2: m.l + w, y1: m.t + h, y2: m.t + h }, g);
    el("line", { class: "axis", x1: m.l, x2: m.l, y1: m.t, y2: m.t + h }, g);
    text(g, m.l + w / 2, H - 6, o.xLabel || "");
    text(g, 12, m.t + h / 2, o.yLabel || "", "middle", { transform: "rotate(-90 12 " + (m.t + h / 2) + ")" });
    return { svg: svg, x: x, y: y, w: w, h: h, m: m };
  }
  function legend(container, items) {
    const div = document.createElement("div");
    div.className = "legend";
    for (const it of items) {
      const s = document.createElement("span");
      const i = document.createElement("i");
      i.style.background = it.color;
      s.appendChild(i);
      s.appendChild(document.createTextNode(it.name));
      div.appendChild(s);
    }
    container.appendChild(div);
  }
  function noData(container, msg) {
    const p = document.createElement("p");
    p.className = "meta";
    p.textContent = msg || "no data";
    container.appendChild(p);
  }
  function plotDiv(id) {
    const f = document.getElementById(id);
    return f ? f.querySelector(".plot") : null;
  }

  function drawTTFT() {
    const c = plotDiv("plot-ttft");
    const series = D.ttftCdf.filter(function (s) { return s.points.length > 0; });
    if (!series.length) return noData(c, "no completed request");
    let x1 = 0;
    for (const s of series) for (const p of s.points) x1 = Math.max(x1, p[0]);
    const f = frame(c, { x0: 0, x1: x1 * 1.05 || 1, y0: 0, y1: 1, xLabel: "time to first token", yLabel: "share of requests", xFmt: fmtSec, yFmt: function (v) { return Math.round(v * 100) + "%"; } });
    for (const s of series) {
      let d = "";
      s.points.forEach(function (p, i) { d += (i ? "L" : "M") + f.x(p[0]).toFixed(1) + " " + f.y(p[1]).toFixed(1); });
      el("path", { d: d, fill: "none", stroke: color(s.name), "stroke-width": 2, class: "plot-line" }, f.svg);
    }
    legend(c, series.map(function (s) { return { name: s.name, color: color(s.name) }; }));
  }

  function drawTPS() {
    const c = plotDiv("plot-tps");
    const series = D.tps;
    let y1 = 0;
    for (const s of series) for (const v of s.values) if (v) y1 = Math.max(y1, v.p90);
    if (!(y1 > 0)) return noData(c, "no decode rate measured");
    const f = frame(c, { x0: 0, x1: 1, y0: 0, y1: y1 * 1.1, xCategories: true, yLabel: "tokens / s", xLabel: "output length bucket" });
    const nb = D.buckets.length, ns = series.length;
    const band = f.w / nb, bw = Math.min(36, band * 0.8 / Math.max(1, ns));
    D.buckets.forEach(function (b, bi) {
      const cx = f.m.l + band * (bi + 0.5);
      text(f.svg, cx, f.m.t + f.h + 14, b);
      series.forEach(function (s, si) {
        const v = s.values[bi];
        if (!v) return;
        const x = cx - (ns * bw) / 2 + si * bw;
        el("rect", { x: x + 1, y: f.y(v.p50), width: bw - 2, height: f.m.t + f.h - f.y(v.p50), fill: color(s.name), "fill-opacity": 0.75, class: "plot-bar" }, f.svg);
        const mx = x + bw / 2;
        el("line", { x1: mx, x2: mx, y1: f.y(v.p10), y2: f.y(v.p90), stroke: "#1d2433", "stroke-width": 1.2 }, f.svg);
        el("line", { x1: mx - 4, x2: mx + 4, y1: f.y(v.p10), y2: f.y(v.p10), stroke: "#1d2433" }, f.svg);
        el("line", { x1: mx - 4, x2: mx + 4, y1: f.y(v.p90), y2: f.y(v.p90), stroke: "#1d2433" }, f.svg);
        text(f.svg, mx, f.y(v.p90) - 4, fmtNum(v.p50));
      });
    });
    legend(c, series.map(function (s) { return { name: s.name, color: color(s.name) }; }));
  }

  function drawTimeline() {
    const c = plotDiv("plot-timeline");
    const all = D.timelines.filter(function (t) { return t.points && t.points.length > 0; });
    if (!all.length) return noData(c, "no sample request");
    // One request per target: of the longest bucket every target has, so
    // that the lines are comparable; else each target's longest answer.
    let tls = [];
    for (let bi = D.buckets.length - 1; bi >= 0 && !tls.length; bi--) {
      const pick = D.targets.map(function (t) { return all.find(function (x) { return x.target === t && x.bucket === D.buckets[bi]; }); })
        .filter(function (x) { return x; });
      if (pick.length === D.targets.filter(function (t) { return all.some(function (x) { return x.target === t; }); }).length) tls = pick;
    }
    if (!tls.length) {
      for (const t of D.targets) {
        const mine = all.filter(function (x) { return x.target === t; });
        if (mine.length) tls.push(mine.reduce(function (a, b) { return b.points.length > a.points.length ? b : a; }));
      }
    }
    let x1 = 0, y1 = 0;
    for (const t of tls) {
      let cum = 0;
      for (const p of t.points) cum += p[1];
      x1 = Math.max(x1, t.points[t.points.length - 1][0], t.duration || 0);
      y1 = Math.max(y1, cum, t.output_tokens || 0);
    }
    const f = frame(c, { x0: 0, x1: x1 * 1.03 || 1, y0: 0, y1: y1 * 1.05 || 1, height: 320, xLabel: "seconds since the request was sent", yLabel: "tokens received", xFmt: fmtSec });
    const dashes = ["", "6 3", "2 3", "10 4 2 4"];
    const seen = {};
    const items = [];
    for (const t of tls) {
      const k = seen[t.target] = (seen[t.target] || 0) + 1;
      let cum = 0, d = "M" + f.x(0).toFixed(1) + " " + f.y(0).toFixed(1);
      const g = el("g", {}, f.svg);
      t.points.forEach(function (p, i) {
        d += "L" + f.x(p[0]).toFixed(1) + " " + f.y(cum).toFixed(1);
        cum += p[1];
        d += "L" + f.x(p[0]).toFixed(1) + " " + f.y(cum).toFixed(1);
        if (i < 3000) el("circle", { cx: f.x(p[0]).toFixed(1), cy: f.y(cum).toFixed(1), r: 1.6, fill: color(t.target) }, g);
      });
      el("path", { d: d, fill: "none", stroke: color(t.target), "stroke-width": 1.5, "stroke-dasharray": dashes[(k - 1) % dashes.length], class: "plot-line" }, g);
      el("line", { x1: f.x(t.ttft_s), x2: f.x(t.ttft_s), y1: f.y(0), y2: f.y(0) - 8, stroke: color(t.target), "stroke-width": 2 }, g);
      items.push({ name: t.target + " · " + t.bucket + (t.class ? " · " + t.class : "") + (t.prompt_id ? " · " + t.prompt_id : "") + " (" + (t.output_tokens || cum) + " tokens, TTFT " + fmtSec(t.ttft_s) + ")", color: color(t.target) });
    }
    legend(c, items);
  }

  function drawProbes() {
    const c = plotDiv("plot-probes");
    if (!c) return;
    const series = D.probes || [];
    if (!series.length) return noData(c, "no probe completed");
    const idles = [];
    let y1 = 0;
    for (const s of series) for (const p of s.points) { if (idles.indexOf(p[0]) < 0) idles.push(p[0]); y1 = Math.max(y1, p[1]); }
    idles.sort(function (a, b) { return a - b; });
    const f = frame(c, { x0: 0, x1: 1, y0: 0, y1: y1 * 1.15 || 1, xCategories: true, height: 240, xLabel: "idle time before the request", yLabel: "TTFT", yFmt: fmtSec });
    const band = f.w / idles.length;
    const px = function (idle) { return f.m.l + band * (idles.indexOf(idle) + 0.5); };
    idles.forEach(function (v) { text(f.svg, px(v), f.m.t + f.h + 14, fmtSec(v)); });
    for (const s of series) {
      let d = "";
      s.points.slice().sort(function (a, b) { return a[0] - b[0]; }).forEach(function (p, i) {
        d += (i ? "L" : "M") + px(p[0]).toFixed(1) + " " + f.y(p[1]).toFixed(1);
        el("circle", { cx: px(p[0]), cy: f.y(p[1]), r: 4, fill: color(s.name) }, f.svg);
        text(f.svg, px(p[0]) + 8, f.y(p[1]) - 6, fmtSec(p[1]), "start");
      });
      el("path", { d: d, fill: "none", stroke: color(s.name), "stroke-width": 1.5, class: "plot-line" }, f.svg);
    }
    legend(c, series.map(function (s) { return { name: s.name, color: color(s.name) }; }));
  }

  try {
    const plots = [drawTTFT, drawTPS, drawTimeline, drawProbes];
    for (const p of plots) p();
    if (!root.hasAttribute("data-error")) {
      root.setAttribute("data-plots", "ok");
      status.textContent = "plots: ok (" + plots.length + " drawn)";
    }
  } catch (e) {
    fail(e && e.message ? e.message : String(e));
  }
})();
