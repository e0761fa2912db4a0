// The pinned run's part of the curves (static/live/curves.js): what the axes' ranges read and
// what makes the curves redraw.
import assert from "node:assert/strict";
import { test } from "node:test";

import { curveValues, pinnedKey, pinnedWords } from "../../static/live/curves.js";

const run = (epochs, loss) => ({ epoch: epochs, train_loss: loss, val_loss: loss.map((v) => v + 0.1) });

test("the axes' values include the pinned run's, and drop what is not a number", () => {
  const now = run([1, 2], [0.5, 0.3]);
  const pinned = { label: "pinned: SGD", now_label: "now: AdamW", history: run([1, 2, 3], [0.9, NaN, 0.7]) };
  assert.deepEqual(curveValues(now, null, ["train_loss"]), [0.5, 0.3]);
  const both = curveValues(now, pinned, ["train_loss", "val_loss"]);
  assert.ok(both.includes(0.9) && both.includes(0.5), String(both));
  assert.ok(both.every(Number.isFinite), String(both));
  assert.equal(Math.max(...both), 1.0);
});

test("the curves redraw when the pinned run gains an epoch or is renamed, not otherwise", () => {
  const pinned = { label: "pinned: SGD", now_label: "now: AdamW", history: run([1], [0.9]) };
  const key = pinnedKey(pinned);
  assert.equal(pinnedKey(null), "");
  assert.notEqual(pinnedKey({ ...pinned, history: run([1, 2], [0.9, 0.8]) }), key);
  assert.notEqual(pinnedKey({ ...pinned, now_label: "now: RMSprop" }), key);
  assert.equal(pinnedKey({ ...pinned }), key);
});

test("a screen reader hears the pinned run's last epoch with the curves' names", () => {
  assert.deepEqual(pinnedWords(null), { loss: "", accuracy: "" });
  const history = { epoch: [1, 2], train_loss: [0.7, 0.61234], val_loss: [0.7, 0.5], train_acc: [0.5, 0.8], val_acc: [0.5, 0.755] };
  const words = pinnedWords({ label: "pinned: SGD", now_label: "now: AdamW", history });
  assert.equal(words.loss, "; pinned: SGD, at epoch 2: train 0.612, validation 0.500");
  assert.equal(words.accuracy, "; pinned: SGD, at epoch 2: train 80.0%, validation 75.5%");
});
