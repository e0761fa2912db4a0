// The network view's picture (static/live/network_paint.js): a unit's map in the sign colours, the
// edges' buckets and paths, and the edge under the pointer.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  EDGE_WIDTHS, bucketStroke, layEdges, nearestEdge, paintMap, widthBucket,
} from "../../static/live/network_paint.js";

test("paintMap: the background at zero, each sign's colour at the unit's extreme, row 0 at the bottom", () => {
  const blue = [0, 0, 200], orange = [200, 100, 0], white = [255, 255, 255];
  // A 2 x 2 map from -2 to 2: codes 0 (-2), 255 (2), 127.5 would be 0; row 0 = [-2, 2], row 1 = [~0, 1].
  const codes = Uint8Array.from([9, 0, 255, 128, 191]);      // one code before the map (offset 1)
  const pixels = new Uint8ClampedArray(16);
  paintMap(pixels, codes, 1, 2, -2, 2, blue, orange, white);
  const at = (row, column) => [...pixels.slice(((1 - row) * 2 + column) * 4, ((1 - row) * 2 + column) * 4 + 4)];
  assert.deepEqual(at(0, 0), [...blue, 255]);
  assert.deepEqual(at(0, 1), [...orange, 255]);
  const zeroish = at(1, 0);
  assert.ok(zeroish.slice(0, 3).every((v, i) => Math.abs(v - white[i]) <= 2));
  assert.deepEqual(at(1, 1).slice(0, 3), [228, 178, 128]);   // value 0.996...: half way, rounded
  const dead = new Uint8ClampedArray(16);
  paintMap(dead, Uint8Array.from([0, 0, 0, 0]), 0, 2, 0, 0, blue, orange, white);
  assert.deepEqual([...dead.slice(0, 4)], [...white, 255]);
});

test("widthBucket and bucketStroke: stronger weights, wider and more opaque lines", () => {
  assert.equal(widthBucket(0, 2), 0);
  assert.equal(widthBucket(-2, 2), EDGE_WIDTHS - 1);
  assert.equal(widthBucket(1.01, 2), Math.floor(EDGE_WIDTHS / 2));
  assert.equal(widthBucket(1, 0), 0);
  const strokes = [...Array(EDGE_WIDTHS).keys()].map((b) => bucketStroke(b));
  for (let b = 1; b < EDGE_WIDTHS; b++) {
    assert.ok(strokes[b].width > strokes[b - 1].width && strokes[b].alpha > strokes[b - 1].alpha);
  }
  assert.equal(strokes[EDGE_WIDTHS - 1].alpha, 1);
});

test("nearestEdge: the edge under the pointer within the tolerance, else none", () => {
  const edges = [{ x0: 0, y0: 0, x1: 100, y1: 0, id: "flat" }, { x0: 0, y0: 0, x1: 100, y1: 100, id: "steep" }];
  assert.equal(nearestEdge(edges, 50, 2, 4).id, "flat");
  assert.equal(nearestEdge(edges, 50, 49, 4).id, "steep");
  assert.equal(nearestEdge(edges, 50, 20, 4), null);
  assert.equal(nearestEdge(edges, 120, 0, 4), null);        // beyond the segment's end
});

test("layEdges: an edge between every two shown units, bucketed by sign and width; folded units have none", () => {
  // widths 2 -> 3 -> 1; hidden unit 1 is folded away (no anchor).
  const at = (x, y) => ({ left: x, right: x + 10, y });
  const anchors = [[at(0, 0), at(0, 20)], [at(50, 0), null, at(50, 40)], [at(100, 10)]];
  const weights = [Float32Array.from([1, -0.5, 0.2, 0.2, -1, 0]), Float32Array.from([0.3, 2, -0.3])];
  const { edges, paths } = layEdges(anchors, [2, 3, 1], weights, [1, 2]);
  const names = edges.map((e) => `${e.layer}:${e.from}->${e.to}`);
  assert.deepEqual(names, ["1:0->0", "1:1->0", "1:0->2", "1:1->2", "2:0->0", "2:2->0"]);
  const first = edges[0];
  assert.deepEqual([first.x0, first.y0, first.x1, first.y1, first.weight], [10, 0, 50, 0, 1]);
  // Weight 1 of a layer whose largest is 1: the widest positive bucket; -0.5: a negative bucket.
  assert.ok(paths[EDGE_WIDTHS - 1].includes(first));
  assert.ok(paths[EDGE_WIDTHS + widthBucket(-0.5, 1)].includes(edges[1]));
  assert.equal(paths.flat().length, edges.length);
  for (const [bucket, list] of paths.entries()) {
    for (const e of list || []) assert.equal(bucket >= EDGE_WIDTHS, e.weight < 0, `${bucket} ${e.weight}`);
  }
});
