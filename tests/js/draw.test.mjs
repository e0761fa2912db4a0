// Drawing your own points (static/live/draw.js): the grid, the link's format, adding and removing.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  addPoint, changeText, classCounts, countText, decimalsOf, drawSummary, encodePoints, lastPointIn, nearestPoint,
  numberText, removePoint, snap,
} from "../../static/live/draw.js";

const DRAW = { step: 0.05, bound: 3, max: 4, minimum: 2 };

test("snap rounds to the grid half away from zero, as the server's PointsParam.snap, within the plane", () => {
  assert.equal(decimalsOf(0.05), 2);
  assert.equal(decimalsOf(1), 0);
  assert.deepEqual([0.024, 0.025, -0.025, 1.0749, 2.999, 3.4, -7].map((v) => snap(v, 0.05, 3)),
                   [0, 0.05, -0.05, 1.05, 3, 3, -3]);
  assert.ok(Object.is(snap(-0.01, 0.05, 3), 0), "no negative zero");
});

test("numberText writes the shortest plain form, as the link does", () => {
  assert.deepEqual([0, -0, 1, -1.25, 0.05, 2.5, -2.95].map((v) => numberText(v, 0.05)),
                   ["0", "0", "1", "-1.25", "0.05", "2.5", "-2.95"]);
});

test("encodePoints writes class 0, then class 1, in drawing order: the link's points= value", () => {
  const points = [[1, -0.5, 1], [-1.2, 0.5, 0], [2, 1.5, 1], [0.3, 1.1, 0]];
  // The same string tests/unit/moons_trainer/test_data_drawn.py has the server read and write.
  assert.equal(encodePoints(points, 0.05), "0:-1.2,0.5_0.3,1.1~1:1,-0.5_2,1.5");
  assert.equal(encodePoints([[0.5, 0.5, 1]], 0.05), "1:0.5,0.5");
  assert.equal(encodePoints([], 0.05), "");
});

test("addPoint snaps the point, refuses a repeat of the same class and the point past the cap", () => {
  let { points, point } = addPoint([], 1.234, -0.51, 1, DRAW);
  assert.deepEqual(point, [1.25, -0.5, 1]);
  assert.deepEqual(points, [[1.25, -0.5, 1]]);
  assert.equal(addPoint(points, 1.24, -0.49, 1, DRAW).points, null, "the same place, same class");
  points = addPoint(points, 1.24, -0.49, 0, DRAW).points;      // the other class may sit there
  assert.equal(points.length, 2);
  points = addPoint(addPoint(points, 0, 0, 0, DRAW).points, 1, 1, 0, DRAW).points;
  const full = addPoint(points, 2, 2, 1, DRAW);
  assert.equal(full.points, null);
  assert.match(full.reason, /at most 4 points/);
});

test("nearestPoint finds a point under the pointer within its radius, removePoint takes it away", () => {
  const toScreen = { px: (x) => 100 + 10 * x, py: (y) => 100 - 10 * y };
  const points = [[0, 0, 0], [1, 0, 1], [1.5, 0, 0]];
  assert.equal(nearestPoint(points, 111, 101, toScreen, 7), 1);
  assert.equal(nearestPoint(points, 114, 100, toScreen, 7), 2, "the nearer of two");
  assert.equal(nearestPoint(points, 100, 120, toScreen, 7), -1);
  assert.deepEqual(removePoint(points, 1), [[0, 0, 0], [1.5, 0, 0]]);
});

test("lastPointIn finds the latest point in the keyboard cursor's cell", () => {
  const points = [[0.1, 0.1, 0], [2, 2, 1], [0.2, 0.3, 1]];
  assert.equal(lastPointIn(points, [0, 0.375, 0, 0.375]), 2);
  assert.equal(lastPointIn(points, [-1, -0.5, -1, -0.5]), -1);
});

test("the drawing in words: counts per class, the cap and what training still needs", () => {
  assert.deepEqual(classCounts([[0, 0, 0], [1, 1, 1], [2, 2, 1]]), [1, 2]);
  assert.equal(drawSummary([[0, 0, 0], [1, 1, 1], [2, 2, 1]], DRAW),
               "3 points drawn: 1 of class 0, 2 of class 1 (at most 4); to train, add 1 more of class 0.");
  assert.equal(drawSummary([], DRAW),
               "0 points drawn: 0 of class 0, 0 of class 1 (at most 4); to train, add 2 more of class 0 and 2 more of class 1.");
  assert.equal(drawSummary([[0, 0, 0], [1, 0, 0], [1, 1, 1], [2, 2, 1]], DRAW),
               "4 points drawn: 2 of class 0, 2 of class 1 (at most 4).");
  assert.equal(countText([[0, 0, 0], [1, 1, 1], [2, 2, 1]], DRAW), "3 of 4 points: 1 of class 0, 2 of class 1");
  assert.equal(changeText("Added", [1.25, -0.5, 1], [[1.25, -0.5, 1]], DRAW),
               "Added a class 1 point at x\u2081 = 1.25, x\u2082 = \u22120.5. 1 point drawn: 0 of class 0, 1 of class 1 " +
               "(at most 4); to train, add 2 more of class 0 and 1 more of class 1.");
});
