// The plane's keyboard cursor (static/live/cursor.js) on a fake view: the keys that move it, the
// read-out shown beside its cell and said in the live region, and the keys it leaves alone.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement, recorder } from "./fakes.mjs";
import { CURSOR_CELLS, startCursor } from "../../static/live/access.js";
import { TOOLTIP_GAP_PX, cursorKey, readCursor, showCursor, tooltipLeft } from "../../static/live/cursor.js";

// A view of an empty 2 x 2 grid over [-2, 2]², its plane 400 px wide; `drawKey` says whether a key was the drawing's.
function fakeView(drawKey = () => false) {
  const r = recorder(["draw", "drawKey"], { drawKey });
  const view = {
    ...r.methods, calls: r.calls,
    scene: { extent: [-2, 2, -2, 2], resolution: 2, groups: [], blobs: {} },
    frame: { grid: Uint8Array.from([0, 0, 255, 255]) },
    cursor: startCursor(), cursorShown: false, drawn: null,
    tooltip: new FakeElement("div", { hidden: true, offsetWidth: 120 }), readout: new FakeElement(),
    plane: new FakeElement("canvas", { clientWidth: 400 }),
    toPlane: { px: (x) => 200 + 100 * x, py: (y) => 200 - 100 * y },
  };
  return view;
}

const key = (name, more = {}) => {
  const event = { key: name, prevented: 0, stopped: 0, ...more };
  event.preventDefault = () => { event.prevented += 1; };
  event.stopPropagation = () => { event.stopped += 1; };
  return event;
};

test("tooltipLeft: right of the cell where there is room, else left of it, never off the canvas", () => {
  assert.equal(tooltipLeft(100, 150, 120, 400), 150 + TOOLTIP_GAP_PX);
  assert.equal(tooltipLeft(300, 350, 120, 400), 300 - TOOLTIP_GAP_PX - 120);
  assert.equal(tooltipLeft(20, 390, 120, 400), 0);
});

test("an arrow key moves the cursor, shows and says its read-out, redraws, and stops there", () => {
  const view = fakeView();
  const before = { ...view.cursor };
  const event = key("ArrowRight");
  cursorKey(view, event);
  assert.deepEqual(view.cursor, { col: before.col + 1, row: before.row });
  assert.equal(view.cursorShown, true);
  assert.deepEqual([event.prevented, event.stopped], [1, 1]);
  assert.equal(view.tooltip.hidden, false);
  assert.match(view.tooltip.textContent, new RegExp(`column ${before.col + 2} of ${CURSOR_CELLS}`));
  assert.equal(view.readout.textContent, view.tooltip.textContent.split("\n").join(". "));
  assert.deepEqual(view.calls.map((c) => c[0]), ["drawKey", "draw"]);
});

test("keys the cursor does not use, modified keys and the drawing's keys are left alone", () => {
  for (const event of [key("Tab"), key("ArrowLeft", { ctrlKey: true }), key("ArrowUp", { altKey: true })]) {
    const view = fakeView();
    const before = { ...view.cursor };
    cursorKey(view, event);
    assert.deepEqual(view.cursor, before, event.key);
    assert.equal(event.prevented, 0, event.key);
    assert.equal(view.readout.textContent, "");
  }
  const drawing = fakeView(() => true);
  const before = { ...drawing.cursor };
  cursorKey(drawing, key("ArrowRight"));
  assert.deepEqual(drawing.cursor, before);
  assert.deepEqual(drawing.calls.map((c) => c[0]), ["drawKey"]);
});

test("readCursor: the tooltip beside the cell; a frame's refresh does not speak", () => {
  const view = fakeView();
  view.cursor = { col: 0, row: CURSOR_CELLS - 1 };    // the top left cell
  readCursor(view, false);
  assert.equal(view.readout.textContent, "");
  assert.equal(view.tooltip.hidden, false);
  const cell = 4 / CURSOR_CELLS;
  assert.equal(view.tooltip.style.left, `${200 + 100 * (-2 + cell) + TOOLTIP_GAP_PX}px`);
  assert.equal(view.tooltip.style.top, `${200 - 100 * 2}px`);
  const empty = fakeView();
  empty.frame = null;
  readCursor(empty, true);                             // nothing to read yet
  assert.equal(empty.tooltip.hidden, true);
});

test("showCursor: shown with the keyboard's focus and said; hidden on blur; redrawn both times", () => {
  const view = fakeView();
  showCursor(view, true);
  assert.equal(view.tooltip.hidden, false);
  assert.notEqual(view.readout.textContent, "");
  showCursor(view, false);
  assert.equal(view.cursorShown, false);
  assert.equal(view.tooltip.hidden, true);
  assert.equal(view.calls.filter((c) => c[0] === "draw").length, 2);
});
