// The live view of a regression run (datasets plane and multigauss): the output value read from
// the frame's uint8, the plane's title, name and description, the curves' names and the cursor.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  announcement, cellReadout, curveLabels, metricsText, outputRange, outputText, outputValue, r2Text,
  regressionDescription, regressionPlaneLabel,
} from "../../static/live/access.js";
import { barLabel, regressionTitles } from "../../static/live/plane.js";

const METRICS = { epoch: 4, train_loss: 0.0312, val_loss: 0.04567, train_acc: 0.8123, val_acc: -0.25 };

test("outputValue inverts the server's (clip(v, -1, 1) + 1) / 2 * 255", () => {
  for (const v of [-1, -0.5, 0, 0.3, 1]) {
    const byte = Math.round((v + 1) / 2 * 255);
    assert.ok(Math.abs(outputValue(byte) - v) <= 1 / 255, `${v}`);
  }
  assert.equal(outputValue(0), -1);
  assert.equal(outputValue(255), 1);
});

test("outputText says where a value was clipped at the ends", () => {
  assert.equal(outputText(255), "1 or more");
  assert.equal(outputText(0), "\u22121 or less");
  assert.equal(outputText(64), `\u2248 ${outputValue(64).toFixed(2).replace("-", "\u2212")}`);
  assert.match(outputText(64), /^\u2248 \u22120\.50$/);
});

test("outputRange is the lowest and highest value on the grid", () => {
  assert.deepEqual(outputRange(new Uint8Array([10, 255, 128, 40])), [outputValue(10), 1]);
  assert.ok(outputRange(new Uint8Array([])).every(Number.isNaN));
});

test("the metrics read as MSE and R², not a percentage", () => {
  const text = metricsText(METRICS, true);
  assert.equal(text, "MSE 0.031 train, 0.046 validation; R\u00b2 0.812 train, \u22120.250 validation");
  assert.doesNotMatch(text, /%|accuracy/);
  assert.match(metricsText(METRICS), /accuracy 81\.2% train/);    // a classification run as before
  assert.equal(r2Text(NaN), "undefined");
});

test("a regression run's announcements say MSE and R²", () => {
  const first = announcement(null, { epoch: 3, epochs: 20, playing: true, endNote: "", metrics: METRICS, regression: true });
  const paused = announcement(first.memory, { epoch: 4, epochs: 20, playing: false, endNote: "", metrics: METRICS, regression: true });
  assert.match(paused.text, /^Paused at epoch 4 of 20: MSE 0\.031 train/);
  assert.doesNotMatch(paused.text, /accuracy/);
});

test("the plane's name gives the output's range and the validation R², and no boundary", () => {
  const grid = new Uint8Array([0, 100, 200]);
  const label = regressionPlaneLabel(4, 20, METRICS, grid);
  const f = (v) => v.toFixed(2).replace("-", "\u2212");
  assert.equal(label, `Model output value at epoch 4 of 20, validation R\u00b2 \u22120.250: over the plane it ` +
                      `runs from ${f(outputValue(0))} to ${f(outputValue(200))} (shown clipped to \u22121 to 1).`);
  assert.doesNotMatch(label, /boundary|class/);
  assert.doesNotMatch(regressionPlaneLabel(0, 20, null, grid), /R\u00b2/);
});

test("the title names the output value, never a decision boundary", () => {
  const titles = regressionTitles(7, ["blue", "orange"]);
  assert.equal(titles[0], "Epoch 7: the shading is the model's output value, from \u22121 (blue) to 1 (orange)");
  for (const t of titles) assert.doesNotMatch(t, /boundary|P =/);
  assert.equal(titles.at(-1), "Epoch 7");
  const discrete = regressionTitles(7, ["blue", "orange"], true);
  assert.equal(discrete[0], "Epoch 7: the shading is the sign of the model's output: orange at 0 or more, blue below");
});

test("the colour bar's labels run from -1 to 1 for regression", () => {
  assert.deepEqual([0, 0.25, 0.5, 0.75, 1].map((p) => barLabel(p, true)), ["\u22121", "\u22120.5", "0", "0.5", "1"]);
  assert.deepEqual([0, 0.5, 1].map((p) => barLabel(p, false)), ["0%", "50%", "100%"]);
});

test("the description counts each split's points by their target's sign", () => {
  const groups = [{ name: "train", fill: "filled", label: "train" }, { name: "val", fill: "open", label: "validation" }];
  const labels = { train: new Uint8Array([1, 0, 1, 1]), val: new Uint8Array([0, 0]) };
  const text = regressionDescription(groups, (n) => labels[n], ["circle", "square"], ["blue", "orange"]);
  assert.match(text, /train \(filled\): 3 with a target of 0 or more, 1 below 0; validation \(open\): 0 with a target of 0 or more, 2 below 0\./);
  assert.match(text, /target below 0 are drawn as blue circles, 0 or more as orange squares/);
  assert.doesNotMatch(text, /class/);
});

test("the curves' names: MSE and R², and the best possible R²", () => {
  const [loss, r2] = curveLabels(METRICS, 0.855, true);
  assert.equal(loss, "MSE loss per epoch, at epoch 4: train 0.031, validation 0.046");
  assert.equal(r2, "R\u00b2 per epoch, at epoch 4: train 0.812, validation \u22120.250; best possible test R\u00b2 0.855");
  assert.match(curveLabels(METRICS, null, true)[1], /best possible test R\u00b2 unknown$/);
  assert.deepEqual(curveLabels(null, null, true)[0], "MSE loss per epoch: no epoch trained yet");
});

test("the cursor reads the output value and the targets of the points under it", () => {
  const resolution = 3, extent = [-1, 1, -1, 1];
  const grid = new Uint8Array(9).fill(191);
  const points = [{ label: "train", cls: 1, x: 0.01, y: 0.01, byte: 255, target: 0.42 },
                  { label: "validation", cls: 0, x: 0.02, y: 0.02, byte: 0, target: -0.5 }];
  const lines = cellReadout({ col: 8, row: 8 }, extent, grid, resolution, points, 16, true);
  assert.equal(lines[1], `model's output ${outputText(191)}`);
  assert.equal(lines[2], "2 points here: train target 0.42 (output 1 or more), validation target \u22120.50 (output \u22121 or less)");
  assert.doesNotMatch(lines.join(" "), /class|P\(/);
  const empty = cellReadout({ col: 0, row: 0 }, extent, grid, resolution, points, 16, true);
  assert.equal(empty[2], "no points here");
});
