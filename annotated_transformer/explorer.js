/* The attention explorer: where each token of a trained model looks, layer by layer and head by head.
 *
 * Plain JavaScript and SVG, no library and no network. Every element of class "at-explorer" holds its data as JSON
 * in a script element of class "at-data" (written by annotated_transformer.explorer) and a static figure (class
 * "at-fallback") shown where scripts do not run; this script replaces the figure with the viewer.
 * It may be included many times on a page (once per notebook output): it defines itself once and then sets up
 * every explorer that is not set up yet.
 *
 * Data: {v: 1, scale, examples: [{name, tokens: {list: [str]}, text: {source, output, reference},
 *        kinds: {kind: {q: list, k: list, w: [layer][head][query][key] integers}}}],
 *        statistics: {kind: {sentences, rows: {statistic: [layer][head] number}}}, note,
 *        initial: {kind, layer, head}}.
 * A weight is its integer divided by `scale` (the JSON's rounding).
 */
(function () {
  "use strict";
  if (window.ATExplorer) { window.ATExplorer.setUpAll(); return; }

  var SVG = "http://www.w3.org/2000/svg";
  var HEAD_COLOURS = ["#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#f28e2b", "#76b7b2", "#edc948", "#9c755f",
                      "#ff9da7", "#bab0ac", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#17becf"];
  var STRINGS = {
    en: {
      sentence: "Sentence", kind: "Attention", layer: "Layer", head: "Head", allHeads: "all heads",
      kinds: {"encoder self": "encoder self-attention", "decoder self": "decoder self-attention",
              "cross": "cross-attention (target looks at source)"},
      hint: "Hover over a token, or focus one (Tab, then the arrow keys), to see where it looks and what looks at " +
            "it; click or press Enter to pin it, Escape to let go.",
      queries: "queries", keys: "keys", lines: "Where each query looks", matrix: "All weights (row: query, column: key)",
      looksAt: "query {i}, “{t}”, looks at", lookedAtBy: "looking at key {i}, “{t}”", weight: "weight",
      none: "No token chosen.",
      source: "Source", output: "Model output", reference: "Reference",
      stats: "Where each head's weight goes", over: "mean over {n} sentences", statHead: "head",
      statNames: {diagonal: "own position", previous: "position before", next: "position after",
                  first: "first key", last: "last key", entropy: "entropy (bits)"},
      tokenLabel: "{side} {i}: {t}", querySide: "query", keySide: "key"
    },
    zh: {
      sentence: "句子", kind: "注意力", layer: "层", head: "头", allHeads: "全部头",
      kinds: {"encoder self": "编码器自注意力", "decoder self": "解码器自注意力",
              "cross": "交叉注意力（目标端看源端）"},
      hint: "把鼠标移到一个词元上，或用键盘聚焦它（Tab，再用方向键），看它看向哪里、哪些词元看向它；" +
            "单击或按回车固定，按 Esc 取消。",
      queries: "查询", keys: "键", lines: "每个查询看向哪里", matrix: "全部权重（行：查询，列：键）",
      looksAt: "查询 {i}“{t}”看向", lookedAtBy: "看向键 {i}“{t}”的查询", weight: "权重", none: "尚未选择词元。",
      source: "原文", output: "模型译文", reference: "参考译文",
      stats: "每个头的权重落在哪里", over: "{n} 个句子的平均", statHead: "头",
      statNames: {diagonal: "自身位置", previous: "前一位置", next: "后一位置",
                  first: "第一个键", last: "最后一个键", entropy: "熵（比特）"},
      tokenLabel: "{side} {i}：{t}", querySide: "查询", keySide: "键"
    }
  };

  function strings(root) {
    var lang = (root.getAttribute("data-lang") || document.documentElement.lang || "en").toLowerCase();
    return lang.indexOf("zh") === 0 ? STRINGS.zh : STRINGS.en;
  }
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, k) { return values[k]; });
  }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var a in attrs || {}) e.setAttribute(a, attrs[a]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgEl(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    for (var a in attrs || {}) e.setAttribute(a, attrs[a]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function select(label, cls, options) {
    var wrap = el("label", {"class": "at-control"});
    wrap.appendChild(el("span", {}, label));
    var s = el("select", {"class": cls});
    options.forEach(function (o) { s.appendChild(el("option", {value: o[0]}, o[1])); });
    wrap.appendChild(s);
    return [wrap, s];
  }
  function shorten(t, n) { return t.length > n ? t.slice(0, n - 1) + "…" : t; }

  function Explorer(root) {
    this.root = root;
    this.data = JSON.parse(root.querySelector("script.at-data").textContent);
    this.s = strings(root);
    this.focus = null;  // {side: "q" | "k", i}
    this.pinned = false;
    this.build();
  }

  Explorer.prototype.build = function () {
    var self = this, s = this.s, d = this.data, root = this.root;
    var ui = el("div", {"class": "at-ui"});
    var controls = el("div", {"class": "at-controls"});
    var ex = select(s.sentence, "at-example", d.examples.map(function (e, i) {
      return [String(i), (i + 1) + ". " + shorten(e.name, 60)];
    }));
    var kind = select(s.kind, "at-kind", []);
    var layer = select(s.layer, "at-layer", []);
    var head = select(s.head, "at-head", []);
    [ex, kind, layer, head].forEach(function (c) { controls.appendChild(c[0]); });
    this.sel = {example: ex[1], kind: kind[1], layer: layer[1], head: head[1]};
    ui.appendChild(controls);
    this.text = el("dl", {"class": "at-text"});
    ui.appendChild(this.text);
    ui.appendChild(el("p", {"class": "at-hint"}, s.hint));
    var views = el("div", {"class": "at-views"});
    this.linesBox = el("figure", {"class": "at-lines"});
    this.matrixBox = el("figure", {"class": "at-matrix"});
    this.side = el("div", {"class": "at-side"});
    this.readout = el("div", {"class": "at-readout", "aria-live": "polite"});
    this.stats = el("div", {"class": "at-stats"});
    this.side.appendChild(this.readout);
    this.side.appendChild(this.stats);
    views.appendChild(this.linesBox);
    views.appendChild(this.matrixBox);
    views.appendChild(this.side);
    ui.appendChild(views);
    if (d.note) ui.appendChild(el("p", {"class": "at-note"}, d.note));
    root.appendChild(ui);
    var fallback = root.querySelector(".at-fallback");
    if (fallback) fallback.hidden = true;
    root.classList.add("at-ready");

    ex[1].addEventListener("change", function () { self.fillKinds(); self.draw(); });
    kind[1].addEventListener("change", function () { self.fillLayers(); self.draw(); });
    layer[1].addEventListener("change", function () { self.draw(); });
    head[1].addEventListener("change", function () { self.draw(); });
    var initial = d.initial || {};
    this.fillKinds();
    if (initial.kind && this.example().kinds[initial.kind]) { kind[1].value = initial.kind; this.fillLayers(); }
    var layers = this.current().w.length;
    if (initial.layer !== undefined) layer[1].value = String(((initial.layer % layers) + layers) % layers);
    if (initial.head !== undefined) head[1].value = String(initial.head);
    this.draw();
  };

  Explorer.prototype.example = function () { return this.data.examples[+this.sel.example.value]; };
  Explorer.prototype.current = function () { return this.example().kinds[this.sel.kind.value]; };

  Explorer.prototype.fillKinds = function () {
    var s = this.s, sel = this.sel.kind, before = sel.value;
    var names = Object.keys(this.example().kinds);
    sel.innerHTML = "";
    names.forEach(function (k) { sel.appendChild(el("option", {value: k}, s.kinds[k] || k)); });
    if (names.indexOf(before) >= 0) sel.value = before;
    this.fillLayers();
  };

  Explorer.prototype.fillLayers = function () {
    var w = this.current().w, layer = this.sel.layer, head = this.sel.head;
    var keepLayer = layer.value, keepHead = head.value;
    layer.innerHTML = "";
    for (var l = 0; l < w.length; l++) layer.appendChild(el("option", {value: String(l)}, String(l + 1)));
    head.innerHTML = "";
    head.appendChild(el("option", {value: "all"}, this.s.allHeads));
    for (var h = 0; h < w[0].length; h++) head.appendChild(el("option", {value: String(h)}, String(h + 1)));
    if (+keepLayer < w.length) layer.value = keepLayer;
    if (keepHead === "all" || +keepHead < w[0].length) head.value = keepHead || "0";
    if (!keepHead) head.value = "0";
  };

  // the weights shown: [head][query][key] as numbers, and which heads
  Explorer.prototype.weights = function () {
    var c = this.current(), scale = this.data.scale, layer = c.w[+this.sel.layer.value];
    var heads = this.sel.head.value === "all" ? layer.map(function (_, h) { return h; }) : [+this.sel.head.value];
    return {heads: heads, w: layer.map(function (head) {
      return head.map(function (row) { return row.map(function (v) { return v / scale; }); });
    })};
  };

  Explorer.prototype.draw = function () {
    var c = this.current(), e = this.example();
    this.queries = e.tokens[c.q];
    this.keys = e.tokens[c.k];
    this.shown = this.weights();
    this.focus = null;
    this.pinned = false;
    this.drawText();
    this.drawLines();
    this.drawMatrix();
    this.drawStats();
    this.update();
  };

  Explorer.prototype.drawText = function () {
    var s = this.s, t = this.example().text || {}, dl = this.text;
    dl.innerHTML = "";
    [["source", s.source], ["reference", s.reference], ["output", s.output]].forEach(function (p) {
      if (t[p[0]] === undefined || t[p[0]] === null) return;
      dl.appendChild(el("dt", {}, p[1]));
      dl.appendChild(el("dd", {lang: ""}, t[p[0]]));
    });
  };

  var ROW = 22, COL = 118, GAP = 150, PAD = 26;

  Explorer.prototype.drawLines = function () {
    var self = this, s = this.s, q = this.queries, k = this.keys;
    var width = 2 * COL + GAP, height = PAD + ROW * Math.max(q.length, k.length) + 6;
    var svg = svgEl("svg", {viewBox: "0 0 " + width + " " + height, "class": "at-svg", role: "group",
                            "aria-label": s.lines, style: "max-width:" + width + "px"});
    svg.appendChild(svgEl("text", {x: COL - 4, y: 14, "text-anchor": "end", "class": "at-axis"}, s.queries));
    svg.appendChild(svgEl("text", {x: COL + GAP + 4, y: 14, "class": "at-axis"}, s.keys));
    var lines = svgEl("g", {"class": "at-linegroup"});
    var yq = function (i) { return PAD + ROW * i + ROW / 2; };
    this.shown.heads.forEach(function (h) {
      var colour = self.shown.heads.length > 1 ? HEAD_COLOURS[h % HEAD_COLOURS.length] : "var(--at-accent)";
      self.shown.w[h].forEach(function (row, i) {
        row.forEach(function (v, j) {
          if (v <= 0) return;
          lines.appendChild(svgEl("line", {x1: COL + 2, y1: yq(i), x2: COL + GAP - 2, y2: yq(j),
            stroke: colour, "stroke-width": 2, "stroke-opacity": v, "data-q": i, "data-k": j, "data-h": h,
            "data-weight": v.toFixed(2)}));
        });
      });
    });
    svg.appendChild(lines);
    this.tokens = {q: [], k: []};
    [["q", q, COL - 4, "end"], ["k", k, COL + GAP + 4, "start"]].forEach(function (side) {
      side[1].forEach(function (t, i) {
        var g = svgEl("g", {"class": "at-tok", tabindex: 0, role: "button", "data-side": side[0], "data-i": i,
                            "aria-label": fill(s.tokenLabel, {side: side[0] === "q" ? s.querySide : s.keySide,
                                                              i: i + 1, t: t})});
        var x = side[3] === "end" ? side[2] - COL + 6 : side[2] - 2;
        g.appendChild(svgEl("rect", {x: x, y: PAD + ROW * i + 1, width: COL - 8, height: ROW - 2, rx: 3,
                                     "class": "at-tokbg"}));
        g.appendChild(svgEl("text", {x: side[2], y: yq(i) + 4, "text-anchor": side[3]}, shorten(t, 14)));
        g.appendChild(svgEl("title", {}, t));
        self.bindToken(g, side[0], i);
        self.tokens[side[0]].push(g);
        svg.appendChild(g);
      });
    });
    this.linesBox.innerHTML = "";
    this.linesBox.appendChild(svg);
    this.lines = lines;
  };

  Explorer.prototype.drawMatrix = function () {
    var self = this, q = this.queries, k = this.keys, heads = this.shown.heads;
    var cell = heads.length > 1 ? 11 : 22, label = 92, top = 84, gap = 10;
    var one = cell * k.length;
    var width = label + heads.length * one + (heads.length - 1) * gap + 4, height = top + cell * q.length + 4;
    var svg = svgEl("svg", {viewBox: "0 0 " + width + " " + height, "class": "at-svg", role: "img",
                            "aria-label": this.s.matrix, style: "max-width:" + width + "px"});
    q.forEach(function (t, i) {
      svg.appendChild(svgEl("text", {x: label - 4, y: top + cell * i + cell * 0.75, "text-anchor": "end",
                                     "class": "at-mlabel", "data-q": i}, shorten(t, 12)));
    });
    this.cells = [];
    heads.forEach(function (h, n) {
      var x0 = label + n * (one + gap);
      var colour = heads.length > 1 ? HEAD_COLOURS[h % HEAD_COLOURS.length] : "var(--at-accent)";
      if (heads.length > 1) {
        svg.appendChild(svgEl("text", {x: x0, y: top - 4, "class": "at-mlabel", fill: colour},
                              self.s.head + " " + (h + 1)));
      } else {
        k.forEach(function (t, j) {
          var x = x0 + cell * j + cell * 0.7, y = top - 4;
          svg.appendChild(svgEl("text", {x: x, y: y, transform: "rotate(-60 " + x + " " + y + ")",
                                         "class": "at-mlabel", "data-k": j}, shorten(t, 12)));
        });
      }
      svg.appendChild(svgEl("rect", {x: x0, y: top, width: one, height: cell * q.length, "class": "at-mframe"}));
      self.shown.w[h].forEach(function (row, i) {
        row.forEach(function (v, j) {
          var r = svgEl("rect", {x: x0 + cell * j, y: top + cell * i, width: cell, height: cell, fill: colour,
                                 "fill-opacity": v, "data-q": i, "data-k": j, "data-h": h, "class": "at-cell"});
          r.appendChild(svgEl("title", {}, q[i] + " → " + k[j] + ": " + v.toFixed(2)));
          r.addEventListener("pointerenter", function () { if (!self.pinned) self.setFocus({side: "q", i: i}); });
          self.cells.push(r);
          svg.appendChild(r);
        });
      });
    });
    svg.addEventListener("pointerleave", function () { if (!self.pinned) self.setFocus(null); });
    this.matrixBox.innerHTML = "";
    this.matrixBox.appendChild(svg);
  };

  Explorer.prototype.drawStats = function () {
    var s = this.s, box = this.stats, stats = (this.data.statistics || {})[this.sel.kind.value];
    box.innerHTML = "";
    if (!stats) return;
    var layer = +this.sel.layer.value, head = this.sel.head.value;
    box.appendChild(el("p", {"class": "at-stats-title"}, s.stats + " — " + fill(s.over, {n: stats.sentences})));
    var table = el("table", {"class": "at-stats-table"}), tr = el("tr");
    tr.appendChild(el("th", {}, s.statHead));
    var names = Object.keys(stats.rows);
    var heads = stats.rows[names[0]][layer].length;
    for (var h = 0; h < heads; h++) tr.appendChild(el("th", head === String(h) ? {"class": "at-on"} : {}, h + 1));
    var thead = el("thead");
    thead.appendChild(tr);
    table.appendChild(thead);
    var tbody = el("tbody");
    names.forEach(function (name) {
      var row = el("tr");
      row.appendChild(el("th", {scope: "row"}, s.statNames[name] || name));
      stats.rows[name][layer].forEach(function (v, h) {
        row.appendChild(el("td", head === String(h) ? {"class": "at-on"} : {}, v.toFixed(2)));
      });
      tbody.appendChild(row);
    });
    table.appendChild(tbody);
    box.appendChild(table);
  };

  Explorer.prototype.bindToken = function (g, side, i) {
    var self = this;
    g.addEventListener("pointerenter", function () { if (!self.pinned) self.setFocus({side: side, i: i}); });
    g.addEventListener("pointerleave", function () { if (!self.pinned) self.setFocus(null); });
    g.addEventListener("focus", function () { if (!self.pinned) self.setFocus({side: side, i: i}); });
    g.addEventListener("click", function () { self.pin(side, i); });
    g.addEventListener("keydown", function (ev) {
      var list = self.tokens[side], other = self.tokens[side === "q" ? "k" : "q"], to = null;
      if (ev.key === "ArrowDown") to = list[Math.min(i + 1, list.length - 1)];
      else if (ev.key === "ArrowUp") to = list[Math.max(i - 1, 0)];
      else if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") to = other[Math.min(i, other.length - 1)];
      else if (ev.key === "Enter" || ev.key === " ") { self.pin(side, i); ev.preventDefault(); return; }
      else if (ev.key === "Escape") { self.pinned = false; self.setFocus(null); return; }
      else return;
      ev.preventDefault();
      self.pinned = false;
      to.focus();
    });
  };

  Explorer.prototype.pin = function (side, i) {
    var same = this.focus && this.focus.side === side && this.focus.i === i;
    this.pinned = !(this.pinned && same);
    this.setFocus({side: side, i: i});
  };

  Explorer.prototype.setFocus = function (focus) {
    this.focus = focus;
    this.update();
  };

  // what a chosen token shows: its lines, its row (a query) or column (a key) of the matrix, and the readout
  Explorer.prototype.update = function () {
    var f = this.focus, s = this.s, self = this;
    this.root.classList.toggle("at-focused", !!f);
    var match = function (node) {
      return !f || +node.getAttribute(f.side === "q" ? "data-q" : "data-k") === f.i;
    };
    Array.prototype.forEach.call(this.lines.childNodes, function (line) {
      line.classList.toggle("at-dim", !match(line));
    });
    this.cells.forEach(function (c) { c.classList.toggle("at-dim", !match(c)); });
    ["q", "k"].forEach(function (side) {
      self.tokens[side].forEach(function (g, i) {
        g.classList.toggle("at-chosen", !!f && f.side === side && f.i === i);
        g.setAttribute("aria-pressed", String(!!f && self.pinned && f.side === side && f.i === i));
      });
    });
    this.readout.innerHTML = "";
    if (!f) { this.readout.appendChild(el("p", {"class": "at-none"}, s.none)); return; }
    var tokens = f.side === "q" ? this.keys : this.queries;
    var chosen = (f.side === "q" ? this.queries : this.keys)[f.i];
    this.readout.appendChild(el("p", {"class": "at-readout-title"},
                                fill(f.side === "q" ? s.looksAt : s.lookedAtBy, {t: chosen, i: f.i + 1})));
    var table = el("table", {"class": "at-readout-table"});
    var head = el("tr");
    head.appendChild(el("th", {}, f.side === "q" ? s.keys : s.queries));
    this.shown.heads.forEach(function (h) {
      var th = el("th", {}, self.shown.heads.length > 1 ? s.head + " " + (h + 1) : s.weight);
      if (self.shown.heads.length > 1) th.style.color = HEAD_COLOURS[h % HEAD_COLOURS.length];
      head.appendChild(th);
    });
    table.appendChild(head);
    tokens.forEach(function (t, j) {
      var tr = el("tr", {"data-index": j});
      var name = el("th", {scope: "row"});
      name.appendChild(el("span", {"class": "at-pos"}, String(j + 1)));
      name.appendChild(document.createTextNode(" " + t));
      tr.appendChild(name);
      self.shown.heads.forEach(function (h) {
        var v = f.side === "q" ? self.shown.w[h][f.i][j] : self.shown.w[h][j][f.i];
        var td = el("td", {"data-h": h, "data-weight": v.toFixed(2)}, v.toFixed(2));
        td.style.setProperty("--at-w", v);
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    this.readout.appendChild(table);
  };

  function setUpAll() {
    var roots = document.querySelectorAll(".at-explorer:not(.at-ready)");
    Array.prototype.forEach.call(roots, function (root) {
      try { root.atExplorer = new Explorer(root); } catch (err) {
        root.classList.add("at-broken");
        if (window.console) console.error("attention explorer: " + err);
      }
    });
  }

  window.ATExplorer = {setUpAll: setUpAll, Explorer: Explorer, version: 1};
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUpAll);
  else setUpAll();
})();
