// The live view's layout (static/live/layout.js): the columns, the canvases' pixel sizes, the
// texts noted when they do not fit, presenter mode's room on the first screen.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeContext, FakeElement, fakeCanvas } from "./fakes.mjs";
import {
  FIT_BOTTOM_GAP_PX, PANE_GAP_PX, belowCanvases, columnWidths, firstScreenRoom, fitting, label, scrolledAbove, sizeCanvas,
} from "../../static/live/layout.js";

globalThis.window = { devicePixelRatio: 2, scrollY: 0, innerHeight: 900 };

test("columnWidths: the curves beside the plane on a wide view, below it on a narrow one", () => {
  assert.deepEqual(columnWidths(1000, 1), { wide: true, boundaryWidth: 580, curvesWidth: 1000 - 580 - PANE_GAP_PX });
  assert.deepEqual(columnWidths(899, 1), { wide: false, boundaryWidth: 899, curvesWidth: 899 });
  // Presenter mode's larger text needs a wider view, up to 1.2 times as wide.
  assert.equal(columnWidths(1000, 1.2).wide, false);
  assert.equal(columnWidths(1080, 2).wide, true);
});

test("sizeCanvas: the canvas at the screen's pixel ratio, its CSS size, a cleared scaled context", () => {
  const cutTexts = new Map();
  const canvas = fakeCanvas();
  const ctx = sizeCanvas({ cutTexts }, canvas, 200, 100.5);
  assert.deepEqual([canvas.width, canvas.height], [400, 201]);
  assert.equal(canvas.style.width, "200px");
  assert.equal(canvas.style.height, "100.5px");
  assert.deepEqual(ctx.getTransform(), { a: 2, b: 0, c: 0, d: 2, e: 0, f: 0 });
  assert.deepEqual(ctx.cleared, [[0, 0, 200, 100.5]]);
  assert.deepEqual(cutTexts.get(canvas), []);
});

test("label: writes the text, and notes it when any corner falls outside its canvas", () => {
  const cutTexts = new Map();
  const canvas = fakeCanvas();
  const ctx = sizeCanvas({ cutTexts }, canvas, 100, 50);     // 6 px a character
  label({ cutTexts }, ctx, "fits", 10, 20);
  label({ cutTexts }, ctx, "far too long for this", 10, 20);  // 126 px from x = 10
  label({ cutTexts }, ctx, "above", 10, 5);                   // its ascent above the top
  assert.deepEqual(ctx.texts.map((t) => t[0]), ["fits", "far too long for this", "above"]);
  assert.deepEqual(cutTexts.get(canvas), ["far too long for this", "above"]);
});

test("label: a rotated text is checked where the rotation puts it", () => {
  const cutTexts = new Map();
  const canvas = fakeCanvas();
  const ctx = sizeCanvas({ cutTexts }, canvas, 100, 50);
  // Rotated a quarter turn (a y axis's title) about (20, 25): 8 characters run 48 px upwards.
  ctx.setTransform(0, -2, 2, 0, 40, 50);
  label({ cutTexts }, ctx, "8 chars!", -24, 0);
  assert.deepEqual(cutTexts.get(canvas), []);
  label({ cutTexts }, ctx, "sixteen chars!!!", -48, 0);
  assert.deepEqual(cutTexts.get(canvas), ["sixteen chars!!!"]);
});

test("fitting: the longest text that fits, else the last", () => {
  const ctx = new FakeContext(null, 10);
  assert.equal(fitting(ctx, ["accuracy per epoch", "accuracy", "acc"], 100), "accuracy");
  assert.equal(fitting(ctx, ["accuracy per epoch", "accuracy"], 20), "accuracy");
});

test("scrolledAbove and firstScreenRoom: the room from the figures to the first screen's bottom", () => {
  const scroller = new FakeElement("div", { scrollTop: 150 });
  const host = new FakeElement("div", { scrollTop: 0 });
  const shadow = { host, scrollTop: 0 };
  scroller.parentNode = shadow;
  const panes = new FakeElement("div", { box: { top: 120, left: 0, width: 800, height: 500 } });
  panes.parentNode = scroller;
  window.scrollY = 30;
  assert.equal(scrolledAbove(panes), 180);
  // 120 px below the viewport's top now, 300 px below the page's top: 900 - 300 - the gap.
  assert.equal(firstScreenRoom({ panes }), 900 - 300 - FIT_BOTTOM_GAP_PX);
  window.scrollY = 0;
});

test("belowCanvases: a figure's height less its canvases'", () => {
  const figure = new FakeElement("figure", { box: { height: 530 } });
  const canvases = [new FakeElement("canvas", { box: { height: 200 } }), new FakeElement("canvas", { box: { height: 250 } })];
  assert.equal(belowCanvases(figure, canvases), 80);
});
