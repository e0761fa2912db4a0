// The plane's keyboard cursor: while the plane has the keyboard's focus, a cell the arrow keys
// move (Shift: CURSOR_JUMP cells; Home and End), whose read-out shows in the tooltip beside it
// and is said in the view's `.readout` live region when a key moves it. The cells and the words
// are access.js's; the view (view.js) holds the cursor (`cursor`, `cursorShown`) and calls these.

import { cellBounds, cellReadout, moveCursor } from "./access.js";
import { pointsOf } from "./plane.js";

export const TOOLTIP_GAP_PX = 8;  // between the cursor's cell and its tooltip

// The tooltip's left edge for a cell from `cellLeft` to `cellRight` (pixels on the plane's
// canvas, `width` wide): right of the cell where the tooltip fits there, else left of it; the
// cell stays in sight. Never left of the canvas.
export function tooltipLeft(cellLeft, cellRight, tipWidth, width) {
  const x = cellRight + TOOLTIP_GAP_PX + tipWidth <= width ? cellRight + TOOLTIP_GAP_PX : cellLeft - TOOLTIP_GAP_PX - tipWidth;
  return Math.max(0, x);
}

export function showCursor(view, shown) {
  view.cursorShown = shown;
  if (shown) readCursor(view, true); else view.tooltip.hidden = true;
  view.draw();
}

// Arrow keys, Home and End move the cursor; Enter and Delete draw (view.drawKey); every other
// key is the page's (Tab, the playback shortcuts). Handled keys stop here: arrows would scroll
// the page.
export function cursorKey(view, event) {
  if (event.ctrlKey || event.altKey || event.metaKey) return;
  if (view.drawKey(event)) return;
  const moved = moveCursor(view.cursor, event.key, event.shiftKey);
  if (!moved) return;
  event.preventDefault();
  event.stopPropagation();
  view.cursor = moved;
  view.cursorShown = true;
  readCursor(view, true);
  view.draw();
}

// The read-out at the cursor in the tooltip beside its cell; `announce`: and in the live
// region (a key moved it; a new frame under a still cursor only refreshes what is shown).
export function readCursor(view, announce) {
  if (!view.scene || !view.frame) return;
  const sc = view.scene;
  const lines = cellReadout(view.cursor, sc.extent, view.frame.grid, sc.resolution, pointsOf(view), undefined,
                            !!sc.regression);
  const text = lines.join("\n");
  if (view.tooltip.textContent !== text) view.tooltip.textContent = text;
  view.tooltip.hidden = false;
  if (announce) view.readout.textContent = lines.join(". ");
  const t = view.toPlane;
  if (t) {
    const [left, right, , top] = cellBounds(view.cursor, sc.extent);
    const width = view.plane.clientWidth || 400;
    view.tooltip.style.left = `${tooltipLeft(t.px(left), t.px(right), view.tooltip.offsetWidth, width)}px`;
    view.tooltip.style.top = `${t.py(top)}px`;
  }
}
