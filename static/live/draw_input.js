// Drawing your own points on the plane (dataset `drawn`), the view's side: the tool bar above the
// plane, a click or a key that adds or removes a point, and the whole drawing sent to the page,
// which puts it in the link and starts a run on it. The points' arithmetic (the grid, the link's
// format, the words) is draw.js's; the view (view.js) holds the drawing and calls these with it.
//
// The view's state these read and write: `drawn` (the drawing on screen, [[x, y, class], ...];
// null: not drawing), `drawSent` (the drawing last sent, until a scene brings it back) and
// `drawRevision` (bumped with every new drawing: the plane redraws its points).

import { cellBounds } from "./access.js";
import { HIT_PX, addPoint, changeText, countText, encodePoints, lastPointIn, nearestPoint, removePoint } from "./draw.js";

export const PENDING_MS = 10000;  // a drawing sent this recently and not back yet outlives its view

// Which drawing the view shows when a scene brings `draw` (live_canvas.py's `drawing`):
// "pending", an edit another view of this page sent and the page has not brought back yet (a
// view mounted anew, while a page run replaces another, takes it over); "scene", the page's,
// when this view sent nothing since or the scene brings back what it sent; "own", the view's
// edit still on its way.
export function drawingToShow(drawSent, drawn, draw, pending, now) {
  if (drawSent === null && pending && pending.text !== draw.text && !drawn && draw.editable
      && now - pending.at < PENDING_MS) return "pending";
  if (drawSent === null || draw.text === drawSent) return "scene";
  return "own";
}

// The plane's coordinates [x, y] of the pixel (mx, my) on its canvas, or null outside the plot.
// `t` is the plane's transform (plane.js's `toPlane`).
export function planeAt(t, mx, my) {
  if (mx < t.left || mx > t.left + t.plotW || my < t.top || my > t.top + t.plotH) return null;
  return [t.x0 + (mx - t.left) / t.plotW * (t.x1 - t.x0), t.y1 - (my - t.top) / t.plotH * (t.y1 - t.y0)];
}

// The view's way to send a trigger to the page. Streamlit keeps one pending trigger message per
// component: one sent before the server ran the one before it (a resync, say, while a busy server
// has yet to run the points just drawn) replaces it, and the drawing would never reach the page.
// So a drawing not brought back yet rides along with every other trigger.
export function sendingDrawing(view, send) {
  return (name, value) => {
    send(name, value);
    if (name !== "points" && view.drawSent !== null) send("points", view.drawSent);
  };
}

// The scene's drawing (null: the scene has none, and the tool bar hides).
export function setDrawing(view, draw) {
  view.drawTools.hidden = !draw;
  if (!draw) { view.drawn = null; view.drawSent = null; return; }
  const pending = window.__moonsDrawPending;
  const shown = drawingToShow(view.drawSent, view.drawn, draw, pending, Date.now());
  if (shown === "pending") {
    view.drawn = pending.points.map((p) => [...p]);
    view.drawSent = pending.text;
    view.drawRevision += 1;
    view.setTriggerValue("points", pending.text);     // sent again: this view's own to wait for
  } else if (shown === "scene") {
    view.drawn = draw.points.map((p) => [...p]);
    view.drawSent = null;
    view.drawRevision += 1;
  }
  if (pending && pending.text === draw.text) window.__moonsDrawPending = null;
  const sc = view.scene;
  view.drawClasses.forEach((input, cls) => {
    input.disabled = !draw.editable;
    input.nextElementSibling.textContent = `class ${cls} (${sc.colours.class_names[cls]} ${sc.class_shapes[cls]}s)`;
  });
  view.drawClear.disabled = !draw.editable;
  view.drawCount.textContent = countText(view.drawn, draw);
}

export function canDraw(view) {
  return !!(view.scene && view.scene.draw && view.scene.draw.editable && view.drawn);
}

// The class the tool bar's radio buttons pick.
export function drawClass(view) {
  return view.drawClasses[1].checked ? 1 : 0;
}

// A new drawing: shown at once, announced, and sent to the page. It waits in the page's window
// too (`__moonsDrawPending`), for a view mounted anew before the page brings it back.
export function editDrawing(view, points, verb, point) {
  if (!canDraw(view)) return;
  const draw = view.scene.draw;
  view.drawn = points;
  view.drawRevision += 1;
  view.drawSent = encodePoints(points, draw.step);
  window.__moonsDrawPending = { text: view.drawSent, points, at: Date.now() };
  view.drawCount.textContent = countText(points, draw);
  view.readout.textContent = changeText(verb, point, points, draw);
  view.root.dataset.drawn = view.drawSent;
  view.draw();
  view.setTriggerValue("points", view.drawSent);
}

// A click on the plane: on a point, remove it (Shift: add one there anyway); elsewhere, add
// one of the chosen class.
export function drawClick(view, event) {
  const t = view.toPlane;
  if (!canDraw(view) || !t) return;
  const box = view.plane.getBoundingClientRect();
  const mx = event.clientX - box.left, my = event.clientY - box.top;
  const at = planeAt(t, mx, my);
  if (!at) return;
  const hit = event.shiftKey ? -1 : nearestPoint(view.drawn, mx, my, t, HIT_PX * view.scale);
  if (hit >= 0) {
    editDrawing(view, removePoint(view.drawn, hit), "Removed", view.drawn[hit]);
    return;
  }
  addAt(view, ...at);
}

export function addAt(view, x, y) {
  const added = addPoint(view.drawn, x, y, drawClass(view), view.scene.draw);
  if (added.points) {
    editDrawing(view, added.points, "Added", added.point);
    return;
  }
  // Said where it was asked for (the cursor's read-out) and shown beside the count.
  view.readout.textContent = `Not added: ${added.reason}.`;
  view.drawCount.textContent = `${countText(view.drawn, view.scene.draw)}. Not added: ${added.reason}.`;
}

// Enter adds a point at the keyboard cursor's centre; Delete (or Backspace) removes the last
// point drawn in its cell. True: the key was the drawing's (and stops here).
export function drawKey(view, event) {
  if (!canDraw(view)) return false;
  const bounds = cellBounds(view.cursor, view.scene.extent);
  if (event.key === "Enter") {
    addAt(view, (bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2);
  } else if (event.key === "Delete" || event.key === "Backspace") {
    const index = lastPointIn(view.drawn, bounds);
    if (index >= 0) editDrawing(view, removePoint(view.drawn, index), "Removed", view.drawn[index]);
    else view.readout.textContent = "No drawn point in this cell.";
  } else {
    return false;
  }
  event.preventDefault();
  event.stopPropagation();
  view.cursorShown = true;
  return true;
}
