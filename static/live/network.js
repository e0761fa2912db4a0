// The moons trainer's network view: the inputs, each hidden layer and the output as columns of
// units, every unit a small map of its activation over the plane (computed on the server with
// PyTorch forward hooks: workbench/moons_trainer/network.py), the weights drawn as edges coloured by
// their sign (negative also dashed) and sized by their magnitude.
//
// `NetworkPane` draws it into the live view (view.js), which owns it, and reads the view's
// frame, theme and scale. Its parts: the numbers and words of the units (network_units.js), the
// pixels and edges (network_paint.js), the columns of unit buttons (network_columns.js), all
// tested in tests/js/.
//
// Wide layers stay legible: a layer shows its FOLD units with the largest outgoing weights first
// (the ones the next layer listens to most) and a button shows the rest; every unit is in the
// page either way, as a button named "hidden layer 1, unit 3: ..." with its bias and strongest
// weights, so a screen reader reads the network as a list. The order is worked out again only
// when the page sends a frame (Play, Pause, Step, Reset), never while a run plays: a unit stays
// where the learner is looking.

import { relabelNow } from "./access.js";
import { buildColumns, placeUnits, roam, rove, toggleFold } from "./network_columns.js";
import { EDGE_WIDTHS, HIT_PX, bucketStroke, layEdges, nearestEdge, paintMap } from "./network_paint.js";
import {
  TIP_WEIGHTS, decodeWeights, edgeText, splitBiases, unitName, unitOrder, unitText, unitValue,
} from "./network_units.js";
import { css, hexToRgb } from "./plane.js";

export const UNIT_PX = 26;            // a unit's map on screen, at scale 1
export const ZOOM_PX = 200;           // a clicked unit's map, large

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
      if (more) toggleFold(this, Number(more.dataset.layer));
    });
    this.stage.addEventListener("keydown", (e) => roam(this, e));
    // A unit focused another way (a click, the large map closing) becomes the Tab stop.
    this.stage.addEventListener("focusin", (e) => {
      const unit = e.target.closest && e.target.closest("button.unit");
      if (unit && unit !== this.tabStop) rove(this, unit);
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
    buildColumns(this);
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
    if (!same) placeUnits(this);
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
    const { edges, paths } = layEdges(this.anchors, this.scene.widths, this.data.weights, this.data.scales);
    this.edgeList = edges;
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
