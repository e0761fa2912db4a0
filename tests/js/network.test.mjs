// The network view's pane (static/live/network.js's NetworkPane) on fake DOM elements
// (tests/js/fakes.mjs): a scene builds its columns, a frame's picture is decoded into values the
// tests and the tooltips read, and the units move into their order only on the page's frames.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement } from "./fakes.mjs";
import { NetworkPane } from "../../static/live/network.js";

globalThis.document = { createElement: (tag) => new FakeElement(tag) };
globalThis.ImageData = class {
  constructor(width, height) { this.width = width; this.height = height; this.data = new Uint8ClampedArray(width * height * 4); }
};
globalThis.ResizeObserver = class {
  observe(element) { this.observed = element; }
  disconnect() { this.disconnected = true; }
};

const SIDE = 2;                        // the maps' resolution: 2 x 2 points
const NETWORK = {
  widths: [2, 3, 1], activation: "ReLU", input_names: ["x\u2081", "x\u2082"], weight_zero: 127, resolution: SIDE,
  colours: { light: { negative: "#0000ff", positive: "#ff8000" }, dark: { negative: "#8888ff", positive: "#ffaa00" } },
};

function pane() {
  const view = { root: new FakeElement(), scene: { resolution: SIDE }, frame: null, scale: 1 };
  const figure = new FakeElement("figure");
  return { view, figure, network: new NetworkPane(view, figure) };
}

function scene(network = NETWORK) {
  // Input maps: x₁ from -1 to 1 (codes 0, 255, 0, 255), x₂ from -2 to 2.
  return [{ network, extent: [-3, 3, -3, 3] },
          { input_maps: Uint8Array.from([0, 255, 0, 255, 0, 0, 255, 255]), input_range: Float32Array.from([-1, -2, 1, 2]) }];
}

// A picture whose hidden unit 2 has the strongest outgoing weight, then unit 0, then unit 1.
function picture(outgoing = [127 + 64, 127 + 10, 0]) {
  return [{ serial: 7, epoch: 3, weight_scales: [1, 2] },
          { weights: Uint8Array.from([127, 254, 0, 127, 254, 254, ...outgoing]), biases: Float32Array.from([0.5, -0.25, 0, 1]),
            unit_maps: Uint8Array.from([0, 51, 102, 255, 0, 0, 0, 0, 255, 255, 255, 255]),
            unit_range: Float32Array.from([0, 0, -1, 5, 1, 1]) }];
}

test("a scene without a network hides the figure and keeps nothing", () => {
  const { figure, network } = pane();
  network.setScene({ extent: [-1, 1, -1, 1] }, {});
  assert.equal(figure.hidden, true);
  assert.equal(network.scene, null);
  network.update(...picture());                     // a picture without a scene: ignored
  assert.equal(network.data, null);
});

test("a scene with a network builds a column per layer and names the figure", () => {
  const { figure, network } = pane();
  network.setScene(...scene());
  assert.equal(figure.hidden, false);
  assert.equal(network.layers, 3);
  assert.equal(network.columns.length, 3);
  assert.match(network.title.textContent, /^The network, 2 \u2192 3 \u2192 1 \(ReLU\)/);
});

test("a picture is decoded: the values and ranges tests read, the frames counted on the root", () => {
  const { view, network } = pane();
  network.setScene(...scene());
  network.update(...picture(), true);
  assert.equal(view.root.dataset.networkFrames, "1");
  assert.equal(network.data.epoch, 3);
  // Hidden unit 0's map runs 0..5 over codes 0, 51, 102, 255: row 1, column 0 is point 2.
  assert.deepEqual(network.range(1, 0), [0, 5]);
  assert.ok(Math.abs(network.valueAt(1, 0, 1, 0) - 2) < 1e-6);
  assert.deepEqual(network.range(1, 2), [-1, 1]);
  assert.equal(network.valueAt(1, 2, 0, 1), 1);
  // The inputs from the scene's maps; the output is the boundary's grid.
  assert.deepEqual(network.range(0, 1), [-2, 2]);
  assert.equal(network.valueAt(0, 0, 0, 1), 1);
  assert.equal(network.valueAt(0, 1, 0, 1), -2);
  view.frame = { grid: Uint8Array.from([0, 51, 255, 0]) };
  assert.deepEqual(network.range(2, 0), [0, 1]);
  assert.equal(network.valueAt(2, 0, 1, 0), 1);
  // A unit's words read its decoded bias and incoming weights.
  const facts = network.unitFacts(1, 1);
  assert.equal(facts.bias, -0.25);
  assert.deepEqual([...facts.weights.slice(2, 4)], [-1, 0]);       // its row of the Linear into it
});

test("the units take their order from the page's frames, not from a playing run's", () => {
  const { network } = pane();
  network.setScene(...scene());
  network.update(...picture(), true);
  assert.deepEqual(network.order[1], [2, 0, 1]);
  const shownOrder = () => network.columns[1].units.children.map((b) => Number(b.dataset.unit));
  assert.deepEqual(shownOrder(), [2, 0, 1]);
  network.update(...picture([127 + 10, 127 + 64, 127]), false);     // a playing run's frame: unit 1 now strongest
  assert.deepEqual(shownOrder(), [2, 0, 1]);
  network.update(...picture([127 + 10, 127 + 64, 127]), true);      // the page's frame
  assert.deepEqual(shownOrder(), [1, 0, 2]);
  assert.equal(network.received, 3);
});

test("destroy lets go of the stage's size", () => {
  const { network } = pane();
  network.destroy();
  assert.equal(network.resize.disconnected, true);
});
