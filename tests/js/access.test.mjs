// The live view in words (static/live/access.js): announcements, throttles, names, the keyboard
// cursor and its read-out.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ANNOUNCE_EVERY, CURSOR_CELLS, CURSOR_JUMP, LABEL_MS, REDUCED_MOTION_MS,
  announcement, cellBounds, cellOf, cellReadout, classOneShare, curveLabels, drawDelay, latest,
  moveCursor, planeDescription, planeLabel, progressText, relabelNow, startCursor,
} from "../../static/live/access.js";

const METRICS = { epoch: 20, train_loss: 0.41234, val_loss: 0.43, train_acc: 0.85, val_acc: 0.8375 };
const at = (epoch, playing, extra = {}) => ({ epoch, epochs: 100, playing, endNote: "", metrics: { ...METRICS, epoch }, ...extra });

// Feeds `frames` through announcement() in order; returns what each said (null: nothing).
function said(frames) {
  let memory = null;
  return frames.map((frame) => {
    const out = announcement(memory, frame);
    memory = out.memory;
    return out.text;
  });
}

test("latest: the last epoch's numbers, null before the first", () => {
  assert.equal(latest({ epoch: [], train_loss: [] }), null);
  assert.deepEqual(latest({ epoch: [1, 2], train_loss: [0.6, 0.5] }), { epoch: 2, train_loss: 0.5 });
});

test("progressText: the epoch and the four numbers, a loss to 3 places, an accuracy in %", () => {
  assert.equal(progressText(20, 100, METRICS),
               "Epoch 20 of 100: loss 0.412 train, 0.430 validation; accuracy 85.0% train, 83.8% validation.");
  assert.equal(progressText(0, 100, null), "Epoch 0 of 100.");
  assert.match(progressText(3, 100, { ...METRICS, train_loss: NaN }), /loss not a number train/);
});

test("announcement: the page as it opens says nothing", () => {
  assert.deepEqual(said([at(0, false)]), [null]);
  assert.deepEqual(said([at(100, false, { endNote: "Finished: 100 of 100 epochs." })]), [null]);
});

test("announcement: a playing run speaks each time it passes a multiple of ANNOUNCE_EVERY epochs", () => {
  assert.equal(ANNOUNCE_EVERY, 10);
  const texts = said([at(0, false), at(0, true), at(4, true), at(9, true), at(10, true), at(11, true),
                      at(19, true), at(23, true), at(29, true)]);
  assert.deepEqual(texts.map((t) => t && t.slice(0, 12)), [null, null, null, null, "Epoch 10 of ", null, null, "Epoch 23 of ", null]);
  assert.match(texts[4], /^Epoch 10 of 100: loss 0\.412 train/);
});

test("announcement: a pause says where it stopped, once", () => {
  const texts = said([at(0, false), at(5, true), at(7, false), at(7, false)]);
  assert.equal(texts[2], "Paused at epoch 7 of 100: loss 0.412 train, 0.430 validation; accuracy 85.0% train, 83.8% validation.");
  assert.equal(texts[3], null, "the page's own frame after the pause repeats nothing");
});

test("announcement: the end gives the numbers and the page's note of what to do next, once", () => {
  const note = "Finished: 100 of 100 epochs. Raise Epochs to carry on with the same run, or Reset to watch it again.";
  const texts = said([at(95, true), at(100, false, { endNote: note }), at(100, false, { endNote: note })]);
  assert.equal(texts[1], `Epoch 100 of 100: loss 0.412 train, 0.430 validation; accuracy 85.0% train, 83.8% validation. ${note}`);
  assert.equal(texts[2], null);
  // An end the view learns of from a page frame (the run ended before it polled) is said too.
  assert.equal(said([at(3, false), at(100, false, { endNote: note })])[1].endsWith(note), true);
});

test("announcement: a run that goes back (Reset, a new run) says nothing", () => {
  assert.deepEqual(said([at(0, false), at(35, true), at(0, true), at(4, true)]).slice(2), [null, null]);
});

test("relabelNow: while playing at most once a LABEL_MS, otherwise at once", () => {
  assert.equal(relabelNow(null, 5, true), true);
  assert.equal(relabelNow(1000, 1000 + LABEL_MS - 1, true), false);
  assert.equal(relabelNow(1000, 1000 + LABEL_MS, true), true);
  assert.equal(relabelNow(1000, 1001, false), true, "a pause or the end is named at once");
});

test("drawDelay: only a playing run's frames under reduced motion wait for their step", () => {
  assert.equal(drawDelay(1000, 1100, false, true), 0);
  assert.equal(drawDelay(1000, 1100, true, false), 0);
  assert.equal(drawDelay(null, 1100, true, true), 0);
  assert.equal(drawDelay(1000, 1100, true, true), REDUCED_MOTION_MS - 100);
  assert.equal(drawDelay(1000, 1000 + REDUCED_MOTION_MS + 5, true, true), 0);
});

test("planeLabel: the epoch, the validation accuracy and which class the model predicts where", () => {
  assert.equal(planeLabel(20, 100, METRICS, 0.48),
               "Decision boundary at epoch 20 of 100, validation accuracy 83.8%: the model predicts class 1 on 48% of the plane and class 0 on the rest.");
  assert.match(planeLabel(0, 100, null, 0), /^Decision boundary at epoch 0 of 100: the model predicts class 0 everywhere/);
  assert.match(planeLabel(0, 100, null, 1), /class 1 everywhere on the plane \(no decision boundary\)/);
});

test("classOneShare: the share of grid nodes above P = 0.5", () => {
  assert.equal(classOneShare(Uint8Array.from([0, 127, 128, 255])), 0.5);
  assert.equal(classOneShare(new Uint8Array(0)), 0);
});

test("planeDescription: each split's count per class, the shapes and colours, and the keys", () => {
  const groups = [{ name: "train", label: "train", fill: "filled" }, { name: "val", label: "validation", fill: "open" }];
  const labels = { train: Uint8Array.from([0, 1, 1]), val: Uint8Array.from([0]) };
  const text = planeDescription(groups, (name) => labels[name], ["circle", "square"], ["blue", "orange"]);
  assert.match(text, /^Points: train \(filled\): 1 of class 0, 2 of class 1; validation \(open\): 1 of class 0, 0 of class 1\. /);
  assert.match(text, /Class 0 is drawn as blue circles, class 1 as orange squares\./);
  assert.match(text, /Arrow keys move a cursor/);
});

test("curveLabels: the latest losses and accuracies, or that no epoch is trained yet", () => {
  assert.deepEqual(curveLabels(METRICS, 0.9012), [
    "Loss per epoch, at epoch 20: train 0.412, validation 0.430",
    "Accuracy per epoch, at epoch 20: train 85.0%, validation 83.8%; best possible test accuracy 90.1%",
  ]);
  assert.match(curveLabels(null, 0.9)[0], /no epoch trained yet/);
});

test("moveCursor: arrows move one cell, Shift CURSOR_JUMP, clamped to the plane; other keys are the page's", () => {
  const middle = startCursor();
  assert.deepEqual(middle, { col: CURSOR_CELLS / 2, row: CURSOR_CELLS / 2 });
  assert.deepEqual(moveCursor(middle, "ArrowRight", false), { col: middle.col + 1, row: middle.row });
  assert.deepEqual(moveCursor(middle, "ArrowUp", false), { col: middle.col, row: middle.row + 1 }, "up is up the plane");
  assert.deepEqual(moveCursor(middle, "ArrowDown", true), { col: middle.col, row: middle.row - CURSOR_JUMP });
  assert.deepEqual(moveCursor({ col: 1, row: 0 }, "ArrowLeft", true), { col: 0, row: 0 });
  assert.deepEqual(moveCursor({ col: 15, row: 15 }, "ArrowUp", false), { col: 15, row: 15 });
  assert.deepEqual(moveCursor({ col: 5, row: 3 }, "End", false), { col: CURSOR_CELLS - 1, row: 3 });
  assert.deepEqual(moveCursor({ col: 5, row: 3 }, "Home", false), { col: 0, row: 3 });
  for (const key of ["Tab", "Enter", " ", "k", "Escape"]) assert.equal(moveCursor(middle, key, false), null, key);
});

test("cellOf and cellBounds: the cell a place is in, and back", () => {
  const extent = [-2, 2, -1, 3];
  assert.deepEqual(cellOf(-2, -1, extent, 4), { col: 0, row: 0 });
  assert.deepEqual(cellOf(2, 3, extent, 4), { col: 3, row: 3 }, "the far edges belong to the last cell");
  assert.deepEqual(cellOf(0.1, 1.2, extent, 4), { col: 2, row: 2 });
  assert.deepEqual(cellBounds({ col: 2, row: 2 }, extent, 4), [0, 1, 1, 2]);
});

test("cellReadout: the place, the model's P at the cell's centre and the points in it", () => {
  // A 3 by 3 grid over [0, 2] x [0, 2]: P rises with x (0, 0.5, 1 of 255).
  const grid = Uint8Array.from([0, 128, 255, 0, 128, 255, 0, 128, 255]);
  const points = [
    { label: "train", cls: 1, x: 1.9, y: 1.9, p: 0.98 },
    { label: "validation", cls: 0, x: 1.6, y: 1.2, p: 0.7 },
    { label: "train", cls: 0, x: 0.2, y: 0.2, p: 0.02 },
  ];
  const lines = cellReadout({ col: 1, row: 1 }, [0, 2, 0, 2], grid, 3, points, 2);
  assert.equal(lines[0], "x\u2081 = 1.50, x\u2082 = 1.50 (column 2 of 2, row 2 from the bottom)");
  assert.equal(lines[1], "model's P(class 1) \u2248 100%: class 1 side");
  assert.equal(lines[2], "2 points here, 1 of class 0 and 1 of class 1: train class 1 (P \u2248 98%), validation class 0 (P \u2248 70%)");
  assert.equal(cellReadout({ col: 0, row: 0 }, [0, 2, 0, 2], grid, 3, points, 2)[2], "1 point here: train class 0 (P \u2248 2%)");
  assert.equal(cellReadout({ col: 0, row: 1 }, [0, 2, 0, 2], grid, 3, points, 2)[2], "no points here");
  const crowd = Array.from({ length: 7 }, () => ({ label: "test", cls: 0, x: 0.1, y: 0.1, p: 0.1 }));
  assert.match(cellReadout({ col: 0, row: 0 }, [0, 2, 0, 2], grid, 3, crowd, 2)[2], /^7 points here, 7 of class 0 and 0 of class 1: .*, and 3 more$/);
});
