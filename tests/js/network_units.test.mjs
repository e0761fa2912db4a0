// The network view's units (static/live/network_units.js): decoding the frame's uint8 arrays, the
// units' order and fold, the arrow keys' way through them, their names and read-outs.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  FOLD, decodeWeights, edgeText, layerName, rovingTarget, shownUnits, splitBiases, strongestWeights, unitName,
  unitOrder, unitText, unitValue,
} from "../../static/live/network_units.js";

const INPUTS = ["x\u2081", "x\u2082"];

test("decodeWeights: codes around zero times each layer's scale, row-major per Linear", () => {
  // widths 2 -> 2 -> 1: a 2x2 layer (scale 2) then a 1x2 layer (scale 0.5); zero is code 127.
  const codes = Uint8Array.from([127, 254, 0, 190, 254, 127]);
  const [first, second] = decodeWeights(codes, [2, 2, 1], [2, 0.5], 127);
  assert.deepEqual([...first], [0, 2, -2, 2 * 63 / 127].map(Math.fround));
  assert.deepEqual([...second], [0.5, 0]);
});

test("splitBiases: one slice per Linear layer", () => {
  const all = Float32Array.from([1, 2, 3, 4]);
  const [a, b] = splitBiases(all, [2, 3, 1]);
  assert.deepEqual([...a], [1, 2, 3]);
  assert.deepEqual([...b], [4]);
});

test("unitValue: a unit's code in its own range, units one after the other", () => {
  // Two units of 3 points: unit 0 from -1 to 1, unit 1 from 0 to 10.
  const codes = Uint8Array.from([0, 255, 51, 0, 255, 102]);
  const range = Float32Array.from([-1, 0, 1, 10]);         // lows, then highs
  assert.equal(unitValue(codes, range, 2, 0, 0, 3), -1);
  assert.equal(unitValue(codes, range, 2, 0, 1, 3), 1);
  assert.equal(unitValue(codes, range, 2, 1, 1, 3), 10);
  assert.ok(Math.abs(unitValue(codes, range, 2, 1, 2, 3) - 4) < 1e-6);
});

test("unitOrder: the units the next layer listens to most come first, ties by index", () => {
  // Layer of 3 units into 2: column sums of |w| are 1.5, 0.2, 1.5.
  const outgoing = [1, 0.1, -0.5, -0.5, 0.1, 1];
  assert.deepEqual(unitOrder(outgoing, 3, 2), [0, 2, 1]);
});

test("shownUnits: a wide layer shows FOLD units until unfolded; one more than FOLD is not folded", () => {
  const wide = [...Array(64).keys()];
  assert.equal(shownUnits(wide, false).length, FOLD);
  assert.equal(shownUnits(wide, true).length, 64);
  const narrow = [...Array(FOLD + 1).keys()];
  assert.equal(shownUnits(narrow, false).length, FOLD + 1);
});

test("names: inputs, hidden units counted from 1, the output", () => {
  assert.equal(unitName(0, 1, 4, INPUTS), "input x\u2082");
  assert.equal(unitName(1, 2, 4, INPUTS), "hidden layer 1, unit 3");
  assert.equal(unitName(3, 0, 4, INPUTS), "output");
  assert.equal(layerName(2, 4), "hidden layer 2");
});

test("strongestWeights: by magnitude, whatever the sign", () => {
  const weights = [0.1, -0.9, 0.5, /* unit 1: */ 0, 0, 0];
  assert.deepEqual(strongestWeights(weights, 3, 0, 2), [{ from: 1, weight: -0.9 }, { from: 2, weight: 0.5 }]);
});

test("unitText: the accessible name carries the bias, the strongest weights and the range", () => {
  const facts = { layer: 2, unit: 0, layers: 4, inputNames: INPUTS, activation: "ReLU",
                  weights: [0.25, -1.5, 0.75, 0.1], width: 4, bias: -0.125, low: 0, high: 3.5 };
  assert.equal(unitText(facts),
               "hidden layer 2, unit 1: bias \u22120.13; strongest 3 of 4 incoming weights " +
               "(from hidden layer 1, unit 2 \u22121.50, unit 3 +0.75, unit 1 +0.25); " +
               "ReLU output from 0.00 to 3.50 over the plane.");
  const first = { ...facts, layer: 1, weights: [0.5, -0.25], width: 2 };
  assert.match(unitText(first), /^hidden layer 1, unit 1: bias \u22120\.13; incoming weights \(from x\u2081 \+0\.50, x\u2082 \u22120\.25\)/);
  assert.match(unitText({ ...facts, layer: 0, unit: 0, low: -1.5, high: 1.5 }), /^input x\u2081: the coordinate/);
  // Input features other than the coordinates: computed from them, read as such.
  const features = ["x\u2081", "sin x\u2081", "x\u2081x\u2082"];
  const words = ["the coordinate x\u2081, standardised", "sin x\u2081 of the standardised coordinates",
                 "x\u2081x\u2082 of the standardised coordinates"];
  assert.equal(unitText({ ...facts, layer: 0, unit: 1, inputNames: features, inputWords: words,
                          low: -0.84, high: 0.84 }),
               "input sin x\u2081: sin x\u2081 of the standardised coordinates, from \u22120.84 to 0.84 over the plane.");
  assert.match(unitText({ ...facts, layer: 3 }), /^output: bias .*P\(class 1\) over the plane/);
  const output = unitText({ ...facts, layer: 3, regression: true });
  assert.match(output, /^output: bias .*the output value over the plane, as the plane shades it\.$/);
  assert.doesNotMatch(output, /P\(class 1\)|boundary/);
  assert.equal(unitText(facts, 1, true).split("\n").length, 4);
});

test("edgeText: where a weight goes from and to", () => {
  assert.equal(edgeText(1, 0, 4, -0.5, 4, INPUTS), "weight from input x\u2081 to hidden layer 1, unit 5: \u22120.50");
  assert.equal(edgeText(3, 2, 0, 1.25, 4, INPUTS), "weight from hidden layer 2, unit 3 to output: +1.25");
});

test("rovingTarget: arrows move along a column and across at the same height, clamped", () => {
  const shown = [2, 12, 12, 1];         // inputs, two folded hidden layers, the output
  assert.deepEqual(rovingTarget("ArrowDown", 1, 3, shown), [1, 4]);
  assert.deepEqual(rovingTarget("ArrowUp", 1, 3, shown), [1, 2]);
  assert.deepEqual(rovingTarget("ArrowUp", 1, 0, shown), [1, 0]);
  assert.deepEqual(rovingTarget("ArrowDown", 1, 11, shown), [1, 11]);
  assert.deepEqual(rovingTarget("ArrowRight", 1, 5, shown), [2, 5]);
  assert.deepEqual(rovingTarget("ArrowRight", 2, 5, shown), [3, 0]);     // the output's only unit
  assert.deepEqual(rovingTarget("ArrowRight", 3, 0, shown), [3, 0]);
  assert.deepEqual(rovingTarget("ArrowLeft", 1, 7, shown), [0, 1]);      // the inputs' last
  assert.deepEqual(rovingTarget("ArrowLeft", 0, 1, shown), [0, 1]);
  assert.deepEqual(rovingTarget("Home", 2, 6, shown), [2, 0]);
  assert.deepEqual(rovingTarget("End", 2, 6, shown), [2, 11]);
  assert.equal(rovingTarget("Enter", 2, 6, shown), null);
});
