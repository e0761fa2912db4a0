// The network view's columns (static/live/network_columns.js): one button per unit, put in their
// order and folded, one Tab stop the arrow keys move (fake DOM elements: tests/js/fakes.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement } from "./fakes.mjs";
import { buildColumns, foldWords, placeUnits, roam, rove, shownButtons, toggleFold } from "../../static/live/network_columns.js";
import { FOLD } from "../../static/live/network_units.js";

globalThis.document = { createElement: (tag) => new FakeElement(tag) };
globalThis.ImageData = class {
  constructor(width, height) { this.width = width; this.height = height; this.data = new Uint8ClampedArray(width * height * 4); }
};

const WIDE = FOLD + 2;                  // wide enough to fold

// A pane of inputs x₁, x₂, one hidden layer of WIDE units and the output, built.
function builtPane() {
  const draws = [];
  const pane = {
    scene: { widths: [2, WIDE, 1], resolution: 3, input_names: ["x\u2081", "x\u2082"] },
    layers: 3, stage: new FakeElement(), view: { scene: { resolution: 5 } }, order: null, unfolded: new Set(),
    draw: () => draws.push("draw"),
  };
  buildColumns(pane);
  pane.order = [[0, 1], [...Array(WIDE).keys()].reverse(), [0]];
  placeUnits(pane);
  return { pane, draws };
}

test("foldWords: the fold button says how many more, and names its layer", () => {
  assert.deepEqual(foldWords(1, 3, 64, false), {
    text: `Show all 64 (${64 - FOLD} more)`, label: `hidden layer 1: show all 64 units (${64 - FOLD} more)` });
  const open = foldWords(2, 4, 64, true);
  assert.equal(open.text, `Show the ${FOLD} strongest`);
  assert.match(open.label, /^hidden layer 2: show only the \d+ units with the strongest outgoing weights$/);
});

test("buildColumns: a named group per layer, a named button per unit, input labels, a fold button for a wide layer", () => {
  const { pane } = builtPane();
  assert.equal(pane.columns.length, 3);
  assert.equal(pane.stage.children.length, 3);
  assert.deepEqual(pane.columns.map((c) => c.column.getAttribute("aria-label")),
                   ["inputs, 2 units", `hidden layer 1, ${WIDE} units`, "output, 1 unit"]);
  assert.deepEqual(pane.columns.map((c) => c.buttons.length), [2, WIDE, 1]);
  assert.equal(pane.columns[1].buttons[2].getAttribute("aria-label"), "hidden layer 1, unit 3");
  assert.deepEqual(pane.columns[0].labels.map((l) => l.textContent), ["x\u2081", "x\u2082"]);
  assert.equal(pane.columns[1].labels, null);
  assert.deepEqual(pane.columns.map((c) => c.more !== null), [false, true, false]);
  // The output's map is a canvas of the boundary's resolution; the others' a span on the stage.
  const output = pane.columns[2].buttons[0].children[0];
  assert.equal(output.tagName, "CANVAS");
  assert.equal(output.width, 5);
  assert.equal(pane.columns[1].buttons[0].children[0].tagName, "SPAN");
  assert.deepEqual(pane.images.map((i) => i.width), [3, 3, 5]);
  assert.equal(pane.points, 9);
});

test("placeUnits: a wide layer shows its first FOLD units in order, the rest hidden; one Tab stop", () => {
  const { pane } = builtPane();
  const { units, buttons, more } = pane.columns[1];
  assert.deepEqual(units.children.map((b) => Number(b.dataset.unit)), pane.order[1]);
  const shown = shownButtons(pane)[1].map((b) => Number(b.dataset.unit));
  assert.deepEqual(shown, pane.order[1].slice(0, FOLD));
  assert.ok(buttons[0].hidden && buttons[1].hidden && !buttons[WIDE - 1].hidden);
  assert.equal(more.getAttribute("aria-expanded"), "false");
  assert.equal(more.textContent, `Show all ${WIDE} (${WIDE - FOLD} more)`);
  // The inputs' labels sit before their buttons.
  assert.deepEqual(pane.columns[0].units.children.map((e) => e.tagName), ["SPAN", "BUTTON", "SPAN", "BUTTON"]);
  const all = pane.columns.flatMap((c) => c.buttons);
  assert.equal(all.filter((b) => b.tabIndex === 0).length, 1);
  assert.equal(pane.tabStop, pane.columns[0].buttons[0]);
  assert.equal(pane.dirty, true);
});

test("rove: a folded-away unit cannot be the Tab stop; the first input is", () => {
  const { pane } = builtPane();
  rove(pane, pane.columns[1].buttons[WIDE - 1]);
  assert.equal(pane.tabStop, pane.columns[1].buttons[WIDE - 1]);
  assert.equal(pane.columns[1].buttons[WIDE - 1].tabIndex, 0);
  rove(pane, pane.columns[1].buttons[0]);            // folded away
  assert.equal(pane.tabStop, pane.columns[0].buttons[0]);
});

test("roam: an arrow key on a unit focuses the unit it leads to and makes it the Tab stop", () => {
  const { pane } = builtPane();
  const from = pane.columns[0].buttons[1];
  from.matching = ["button.unit"];
  let prevented = false;
  roam(pane, { target: from, key: "ArrowRight", preventDefault: () => { prevented = true; } });
  const expected = shownButtons(pane)[1][1];          // the same height in the next column
  assert.ok(prevented);
  assert.equal(pane.tabStop, expected);
  assert.equal(expected.focused, 1);
  // Other keys, or a modifier, stay the page's.
  roam(pane, { target: expected, key: "Enter", preventDefault: () => assert.fail("Enter is not the network's") });
  roam(pane, { target: from, key: "ArrowDown", ctrlKey: true, preventDefault: () => assert.fail("Ctrl+arrow is not") });
});

test("toggleFold: shows every unit of the layer, then folds it again, and redraws", () => {
  const { pane, draws } = builtPane();
  toggleFold(pane, 1);
  assert.equal(shownButtons(pane)[1].length, WIDE);
  assert.equal(pane.columns[1].more.getAttribute("aria-expanded"), "true");
  assert.ok(pane.columns[1].units.classList.contains("unfolded"));
  toggleFold(pane, 1);
  assert.equal(shownButtons(pane)[1].length, FOLD);
  assert.deepEqual(draws, ["draw", "draw"]);
});
