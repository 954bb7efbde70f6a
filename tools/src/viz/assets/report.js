// rmm-viz's page script: draws the figures of the embedded snapshot data (see
// tools/src/viz/page.rs for its layout). Plain JavaScript, no library; SVG built as strings.
// When it has drawn everything, body's data-rendered is "ok"; any error is written into
// #errors and data-rendered becomes "error" (scripts/check-viz.sh reads both).
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const errorsEl = $("errors");

  function reportError(msg) {
    errorsEl.hidden = false;
    errorsEl.textContent += msg + "\n";
    document.body.dataset.rendered = "error";
  }
  window.addEventListener("error", (e) => {
    reportError("script error: " + e.message + (e.lineno ? " (line " + e.lineno + ")" : ""));
  });

  // ---- formatting --------------------------------------------------------------------

  const UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB"];
  function fmtBytes(n) {
    if (n < 1024) return Math.round(n) + " B";
    let v = n / 1024;
    let i = 0;
    while (v >= 1024 && i < UNITS.length - 1) {
      v /= 1024;
      i++;
    }
    return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + " " + UNITS[i];
  }
  function fmtNs(ns) {
    if (ns < 1e3) return Math.round(ns) + " ns";
    if (ns < 1e6) return (ns / 1e3).toPrecision(3) + " µs";
    if (ns < 1e9) return (ns / 1e6).toPrecision(3) + " ms";
    return (ns / 1e9).toPrecision(4) + " s";
  }
  const fmtInt = (n) => Number(n).toLocaleString("en-US");
  const fmtPct = (x) => (x * 100).toFixed(x > 0 && x < 0.1 ? 1 : 0) + "%";
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);
  const r1 = (v) => Math.round(v * 10) / 10;

  // "Nice" axis ticks: about `count` steps of 1, 2 or 5 times a power of `base`.
  function ticks(max, count, base) {
    if (!(max > 0)) return [0];
    let unit = 1;
    if (base === 1024) {
      while (unit * 1024 <= max / 2) unit *= 1024;
    }
    const raw = max / unit / count;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = raw / p;
    const step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p * unit;
    const out = [0];
    while (out[out.length - 1] < max * 0.9999) out.push(out.length * step);
    return out;
  }

  // ---- the data ----------------------------------------------------------------------

  let D;
  const state = { xmode: "event", maxBands: 1000, rank: "area", depth: 1, sortKey: "peak", selected: -1 };

  // Frames of the library and its language layers, skipped when naming a site: the C ABI
  // (rmm_*; the first frame of a stack is the C call the program made), the interposed
  // cuda*/hip* entry points, Rust's runtime and the Python extension's layers.
  const LIB_FRAME =
    /^(rmm_\w*|(cuda|hip)[A-Z]\w*|<?(rmm|_ffi|backtrace|core|std|alloc|pyo3)::.*|__rust\w*)$/;
  const isLib = (fid) => LIB_FRAME.test(D.frames[fid][0] || "");

  function shortFile(p) {
    const parts = p.split("/");
    return parts.length > 2 ? "…/" + parts.slice(-2).join("/") : p;
  }
  function frameLoc(fid, base) {
    const f = D.frames[fid];
    return f[1] ? (base ? f[1].split("/").pop() : shortFile(f[1])) + (f[2] != null ? ":" + f[2] : "") : "";
  }
  function frameHtml(fid, base) {
    const loc = frameLoc(fid, base);
    return esc(D.frames[fid][0] || "??") + (loc ? ' <span class="loc">' + esc(loc) + "</span>" : "");
  }
  // The frames after the leading library frames (all of them when every one is).
  function userFrames(sid) {
    const st = D.stacks[sid];
    let i = 0;
    while (i < st.length && isLib(st[i])) i++;
    return i < st.length ? st.slice(i) : st;
  }
  function resName(r) {
    const x = D.resources[r];
    return x[0] + " (" + x[1] + ")";
  }
  function streamName(s) {
    const v = D.streams[s];
    return v === "0x0" ? "default (0x0)" : v;
  }

  // Site of allocation `k` (or of a mark) grouped by `depth` frames (0: by resource).
  const siteCache = new Map();
  function siteOf(stack, res, unknown, depth) {
    if (unknown && depth !== 0 && D.meta.stacks) return { key: "?before", html: '<span class="muted">allocated before the window (known from its free)</span>', text: "allocated before the window" };
    if (stack < 0 || depth === 0) {
      const key = "r" + res;
      return { key, html: "resource " + esc(resName(res)), text: "resource " + resName(res) };
    }
    const ck = depth + ":" + stack;
    let s = siteCache.get(ck);
    if (!s) {
      const fr = userFrames(stack).slice(0, depth);
      s = {
        key: "s" + fr.join(","),
        html: fr.map((f, i) => '<div class="fn">' + (i ? '<span class="muted">← </span>' : "") + frameHtml(f, true) + "</div>").join(""),
        text: fr.map((f) => D.frames[f][0]).join(" ← "),
        full: fr.map((f) => (D.frames[f][0] || "??") + (D.frames[f][1] ? " (" + D.frames[f][1] + (D.frames[f][2] != null ? ":" + D.frames[f][2] : "") + ")" : "")).join("\n← "),
      };
      siteCache.set(ck, s);
    }
    return s;
  }
  const allocSite = (k, depth) =>
    siteOf(D.allocs.stack[k], D.allocs.res[k], D.allocs.seq[k] < 0, depth);

  // Colors: one hue per site (first frame), lightness varying between allocations.
  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return h >>> 0;
  }
  // Hues 137.5° apart (the golden angle) in the order of the sites' bytes, so that the
  // biggest sites differ most; other keys by hash.
  const hueCache = new Map();
  function assignHues() {
    const bytes = new Map();
    const A = D.allocs;
    for (let k = 0; k < A.size.length; k++) {
      const key = allocSite(k, 1).key;
      bytes.set(key, (bytes.get(key) || 0) + A.size[k]);
    }
    const keys = Array.from(bytes.keys()).sort((a, b) => bytes.get(b) - bytes.get(a) || (a < b ? -1 : 1));
    keys.forEach((key, i) => hueCache.set(key, (215 + i * 137.508) % 360));
  }
  const BEFORE_COLOR = "hsl(30,8%,58%)";
  function siteHue(key) {
    let h = hueCache.get(key);
    if (h === undefined) {
      h = hash(key) % 360;
      hueCache.set(key, h);
    }
    return h;
  }
  function allocColor(k) {
    const key = allocSite(k, 1).key;
    if (key === "?before") return BEFORE_COLOR;
    const hue = siteHue(key);
    const light = 40 + ((k * 7) % 5) * 5;
    return "hsl(" + hue.toFixed(0) + ",58%," + light + "%)";
  }
  const siteColor = (key) => (key === "?before" ? BEFORE_COLOR : "hsl(" + siteHue(key).toFixed(0) + ",58%,48%)");

  // ---- header ------------------------------------------------------------------------

  function header() {
    const m = D.meta;
    const span = D.times.length ? D.times[D.times.length - 1] - D.times[0] : 0;
    const items = [
      ["producer", m.producer],
      ["runtime", m.runtime],
      ["schema", "v" + m.schema_version],
      ["recording", m.recording ? "on" : "off"],
      ["events", fmtInt(m.events) + (span ? " over " + fmtNs(span) : "")],
      ["dropped", fmtInt(m.events_dropped), m.events_dropped > 0],
      ["allocations", fmtInt(m.allocations) + " (" + fmtBytes(m.allocated_bytes) + ")"],
      ["frees", fmtInt(m.frees)],
      ["failed allocations", fmtInt(m.allocate_failed), m.allocate_failed > 0],
      ["refused frees", fmtInt(m.free_failed), m.free_failed > 0],
      ["peak live", fmtBytes(m.peak_live)],
      ["live at end", fmtInt(m.live_count) + " (" + fmtBytes(m.live_bytes) + ")"],
      ["segments", fmtInt(D.segments.length) + " (" + fmtBytes(m.segment_bytes) + ", " + fmtBytes(m.segment_free_bytes) + " free)"],
      ["stacks", m.stacks ? "recorded" : "not recorded"],
    ];
    $("summary").innerHTML = items
      .map((it) => '<div><dt>' + esc(it[0]) + '</dt><dd' + (it[2] ? ' class="warn"' : "") + ">" + esc(it[1]) + "</dd></div>")
      .join("");
    const notes = [];
    if (!m.recording) notes.push("Recording was off when the snapshot was written: it has segments only.");
    if (m.events_dropped > 0)
      notes.push(fmtInt(m.events_dropped) + " older events were dropped from the ring (raise max_entries): allocations made before the window start at the left edge.");
    if (m.unknown_actions > 0) notes.push(fmtInt(m.unknown_actions) + " events of unknown actions were left out.");
    if (!m.stacks && m.events > 0) notes.push("No stacks: sites are grouped by resource (record with stacks to see call sites).");
    $("notes").textContent = notes.join(" ");
  }

  // ---- the timeline ------------------------------------------------------------------

  const TW = 1360, TH = 380, ML = 70, MR = 14, MT = 12, MB = 52;
  const PW = TW - ML - MR, PH = TH - MT - MB;
  let TL = null; // the drawn timeline's geometry, for the cursor

  function timeline() {
    const A = D.allocs;
    const n = D.times.length;
    const na = A.size.length;
    const N = Math.max(n, 1); // intervals: [p, p + 1) after event p
    const fig = $("timeline-figure");
    if (na === 0 && D.marks.at.length === 0) {
      fig.innerHTML = '<p class="note">No allocations in this snapshot' + (D.meta.recording ? "." : " (recording was off).") + "</p>";
      $("timeline-legend").innerHTML = "";
      TL = null;
      return;
    }
    const sp = (k) => (A.start[k] < 0 ? 0 : A.start[k]);
    const ep = (k) => (A.end[k] < 0 ? N : A.end[k]);

    // x of position p in [0, N].
    const xs = new Float64Array(N + 1);
    if (state.xmode === "time" && n > 1) {
      const t0 = D.times[0];
      const tl = D.times[n - 1];
      const tEnd = tl + Math.max(1, (tl - t0) * 0.01);
      for (let p = 0; p < n; p++) xs[p] = ML + ((D.times[p] - t0) / (tEnd - t0)) * PW;
      xs[n] = ML + PW;
    } else {
      for (let p = 0; p <= N; p++) xs[p] = ML + (p / N) * PW;
    }

    // The largest allocations are bands; the rest is "other".
    // The bands: the allocations with the largest size times lifetime (in events), or
    // the largest; the rest is "other".
    const nb = Math.min(state.maxBands, na);
    const isBand = new Uint8Array(na);
    if (nb === na) isBand.fill(1);
    else {
      const idx = Array.from({ length: na }, (_, k) => k);
      const weight = new Float64Array(na);
      for (let k = 0; k < na; k++) weight[k] = state.rank === "size" ? A.size[k] : A.size[k] * Math.max(ep(k) - sp(k), 1);
      idx.sort((a, b) => weight[b] - weight[a] || A.size[b] - A.size[a] || a - b);
      for (let i = 0; i < nb; i++) isBand[idx[i]] = 1;
    }

    // Which allocation starts and ends at each event (at most one each).
    const startAt = new Int32Array(N).fill(-1);
    const endAt = new Int32Array(N).fill(-1);
    const before = [];
    for (let k = 0; k < na; k++) {
      if (A.start[k] < 0) before.push(k);
      else startAt[A.start[k]] = k;
      if (A.end[k] >= 0) endAt[A.end[k]] = k;
    }

    // Stack the bands: each new one on top; a free lowers those above it. pts[k] holds
    // (position, offset) pairs, one per change of the band's offset.
    const pts = new Map();
    const active = [];
    let bandTop = 0;
    let otherLive = 0;
    const bandLive = new Float64Array(N);
    const totalLive = new Float64Array(N);
    const start = (k, p) => {
      if (isBand[k]) {
        pts.set(k, [p, bandTop]);
        active.push(k);
        bandTop += A.size[k];
      } else otherLive += A.size[k];
    };
    const end = (k, p) => {
      if (!isBand[k]) {
        otherLive -= A.size[k];
        return;
      }
      const i = active.lastIndexOf(k);
      const s = A.size[k];
      for (let j = i + 1; j < active.length; j++) {
        const b = active[j];
        const pb = pts.get(b);
        pb.push(p, pb[pb.length - 1] - s);
      }
      active.splice(i, 1);
      bandTop -= s;
    };
    for (const k of before) start(k, 0);
    for (let p = 0; p < N; p++) {
      if (endAt[p] >= 0) end(endAt[p], p);
      if (startAt[p] >= 0) start(startAt[p], p);
      bandLive[p] = bandTop;
      totalLive[p] = bandTop + otherLive;
    }
    let peak = 0;
    for (let p = 0; p < N; p++) if (totalLive[p] > peak) peak = totalLive[p];
    const yTicks = ticks(peak * 1.04 || 1, 5, 1024);
    const yMax = Math.max(yTicks[yTicks.length - 1], 1);
    const y = (v) => MT + PH - (v / yMax) * PH;

    const out = [];
    out.push('<svg id="timeline-svg" viewBox="0 0 ' + TW + " " + TH + '" data-bands="' + nb + '" data-allocations="' + na + '">');
    // grid and y axis
    out.push('<g class="grid">');
    for (const v of yTicks) out.push('<line x1="' + ML + '" x2="' + (ML + PW) + '" y1="' + r1(y(v)) + '" y2="' + r1(y(v)) + '"/>');
    out.push("</g>");

    // "other": between the bands' top and the total, merged per pixel column (its top the
    // column's highest total, its bottom the lowest band top).
    const runs = [];
    if (nb < na) {
      let cur = null;
      for (let p = 0; p < N; p++) {
        const x0 = xs[p], x1 = xs[p + 1], top = totalLive[p], bot = bandLive[p];
        if (cur && x1 - cur[0] < 1) {
          cur[1] = x1;
          if (top > cur[2]) cur[2] = top;
          if (bot < cur[3]) cur[3] = bot;
        } else {
          cur = [x0, x1, top, bot];
          runs.push(cur);
        }
      }
      let d = "M" + r1(runs[0][0]) + "," + r1(y(runs[0][2]));
      for (const r of runs) d += "V" + r1(y(r[2])) + "H" + r1(r[1]);
      for (let i = runs.length - 1; i >= 0; i--) d += "V" + r1(y(runs[i][3])) + "H" + r1(runs[i][0]);
      out.push('<path class="other-band" d="' + d + 'Z"/>');
    }

    // the bands
    out.push('<g id="bands">');
    for (const [k, pk] of pts) {
      const s = A.size[k];
      const e = ep(k);
      let d = "M" + r1(xs[pk[0]]) + "," + r1(y(pk[1] + s));
      for (let i = 2; i < pk.length; i += 2) d += "H" + r1(xs[pk[i]]) + "V" + r1(y(pk[i + 1] + s));
      d += "H" + r1(xs[e]) + "V" + r1(y(pk[pk.length - 1]));
      for (let i = pk.length - 2; i >= 2; i -= 2) d += "H" + r1(xs[pk[i]]) + "V" + r1(y(pk[i - 1]));
      d += "H" + r1(xs[pk[0]]) + "Z";
      out.push('<path class="band' + (k === state.selected ? " sel" : "") + '" data-a="' + k + '" fill="' + allocColor(k) + '" d="' + d + '"/>');
    }
    out.push("</g>");

    // the total's outline, merged per pixel column
    {
      let d = "";
      let cur = null;
      const tops = [];
      for (let p = 0; p < N; p++) {
        if (cur && xs[p + 1] - cur[0] < 1) {
          cur[1] = xs[p + 1];
          if (totalLive[p] > cur[2]) cur[2] = totalLive[p];
        } else {
          cur = [xs[p], xs[p + 1], totalLive[p]];
          tops.push(cur);
        }
      }
      d = "M" + r1(tops[0][0]) + "," + r1(y(tops[0][2]));
      for (const t of tops) d += "V" + r1(y(t[2])) + "H" + r1(t[1]);
      out.push('<path class="total" d="' + d + '"/>');
    }

    // the peak
    let peakAt = 0;
    for (let p = 0; p < N; p++) if (totalLive[p] === peak) {
      peakAt = p;
      break;
    }
    if (peak > 0) {
      const yp = r1(y(peak));
      const xp = xs[peakAt];
      const label = "peak " + fmtBytes(peak) + (n ? " after event " + fmtInt(peakAt) : "");
      out.push('<line class="peak" x1="' + ML + '" x2="' + (ML + PW) + '" y1="' + yp + '" y2="' + yp + '"/>');
      out.push('<text class="peak-label" x="' + r1(xp > ML + PW / 2 ? xp - 6 : xp + 6) + '" y="' + r1(yp - 4) + '" text-anchor="' + (xp > ML + PW / 2 ? "end" : "start") + '">' + esc(label) + "</text>");
      $("readout").textContent = label + (n ? " (" + fmtNs(D.times[peakAt]) + ")" : "") + "; hover the figure for the live bytes at any point";
    }

    // marks: failures on top, growth and release under the axis
    const M = D.marks;
    const MAX_MARKS = 3000;
    const shown = Math.min(M.at.length, MAX_MARKS);
    out.push('<g id="marks">');
    for (let i = 0; i < shown; i++) {
      const x = r1((xs[M.at[i]] + xs[Math.min(M.at[i] + 1, N)]) / 2);
      const kind = M.kind[i];
      let shape;
      if (kind === 0) shape = "M" + (x - 5) + "," + MT + "h10l-5,9Z";
      else if (kind === 1) shape = "M" + (x - 4) + "," + MT + "h8v8h-8Z";
      else if (kind === 2) shape = "M" + (x - 4) + "," + (MT + PH + 14) + "h8l-4,-7Z";
      else shape = "M" + (x - 4) + "," + (MT + PH + 7) + "h8l-4,7Z";
      const cls = ["failed", "refused", "grow", "release"][kind] || "grow";
      out.push('<path class="mark ' + cls + '" data-m="' + i + '" d="' + shape + '"/>');
    }
    out.push("</g>");

    // axes
    out.push('<g class="axis">');
    out.push('<line x1="' + ML + '" x2="' + (ML + PW) + '" y1="' + (MT + PH) + '" y2="' + (MT + PH) + '"/>');
    out.push('<line x1="' + ML + '" x2="' + ML + '" y1="' + MT + '" y2="' + (MT + PH) + '"/>');
    const step = yTicks.length > 1 ? yTicks[1] : 1;
    let unit = 0;
    while (unit < UNITS.length && step >= Math.pow(1024, unit + 1)) unit++;
    const tickText = (v) => (unit === 0 ? v + " B" : +(v / Math.pow(1024, unit)).toFixed(2) + " " + UNITS[unit - 1]);
    for (const v of yTicks) out.push('<text x="' + (ML - 6) + '" y="' + r1(y(v) + 4) + '" text-anchor="end">' + esc(tickText(v)) + "</text>");
    if (state.xmode === "time" && n > 1) {
      const t0 = D.times[0];
      const span = (D.times[n - 1] - t0) * 1.01 || 1;
      for (const v of ticks(span, 8, 10)) {
        const x = ML + (v / span) * PW;
        if (x > ML + PW + 0.5) continue;
        out.push('<line x1="' + r1(x) + '" x2="' + r1(x) + '" y1="' + (MT + PH) + '" y2="' + (MT + PH + 4) + '"/>');
        out.push('<text x="' + r1(x) + '" y="' + (MT + PH + 30) + '" text-anchor="' + (x > ML + PW - 20 ? "end" : "middle") + '">' + esc(fmtNs(v)) + "</text>");
      }
      out.push('<text class="label" x="' + (ML + PW) + '" y="' + (TH - 4) + '" text-anchor="end">time since recording started (first event at ' + esc(fmtNs(t0)) + ")</text>");
    } else {
      for (const v of n ? ticks(N, 8, 10) : []) {
        if (v > N) break;
        if (v % 1) continue;
        const x = xs[Math.round(v)];
        out.push('<line x1="' + r1(x) + '" x2="' + r1(x) + '" y1="' + (MT + PH) + '" y2="' + (MT + PH + 4) + '"/>');
        out.push('<text x="' + r1(x) + '" y="' + (MT + PH + 30) + '" text-anchor="' + (x > ML + PW - 20 ? "end" : "middle") + '">' + fmtInt(v) + "</text>");
      }
      out.push('<text class="label" x="' + (ML + PW) + '" y="' + (TH - 4) + '" text-anchor="end">' + (n ? "events in the window, in order" : "no events in the window: the live allocations only") + "</text>");
    }
    out.push("</g>");
    out.push('<line class="cursor" id="cursor" x1="-10" x2="-10" y1="' + MT + '" y2="' + (MT + PH) + '"/>');
    out.push("</svg>");
    fig.innerHTML = out.join("");
    TL = { xs, N, n, bandLive, totalLive, svg: $("timeline-svg") };

    // legend
    let smallest = Infinity;
    for (const k of pts.keys()) if (A.size[k] < smallest) smallest = A.size[k];
    const lg = [];
    const which = state.rank === "size" ? "the largest, ≥ " + fmtBytes(smallest) : "the largest by size × lifetime";
    lg.push("<span>" + fmtInt(nb) + " allocation" + (nb === 1 ? "" : "s") + " as bands" + (nb < na ? " (" + which + ")" : "") + ", colored by site</span>");
    if (nb < na) lg.push('<span><span class="sw" style="background:var(--other)"></span>other: ' + fmtInt(na - nb) + " smaller allocations together</span>");
    const kinds = [0, 0, 0, 0];
    for (const k of M.kind) kinds[k]++;
    const names = [
      ["failed allocation", "var(--bad)"],
      ["refused free", "var(--warn)"],
      ["pool growth", "#2e7d32"],
      ["pool release", "#6d4c41"],
    ];
    for (let i = 0; i < 4; i++) if (kinds[i]) lg.push('<span><span class="sw" style="background:' + names[i][1] + '"></span>' + fmtInt(kinds[i]) + " " + names[i][0] + (kinds[i] === 1 ? "" : "s") + "</span>");
    if (M.at.length > shown) lg.push("<span>(first " + fmtInt(shown) + " marks drawn)</span>");
    if (before.length) lg.push("<span>" + fmtInt(before.length) + " made before the window start at its left edge</span>");
    lg.push('<span class="muted">hover for details; click a band to keep them</span>');
    $("timeline-legend").innerHTML = lg.join("");
  }

  function allocTip(k, full) {
    const A = D.allocs;
    const out = [];
    out.push("<b>" + fmtBytes(A.size[k]) + "</b> (" + fmtInt(A.size[k]) + " bytes) at " + esc(A.addr[k]));
    out.push("resource " + esc(resName(A.res[k])) + " · stream " + esc(streamName(A.stream[k])) + " · device " + A.device[k] + " · thread " + A.thread[k]);
    const made = A.start[k] >= 0
      ? "allocated at event " + fmtInt(A.start[k]) + " (seq " + A.seq[k] + ", " + fmtNs(A.t[k]) + ")"
      : A.seq[k] >= 0
        ? "allocated before the window (seq " + A.seq[k] + ", " + fmtNs(A.t[k]) + ")"
        : "allocated before the window";
    const gone = A.end[k] >= 0
      ? "freed at event " + fmtInt(A.end[k]) + " (" + fmtNs(D.times[A.end[k]]) + ")"
      : A.live[k] ? "live at the end" : "not freed in the window";
    out.push(made + "; " + gone);
    const sid = A.stack[k];
    if (sid >= 0) {
      const st = D.stacks[sid];
      if (full) {
        out.push('<ol class="frames">' + st.map((f) => '<li class="' + (isLib(f) ? "lib" : "") + '">' + frameHtml(f) + "</li>").join("") + "</ol>");
      } else {
        const uf = userFrames(sid).slice(0, 5);
        for (const f of uf) out.push('<span class="fr">' + frameHtml(f) + "</span>");
        if (st.length > uf.length) out.push('<span class="fr">… ' + st.length + " frames in all</span>");
      }
    } else if (D.meta.stacks) out.push('<span class="fr">(no stack)</span>');
    return out.join("<br>");
  }

  function markTip(i) {
    const M = D.marks;
    const what = ["Failed allocation", "Refused free", "Growth", "Release"][M.kind[i]];
    const out = ["<b>" + what + "</b> of " + fmtBytes(M.size[i]) + (M.kind[i] === 0 ? "" : " at " + esc(M.addr[i]))];
    out.push("resource " + esc(resName(M.res[i])) + " · stream " + esc(streamName(M.stream[i])) + " · thread " + M.thread[i]);
    out.push("event " + fmtInt(M.at[i]) + " (" + fmtNs(D.times[M.at[i]]) + ")");
    if (M.stack[i] >= 0) for (const f of userFrames(M.stack[i]).slice(0, 5)) out.push('<span class="fr">' + frameHtml(f) + "</span>");
    return out.join("<br>");
  }

  // The cursor's readout: the live bytes at the event under the pointer.
  function onTimelineMove(ev) {
    if (!TL) return;
    const rect = TL.svg.getBoundingClientRect();
    const vx = ((ev.clientX - rect.left) / rect.width) * TW;
    const cursor = $("cursor");
    if (vx < ML || vx > ML + PW) {
      cursor.setAttribute("x1", -10);
      cursor.setAttribute("x2", -10);
      return;
    }
    let lo = 0, hi = TL.N - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (TL.xs[mid] <= vx) lo = mid;
      else hi = mid - 1;
    }
    cursor.setAttribute("x1", r1(vx));
    cursor.setAttribute("x2", r1(vx));
    const total = TL.totalLive[lo], bands = TL.bandLive[lo];
    const at = TL.n ? "after event " + fmtInt(lo) + " (" + fmtNs(D.times[lo]) + ")" : "";
    $("readout").textContent = at + ": live " + fmtBytes(total) + (total > bands ? " (bands " + fmtBytes(bands) + ", other " + fmtBytes(total - bands) + ")" : "");
  }

  function showDetails(k) {
    state.selected = k;
    for (const el of document.querySelectorAll("path.band.sel")) el.classList.remove("sel");
    const det = $("details");
    if (k < 0) {
      det.hidden = true;
      return;
    }
    const el = document.querySelector('path.band[data-a="' + k + '"]');
    if (el) el.classList.add("sel");
    det.hidden = false;
    det.innerHTML = "<h3>Allocation " + (D.allocs.seq[k] >= 0 ? "seq " + D.allocs.seq[k] : "made before the window") + ' <span class="muted">(click it again or press Escape to close)</span></h3>' + allocTip(k, true);
  }

  // ---- segments ----------------------------------------------------------------------

  const BW = 1000;
  const MAX_SEGMENTS = 400;
  const MAX_RECTS = 4000;

  function cmpHex(a, b) {
    return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  }

  function segmentsView() {
    const list = $("segment-list");
    $("segments-legend").innerHTML =
      '<span><span class="sw" style="background:var(--used)"></span>used (colored by site when live in the window)</span>' +
      '<span><span class="sw" style="background:var(--free);border:1px solid var(--free-edge)"></span>free</span>' +
      '<span><span class="sw" style="background:#cfe6c8;border:2px solid #2e7d32"></span>largest free</span>' +
      (D.block_states.indexOf("slab") >= 0 ? '<span><span class="sw" style="background:var(--slab)"></span>slab (a shard\'s)</span>' : "");
    if (!D.segments.length) {
      list.innerHTML = '<p class="note">No segments: no live resource of this snapshot sub-allocates (pools, arenas, fixed-size and binning resources do).</p>';
      return;
    }
    const order = D.segments.map((_, i) => i);
    order.sort((a, b) => {
      const sa = D.segments[a], sb = D.segments[b];
      return D.resources[sa.res][0].localeCompare(D.resources[sb.res][0]) || sa.res - sb.res || cmpHex(sa.addr, sb.addr);
    });
    const out = [];
    let lastRes = -1;
    for (const si of order.slice(0, MAX_SEGMENTS)) {
      const s = D.segments[si];
      if (s.res !== lastRes) {
        lastRes = s.res;
        out.push('<h3 class="note">' + esc(resName(s.res)) + "</h3>");
      }
      const frag = s.free > 0 ? 1 - s.largest / s.free : 0;
      // Blocks all of one size (a fixed-size resource's): fragmentation does not apply.
      const fixed = s.kind.indexOf("fixed_size") === 0 || (s.blocks.length >= 8 && s.blocks.every((b) => b[1] === s.blocks[0][1]));
      const counts = {};
      for (const b of s.blocks) counts[D.block_states[b[2]]] = (counts[D.block_states[b[2]]] || 0) + 1;
      const cs = Object.keys(counts).map((k) => fmtInt(counts[k]) + " " + k).join(", ");
      out.push('<div class="segment" data-seg="' + si + '" data-blocks="' + s.blocks.length + '">');
      out.push('<div class="seg-head"><b>' + esc(s.kind) + '</b><span class="muted">' + esc(s.addr) + "</span><span>" + fmtBytes(s.size) +
        "</span><span>free " + fmtBytes(s.free) + " (" + fmtPct(s.size ? s.free / s.size : 0) + ")</span><span>largest free " + fmtBytes(s.largest) +
        '</span>' + (fixed ? '<span class="muted">blocks of ' + fmtBytes(s.blocks[0][1]) + "</span>" : '<span class="' + (frag > 0.5 ? "frag-high" : "") + '" data-frag="' + frag.toFixed(4) + '">fragmentation ' + fmtPct(frag) + "</span>") + '<span class="muted">' + cs + "</span></div>");
      out.push(blockMap(s, si));
      out.push("</div>");
    }
    if (D.segments.length > MAX_SEGMENTS) out.push('<p class="note">' + fmtInt(D.segments.length - MAX_SEGMENTS) + " more segments not drawn.</p>");
    list.innerHTML = out.join("");
  }

  function blockMap(s, si) {
    const out = ['<svg class="blockmap" viewBox="0 0 ' + BW + ' 20" preserveAspectRatio="none">'];
    const scale = BW / Math.max(s.size, 1);
    const blocks = s.blocks;
    // the largest free block (the first of that size)
    let largest = -1;
    for (let k = 0; k < blocks.length; k++) {
      if (D.block_states[blocks[k][2]] === "free" && blocks[k][1] === s.largest && s.largest > 0) {
        largest = k;
        break;
      }
    }
    if (blocks.length <= MAX_RECTS) {
      // Free blocks first (to scale), then the others (at least a unit wide).
      for (let pass = 0; pass < 2; pass++) {
        for (let k = 0; k < blocks.length; k++) {
          const b = blocks[k];
          const st = D.block_states[b[2]];
          if ((st === "free") !== (pass === 0)) continue;
          let w = b[1] * scale;
          if (pass === 1) w = Math.max(w, 1);
          let cls = st === "free" || st === "used" || st === "slab" ? st : "other-state";
          if (k === largest) cls += " largest";
          const fill = st === "used" && b[3] >= 0 ? ' style="fill:' + allocColor(b[3]) + '"' : "";
          out.push('<rect class="blk ' + cls + '" data-s="' + si + '" data-k="' + k + '" x="' + (b[0] * scale).toFixed(2) + '" y="0" width="' + w.toFixed(2) + '" height="20" vector-effect="non-scaling-stroke"' + fill + "/>");
        }
      }
    } else {
      // Too many blocks to draw one by one: one rectangle per column, its opacity the
      // column's used share; the largest free block outlined.
      const used = new Float64Array(BW);
      for (const b of blocks) {
        if (D.block_states[b[2]] === "free") continue;
        let a = b[0] * scale;
        const e = (b[0] + b[1]) * scale;
        while (a < e) {
          const c = Math.min(BW - 1, Math.floor(a));
          const next = Math.min(e, c + 1);
          used[c] += next - a;
          a = next;
        }
      }
      for (let c = 0; c < BW; c++) {
        if (used[c] <= 0) continue;
        out.push('<rect class="blk used agg" data-s="' + si + '" data-col="' + c + '" x="' + c + '" y="0" width="1" height="20" fill-opacity="' + Math.min(1, Math.max(0.2, used[c])).toFixed(2) + '"/>');
      }
      if (largest >= 0) {
        const b = blocks[largest];
        out.push('<rect class="blk free largest" data-s="' + si + '" data-k="' + largest + '" x="' + (b[0] * scale).toFixed(2) + '" y="0" width="' + Math.max(b[1] * scale, 1).toFixed(2) + '" height="20" vector-effect="non-scaling-stroke"/>');
      }
    }
    out.push("</svg>");
    return out.join("");
  }

  function blockTip(si, k) {
    const s = D.segments[si];
    const b = s.blocks[k];
    const st = D.block_states[b[2]];
    const addr = "0x" + (BigInt(s.addr) + BigInt(b[0])).toString(16);
    const out = ["<b>" + esc(st) + "</b> block of " + fmtBytes(b[1]) + " (" + fmtInt(b[1]) + " bytes) at " + addr];
    out.push("offset " + fmtBytes(b[0]) + " in the " + esc(s.kind) + " at " + esc(s.addr) + (b[1] === s.largest && st === "free" ? " · the largest free block" : ""));
    if (b[3] >= 0) out.push(allocTip(b[3], false));
    else if (st === "used") out.push('<span class="fr">its allocation is not in the window</span>');
    return out.join("<br>");
  }

  // ---- sites -------------------------------------------------------------------------

  function sitesView() {
    const A = D.allocs;
    const na = A.size.length;
    const n = D.times.length;
    const N = Math.max(n, 1);
    const depth = state.depth;
    const sites = new Map();
    const get = (s) => {
      let x = sites.get(s.key);
      if (!x) {
        x = { key: s.key, html: s.html, text: s.text, full: s.full || s.text, count: 0, earlier: 0, bytes: 0, peak: 0, cur: 0, live: 0, liveBytes: 0, failed: 0, failedBytes: 0 };
        sites.set(s.key, x);
      }
      return x;
    };
    const siteOfAlloc = new Array(na);
    for (let k = 0; k < na; k++) {
      const x = get(allocSite(k, depth));
      siteOfAlloc[k] = x;
      if (A.start[k] >= 0) {
        x.count++;
        x.bytes += A.size[k];
      } else x.earlier++;
      if (A.end[k] < 0) {
        x.live++;
        x.liveBytes += A.size[k];
      }
    }
    const M = D.marks;
    for (let i = 0; i < M.at.length; i++) {
      if (M.kind[i] !== 0) continue;
      const x = get(siteOf(M.stack[i], M.res[i], false, depth));
      x.failed++;
      x.failedBytes += M.size[i];
    }
    // peak live per site: the same sweep as the timeline's
    const startAt = new Int32Array(N).fill(-1);
    const endAt = new Int32Array(N).fill(-1);
    const bump = (x, v) => {
      x.cur += v;
      if (x.cur > x.peak) x.peak = x.cur;
    };
    for (let k = 0; k < na; k++) {
      if (A.start[k] < 0) bump(siteOfAlloc[k], A.size[k]);
      else startAt[A.start[k]] = k;
      if (A.end[k] >= 0) endAt[A.end[k]] = k;
    }
    for (let p = 0; p < N; p++) {
      if (endAt[p] >= 0) bump(siteOfAlloc[endAt[p]], -A.size[endAt[p]]);
      if (startAt[p] >= 0) bump(siteOfAlloc[startAt[p]], A.size[startAt[p]]);
    }

    const cols = [
      ["site", "Site"],
      ["count", "Allocations"],
      ["bytes", "Bytes allocated"],
      ["peak", "Peak live"],
      ["liveBytes", "Live at end"],
      ["failed", "Failed"],
    ];
    const rows = Array.from(sites.values());
    const key = state.sortKey;
    rows.sort((a, b) => (key === "site" ? a.text.localeCompare(b.text) : b[key] - a[key] || b.bytes - a.bytes || a.text.localeCompare(b.text)));
    const MAX_ROWS = 100;
    const out = ['<table class="sites" id="sites-tbl"><thead><tr>'];
    for (const c of cols) out.push('<th data-sort="' + c[0] + '"' + (c[0] === key ? ' class="sorted"' : "") + ">" + c[1] + (c[0] === key ? (key === "site" ? " ▴" : " ▾") : "") + "</th>");
    out.push("</tr></thead><tbody>");
    for (const x of rows.slice(0, MAX_ROWS)) {
      const sw = '<span class="sw" style="background:' + siteColor(depth === 1 || x.key[0] !== "s" ? x.key : x.key.split(",")[0]) + '"></span>';
      out.push('<tr class="site" data-key="' + esc(x.key) + '" data-site="' + esc(x.text) + '" data-full="' + esc(x.full) + '" data-earlier="' + x.earlier + '" data-live="' + x.live + '" data-failed="' + x.failed + '" data-count="' + x.count + '" data-bytes="' + x.bytes + '" data-peak="' + x.peak + '">');
      out.push('<td class="site">' + (x.html.indexOf('<div class="fn">') === 0 ? x.html.replace('<div class="fn">', '<div class="fn">' + sw) : '<div class="fn">' + sw + x.html + "</div>") + "</td>");
      const cell = (v) => "<span>" + v + "</span>";
      out.push("<td>" + cell(fmtInt(x.count)) + (x.earlier ? ' <span class="muted">+' + fmtInt(x.earlier) + " earlier</span>" : "") + "</td><td>" + cell(fmtBytes(x.bytes)) + "</td><td>" + cell(fmtBytes(x.peak)) + "</td>");
      out.push("<td>" + (x.live ? cell(fmtBytes(x.liveBytes)) + ' <span class="muted">(' + fmtInt(x.live) + ")</span>" : '<span class="muted">–</span>') + "</td>");
      out.push('<td class="' + (x.failed ? "bad" : "") + '">' + (x.failed ? cell(fmtInt(x.failed)) + ' <span class="muted">(' + fmtBytes(x.failedBytes) + ")</span>" : '<span class="muted">–</span>') + "</td></tr>");
    }
    out.push("</tbody></table>");
    if (rows.length > MAX_ROWS) out.push('<p class="note">' + fmtInt(rows.length - MAX_ROWS) + " more sites not listed.</p>");
    if (!rows.length) out.push('<p class="note">No allocations.</p>');
    $("sites-table").innerHTML = out.join("");
  }

  // ---- the tooltip and the controls --------------------------------------------------

  const tip = $("tip");
  function placeTip(ev) {
    const pad = 14;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let x = ev.clientX + pad, y = ev.clientY + pad;
    if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - pad - w);
    if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - pad - h);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function tipFor(t) {
    const band = t.closest("[data-a]");
    if (band) return allocTip(+band.dataset.a, false);
    const mark = t.closest("[data-m]");
    if (mark) return markTip(+mark.dataset.m);
    if (t.classList && t.classList.contains("other-band")) return "<b>other</b>: the allocations smaller than the bands, together (raise “bands” to draw more of them)";
    const blk = t.closest("rect.blk");
    if (blk && blk.dataset.k !== undefined) return blockTip(+blk.dataset.s, +blk.dataset.k);
    if (blk && blk.dataset.col !== undefined) {
      const s = D.segments[+blk.dataset.s];
      const c = +blk.dataset.col;
      return "offsets " + fmtBytes((c * s.size) / BW) + " to " + fmtBytes(((c + 1) * s.size) / BW) + ": " + fmtPct(+blk.getAttribute("fill-opacity")) + " not free (too many blocks to draw one by one)";
    }
    const row = t.closest("tr.site");
    if (row) {
      const earlier = +row.dataset.earlier;
      return '<span class="fr">' + esc(row.dataset.full).replace(/\n/g, "<br>") + "</span><br>" + fmtInt(+row.dataset.count) + " allocations in the window, " + fmtBytes(+row.dataset.bytes) +
        (earlier ? "; " + fmtInt(earlier) + " made before it" : "") + "; peak live " + fmtBytes(+row.dataset.peak);
    }
    return null;
  }

  function wire() {
    document.addEventListener("mousemove", (ev) => {
      const html = ev.target instanceof Element ? tipFor(ev.target) : null;
      if (html) {
        if (tip.dataset.html !== html) {
          tip.innerHTML = html;
          tip.dataset.html = html;
        }
        tip.hidden = false;
        placeTip(ev);
      } else tip.hidden = true;
    });
    document.addEventListener("mouseleave", () => (tip.hidden = true));
    $("timeline-figure").addEventListener("mousemove", onTimelineMove);
    $("timeline-figure").addEventListener("click", (ev) => {
      const band = ev.target instanceof Element ? ev.target.closest("[data-a]") : null;
      const k = band ? +band.dataset.a : -1;
      showDetails(k === state.selected ? -1 : k);
    });
    $("segment-list").addEventListener("click", (ev) => {
      const blk = ev.target instanceof Element ? ev.target.closest("rect.blk") : null;
      if (blk && blk.dataset.k !== undefined) {
        const b = D.segments[+blk.dataset.s].blocks[+blk.dataset.k];
        if (b[3] >= 0) showDetails(b[3]);
      }
    });
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") showDetails(-1);
    });
    $("xmode").addEventListener("change", (ev) => {
      state.xmode = ev.target.value;
      guarded(timeline);
    });
    $("rank").addEventListener("change", (ev) => {
      state.rank = ev.target.value;
      guarded(timeline);
    });
    $("maxbands").addEventListener("change", (ev) => {
      state.maxBands = +ev.target.value;
      $("rank").disabled = state.maxBands >= D.allocs.size.length;
      guarded(timeline);
    });
    $("depth").addEventListener("change", (ev) => {
      state.depth = +ev.target.value;
      guarded(sitesView);
    });
    $("sites-table").addEventListener("click", (ev) => {
      const th = ev.target instanceof Element ? ev.target.closest("th[data-sort]") : null;
      if (!th) return;
      state.sortKey = th.dataset.sort;
      guarded(sitesView);
    });
  }

  function guarded(f) {
    try {
      f();
    } catch (e) {
      reportError("rendering failed: " + (e && e.stack ? e.stack : e));
    }
  }

  // The view's settings from the address's fragment, e.g. report.html#x=time&bands=100&
  // rank=size&group=2&sort=count (and #selftest).
  function hashOptions() {
    const o = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      const i = part.indexOf("=");
      if (i > 0) o[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1));
      else if (part) o[part] = "";
    }
    return o;
  }

  function controls() {
    const na = D.allocs.size.length;
    const o = hashOptions();
    if (o.x === "time" || o.x === "event") state.xmode = o.x;
    if (o.rank === "size" || o.rank === "area") state.rank = o.rank;
    if (o.sort && ["site", "count", "bytes", "peak", "liveBytes", "failed"].indexOf(o.sort) >= 0) state.sortKey = o.sort;
    state.maxBands = Math.min(o.bands === "all" ? na : o.bands > 0 ? Math.floor(+o.bands) : D.max_bands, na);
    if (o.group !== undefined && /^[0-3]$/.test(o.group)) state.depth = +o.group;
    const choices = [100, 300, 1000, 3000, 10000].filter((v) => v < na);
    for (const v of [D.max_bands, state.maxBands]) if (choices.indexOf(v) < 0 && v < na) choices.push(v);
    choices.sort((a, b) => a - b);
    const opts = choices.map((v) => '<option value="' + v + '"' + (v === state.maxBands ? " selected" : "") + ">" + fmtInt(v) + "</option>");
    opts.push('<option value="' + na + '"' + (state.maxBands >= na ? " selected" : "") + ">all " + fmtInt(na) + "</option>");
    $("maxbands").innerHTML = opts.join("");
    $("xmode").value = state.xmode;
    $("rank").value = state.rank;
    $("rank").disabled = state.maxBands >= na;
    $("depth").value = String(state.depth);
    if (!D.meta.stacks) {
      $("depth").value = "0";
      $("depth").disabled = true;
      state.depth = 0;
    }
  }

  // ---- self-test (report.html#selftest) ------------------------------------------------

  // Drives the page as a user would (hover, click, the controls) and writes what it found
  // into body's data-selftest ("ok" or "fail") and #selftest: for headless browsers, which
  // cannot hover (scripts/check-viz.sh).
  function selfTest() {
    const results = [];
    const check = (name, ok, info) => results.push((ok ? "ok   " : "FAIL ") + name + (info ? ": " + info : ""));
    const hover = (el) => {
      const r = el.getBoundingClientRect();
      el.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 }));
      return tip.hidden ? "" : tip.innerHTML;
    };
    const change = (id, value) => {
      const el = $(id);
      el.value = value;
      el.dispatchEvent(new Event("change", { bubbles: true }));
    };
    // a band with a stack when there are any
    const bands = Array.from(document.querySelectorAll("path.band"));
    const band = bands.find((b) => D.allocs.stack[+b.dataset.a] >= 0) || bands[0];
    if (band) {
      check("band tooltip", /resource/.test(hover(band)) && /allocated/.test(tip.innerHTML), tip.textContent.slice(0, 120));
      const sr = TL.svg.getBoundingClientRect();
      TL.svg.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: sr.left + sr.width / 2, clientY: sr.top + sr.height / 2 }));
      check("cursor readout", /live/.test($("readout").textContent), $("readout").textContent);
      band.dispatchEvent(new MouseEvent("click", { bubbles: true }));
      check("click shows details", !$("details").hidden && /Allocation/.test($("details").innerHTML));
      if (D.meta.stacks) check("details list the frames", !!$("details").querySelector("ol.frames li"));
      document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));
      check("Escape closes details", $("details").hidden);
    }
    const other = document.querySelector("path.other-band");
    if (other) check("other tooltip", /other/.test(hover(other)));
    const mark = document.querySelector("path.mark");
    if (mark) check("mark tooltip", /event/.test(hover(mark)));
    const blk = document.querySelector("rect.blk[data-k]");
    if (blk) check("block tooltip", /block of/.test(hover(blk)), tip.textContent.slice(0, 120));
    const row = document.querySelector("tr.site");
    if (row) check("site tooltip", /allocations in the window/.test(hover(row)));
    document.body.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: 1, clientY: 1 }));
    check("tooltip hides", tip.hidden);
    if (D.times.length > 1) {
      change("xmode", "time");
      check("time axis", !!document.querySelector("#timeline-svg path") && /time since/.test($("timeline-figure").textContent));
      change("xmode", "event");
    }
    const na = D.allocs.size.length;
    const fewest = +$("maxbands").options[0].value;
    if (fewest < na) {
      const was = $("maxbands").value;
      change("maxbands", String(fewest));
      const drawn = document.querySelectorAll("path.band").length;
      check("fewer bands and other", drawn === fewest && !!document.querySelector("path.other-band"), drawn + " bands");
      change("maxbands", was);
    }
    if (D.meta.stacks) {
      change("depth", "2");
      check("grouped by two frames", !!document.querySelector("tr.site .fn + .fn") || !!document.querySelector("tr.site"));
      change("depth", "1");
    }
    const th = document.querySelector('th[data-sort="count"]');
    if (th) {
      th.dispatchEvent(new MouseEvent("click", { bubbles: true }));
      const counts = Array.from(document.querySelectorAll("tr.site")).map((r) => +r.dataset.count);
      check("sort by count", counts.every((c, i) => i === 0 || counts[i - 1] >= c), counts.join(","));
      document.querySelector('th[data-sort="peak"]').dispatchEvent(new MouseEvent("click", { bubbles: true }));
    }
    const failed = results.filter((r) => r.indexOf("FAIL") === 0).length;
    const pre = document.createElement("pre");
    pre.id = "selftest";
    pre.hidden = true;
    pre.textContent = results.join("\n");
    document.body.appendChild(pre);
    document.body.dataset.selftest = failed || document.body.dataset.rendered === "error" ? "fail" : "ok";
  }

  // ---- main --------------------------------------------------------------------------

  const started = performance.now();
  try {
    D = JSON.parse($("rmm-viz-data").textContent);
    if (D.format !== "rmm-viz-data 1") throw new Error("unknown embedded data format " + D.format);
    controls();
    assignHues();
    header();
    timeline();
    segmentsView();
    sitesView();
    wire();
    document.body.dataset.renderMs = String(Math.round(performance.now() - started));
    if (document.body.dataset.rendered !== "error") document.body.dataset.rendered = "ok";
    if ("selftest" in hashOptions()) selfTest();
  } catch (e) {
    reportError("rendering failed: " + (e && e.stack ? e.stack : e));
  }
})();
