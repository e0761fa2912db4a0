// What the live view says (static/live/announce.js) on a fake view: the live region speaks on a
// pause and the end, not with every frame; the canvases' names carry the numbers, renamed at most
// every LABEL_MS while a run plays, and the plane keeps its name while it has the focus.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement } from "./fakes.mjs";
import { LABEL_MS } from "../../static/live/access.js";
import { describe, pointsDescription, setAttributeIfNew, speak } from "../../static/live/announce.js";
import { DRAW_HELP } from "../../static/live/draw.js";

const HISTORY = { epoch: [1, 2], train_loss: [0.7, 0.5], val_loss: [0.7, 0.55], train_acc: [0.6, 0.8], val_acc: [0.6, 0.75] };
const SCENE = {
  groups: [], bayes_accuracy: 0.97, class_shapes: ["circle", "square"],
  colours: { class_names: ["blue", "orange"] }, blobs: {},
};

function fakeView(frame) {
  return {
    frame: { epoch: 2, epochs: 10, playing: false, grid: Uint8Array.from([0, 255, 255, 255]), ...frame },
    scene: SCENE, sceneId: "s1", history: HISTORY, pinned: null, spoken: null, labelledAt: null,
    announcer: new FakeElement(), planeDescription: new FakeElement(),
    lossCanvas: new FakeElement("canvas"), accuracyCanvas: new FakeElement("canvas"), plane: new FakeElement("canvas"),
  };
}

test("setAttributeIfNew writes only a changed value", () => {
  const element = new FakeElement();
  setAttributeIfNew(element, "aria-label", "a");
  setAttributeIfNew(element, "aria-label", "a");
  setAttributeIfNew(element, "aria-label", "b");
  assert.equal(element.attributeWrites, 2);
  assert.equal(element.getAttribute("aria-label"), "b");
});

test("speak: silent on the first frame and while a run plays between announcements; a pause is said", () => {
  const view = fakeView({ playing: true, epoch: 2 });
  speak(view);
  assert.equal(view.announcer.textContent, "");
  view.frame = { ...view.frame, epoch: 3 };
  speak(view);
  assert.equal(view.announcer.textContent, "");
  view.frame = { ...view.frame, playing: false };
  speak(view);
  assert.match(view.announcer.textContent, /^Paused at epoch 3 of 10/);
  view.frame = { ...view.frame, end_note: "Training finished." };
  speak(view);
  assert.match(view.announcer.textContent, /Training finished\.$/);
});

test("describe: the curves and the plane named with the numbers; the points described once per scene", () => {
  const view = fakeView();
  describe(view);
  assert.match(view.lossCanvas.getAttribute("aria-label"), /0\.500/);
  assert.match(view.accuracyCanvas.getAttribute("aria-label"), /80\.0%/);
  assert.match(view.plane.getAttribute("aria-label"), /epoch 2 of 10/);
  assert.equal(view.describedScene, "s1");
  view.planeDescription.textContent = "kept";
  describe(view);
  assert.equal(view.planeDescription.textContent, "kept");
});

test("describe: while a run plays, renamed at most every LABEL_MS; the focused plane keeps its name", () => {
  const view = fakeView({ playing: true });
  describe(view);
  const named = view.plane.getAttribute("aria-label");
  view.frame = { ...view.frame, epoch: 3 };
  describe(view);                                  // within LABEL_MS: nothing renamed
  assert.equal(view.plane.getAttribute("aria-label"), named);
  view.labelledAt -= LABEL_MS;
  view.plane.matching = [":focus"];
  describe(view);
  assert.equal(view.plane.getAttribute("aria-label"), named);
  view.plane.matching = [];
  view.labelledAt -= LABEL_MS;
  describe(view);
  assert.match(view.plane.getAttribute("aria-label"), /epoch 3 of 10/);
});

test("pointsDescription: a drawing says its points and, when it may be edited, how to draw", () => {
  const draw = { points: [[0, 0, 0]], editable: true, max: 50, minimum: 3 };
  const text = pointsDescription({ ...SCENE, draw });
  assert.match(text, /^1 point drawn: 1 of class 0, 0 of class 1/);
  assert.ok(text.endsWith(DRAW_HELP));
  assert.ok(!pointsDescription({ ...SCENE, draw: { ...draw, editable: false } }).includes(DRAW_HELP));
  assert.equal(pointsDescription(SCENE), "");
});
