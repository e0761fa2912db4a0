// What the view says to a screen reader with each frame: the polite live region (`.announce`),
// which speaks sparingly (a playing run every ANNOUNCE_EVERY epochs, a pause, the end, with what
// to do next), and the names of the canvases and the plane's description, which carry the
// current numbers. The words are access.js's (and curves.js's, draw.js's); this decides when,
// and writes them into the view's elements (view.js).

import {
  announcement, classOneShare, curveLabels, latest, planeDescription, planeLabel, regressionDescription,
  regressionPlaneLabel, relabelNow,
} from "./access.js";
import { pinnedWords } from "./curves.js";
import { DRAW_HELP, drawSummary } from "./draw.js";

// An element's attribute set only when it changes: a screen reader may read a name that is set
// again, even to the same words.
export function setAttributeIfNew(element, name, value) {
  if (element.getAttribute(name) !== value) element.setAttribute(name, value);
}

// The live region: a playing run every ANNOUNCE_EVERY epochs, a pause, the end (access.js).
// `view.spoken` is what it last said of.
export function speak(view) {
  const fr = view.frame;
  const said = announcement(view.spoken, {
    epoch: fr.epoch, epochs: fr.epochs, playing: !!fr.playing, endNote: fr.end_note,
    metrics: latest(view.history), regression: !!(view.scene && view.scene.regression),
  });
  view.spoken = said.memory;
  if (said.text) view.announcer.textContent = said.text;
}

// The plane's description: its points in words, and for a drawing the drawing's and how to draw.
export function pointsDescription(sc) {
  const describePoints = sc.regression ? regressionDescription : planeDescription;
  const points = sc.groups.length ? describePoints(
    sc.groups, (name) => sc.blobs[`${name}_y`], sc.class_shapes, sc.colours.class_names) : "";
  return !sc.draw ? points
    : `${points || drawSummary(sc.draw.points, sc.draw)} ${sc.draw.editable ? DRAW_HELP : ""}`.trim();
}

// The canvases' names and the plane's description, with the current numbers; while a run
// plays at most every LABEL_MS (`view.labelledAt`: when last). The plane keeps its name while it
// has the focus: some screen readers read a focused element's new name aloud, over the cursor's
// read-out.
export function describe(view) {
  const now = performance.now(), fr = view.frame, sc = view.scene;
  if (!relabelNow(view.labelledAt, now, !!fr.playing)) return;
  view.labelledAt = now;
  const metrics = latest(view.history);
  const [loss, accuracy] = curveLabels(metrics, sc.regression ? sc.best_r2 : sc.bayes_accuracy, !!sc.regression);
  const pinned = pinnedWords(view.pinned);
  setAttributeIfNew(view.lossCanvas, "aria-label", loss + pinned.loss);
  setAttributeIfNew(view.accuracyCanvas, "aria-label", accuracy + pinned.accuracy);
  if (!view.plane.matches(":focus")) {
    setAttributeIfNew(view.plane, "aria-label", sc.regression ? regressionPlaneLabel(fr.epoch, fr.epochs, metrics, fr.grid)
      : planeLabel(fr.epoch, fr.epochs, metrics, classOneShare(fr.grid)));
  }
  if (view.describedScene !== view.sceneId) {       // the points change with the scene only
    view.describedScene = view.sceneId;
    view.planeDescription.textContent = pointsDescription(sc);
  }
}
