// A frame arriving at the view, and when it is drawn. A frame is one binary message (wire.js):
// the scene (points, axes, colours) when it changes, and the training frame: the probability
// grid as uint8 and the epochs finished since the last frame, appended to the curves' history.
// Under prefers-reduced-motion a playing run's frame may wait for its step (access.js's
// drawDelay): the latest frame is drawn then, those in between never are.
//
// `update` stores what the frame brings on the view (view.js: `scene`, `sceneId`, `frame`,
// `history`, `pinned`, the root's dataset for tests and benchmarks) and hands the rest to the
// view's other parts through the view (`setDrawing`, `speak`, `describe`, `poll`, `draw`, ...).

import { drawDelay } from "./access.js";
import { CURVE_FIELDS } from "./curves.js";
import { unpack } from "./wire.js";

// The frame's epochs appended to `history` (epochs from `frame.history_from` on replace what the
// view had there). False, and `history` untouched, where the frame starts past the view's last
// epoch: the epochs in between are missing.
export function appendHistory(history, frame) {
  if (frame.history_from > history.epoch.length) return false;
  for (const name of ["epoch", ...CURVE_FIELDS]) {
    history[name].length = frame.history_from;
    history[name].push(...frame.history[name]);
  }
  return true;
}

// A fingerprint of the picture, for tests and benchmarks that watch it change.
export function gridSum(grid) {
  return grid.reduce((a, b) => a + b, 0);
}

// Whether the learner asks for reduced motion, read at each frame (it may change while the page
// is open) and shown on the root (data-motion) for tests.
export function reducedMotion(view) {
  const reduced = !!(view.motion && view.motion.matches);
  const value = reduced ? "reduced" : "full";
  if (view.root.dataset.motion !== value) view.root.dataset.motion = value;
  return reduced;
}

// A frame: from the page (`how` false), polled while the run plays ("polled", dropped once the
// view stopped polling) or the answer to the view's Pause ("paused"). Returns its header (null
// for a dropped frame, undefined for one the view asked the page to send again).
export function update(view, bytes, how = false) {
  const { header, blobs } = unpack(bytes);
  const polled = how !== false;
  if (how === "polled" && view.polling === null) return null;
  if (header.scene) {
    view.scene = { ...header.scene, blobs };
    view.sceneId = header.scene.id;
    view.network.setScene(header.scene, blobs);
    view.setDrawing(header.scene.draw || null);
  } else if (header.scene_id !== view.sceneId) {
    view.setTriggerValue("resync", header.scene_id);   // a frame for a scene this view lacks
    return;
  }
  const frame = header.frame;
  if (!appendHistory(view.history, frame)) {
    view.setTriggerValue("resync", `history-${frame.history_from}`);
    return;
  }
  view.frame = { ...frame, grid: blobs.grid, pointProbability: blobs.point_probability };
  // A pinned run's curves (compare_panel.py) come with the page's frames and, while Play
  // trains a comparison link's pinned run too, with every frame; others leave them as they are.
  if ("pinned" in frame) view.pinned = frame.pinned;
  // The network's picture comes with some frames only (at most five a second while a run
  // plays); the page's own frames and the pause's may put its units in a new order.
  if (frame.network) view.network.update(frame.network, blobs, how !== "polled");
  view.frames += 1;
  view.root.dataset.frames = String(view.frames);
  view.root.dataset.epoch = String(frame.epoch);
  view.root.dataset.gridSum = String(gridSum(blobs.grid));
  if (!polled) view.readTheme();
  // Drawn now, or under reduced motion a playing run's frame may wait for its step (the
  // latest frame is drawn then; those in between never are).
  const wait = drawDelay(view.frameDrawnAt, performance.now(), reducedMotion(view), frame.playing);
  if (wait === 0) showFrame(view, polled);
  else view.drawTimer ??= setTimeout(() => showFrame(view, true), wait);
  view.speak();
  view.describe();
  if (!polled) {
    view.pausing = null;            // the page drew the run as the server has it
    // The frame route's protocol (its close code, pause message, pace and timings): the
    // page's header carries it, and the transport reads it from here.
    if (header.protocol) view.protocol = header.protocol;
    view.pauseKey = header.pause_key || null;
    view.pauseShortcut = header.pause_shortcut ? header.pause_shortcut.toUpperCase() : null;
    view.poll(header.poll || null);
  }
  // Drawn paused while the page below still shows the run playing: ask for the page now.
  if (!polled && header.settle) setTimeout(() => view.setTriggerValue("settle", Date.now()), 0);
  return header;
}

// Draw the latest frame, and note when: under reduced motion the next playing frame waits for
// its step; tests read the shortest gap between two of a playing run's pictures.
export function showFrame(view, polled) {
  clearTimeout(view.drawTimer);
  view.drawTimer = null;
  const started = performance.now();
  if (view.frame.playing && view.playingDrawnAt !== null) {
    const gap = started - view.playingDrawnAt;
    const shortest = Math.min(gap, Number(view.root.dataset.shortestPlayingGap || Infinity));
    view.root.dataset.shortestPlayingGap = shortest.toFixed(0);
  }
  view.playingDrawnAt = view.frame.playing ? started : null;
  view.frameDrawnAt = started;
  view.root.dataset.playingDraws = String(Number(view.root.dataset.playingDraws || 0) + (view.frame.playing ? 1 : 0));
  view.draw(polled);
  if (view.cursorShown) view.readCursor(false);
  view.root.dataset.drawMs = (performance.now() - started).toFixed(1);
}
