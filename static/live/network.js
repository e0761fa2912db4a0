// The moons trainer's network view: the inputs, each hidden layer and the output as columns of
// units, every unit a small map of its activation over the plane (computed on the server with
// PyTorch forward hooks: workbench/moons_trainer/network.py), the weights drawn as edges coloured by
// their sign (negative also dashed) and sized by their magnitude.
//
// The pure parts (decoding the frame's uint8 arrays, the units' order, names and read-outs,
// the sign colours, the edges' buckets, hit-testing an edge) are exported for tests
// (tests/js/network.test.mjs) and touch no DOM; `NetworkPane` draws them into the live view
// (view.js), which owns it.
//
// Wide layers stay legible: a layer shows its FOLD units with the largest outgoing weights first
// (the ones the next layer listens to most) and a button shows the rest; every unit is in the
// page either way, as a button named "hidden layer 1, unit 3: ..." with its bias and strongest
// weights, so a screen reader reads the network as a list. The order is worked out again only
// when the page sends a frame (Play, Pause, Step, Reset), never while a run plays: a unit stays
// where the learner is looking.

import { relabelNow } from "./access.js";
import { css, hexToRgb } from "./plane.js";

export const FOLD = 12;               // units a wide layer shows before "Show all"
export const PER_COLUMN = 16;         // units per column of an unfolded layer
export const UNIT_PX = 26;            // a unit's map on screen, at scale 1
export const ZOOM_PX = 200;           // a clicked unit's map, large
export const LISTED_WEIGHTS = 3;      // incoming weights in a unit's accessible name
export const TIP_WEIGHTS = 8;         // ... and in its tooltip
export const EDGE_WIDTHS = 5;         // edges are stroked in this many widths per sign
export const HIT_PX = 4;              // how near the pointer must be to an edge to read it

const number = (v) => (Object.is(v, -0) ? 0 : v).toFixed(2).replace("-", "\u2212");
const signed = (v) => (v > 0 ? "+" : "") + number(v);

// ---- decoding --------------------------------------------------------------------------------

// Each Linear layer's weights, row-major (out, in), from the frame's uint8 codes: code q is
// (q - zero) / zero * scale (workbench/moons_trainer/network.py quantised_weights).
export function decodeWeights(codes, widths, scales, zero) {
  const layers = [];
  let offset = 0;
  for (let l = 0; l + 1 < widths.length; l++) {
    const count = widths[l] * widths[l + 1];
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = (codes[offset + i] - zero) / zero * scales[l];
    layers.push(out);
    offset += count;
  }
  return layers;
}

// Each Linear layer's biases, from the frame's float32 array of all of them.
export function splitBiases(biases, widths) {
  const layers = [];
  let offset = 0;
  for (let l = 1; l < widths.length; l++) {
    layers.push(biases.subarray(offset, offset + widths[l]));
    offset += widths[l];
  }
  return layers;
}

// The value a unit's map holds at grid point `point` (row * resolution + column): `codes` is
// every unit's uint8 map one after the other, `range` every unit's low then every unit's high
// (workbench/moons_trainer/network.py quantised_maps); `unit` counts across the hidden layers.
export function unitValue(codes, range, units, unit, point, points) {
  const low = range[unit], high = range[units + unit];
  return low + codes[unit * points + point] / 255 * (high - low);
}

// A layer's units, most important first: by the sum of |weight| on their outgoing edges (how
// much the next layer listens to each), ties by index. `outgoing` is the next Linear's weights,
// row-major (next width, width).
export function unitOrder(outgoing, width, nextWidth) {
  const strength = new Float64Array(width);
  for (let o = 0; o < nextWidth; o++) {
    for (let i = 0; i < width; i++) strength[i] += Math.abs(outgoing[o * width + i]);
  }
  return [...Array(width).keys()].sort((a, b) => strength[b] - strength[a] || a - b);
}

// The units a layer shows: all of a narrow one, the first FOLD of `order` of a wide one until
// it is unfolded.
export function shownUnits(order, unfolded, fold = FOLD) {
  return unfolded || order.length <= fold + 1 ? order : order.slice(0, fold);
}

// ---- keyboard --------------------------------------------------------------------------------

// The network is one stop in the page's Tab order (a roving tabindex, as WAI-ARIA's grid pattern
// has it): 100 units would otherwise take 100 presses of Tab to cross. The arrow keys move within
// it: up and down along a column, left and right to the unit at the same height in the next
// column (or its last), Home and End to a column's first and last. `shown` counts the units each
// column shows; the result is the [column, position] to focus, or null for a key it leaves alone.
export const ROVING_KEYS = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End"];

export function rovingTarget(key, layer, position, shown) {
  const last = (l) => shown[l] - 1;
  switch (key) {
    case "ArrowUp": return [layer, Math.max(0, position - 1)];
    case "ArrowDown": return [layer, Math.min(last(layer), position + 1)];
    case "ArrowLeft":
      return layer === 0 ? [layer, position] : [layer - 1, Math.min(position, last(layer - 1))];
    case "ArrowRight":
      return layer === shown.length - 1 ? [layer, position]
        : [layer + 1, Math.min(position, last(layer + 1))];
    case "Home": return [layer, 0];
    case "End": return [layer, last(layer)];
    default: return null;
  }
}

// ---- names -----------------------------------------------------------------------------------

// The column `layer` (0 inputs, 1.. hidden, last the output) in words.
export function layerName(layer, layers) {
  if (layer === 0) return "inputs";
  if (layer === layers - 1) return "output";
  return `hidden layer ${layer}`;
}

// A unit's name: "input x₁", "hidden layer 1, unit 3" (units count from 1), "output".
export function unitName(layer, unit, layers, inputNames) {
  if (layer === 0) return `input ${inputNames[unit]}`;
  if (layer === layers - 1) return "output";
  return `hidden layer ${layer}, unit ${unit + 1}`;
}

// Where an edge into layer `layer` comes from, in words: "x₁", "unit 5" (of the layer before).
export function sourceName(layer, unit, inputNames) {
  return layer === 1 ? inputNames[unit] : `unit ${unit + 1}`;
}

// The `count` strongest incoming weights of unit `unit` in layer `layer` (>= 1):
// [{from, weight}], by |weight|, ties by index. `weights` is the Linear into that layer.
export function strongestWeights(weights, width, unit, count) {
  const row = [...Array(width).keys()].map((from) => ({ from, weight: weights[unit * width + from] }));
  row.sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight) || a.from - b.from);
  return row.slice(0, count);
}

// A unit's accessible name (and its tooltip, with `listed` = TIP_WEIGHTS and `lines`): its name,
// bias, strongest incoming weights and its activation's range over the plane. An input unit has
// no bias nor weights: it is a coordinate itself, or a feature computed from them (`inputWords`,
// the server's words for each input).
export function unitText({ layer, unit, layers, inputNames, inputWords, weights, width, bias, low, high, activation, regression },
                         listed = LISTED_WEIGHTS, lines = false) {
  const name = unitName(layer, unit, layers, inputNames);
  if (layer === 0) {
    const what = inputWords ? inputWords[unit] : `the coordinate ${inputNames[unit]}, standardised`;
    const parts = [name, `${what}, from ${number(low)} to ${number(high)} over the plane`];
    return lines ? parts.join("\n") : `${parts.join(": ")}.`;
  }
  const strongest = strongestWeights(weights, width, unit, listed);
  const from = layer === 1 ? "from" : `from hidden layer ${layer - 1},`;
  const list = strongest.map((w) => `${sourceName(layer, w.from, inputNames)} ${signed(w.weight)}`).join(", ");
  const which = width > listed ? `strongest ${strongest.length} of ${width} incoming weights` : "incoming weights";
  const what = layer === layers - 1
    ? (regression ? "the output value over the plane, as the plane shades it" : "P(class 1) over the plane, as the boundary")
    : `${activation} output from ${number(low)} to ${number(high)} over the plane`;
  const parts = [name, `bias ${signed(bias)}`, `${which} (${from} ${list})`, what];
  return lines ? parts.join("\n") : `${parts[0]}: ${parts.slice(1).join("; ")}.`;
}

// An edge's read-out.
export function edgeText(layer, from, to, weight, layers, inputNames) {
  return `weight from ${unitName(layer - 1, from, layers, inputNames)} to ` +
         `${unitName(layer, to, layers, inputNames)}: ${signed(weight)}`;
}

// ---- colours and edges -----------------------------------------------------------------------

// Paint a unit's uint8 map (`side` x `side` codes from `offset`, in the range low..high; rows
// = y, row 0 the lowest) into RGBA `pixels` with row 0 at the bottom: the background at zero,
// the negative colour at minus the unit's largest |value|, the positive one at plus it.
// Inlined, no arrays per pixel: 96 maps of 144 points, five times a second.
export function paintMap(pixels, codes, offset, side, low, high, negative, positive, background) {
  const extreme = Math.max(Math.abs(low), Math.abs(high)), step = (high - low) / 255;
  for (let r = 0; r < side; r++) {
    for (let c = 0; c < side; c++) {
      const value = low + codes[offset + r * side + c] * step;
      const t = extreme > 0 ? Math.max(-1, Math.min(1, value / extreme)) : 0;
      const towards = t < 0 ? negative : positive, a = Math.abs(t);
      const i = ((side - 1 - r) * side + c) * 4;
      pixels[i] = background[0] + (towards[0] - background[0]) * a;
      pixels[i + 1] = background[1] + (towards[1] - background[1]) * a;
      pixels[i + 2] = background[2] + (towards[2] - background[2]) * a;
      pixels[i + 3] = 255;
    }
  }
}

// An edge's width bucket, 0 .. EDGE_WIDTHS - 1, by |weight| over the layer's largest.
export function widthBucket(weight, scale, buckets = EDGE_WIDTHS) {
  if (!(scale > 0)) return 0;
  return Math.min(buckets - 1, Math.floor(Math.abs(weight) / scale * buckets));
}

// A bucket's line width in pixels (times the view's scale) and opacity: thin and faint for weak
// weights, so that the strong ones stand out of a layer of two thousand.
export function bucketStroke(bucket, buckets = EDGE_WIDTHS) {
  const t = (bucket + 1) / buckets;
  return { width: 0.5 + 2.5 * t * t, alpha: 0.2 + 0.8 * t * t };
}

// The edge nearest (x, y) within `tolerance` pixels, or null. `edges` are {x0, y0, x1, y1, ...}.
export function nearestEdge(edges, x, y, tolerance = HIT_PX) {
  let best = null, bestDistance = tolerance * tolerance;
  for (const e of edges) {
    const dx = e.x1 - e.x0, dy = e.y1 - e.y0;
    const length = dx * dx + dy * dy;
    const t = length ? Math.max(0, Math.min(1, ((x - e.x0) * dx + (y - e.y0) * dy) / length)) : 0;
    const d = (e.x0 + t * dx - x) ** 2 + (e.y0 + t * dy - y) ** 2;
    if (d <= bestDistance) { bestDistance = d; best = e; }
  }
  return best;
}

// ---- drawing (the view's network figure) -----------------------------------------------------

export class NetworkPane {
  constructor(view, figure) {
    this.view = view;
    this.figure = figure;
    this.title = figure.querySelector(".network-title");
    this.stage = figure.querySelector(".network-stage");
    this.edges = figure.querySelector("canvas.edges");
    this.legend = figure.querySelector(".network-legend");
    this.tooltip = figure.querySelector(".network-tooltip");
    this.zoom = figure.querySelector(".network-zoom");
    this.zoomCanvas = figure.querySelector("canvas.zoom-map");
    this.zoomText = figure.querySelector(".zoom-text");
    this.scene = null;
    this.data = null;             // the decoded picture: weights, biases, maps
    this.order = null;            // per column, the units' order
    this.unfolded = new Set();    // the columns whose every unit shows
    this.zoomed = null;           // {layer, unit} shown large
    this.draws = 0;
    // The stage's size, as the browser lays it out: read when it changes, never in a frame, where
    // reading it would make the browser lay the page out again mid-frame.
    this.stageSize = [0, 0];
    this.resize = new ResizeObserver(() => {
      const size = [this.stage.scrollWidth, this.stage.scrollHeight];
      if (size.join() === this.stageSize.join()) return;
      this.stageSize = size;
      if (this.data && this.view.frame) this.drawStage();
    });
    this.resize.observe(this.stage);
    this.stage.addEventListener("mousemove", (e) => this.hover(e));
    this.stage.addEventListener("mouseleave", () => { this.tooltip.hidden = true; });
    this.stage.addEventListener("click", (e) => {
      const unit = e.target.closest && e.target.closest("button.unit");
      if (unit) this.showLarge(Number(unit.dataset.layer), Number(unit.dataset.unit));
      const more = e.target.closest && e.target.closest("button.more");
      if (more) this.toggleFold(Number(more.dataset.layer));
    });
    this.stage.addEventListener("keydown", (e) => this.roam(e));
    // A unit focused another way (a click, the large map closing) becomes the Tab stop.
    this.stage.addEventListener("focusin", (e) => {
      const unit = e.target.closest && e.target.closest("button.unit");
      if (unit && unit !== this.tabStop) this.rove(unit);
    });
    figure.querySelector(".zoom-close").addEventListener("click", () => this.showLarge(null));
    this.zoom.addEventListener("keydown", (e) => { if (e.key === "Escape") this.showLarge(null); });
  }

  // A new scene: the layers' widths, the inputs' maps, the colours. Builds the columns.
  setScene(scene, blobs) {
    const net = scene.network;
    this.figure.hidden = !net;
    this.scene = net ? { ...net, extent: scene.extent, inputMaps: blobs.input_maps, inputRange: blobs.input_range } : null;
    this.data = null;
    this.order = null;
    if (!net) return;
    this.layers = net.widths.length;
    this.title.textContent = `The network, ${net.widths.join(" \u2192 ")} (${net.activation}): every unit's ` +
      "output over the plane; click a unit to see it large.";
    this.build();
  }

  // A frame's picture (`header`: serial, epoch, weight_scales). `reorder`: the page's own frame
  // (not a playing run's), where the units may move into their new order.
  update(header, blobs, reorder) {
    const sc = this.scene;
    if (!sc) return;
    const widths = sc.widths;
    const hidden = widths.slice(1, -1).reduce((a, b) => a + b, 0);
    this.data = {
      serial: header.serial, epoch: header.epoch,
      weights: decodeWeights(blobs.weights, widths, header.weight_scales, sc.weight_zero),
      scales: header.weight_scales,
      biases: splitBiases(blobs.biases, widths), maps: blobs.unit_maps, range: blobs.unit_range, hidden,
    };
    if (reorder || !this.order) this.arrange();
    this.dirty = true;
    this.received = (this.received || 0) + 1;      // pictures received, for tests and benchmarks
    this.view.root.dataset.networkFrames = String(this.received);
  }

  // The order of every column (hidden layers by outgoing weight; inputs and output as they are).
  arrange() {
    const widths = this.scene.widths, w = this.data.weights;
    const order = widths.map((width) => [...Array(width).keys()]);
    for (let l = 1; l < widths.length - 1; l++) order[l] = unitOrder(w[l], widths[l], widths[l + 1]);
    const same = this.order && order.every((o, l) => o.join() === this.order[l].join());
    this.order = order;
    if (!same) this.place();
  }

  // One button per unit in each column (built once per scene; `place` orders and folds them).
  build() {
    const sc = this.scene, points = sc.resolution * sc.resolution;
    this.stage.querySelectorAll(".layer").forEach((e) => e.remove());
    this.columns = sc.widths.map((width, layer) => {
      const column = document.createElement("div");
      column.className = "layer";
      column.setAttribute("role", "group");
      column.setAttribute("aria-label", `${layerName(layer, this.layers)}, ${width} unit${width === 1 ? "" : "s"}`);
      const heading = document.createElement("div");
      heading.className = "layer-name";
      heading.setAttribute("aria-hidden", "true");    // the group's name says it
      heading.textContent = layer === 0 || layer === this.layers - 1 ? layerName(layer, this.layers)
        : `hidden ${layer} (${width})`;
      const units = document.createElement("div");
      units.className = "units";
      column.append(heading, units);
      const buttons = [...Array(width).keys()].map((unit) => {
        const button = document.createElement("button");
        button.type = "button";
        button.className = "unit";
        button.dataset.layer = String(layer);
        button.dataset.unit = String(unit);
        // The output shows the boundary's picture on a canvas of its own, redrawn with every frame;
        // the other units' maps are drawn on the stage's one canvas behind their buttons, which
        // the browser then composites once instead of once per unit.
        const map = document.createElement(layer === this.layers - 1 ? "canvas" : "span");
        map.className = "map";
        if (layer === this.layers - 1) map.width = map.height = this.view.scene.resolution;
        map.setAttribute("aria-hidden", "true");
        button.append(map);
        button.setAttribute("aria-label", unitName(layer, unit, this.layers, sc.input_names));
        return button;
      });
      // The inputs are named beside their maps, as in TensorFlow Playground (their buttons'
      // names say it to a screen reader: the labels are hidden from it).
      const labels = layer === 0 ? sc.input_names.map((text) => {
        const label = document.createElement("span");
        label.className = "input-name";
        label.setAttribute("aria-hidden", "true");
        label.textContent = text;
        return label;
      }) : null;
      if (labels) units.classList.add("inputs");
      let more = null;
      if (width > FOLD + 1) {
        more = document.createElement("button");
        more.type = "button";
        more.className = "more";
        more.dataset.layer = String(layer);
        column.append(more);
      }
      this.stage.append(column);
      return { column, units, buttons, labels, more };
    });
    this.images = this.columns.map((c, layer) => {
      const side = layer === this.layers - 1 ? this.view.scene.resolution : sc.resolution;
      return new ImageData(side, side);
    });
    this.points = points;
    this.labelledAt = null;
    this.place();
  }

  // Put each column's units in their order, hide the folded ones, name the fold's button.
  place() {
    if (!this.columns || !this.order) return;
    this.columns.forEach(({ units, buttons, labels, more }, layer) => {
      const order = this.order[layer], unfolded = this.unfolded.has(layer);
      const shown = new Set(shownUnits(order, unfolded));
      units.classList.toggle("unfolded", unfolded && order.length > FOLD + 1);
      units.style.setProperty("--rows", String(Math.min(PER_COLUMN, order.length)));
      units.replaceChildren(...order.flatMap((unit) => (labels ? [labels[unit], buttons[unit]] : [buttons[unit]])));
      for (const unit of order) buttons[unit].hidden = !shown.has(unit);
      if (more) {
        more.textContent = unfolded ? `Show the ${FOLD} strongest` : `Show all ${order.length} (${order.length - FOLD} more)`;
        more.setAttribute("aria-expanded", String(unfolded));
        more.setAttribute("aria-label", unfolded
          ? `${layerName(layer, this.layers)}: show only the ${FOLD} units with the strongest outgoing weights`
          : `${layerName(layer, this.layers)}: show all ${order.length} units (${order.length - FOLD} more)`);
      }
    });
    this.rove();
    this.layoutKey = null;          // the edges follow the units
    this.dirty = true;
  }

  // The units each column shows, in their order on screen.
  shownButtons() {
    return this.columns.map(({ buttons }, layer) => this.order[layer].map((u) => buttons[u]).filter((b) => !b.hidden));
  }

  // Make `button` (or, when it is folded away or gone, the first input) the network's one Tab stop.
  rove(button = this.tabStop) {
    const all = this.columns.flatMap((c) => c.buttons);
    const stop = button && all.includes(button) && !button.hidden ? button : this.shownButtons()[0][0];
    for (const b of all) b.tabIndex = b === stop ? 0 : -1;
    this.tabStop = stop;
  }

  // An arrow key, Home or End on a unit: focus the unit it leads to (rovingTarget).
  roam(event) {
    const from = event.target.closest && event.target.closest("button.unit");
    if (!from || !ROVING_KEYS.includes(event.key) || event.altKey || event.ctrlKey || event.metaKey) return;
    const shown = this.shownButtons();
    const layer = Number(from.dataset.layer);
    const target = rovingTarget(event.key, layer, shown[layer].indexOf(from), shown.map((c) => c.length));
    event.preventDefault();
    const button = shown[target[0]][target[1]];
    this.rove(button);
    button.focus();
  }

  toggleFold(layer) {
    if (this.unfolded.has(layer)) this.unfolded.delete(layer); else this.unfolded.add(layer);
    this.place();
    this.draw();
  }

  // The colours of the current theme: [negative, positive, background, text] as rgb.
  colours() {
    const v = this.view, c = this.scene.colours[v.dark ? "dark" : "light"];
    return [hexToRgb(c.negative), hexToRgb(c.positive), v.background, v.text];
  }

  // The value of `unit` of column `layer` at grid point `point`, and its range [low, high]:
  // input and hidden units from the maps, the output from the boundary's grid (P, 0..1).
  range(layer, unit) {
    const sc = this.scene, d = this.data;
    if (layer === 0) return [sc.inputRange[unit], sc.inputRange[sc.widths[0] + unit]];
    if (layer === this.layers - 1) return [0, 1];
    const index = this.hiddenIndex(layer, unit);
    return [d.range[index], d.range[d.hidden + index]];
  }

  hiddenIndex(layer, unit) {
    return this.scene.widths.slice(1, layer).reduce((a, b) => a + b, 0) + unit;
  }

  value(layer, unit, point) {
    const sc = this.scene, d = this.data;
    if (layer === 0) return unitValue(sc.inputMaps, sc.inputRange, sc.widths[0], unit, point, this.points);
    if (layer === this.layers - 1) return this.view.frame.grid[point] / 255;
    return unitValue(d.maps, d.range, d.hidden, this.hiddenIndex(layer, unit), point, this.points);
  }

  // Paint one unit's map into `image` (rows = y, row 0 at the bottom).
  paint(layer, unit, image) {
    const side = image.width, [negative, positive, background] = this.colours();
    if (layer === this.layers - 1) {
      // The output is the boundary's own picture, in its shades.
      const grid = this.view.frame.grid, shades = this.view.shades;
      if (!shades) return;
      for (let r = 0; r < side; r++) {
        for (let c = 0; c < side; c++) {
          const v = 3 * grid[r * side + c], i = ((side - 1 - r) * side + c) * 4;
          image.data[i] = shades[v]; image.data[i + 1] = shades[v + 1]; image.data[i + 2] = shades[v + 2];
          image.data[i + 3] = 255;
        }
      }
      return;
    }
    const [low, high] = this.range(layer, unit), sc = this.scene, input = layer === 0;
    const offset = (input ? unit : this.hiddenIndex(layer, unit)) * side * side;
    paintMap(image.data, input ? sc.inputMaps : this.data.maps, offset, side, low, high, negative, positive, background);
  }

  // What a unit's text needs.
  unitFacts(layer, unit) {
    const sc = this.scene, d = this.data, [low, high] = this.range(layer, unit);
    return { layer, unit, layers: this.layers, inputNames: sc.input_names, inputWords: sc.input_words, activation: sc.activation,
             weights: layer ? d.weights[layer - 1] : null, width: layer ? sc.widths[layer - 1] : 0,
             bias: layer ? d.biases[layer - 1][unit] : 0, low, high, regression: !!(this.view.scene && this.view.scene.regression) };
  }

  // Draw what changed. A new picture, a new order or fold, a theme or a scale: every map, the
  // edges and (at most every LABEL_MS while a run plays) the names; a new size redraws the stage
  // by itself (the ResizeObserver). Otherwise (a frame without a picture, the view's redraw for
  // Pause) only the output, which is the boundary, and only when its grid is new.
  draw() {
    const v = this.view;
    if (!this.scene || !this.data || !v.frame) return;
    const started = performance.now();
    const s = v.scale;
    const key = [v.themeKey, s, this.data.serial].join("|");
    if (this.dirty || key !== this.drawnKey) {
      this.drawnKey = key;
      this.dirty = false;
      const unitPx = `${UNIT_PX * s}px`;
      if (this.unitPx !== unitPx) this.figure.style.setProperty("--unit-px", this.unitPx = unitPx);
      this.drawStage();
      const now = performance.now();
      if (relabelNow(this.labelledAt, now, !!v.frame.playing)) {
        this.labelledAt = now;
        this.columns.forEach(({ buttons }, layer) => {
          for (const button of buttons) {
            const name = unitText(this.unitFacts(layer, Number(button.dataset.unit)));
            if (button.getAttribute("aria-label") !== name) button.setAttribute("aria-label", name);
          }
        });
      }
      this.drawLegend();
      this.draws += 1;
      v.root.dataset.networkDraws = String(this.draws);
      v.root.dataset.networkSerial = String(this.data.serial);
      this.gridDrawn = null;
    }
    if (v.frame.grid !== this.gridDrawn) {      // the output: the boundary's picture, every frame
      this.gridDrawn = v.frame.grid;
      const layer = this.layers - 1, image = this.images[layer];
      this.paint(layer, 0, image);
      this.columns[layer].buttons[0].firstChild.getContext("2d").putImageData(image, 0, 0);
    }
    if (this.zoomed) this.drawLarge();
    v.root.dataset.networkMs = (performance.now() - started).toFixed(1);
  }

  // The stage's canvas: the edges, then the maps of the units that show (the output's apart).
  // Every map is painted into one atlas first, which the canvas copies from unit by unit.
  drawStage() {
    if (!this.drawEdges()) return;
    const sc = this.scene, side = sc.resolution, shown = [];
    this.columns.forEach(({ buttons }, layer) => {
      if (layer === this.layers - 1) return;
      for (const button of buttons) if (!button.hidden) shown.push([layer, Number(button.dataset.unit)]);
    });
    if (!shown.length) return;
    if (!this.atlas || this.atlas.height !== side * shown.length) {
      this.atlas = document.createElement("canvas");
      this.atlas.width = side; this.atlas.height = side * shown.length;
      this.atlasImage = new ImageData(side, side * shown.length);
    }
    const [negative, positive, background] = this.colours();
    shown.forEach(([layer, unit], k) => {
      const [low, high] = this.range(layer, unit), input = layer === 0;
      const offset = (input ? unit : this.hiddenIndex(layer, unit)) * side * side;
      paintMap(this.atlasImage.data.subarray(k * side * side * 4), input ? sc.inputMaps : this.data.maps,
               offset, side, low, high, negative, positive, background);
    });
    this.atlas.getContext("2d").putImageData(this.atlasImage, 0, 0);
    const ctx = this.edges.getContext("2d"), inset = 1;     // inside the button's 1 px border
    ctx.imageSmoothingEnabled = true;
    shown.forEach(([layer, unit], k) => {
      const a = this.anchors[layer][unit];
      ctx.drawImage(this.atlas, 0, k * side, side, side, a.left + inset, a.top + inset,
                    a.right - a.left - 2 * inset, a.bottom - a.top - 2 * inset);
    });
  }

  // The edges between the units that show, one path per sign and width: a few strokes however
  // many edges. Their places are read from the layout only when it may have moved (a size, an
  // order, a fold). False: nothing laid out yet.
  drawEdges() {
    const v = this.view, [width, height] = this.stageSize;
    if (!width || !height) return false;
    const layoutKey = [width, height, v.scale, this.order.map((o) => o.join()).join("/"),
                       [...this.unfolded].join()].join("|");
    if (layoutKey !== this.layoutKey) {
      const box = this.stage.getBoundingClientRect();
      this.stageSize = [this.stage.scrollWidth, this.stage.scrollHeight];   // an unfolded layer may widen it
      this.layoutKey = [...this.stageSize, ...layoutKey.split("|").slice(2)].join("|");
      this.anchors = this.columns.map(({ buttons }) => buttons.map((b) => {
        if (b.hidden) return null;
        const r = b.getBoundingClientRect();
        const left = r.left - box.left + this.stage.scrollLeft, top = r.top - box.top + this.stage.scrollTop;
        return { left, right: left + r.width, top, bottom: top + r.height, y: top + r.height / 2 };
      }));
    }
    const ctx = v.sizeCanvas(this.edges, ...this.stageSize);
    const [negative, positive] = this.colours();
    const widths = this.scene.widths, d = this.data;
    this.edgeList = [];
    const paths = [];
    for (let l = 1; l < widths.length; l++) {
      const weights = d.weights[l - 1], inWidth = widths[l - 1], scale = d.scales[l - 1];
      for (let to = 0; to < widths[l]; to++) {
        const b = this.anchors[l][to];
        if (!b) continue;
        for (let from = 0; from < inWidth; from++) {
          const a = this.anchors[l - 1][from];
          if (!a) continue;
          const weight = weights[to * inWidth + from];
          const bucket = widthBucket(weight, scale) + (weight < 0 ? EDGE_WIDTHS : 0);
          const edge = { x0: a.right, y0: a.y, x1: b.left, y1: b.y, layer: l, from, to, weight };
          (paths[bucket] ??= []).push(edge);
          this.edgeList.push(edge);
        }
      }
    }
    const s = v.scale;
    paths.forEach((edges, bucket) => {
      const negativeBucket = bucket >= EDGE_WIDTHS, { width: w, alpha } = bucketStroke(bucket % EDGE_WIDTHS);
      ctx.strokeStyle = css(negativeBucket ? negative : positive, alpha);
      ctx.lineWidth = w * s;
      ctx.setLineDash(negativeBucket ? [4 * s, 3 * s] : []);
      ctx.beginPath();
      for (const e of edges) { ctx.moveTo(e.x0, e.y0); ctx.lineTo(e.x1, e.y1); }
      ctx.stroke();
    });
    ctx.setLineDash([]);
    return true;
  }

  drawLegend() {
    const [negative, positive] = this.colours();
    const swatch = (colour, shape) => `<span class="swatch ${shape}" style="--c:${css(colour)}"></span>`;
    const html = [
      `<span>${swatch(positive, "line")}positive weight</span>`,
      `<span>${swatch(negative, "dashed")}negative weight</span>`,
      "<span>thicker: larger |weight|</span>",
      `<span>${swatch(negative, "square")}below 0 ${swatch(positive, "square")}above 0: a unit's output, each map in its own range</span>`,
    ].join("");
    if (this.legendHtml !== html) this.legend.innerHTML = this.legendHtml = html;
  }

  // The tooltip: a unit's bias and incoming weights, or an edge's weight.
  hover(event) {
    if (!this.data) return;
    const box = this.stage.getBoundingClientRect();
    const x = event.clientX - box.left, y = event.clientY - box.top;
    const unit = event.target.closest && event.target.closest("button.unit");
    let text = null;
    if (unit) {
      text = unitText(this.unitFacts(Number(unit.dataset.layer), Number(unit.dataset.unit)), TIP_WEIGHTS, true);
    } else {
      const edge = nearestEdge(this.edgeList || [], x, y, HIT_PX * this.view.scale);
      if (edge) text = edgeText(edge.layer, edge.from, edge.to, edge.weight, this.layers, this.scene.input_names);
    }
    if (text === null) { this.tooltip.hidden = true; return; }
    if (this.tooltip.textContent !== text) this.tooltip.textContent = text;
    this.tooltip.hidden = false;
    const left = Math.min(x + 14, Math.max(0, box.width - this.tooltip.offsetWidth));
    this.tooltip.style.left = `${left}px`;
    this.tooltip.style.top = `${this.stage.offsetTop + y + 14}px`;
  }

  destroy() {
    this.resize.disconnect();
  }

  // A unit's map large, with its text (null: close).
  showLarge(layer, unit) {
    const closing = layer === null && this.zoom.contains(this.zoom.getRootNode().activeElement);
    this.zoomed = layer === null ? null : { layer, unit };
    this.zoom.hidden = this.zoomed === null;
    if (this.zoomed) {
      this.drawLarge();
      this.zoom.querySelector(".zoom-close").focus({ preventScroll: true });
    } else if (closing && this.tabStop) {
      this.tabStop.focus({ preventScroll: true });      // back to the unit that opened it
    }
  }

  drawLarge() {
    const { layer, unit } = this.zoomed, image = this.images[layer];
    this.paint(layer, unit, image);
    const tile = this.zoomTile ??= document.createElement("canvas");
    tile.width = image.width; tile.height = image.height;
    tile.getContext("2d").putImageData(image, 0, 0);
    const px = ZOOM_PX * this.view.scale;
    const ctx = this.view.sizeCanvas(this.zoomCanvas, px, px);
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(tile, 0, 0, px, px);
    const text = unitText(this.unitFacts(layer, unit), TIP_WEIGHTS, true);
    if (this.zoomText.textContent !== text) this.zoomText.textContent = text;
    this.zoomCanvas.setAttribute("aria-label", `${unitName(layer, unit, this.layers, this.scene.input_names)}, its map large`);
  }

  // For tests: the decoded value of a unit (column `layer`, `unit` from 0) at grid row, column.
  valueAt(layer, unit, row, column) {
    return this.value(layer, unit, row * this.scene.resolution + column);
  }
}
