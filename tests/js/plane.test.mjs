// The plane's pure parts (static/live/plane.js): the contour (marching squares) and the colours.
import assert from "node:assert/strict";
import { test } from "node:test";

import { contourSegments, css, planeTitles, hexToRgb, mix, rgbOf, shadeColour, shadeTable } from "../../static/live/plane.js";

// Segments as sorted strings, so the test does not depend on their order.
const key = (segments) => segments.map((s) => s.map(([x, y]) => `${x},${y}`).sort().join(" ")).sort();

test("contourSegments: no segment where the grid does not cross the level", () => {
  assert.deepEqual(contourSegments([0, 0, 0, 0], 2, 2, 0.5), []);
  assert.deepEqual(contourSegments([1, 1, 1, 1, 1, 1], 2, 3, 0.5), []);
});

test("contourSegments: a straight crossing, at the interpolated place", () => {
  // Rows are y: row 0 is [0, 0], row 1 is [1, 1]; P = 0.25 a quarter of the way up.
  assert.deepEqual(key(contourSegments([0, 0, 1, 1], 2, 2, 0.25)), key([[[1, 0.25], [0, 0.25]]]));
  // Columns are x: the level between the columns.
  assert.deepEqual(key(contourSegments([0, 1, 0, 1], 2, 2, 0.5)), key([[[0.5, 0], [0.5, 1]]]));
});

test("contourSegments: one corner above the level cuts that corner off", () => {
  assert.deepEqual(key(contourSegments([1, 0, 0, 0], 2, 2, 0.5)), key([[[0, 0.5], [0.5, 0]]]));
});

test("contourSegments: a peak in a 3 by 3 grid is ringed by a closed diamond", () => {
  const segments = contourSegments([0, 0, 0, 0, 1, 0, 0, 0, 0], 3, 3, 0.5);
  assert.equal(segments.length, 4);
  assert.deepEqual(key(segments), key([
    [[0.5, 1], [1, 0.5]], [[1, 0.5], [1.5, 1]], [[1.5, 1], [1, 1.5]], [[1, 1.5], [0.5, 1]],
  ]));
});

test("contourSegments: a saddle is resolved by the cell's mean", () => {
  // Corners (0,0) and (1,1) above: the mean 0.6 above too, so the two high corners are joined.
  const high = contourSegments([1, 0, 0.4, 1], 2, 2, 0.5);  // nodes in row order: v0, v1, v3, v2
  assert.equal(high.length, 2);
  // The mean 0.45 below: each high corner is cut off on its own.
  const low = contourSegments([1, 0, 0, 0.8], 2, 2, 0.5);   // v0 = 1, v1 = 0, v3 = 0, v2 = 0.8
  assert.equal(low.length, 2);
  assert.deepEqual(key(low), key([[[0, 0.5], [0.5, 0]], [[0.625, 1], [1, 0.625]]]));
  assert.notDeepEqual(key(high), key(low));
});

test("colour helpers: hexToRgb, rgbOf, mix, css", () => {
  assert.deepEqual(hexToRgb("#ff8000"), [255, 128, 0]);
  assert.deepEqual(rgbOf("rgb(1, 2, 3)", null), [1, 2, 3]);
  assert.deepEqual(rgbOf("rgba(10, 20, 30, 0.5)", null), [10, 20, 30]);
  assert.deepEqual(rgbOf("#0a141e", null), [10, 20, 30]);
  assert.deepEqual(rgbOf("", [9, 9, 9]), [9, 9, 9]);
  assert.deepEqual(mix([0, 100, 200], [100, 100, 0], 0.25), [25, 100, 150]);
  assert.equal(css([1.4, 2.6, 3], 0.5), "rgba(1,3,3,0.5)");
  assert.equal(css([255, 0, 0]), "rgba(255,0,0,1)");
});

const low = [0, 0, 255], middle = [255, 255, 255], high = [255, 128, 0], base = [20, 20, 20];

test("colour mapping: P = 0 is the low colour, 0.5 the middle, 1 the high one", () => {
  assert.deepEqual(shadeColour(0, low, middle, high, base, 1), low);
  assert.deepEqual(shadeColour(0.5, low, middle, high, base, 1), middle);
  assert.deepEqual(shadeColour(1, low, middle, high, base, 1), high);
  assert.deepEqual(shadeColour(0.25, low, middle, high, base, 1), [127.5, 127.5, 255]);
});

test("colour mapping: laid over the background with the scene's opacity", () => {
  assert.deepEqual(shadeColour(1, low, middle, high, base, 0), base);
  assert.deepEqual(shadeColour(0, low, middle, high, base, 0.5), [10, 10, 137.5]);
});

test("shadeTable: the colour of each uint8 value, rounded, 255 being P = 1", () => {
  const table = shadeTable(low, middle, high, base, 0.85);
  assert.equal(table.length, 256 * 3);
  const at = (v) => [...table.subarray(3 * v, 3 * v + 3)];
  assert.deepEqual(at(0), shadeColour(0, low, middle, high, base, 0.85).map(Math.round));
  assert.deepEqual(at(255), shadeColour(1, low, middle, high, base, 0.85).map(Math.round));
  assert.deepEqual(at(0), [3, 3, 220]);
  // 127.5 of 255 is P = 0.5: the two values beside it are next to the middle colour.
  const mid = shadeColour(0.5, low, middle, high, base, 0.85);
  for (const v of [127, 128]) at(v).forEach((c, i) => assert.ok(Math.abs(c - mid[i]) <= 2, `${v}: ${at(v)}`));
});

test("shadeTable, discrete: each value takes its predicted class's full shade, split at P = 0.5", () => {
  const table = shadeTable(low, middle, high, base, 0.85, true);
  const at = (v) => [...table.subarray(3 * v, 3 * v + 3)];
  const class0 = shadeColour(0, low, middle, high, base, 0.85).map(Math.round);
  const class1 = shadeColour(1, low, middle, high, base, 0.85).map(Math.round);
  for (const v of [0, 64, 127]) assert.deepEqual(at(v), class0, `${v}`);
  for (const v of [128, 200, 255]) assert.deepEqual(at(v), class1, `${v}`);
});

test("planeTitles: the solid line is named only when the contour found one", () => {
  assert.match(planeTitles(3, true, false)[0], /^Epoch 3: the solid line is the decision boundary/);
  const none = planeTitles(0, false, true);
  assert.ok(none.every((title) => !title.includes("solid line")), none);
  assert.match(none[0], /every point is class 1 \(P > 0\.5\)/);
  assert.match(planeTitles(0, false, false)[0], /every point is class 0 \(P < 0\.5\)/);
  assert.equal(none.at(-1), "Epoch 0");
});

test("planeTitles: a grid that never crosses P = 0.5 gives no segment, so no line is claimed", () => {
  const grid = new Uint8Array(9).fill(200);          // P about 0.78 everywhere
  const segments = contourSegments(grid, 3, 3, 127.5);
  assert.deepEqual(segments, []);
  assert.ok(!planeTitles(0, segments.length > 0, grid[0] > 127.5)[0].includes("solid line"));
});
