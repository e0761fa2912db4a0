// niceTicks and formatTick (static/live/ticks.js): the axes of the plane and the curves.
import assert from "node:assert/strict";
import { test } from "node:test";

import { formatTick, niceTicks } from "../../static/live/ticks.js";

const close = (actual, expected) => {
  assert.equal(actual.length, expected.length, `${actual} vs ${expected}`);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-9, `${actual} vs ${expected}`));
};

test("niceTicks steps by 1, 2, 2.5 or 5 times a power of ten, inside the range", () => {
  close(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  close(niceTicks(0, 0.3, 3), [0, 0.1, 0.2, 0.3]);
  close(niceTicks(-2.5, 2.5, 4), [-2, 0, 2]);
  close(niceTicks(0, 100, 4), [0, 25, 50, 75, 100]);
  close(niceTicks(0, 37, 4), [0, 10, 20, 30]);
  close(niceTicks(1.3, 4.9, 3), [2, 4]);
});

test("niceTicks puts an exact zero where the range crosses it", () => {
  const ticks = niceTicks(-1, 1, 20);     // steps of 0.1, summed: -1 + 10 * 0.1 is not 0
  assert.equal(ticks.length, 21);
  assert.ok(ticks.includes(0));
});

test("niceTicks of an empty or reversed range is its one end", () => {
  assert.deepEqual(niceTicks(3, 3, 5), [3]);
  assert.deepEqual(niceTicks(5, 1, 5), [5]);
});

test("formatTick shows the decimals the step needs, with a true minus sign", () => {
  assert.equal(formatTick(20, 10), "20");
  assert.equal(formatTick(3, 1), "3");
  assert.equal(formatTick(0.2, 0.1), "0.2");
  assert.equal(formatTick(0.6000000000000001, 0.2), "0.6");
  assert.equal(formatTick(-1, 0.5), "\u22121.0");
  assert.equal(formatTick(-0.05, 0.05), "\u22120.05");
  assert.equal(formatTick(0, 0.25), "0.0");
});
