// A frame arriving at the live view (static/live/frames.js) on a fake view: what it stores, what
// it asks the page for when the view lacks something, what it hands the view's other parts, and
// when under reduced motion a playing run's frame is drawn.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement, pack, recorder } from "./fakes.mjs";
import { REDUCED_MOTION_MS } from "../../static/live/access.js";
import { appendHistory, gridSum, reducedMotion, showFrame, update } from "../../static/live/frames.js";

const history = (epochs) => ({ epoch: epochs, train_loss: epochs.map((e) => 1 / e), val_loss: epochs.map((e) => 2 / e),
                                train_acc: epochs.map(() => 0.5), val_acc: epochs.map(() => 0.6) });
const empty = () => history([]);
const PROTOCOL = { gone: 4404, pause: "pause", frame_ms: 1 };

function fakeView(reduced = false) {
  const r = recorder(["setTriggerValue", "setDrawing", "readTheme", "speak", "describe", "poll", "draw", "readCursor"]);
  const network = recorder(["setScene", "update"]);
  return {
    ...r.methods, calls: r.calls, named: r.named, network: { ...network.methods, calls: network.calls },
    root: new FakeElement(), scene: null, sceneId: undefined, frame: null, history: empty(), pinned: null, frames: 0,
    polling: null, frameDrawnAt: null, playingDrawnAt: null, cursorShown: false, motion: { matches: reduced },
  };
}

// A page frame of scene "s1" (the scene itself with `scene`), epochs `from`.. on.
function message({ scene = true, from = 0, epochs = [1, 2], playing = false, header = {}, frame = {} } = {}) {
  const body = {
    frame: { epoch: epochs.at(-1) ?? 0, epochs: 10, status: "epoch", playing, history_from: from, history: history(epochs), ...frame },
    ...header,
  };
  if (scene) body.scene = { id: "s1", draw: null, groups: [] };
  else body.scene_id = "s1";
  return pack(body, { grid: Uint8Array.from([1, 2, 3, 250]) });
}

test("appendHistory: epochs from history_from replace the view's; a gap leaves it and says so", () => {
  const h = history([1, 2, 3]);
  assert.equal(appendHistory(h, { history_from: 2, history: history([3, 4]) }), true);
  assert.deepEqual(h.epoch, [1, 2, 3, 4]);
  assert.deepEqual(h.val_loss, [2, 1, 2 / 3, 0.5]);
  assert.equal(appendHistory(h, { history_from: 5, history: history([6]) }), false);
  assert.deepEqual(h.epoch, [1, 2, 3, 4]);
  assert.equal(gridSum(Uint8Array.from([255, 255, 1])), 511);
});

test("a page frame: the scene, the history, the counters for tests, and the page's wiring", () => {
  const view = fakeView();
  const header = update(view, message({ header: { protocol: PROTOCOL, pause_key: "mt_pause", pause_shortcut: "p", poll: "/frames/x" } }));
  assert.equal(header.frame.epoch, 2);
  assert.equal(view.sceneId, "s1");
  assert.deepEqual([...view.scene.blobs.grid], [1, 2, 3, 250]);
  assert.deepEqual(view.history.epoch, [1, 2]);
  assert.deepEqual([...view.frame.grid], [1, 2, 3, 250]);
  assert.deepEqual(view.root.dataset, { frames: "1", epoch: "2", gridSum: "256", motion: "full", playingDraws: "0", drawMs: view.root.dataset.drawMs });
  assert.deepEqual(view.network.calls.map((c) => c[0]), ["setScene"]);
  assert.deepEqual(view.named("setDrawing"), [["setDrawing", null]]);
  assert.deepEqual(view.protocol, PROTOCOL);
  assert.equal(view.pauseKey, "mt_pause");
  assert.equal(view.pauseShortcut, "P");
  assert.deepEqual(view.calls.map((c) => c[0]),
                   ["setDrawing", "readTheme", "draw", "speak", "describe", "poll"]);
  assert.deepEqual(view.named("poll"), [["poll", "/frames/x"]]);
  assert.deepEqual(view.named("draw"), [["draw", false]]);
});

test("a frame the view cannot place asks the page again: an unknown scene, missing epochs", () => {
  const view = fakeView();
  assert.equal(update(view, message({ scene: false })), undefined);
  assert.deepEqual(view.named("setTriggerValue"), [["setTriggerValue", "resync", "s1"]]);
  update(view, message());
  assert.equal(update(view, message({ scene: false, from: 5, epochs: [6] })), undefined);
  assert.deepEqual(view.named("setTriggerValue").at(-1), ["setTriggerValue", "resync", "history-5"]);
  assert.deepEqual(view.history.epoch, [1, 2]);
  assert.equal(view.frames, 1);
});

test("a polled frame after the view stopped polling is dropped; a polled one is drawn as polled", () => {
  const view = fakeView();
  update(view, message());
  assert.equal(update(view, message({ scene: false, from: 2, epochs: [3] }), "polled"), null);
  assert.equal(view.frames, 1);
  view.polling = "/frames/x";
  update(view, message({ scene: false, from: 2, epochs: [3], frame: { network: { serial: 1 }, pinned: null } }), "polled");
  assert.deepEqual(view.history.epoch, [1, 2, 3]);
  assert.deepEqual(view.named("draw").at(-1), ["draw", true]);
  assert.equal(view.named("poll").length, 1);                 // only the page's frame wires
  assert.equal(view.network.calls.at(-1)[0], "update");
  assert.equal(view.network.calls.at(-1)[3], false);          // a playing run's picture keeps the order
});

test("under reduced motion a playing run's next frame waits for its step; only the latest is drawn", async () => {
  const view = fakeView(true);
  view.polling = "/frames/x";
  update(view, message({ playing: true }));
  assert.equal(view.root.dataset.motion, "reduced");
  assert.equal(view.named("draw").length, 1);
  update(view, message({ scene: false, from: 2, epochs: [3], playing: true }), "polled");
  update(view, message({ scene: false, from: 3, epochs: [4], playing: true }), "polled");
  assert.equal(view.named("draw").length, 1);
  assert.ok(view.drawTimer);
  // The step is REDUCED_MOTION_MS after the last drawing: pretend it passed.
  view.frameDrawnAt -= REDUCED_MOTION_MS;
  view.playingDrawnAt -= REDUCED_MOTION_MS;
  clearTimeout(view.drawTimer);
  showFrame(view, true);
  assert.equal(view.named("draw").length, 2);
  assert.equal(view.frame.epoch, 4);
  assert.equal(view.drawTimer, null);
  assert.ok(Number(view.root.dataset.shortestPlayingGap) >= REDUCED_MOTION_MS);
  assert.equal(view.root.dataset.playingDraws, "2");
});

test("showFrame refreshes the cursor's read-out when it shows, without speaking", () => {
  const view = fakeView();
  update(view, message());
  view.cursorShown = true;
  showFrame(view, false);
  assert.deepEqual(view.named("readCursor"), [["readCursor", false]]);
  assert.equal(reducedMotion({ root: view.root, motion: null }), false);
});
