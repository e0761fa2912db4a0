// The moons trainer's live view, drawn in the browser: the predicted probability over the plane,
// its 0.5 contour, the points, axes, colour bar and legend, and the loss/accuracy curves.
//
// The component's entry: loaded once per browser tab by the tiny loader in
// app_pages/moons_trainer/live_canvas.py (from this app's static folder, app/static/live/) and
// called with every frame the server sends. A frame is one binary message (wire.js): a JSON
// header and typed arrays. The scene (points, axes, colours) comes only when it changes; each
// training frame brings the new probability grid as uint8 and the epochs finished since the last
// frame, which are appended to the curves. The page's header also carries the frame route's
// protocol (its close code, pause message, pace and socket timings: `protocol` in
// live_canvas.py); while a run plays the view asks the route for its frames (polling.js,
// transport.js).
//
// This module is the orchestrator: it builds the view's DOM, holds its state (on the one
// `LiveView` object, which tests and benchmarks read: bench/live_view.py), wires the listeners
// and timers, and keeps the test hooks (`parentElement.__moonsLive`, `window.__moonsLiveMounts`,
// the root's dataset). What it does is in its parts, functions that take the view:
//   frames.js      a frame arriving: scene, history, when it is drawn
//   polling.js     following a playing run through the frame route; the view's own Pause
//   layout.js      the layout, the canvases' sizes, presenter mode's fit; legends.js the legends
//   theme.js       Streamlit's theme colours and font
//   cursor.js      the plane's keyboard cursor and its read-out
//   draw_input.js  drawing your own points: the tool bar, clicks and keys
//   announce.js    the live region and the canvases' names
// What it draws is in plane.js, curves.js and network.js; what it says in access.js.
//
// For a screen reader: one polite live region announces a playing run every ANNOUNCE_EVERY
// epochs, a pause and the end (with what to do next); the canvases' names carry the current
// numbers, renamed at most every LABEL_MS while a run plays; the plane takes the focus, and the
// arrow keys move a cursor whose read-out is shown and announced. Under prefers-reduced-motion a
// playing run's picture changes in steps REDUCED_MOTION_MS apart (the view never tweens between
// frames in either case), and nothing moves until the learner presses Play.

import { startCursor } from "./access.js";
import { describe, speak } from "./announce.js";
import { cursorKey, readCursor, showCursor } from "./cursor.js";
import { drawClick, drawKey, editDrawing, sendingDrawing, setDrawing } from "./draw_input.js";
import { reducedMotion, update } from "./frames.js";
import { draw, fitting, label, sizeCanvas } from "./layout.js";
import { NetworkPane } from "./network.js";
import { hover } from "./plane.js";
import { pauseKeyDown, pausePressed, poll } from "./polling.js";
import { readTheme } from "./theme.js";

class LiveView {
  constructor(parent, setTriggerValue) {
    this.setTriggerValue = setTriggerValue;
    this.root = document.createElement("div");
    this.root.className = "moons-live";
    const mount = (window.__moonsLiveMounts || 0) + 1;
    // The status line changes with every frame: plain text to read, never a live region (it
    // would be read out ten times a second). `.announce` is the one that speaks, sparingly;
    // `.readout` speaks only when a key moves the plane's cursor.
    this.root.innerHTML = `
      <link rel="stylesheet" href="${new URL("../moons_live.css", import.meta.url).href}">
      <div class="status"></div>
      <p class="announce sr-only" role="status" aria-live="polite" aria-atomic="true"></p>
      <div class="panes">
        <figure class="boundary">
          <div class="draw-tools" role="group" aria-label="Draw your own points" hidden>
            <span class="draw-pick" role="radiogroup" aria-label="Class of the points you add">
              <label><input type="radio" name="moons-draw-${mount}" value="0" checked><span class="draw-name"></span></label>
              <label><input type="radio" name="moons-draw-${mount}" value="1"><span class="draw-name"></span></label>
            </span>
            <button type="button" class="draw-clear">Clear all points</button>
            <span class="draw-count"></span>
          </div>
          <canvas class="plane" role="application" tabindex="0" aria-label="Decision boundary"
                  aria-describedby="moons-live-${mount}-points"></canvas>
          <p class="describe" id="moons-live-${mount}-points" hidden></p>
          <div class="tooltip plane-tooltip" hidden></div>
          <div class="readout sr-only" aria-live="polite" aria-atomic="true"></div>
          <figcaption class="legend"></figcaption>
        </figure>
        <figure class="curves">
          <canvas class="loss" role="img" aria-label="Loss per epoch"></canvas>
          <canvas class="accuracy" role="img" aria-label="Accuracy per epoch"></canvas>
          <figcaption class="legend"></figcaption>
          <p class="history-note" hidden></p>
        </figure>
      </div>
      <figure class="network" hidden>
        <figcaption class="network-title"></figcaption>
        <div class="network-stage">
          <canvas class="edges" aria-hidden="true"></canvas>
        </div>
        <div class="legend network-legend"></div>
        <div class="network-zoom" role="group" aria-label="A unit's map, large" hidden>
          <canvas class="zoom-map" role="img"></canvas>
          <p class="zoom-text"></p>
          <button type="button" class="zoom-close">Close the large map</button>
        </div>
        <div class="tooltip network-tooltip" hidden></div>
      </figure>`;
    parent.appendChild(this.root);
    this.status = this.root.querySelector(".status");
    this.announcer = this.root.querySelector(".announce");
    this.plane = this.root.querySelector("canvas.plane");
    this.planeDescription = this.root.querySelector(".describe");
    this.tooltip = this.root.querySelector(".plane-tooltip");
    this.readout = this.root.querySelector(".readout");
    this.boundaryLegend = this.root.querySelector(".boundary .legend");
    // Drawing your own points (draw_input.js): shown when the scene has a drawing (dataset `drawn`).
    this.drawTools = this.root.querySelector(".draw-tools");
    this.drawCount = this.drawTools.querySelector(".draw-count");
    this.drawClasses = [...this.drawTools.querySelectorAll("input[type=radio]")];
    this.drawClear = this.drawTools.querySelector(".draw-clear");
    this.drawn = null;              // the drawing on screen: [[x, y, class], ...]; null: not drawing
    this.drawSent = null;           // the drawing last sent, until a scene brings it back
    this.drawRevision = 0;
    this.drawClear.addEventListener("click", () => editDrawing(this, [], "Removed", null));
    this.lossCanvas = this.root.querySelector("canvas.loss");
    this.accuracyCanvas = this.root.querySelector("canvas.accuracy");
    this.curvesLegend = this.root.querySelector(".curves .legend");
    this.panes = this.root.querySelector(".panes");
    this.boundaryFigure = this.root.querySelector("figure.boundary");
    this.curvesFigure = this.root.querySelector("figure.curves");
    this.historyNote = this.root.querySelector(".history-note");
    // The network view (network.js): shown when the scene has a network (the page's net=1).
    this.network = new NetworkPane(this, this.root.querySelector("figure.network"));
    this.scene = null;
    this.polling = null;
    this.frame = null;
    this.history = { epoch: [], train_loss: [], val_loss: [], train_acc: [], val_acc: [] };
    this.pinned = null;             // a pinned run's curves and both runs' names, or null
    this.frames = 0;
    window.__moonsLiveMounts = mount;
    this.root.dataset.mount = String(mount);
    this.spoken = null;             // what the live region last said of (access.js's announcement)
    this.labelledAt = null;         // when the canvases were last renamed
    this.frameDrawnAt = null;       // when a frame was last drawn, and a playing run's last frame
    this.playingDrawnAt = null;
    this.cursor = startCursor();    // the keyboard cursor's cell, shown while the plane has focus
    this.cursorShown = false;
    // Reduced motion is read at each frame: the learner may switch it while the page is open.
    this.motion = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : null;
    reducedMotion(this);
    this.themeKey = "";
    this.resize = new ResizeObserver(() => this.draw());
    this.resize.observe(this.root);
    // Presenter mode sizes the figures from the viewport: a change of the window's height, of
    // what sits above the view, or of the fonts once loaded moves the bottom of the first screen.
    this.onWindowResize = () => this.draw();
    window.addEventListener("resize", this.onWindowResize);
    if (document.fonts) document.fonts.ready.then(() => this.draw());
    this.cutTexts = new Map();      // canvas -> its texts that do not fit inside it (tests read them)
    // The app menu switches light/dark without sending a frame: look for it twice a second.
    this.themeTimer = setInterval(() => { if (this.readTheme()) this.draw(); }, 500);
    // The page's Pause button, pressed while this view plays, pauses the run from here at
    // once; in the capture phase, so before Streamlit's own handler sends its rerun.
    this.onClick = (event) => pausePressed(this, event);
    document.addEventListener("click", this.onClick, true);
    // Streamlit presses a button for its keyboard shortcut without a click event: the Pause
    // button's key pauses from here at once too (polling.js).
    this.onKey = (event) => pauseKeyDown(this, event);
    document.addEventListener("keydown", this.onKey, true);
    this.plane.addEventListener("mousemove", (e) => hover(this, e));
    this.plane.addEventListener("mouseleave", () => {
      if (this.cursorShown) this.readCursor(false); else this.tooltip.hidden = true;
    });
    // The cursor shows for the keyboard's focus; a click that focuses the plane keeps the
    // pointer's own read-out (an arrow key then shows the cursor).
    this.plane.addEventListener("focus", () => { if (this.plane.matches(":focus-visible")) showCursor(this, true); });
    this.plane.addEventListener("blur", () => showCursor(this, false));
    this.plane.addEventListener("keydown", (e) => cursorKey(this, e));
    this.plane.addEventListener("click", (e) => drawClick(this, e));
  }

  // What the view's parts call on one another, through the view (none imports another's
  // section): each method is its part's function of the same name, given the view.
  get scale() {
    return this.scene ? this.scene.scale : 1;
  }

  update(bytes, how = false) { return update(this, bytes, how); }            // frames.js
  poll(url) { poll(this, url); }                                                // polling.js
  setDrawing(draw) { setDrawing(this, draw); }                                  // draw_input.js
  drawKey(event) { return drawKey(this, event); }
  readCursor(announce) { readCursor(this, announce); }                          // cursor.js
  speak() { speak(this); }                                                      // announce.js
  describe() { describe(this); }
  readTheme() { return readTheme(this); }                                       // theme.js
  draw(polled = false) { draw(this, polled); }                                  // layout.js
  sizeCanvas(canvas, width, height) { return sizeCanvas(this, canvas, width, height); }
  label(ctx, text, x, y) { label(this, ctx, text, x, y); }
  fitting(ctx, texts, width) { return fitting(ctx, texts, width); }

  destroy() {
    this.resize.disconnect();
    this.network.destroy();
    window.removeEventListener("resize", this.onWindowResize);
    document.removeEventListener("click", this.onClick, true);
    document.removeEventListener("keydown", this.onKey, true);
    clearInterval(this.themeTimer);
    clearTimeout(this.drawTimer);
    this.root.remove();
  }
}

export function render(component) {
  const { parentElement, setTriggerValue } = component;
  let view = parentElement.__moonsLive;
  if (!view) {
    view = parentElement.__moonsLive = new LiveView(parentElement, setTriggerValue);
  }
  view.setTriggerValue = sendingDrawing(view, setTriggerValue);
  if (component.data) view.update(component.data);
  return () => {
    view.destroy();
    delete parentElement.__moonsLive;
  };
}
