// Drawing your own points, the view's side (static/live/draw_input.js) on a fake view: which
// drawing a scene shows, clicks and keys that add and remove points, the drawing sent to the page
// and kept in the window for a view mounted anew.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement, recorder } from "./fakes.mjs";
import {
  PENDING_MS, canDraw, drawClick, drawKey, drawingToShow, editDrawing, planeAt, sendingDrawing, setDrawing,
} from "../../static/live/draw_input.js";

globalThis.window = {};

const DRAW = { step: 0.05, bound: 3, max: 4, minimum: 2, editable: true, points: [], text: "" };
// The plane's transform: x from -3 to 3 over 300 px from left 50, y from -3 to 3 over 300 px from top 10.
const T = { left: 50, top: 10, plotW: 300, plotH: 300, x0: -3, x1: 3, y0: -3, y1: 3,
            px: (x) => 50 + (x + 3) * 50, py: (y) => 10 + (3 - y) * 50 };

function fakeView(draw = DRAW) {
  const r = recorder(["draw", "setTriggerValue"]);
  const radio = () => new FakeElement("input", { nextElementSibling: new FakeElement("span"), checked: false });
  const view = {
    ...r.methods, calls: r.calls, named: r.named,
    scene: { draw, extent: [-3, 3, -3, 3], colours: { class_names: ["blue", "orange"] }, class_shapes: ["circle", "square"] },
    drawTools: new FakeElement(), drawCount: new FakeElement(), drawClasses: [radio(), radio()], drawClear: new FakeElement(),
    readout: new FakeElement(), root: new FakeElement(), plane: new FakeElement("canvas"),
    drawn: null, drawSent: null, drawRevision: 0, cursor: { col: 8, row: 8 }, cursorShown: false, scale: 1, toPlane: T,
  };
  view.drawClasses[0].checked = true;
  setDrawing(view, draw);
  return view;
}

const click = (x, y, more = {}) => ({ clientX: x, clientY: y, ...more });
const key = (name) => {
  const event = { key: name, prevented: 0 };
  event.preventDefault = () => { event.prevented += 1; };
  event.stopPropagation = () => {};
  return event;
};

test("drawingToShow: the page's drawing, the view's own on its way, or one a former view sent", () => {
  const scene = { text: "0:1,1", editable: true };
  assert.equal(drawingToShow(null, null, scene, null, 0), "scene");
  assert.equal(drawingToShow("0:2,2", [[2, 2, 0]], scene, null, 0), "own");
  assert.equal(drawingToShow("0:1,1", [[1, 1, 0]], scene, null, 0), "scene");
  const pending = { text: "0:2,2", points: [[2, 2, 0]], at: 1000 };
  assert.equal(drawingToShow(null, null, scene, pending, 1000 + PENDING_MS - 1), "pending");
  assert.equal(drawingToShow(null, null, scene, pending, 1000 + PENDING_MS), "scene");        // too old
  assert.equal(drawingToShow(null, null, { ...scene, editable: false }, pending, 1000), "scene");
  assert.equal(drawingToShow(null, null, { ...scene, text: "0:2,2" }, pending, 1000), "scene");  // it came back
});

test("planeAt: a pixel inside the plot as the plane's coordinates, outside as null", () => {
  assert.deepEqual(planeAt(T, 200, 160), [0, 0]);
  assert.deepEqual(planeAt(T, 50, 10), [-3, 3]);
  assert.equal(planeAt(T, 49, 160), null);
  assert.equal(planeAt(T, 200, 311), null);
});

test("setDrawing: the tool bar shows with the scene's drawing, names the classes, hides without one", () => {
  const view = fakeView({ ...DRAW, points: [[1, 1, 0]], text: "0:1,1" });
  assert.equal(view.drawTools.hidden, false);
  assert.deepEqual(view.drawn, [[1, 1, 0]]);
  assert.equal(view.drawRevision, 1);
  assert.equal(view.drawClasses[1].nextElementSibling.textContent, "class 1 (orange squares)");
  assert.equal(view.drawCount.textContent, "1 of 4 points: 1 of class 0, 0 of class 1");
  assert.equal(canDraw(view), true);
  setDrawing(view, null);
  assert.equal(view.drawTools.hidden, true);
  assert.equal(view.drawn, null);
  assert.equal(canDraw(view), false);
});

test("a click adds a point of the chosen class: shown, said, sent, and kept for a view mounted anew", () => {
  const view = fakeView();
  view.drawClasses[1].checked = true;
  drawClick(view, click(200 + 62, 160 - 12));           // x 1.24 -> 1.25 on the grid, y 0.24 -> 0.25
  assert.deepEqual(view.drawn, [[1.25, 0.25, 1]]);
  assert.equal(view.drawSent, "1:1.25,0.25");
  assert.deepEqual(view.named("setTriggerValue"), [["setTriggerValue", "points", "1:1.25,0.25"]]);
  assert.equal(view.named("draw").length, 1);
  assert.equal(view.root.dataset.drawn, "1:1.25,0.25");
  assert.match(view.readout.textContent, /^Added a class 1 point at x\u2081 = 1\.25, x\u2082 = 0\.25\./);
  assert.equal(window.__moonsDrawPending.text, "1:1.25,0.25");
  // A click on the point removes it; Shift and click adds one there anyway (here: refused, the same point).
  drawClick(view, click(262, 148, { shiftKey: true }));
  assert.match(view.readout.textContent, /^Not added: a point of that class is already there\.$/);
  drawClick(view, click(264, 150));
  assert.deepEqual(view.drawn, []);
  assert.match(view.readout.textContent, /^Removed a class 1 point/);
  // Outside the plot, nothing.
  drawClick(view, click(10, 10));
  assert.equal(view.named("setTriggerValue").length, 2);
});

test("a view mounted anew takes over the drawing still on its way, and sends it again", () => {
  window.__moonsDrawPending = { text: "0:1,1", points: [[1, 1, 0]], at: Date.now() };
  const view = fakeView();
  assert.deepEqual(view.drawn, [[1, 1, 0]]);
  assert.equal(view.drawSent, "0:1,1");
  assert.deepEqual(view.named("setTriggerValue"), [["setTriggerValue", "points", "0:1,1"]]);
  // The page brings it back: the view's own, no longer pending anywhere.
  setDrawing(view, { ...DRAW, points: [[1, 1, 0]], text: "0:1,1" });
  assert.equal(view.drawSent, null);
  assert.equal(window.__moonsDrawPending, null);
});

test("drawKey: Enter adds at the cursor's cell, Delete removes the last point there, other keys pass", () => {
  const view = fakeView();
  const enter = key("Enter");
  assert.equal(drawKey(view, enter), true);
  assert.equal(enter.prevented, 1);
  assert.equal(view.cursorShown, true);
  assert.equal(view.drawn.length, 1);
  const [x, y] = view.drawn[0];
  assert.ok(x > 0 && x < 6 / 16 && y > 0 && y < 6 / 16, `${x}, ${y}`);     // inside cell (8, 8) of 16
  assert.equal(drawKey(view, key("Delete")), true);
  assert.deepEqual(view.drawn, []);
  assert.equal(drawKey(view, key("Backspace")), true);
  assert.equal(view.readout.textContent, "No drawn point in this cell.");
  assert.equal(drawKey(view, key("ArrowUp")), false);
  // Not editable (a drawing being trained): no key is the drawing's, and nothing is sent.
  const locked = fakeView({ ...DRAW, editable: false });
  assert.equal(drawKey(locked, key("Enter")), false);
  editDrawing(locked, [[0, 0, 0]], "Added", [0, 0, 0]);
  assert.equal(locked.named("setTriggerValue").length, 0);
});

test("sendingDrawing: a drawing not brought back yet goes with every other trigger, never twice", () => {
  const sent = [];
  const view = { drawSent: null };
  const send = sendingDrawing(view, (name, value) => sent.push([name, value]));
  send("resync", "scene-1");
  assert.deepEqual(sent, [["resync", "scene-1"]]);         // nothing drawn on its way: alone
  view.drawSent = "0:1,1";
  send("points", "0:1,1");
  assert.deepEqual(sent.slice(1), [["points", "0:1,1"]]);   // the drawing itself: once
  send("settle", 7);
  assert.deepEqual(sent.slice(2), [["settle", 7], ["points", "0:1,1"]]);
  view.drawSent = null;                                     // a scene brought it back
  send("ended", 8);
  assert.deepEqual(sent.slice(4), [["ended", 8]]);
});
