// Laying the view out and drawing it: the plane beside the curves on a wide view (above them on
// a narrow one), the canvases sized for the screen's pixel ratio, the figures fitted into the
// first screen in presenter mode (the browser knows the projector's size; the server does not),
// and the texts on a canvas that do not fit inside it noted for tests (the root's
// data-clipped-canvas-text). What is drawn on the canvases is plane.js's, curves.js's and
// network.js's; they size their canvases and write their texts through the view's
// `sizeCanvas`, `label` and `fitting`, which are these.

import { drawCurves, pinnedKey } from "./curves.js";
import { drawLegends } from "./legends.js";
import { FONT_PX, drawBoundary } from "./plane.js";

export const FIT_BOTTOM_GAP_PX = 10;   // presenter mode: what stays free below the figures on the first screen
export const FIT_MIN_PLANE_PX = 240;   // ... and the shortest plane it draws when the screen has less room
export const CURVES_MS = 250;          // while a run plays, the curves are redrawn at most four times a second
export const WIDE_PX = 900;            // a view this wide (times the scale, up to 1.2) puts the curves beside the plane
export const PANE_GAP_PX = 16;         // between the plane and the curves beside it

// The widths of the plane's and the curves' figures in a view `total` pixels wide at `scale`.
export function columnWidths(total, scale) {
  const wide = total >= WIDE_PX * Math.min(scale, 1.2);
  const boundaryWidth = wide ? Math.floor(total * 0.58) : total;
  const curvesWidth = wide ? total - boundaryWidth - PANE_GAP_PX : total;
  return { wide, boundaryWidth, curvesWidth };
}

// How far `element` sits below where it would be with everything scrolled to the top: the
// scroll offsets of its ancestors, across the shadow root the view lives in.
export function scrolledAbove(element) {
  let total = window.scrollY || 0;
  for (let node = element; node; node = node.parentNode || node.host) {
    if (node.scrollTop) total += node.scrollTop;
  }
  return total;
}

// `canvas` sized `width` by `height` CSS pixels at the screen's pixel ratio, cleared; its 2D
// context, scaled to CSS pixels. Its cut texts start again.
export function sizeCanvas(view, canvas, width, height) {
  const ratio = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
  }
  if (canvas.style.width !== `${width}px`) canvas.style.width = `${width}px`;
  if (canvas.style.height !== `${height}px`) canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  view.cutTexts.set(canvas, []);
  return ctx;
}

// Draw the view: its layout, the legends, the plane, the curves (when they changed) and the
// network. `polled`: a frame of a playing run (the curves may wait for a later one).
export function draw(view, polled = false) {
  if (!view.scene || !view.frame) return;
  if (!view.themeKey) view.readTheme();
  const s = view.scale;
  const total = view.root.clientWidth || 800;     // read before this frame's writes: no forced layout
  if (view.root.style.getPropertyValue("--scale") !== String(s)) view.root.style.setProperty("--scale", String(s));
  // The canvases' text size, for tests that compare it with the normal view (canvas text is
  // not in the DOM).
  const fontPx = String(FONT_PX * s);
  for (const element of [view.root, view.boundaryFigure, view.curvesFigure]) {
    if (element.dataset.fontPx !== fontPx) element.dataset.fontPx = fontPx;
  }
  // Every frame: the counter and the plane's title show the same epoch.
  if (view.status.textContent !== view.frame.status) view.status.textContent = view.frame.status;
  const { wide, boundaryWidth, curvesWidth } = columnWidths(total, s);
  view.root.classList.toggle("wide", wide);
  // The legends and the history note first: in presenter mode their height is part of the room.
  drawLegends(view);
  const fr = view.frame;
  const note = fr.history_note || "";
  view.historyNote.hidden = !note;
  if (view.historyNote.textContent !== note) view.historyNote.textContent = note;
  const room = view.scene.fit_viewport ? firstScreenRoom(view) : null;
  const belowPlane = room === null ? 0 : belowCanvases(view.boundaryFigure, [view.plane]);
  drawBoundary(view, boundaryWidth, room === null ? null : Math.max(FIT_MIN_PLANE_PX, room - belowPlane));
  let curvesHeight = null;
  if (room !== null && wide) {
    // Beside the plane, the curves end where the boundary's figure ends (a plane as wide as
    // its column can be shorter than the room), the gap between the two panels included.
    const belowCurves = belowCanvases(view.curvesFigure, [view.lossCanvas, view.accuracyCanvas]);
    const column = Math.min(room, view.planeHeight + belowPlane);
    curvesHeight = Math.max(2 * 120 + 8, column - belowCurves + 8);
  }
  // The curves change with an epoch, a setting change, the replayed epoch, a size or a theme,
  // not with every frame: redrawn only then, and while a run plays at most every CURVES_MS (a
  // preset run finishes an epoch every frame or two; the boundary is what moves).
  const curvesLayout = [curvesWidth, wide ? view.planeHeight : 0, curvesHeight, s, view.themeKey,
                        view.sceneId, fr.changes.length, fr.epochs, fr.history_note, fr.replay_epoch,
                        pinnedKey(view.pinned)].join("|");
  const curvesKey = `${curvesLayout}|${view.history.epoch.length}`;
  const now = performance.now();
  const throttled = polled && curvesLayout === view.curvesLayout && now - view.curvesDrawn < CURVES_MS;
  if (curvesKey !== view.curvesKey && !throttled) {
    view.curvesKey = curvesKey;
    view.curvesLayout = curvesLayout;
    view.curvesDrawn = now;
    drawCurves(view, curvesWidth, wide ? (curvesHeight ?? view.planeHeight) : null);
  }
  view.network.draw();
  const cut = [...view.cutTexts.values()].flat().join("\n");
  if (view.root.dataset.clippedCanvasText !== cut) view.root.dataset.clippedCanvasText = cut;
}

// Presenter mode: the height from the top of the figures to the bottom of the first screen
// (the page scrolled to the top).
export function firstScreenRoom(view) {
  const top = view.panes.getBoundingClientRect().top + scrolledAbove(view.panes);
  return window.innerHeight - top - FIT_BOTTOM_GAP_PX;
}

// What a figure holds besides its canvases (legend, note, gaps), in pixels.
export function belowCanvases(figure, canvases) {
  const canvasHeight = canvases.reduce((sum, c) => sum + c.getBoundingClientRect().height, 0);
  return figure.getBoundingClientRect().height - canvasHeight;
}

// fillText, and a note of any text that does not fit inside its canvas (rotations included).
export function label(view, ctx, text, x, y) {
  ctx.fillText(text, x, y);
  const m = ctx.measureText(text), t = ctx.getTransform();
  const xs = [x - m.actualBoundingBoxLeft, x + m.actualBoundingBoxRight];
  const ys = [y - m.actualBoundingBoxAscent, y + m.actualBoundingBoxDescent];
  const ratio = window.devicePixelRatio || 1;
  for (const cx of xs) {
    for (const cy of ys) {
      const px = (t.a * cx + t.c * cy + t.e) / ratio, py = (t.b * cx + t.d * cy + t.f) / ratio;
      const { width, height } = ctx.canvas;
      if (px < -1 || py < -1 || px > width / ratio + 1 || py > height / ratio + 1) {
        view.cutTexts.get(ctx.canvas).push(text);
        return;
      }
    }
  }
}

// The longest of `texts` that fits in `width` pixels at the context's font (the last, else).
export function fitting(ctx, texts, width) {
  return texts.find((t) => ctx.measureText(t).width <= width) ?? texts[texts.length - 1];
}
