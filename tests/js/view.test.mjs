// The live view's entry (static/live/view.js's render) on fake DOM elements: one view per element,
// the test hooks the e2e tests and benchmarks read (parentElement.__moonsLive,
// window.__moonsLiveMounts, the root's dataset), the listeners it wires and lets go of.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement, pack } from "./fakes.mjs";
import { render } from "../../static/live/view.js";

globalThis.window = new FakeElement("window", { matchMedia: () => ({ matches: false }) });
globalThis.document = new FakeElement("document", {
  // The root, whose draw tools hold the two class radios.
  createElement: (tag) => {
    const element = new FakeElement(tag);
    const radio = () => new FakeElement("input", { nextElementSibling: new FakeElement("span") });
    element.querySelector(".draw-tools").all["input[type=radio]"] = [radio(), radio()];
    return element;
  },
});
globalThis.ResizeObserver = class {
  constructor(callback) { this.callback = callback; }
  observe(element) { this.observed = element; }
  disconnect() { this.disconnected = true; }
};

const listeners = (element, type) => (element.listeners[type] || []);

function mount() {
  const parentElement = new FakeElement();
  const triggers = [];
  const cleanup = render({ parentElement, setTriggerValue: (...args) => triggers.push(args) });
  return { parentElement, triggers, cleanup, view: parentElement.__moonsLive };
}

test("render mounts one view per element, numbered for tests, and hooks it on the element", () => {
  const first = mount();
  const second = mount();
  try {
    assert.ok(first.view && second.view && first.view !== second.view);
    assert.equal(first.parentElement.children[0], first.view.root);
    assert.equal(window.__moonsLiveMounts, Number(second.view.root.dataset.mount));
    assert.equal(Number(second.view.root.dataset.mount), Number(first.view.root.dataset.mount) + 1);
    assert.equal(first.view.root.className, "moons-live");
    // Each view's radio group and description are its own: named by its mount.
    const n = second.view.root.dataset.mount;
    assert.ok(second.view.root.innerHTML.includes(`name="moons-draw-${n}"`));
    assert.ok(second.view.root.innerHTML.includes(`aria-describedby="moons-live-${n}-points"`));
    assert.equal(first.view.root.dataset.motion, "full");
    // What the tests read from the view object is there from the start.
    for (const name of ["root", "status", "announcer", "plane", "network", "history", "scene", "frame", "pinned", "drawn"]) {
      assert.ok(name in first.view, name);
    }
    assert.equal(first.view.scale, 1);
  } finally {
    first.cleanup();
    second.cleanup();
  }
});

test("render again: the same view, with the page's new trigger; a frame goes to it", () => {
  const { parentElement, view, cleanup } = mount();
  try {
    const triggers = [];
    const data = pack({ scene_id: "s9", frame: { epoch: 1 } });
    render({ parentElement, setTriggerValue: (...args) => triggers.push(args), data });
    assert.equal(parentElement.__moonsLive, view);
    assert.deepEqual(triggers, [["resync", "s9"]]);          // a frame for a scene the view lacks
  } finally {
    cleanup();
  }
});

test("the view listens for the page's Pause in the capture phase, and the plane's keys and clicks", () => {
  const { view, cleanup } = mount();
  try {
    assert.deepEqual(listeners(document, "click").map((l) => l.capture), [true]);
    assert.deepEqual(listeners(document, "keydown").map((l) => l.capture), [true]);
    assert.equal(listeners(window, "resize").length, 1);
    for (const type of ["mousemove", "mouseleave", "focus", "blur", "keydown", "click"]) {
      assert.equal(listeners(view.plane, type).length, 1, type);
    }
    // An arrow key on the plane moves the keyboard cursor (cursor.js), before any frame.
    const before = { ...view.cursor };
    view.plane.dispatch("keydown", { key: "ArrowUp", preventDefault() {}, stopPropagation() {} });
    assert.deepEqual(view.cursor, { col: before.col, row: before.row + 1 });
    assert.equal(view.cursorShown, true);
  } finally {
    cleanup();
  }
});

test("the cleanup lets go of everything: listeners, observers, timers, the root and the hook", () => {
  const { parentElement, view, cleanup } = mount();
  const timer = view.themeTimer, cleared = [], clearInterval = globalThis.clearInterval;
  globalThis.clearInterval = (id) => { cleared.push(id); clearInterval(id); };
  try {
    cleanup();
  } finally {
    globalThis.clearInterval = clearInterval;
  }
  assert.equal(parentElement.__moonsLive, undefined);
  assert.equal(view.root.removed, true);
  assert.equal(view.resize.disconnected, true);
  assert.equal(view.network.resize.disconnected, true);
  assert.equal(listeners(document, "click").length, 0);
  assert.equal(listeners(document, "keydown").length, 0);
  assert.equal(listeners(window, "resize").length, 0);
  assert.ok(timer);
  assert.deepEqual(cleared, [timer]);                      // the theme's timer
});
