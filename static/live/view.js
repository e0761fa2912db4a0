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
// live_canvas.py); while a run plays the view asks the route for its frames (transport.js).
//
// This module is the orchestrator: DOM, theme, layout, the poll loop, the Pause listener, the
// keyboard cursor and the test hooks (`parentElement.__moonsLive`, `window.__moonsLiveMounts`,
// the root's dataset). What it draws is in plane.js and curves.js; what it says (announcements,
// the canvases' names, the cursor's read-out) in access.js.
//
// For a screen reader: one polite live region announces a playing run every ANNOUNCE_EVERY
// epochs, a pause and the end (with what to do next); the canvases' names carry the current
// numbers, renamed at most every LABEL_MS while a run plays; the plane takes the focus, and the
// arrow keys move a cursor whose read-out is shown and announced. Under prefers-reduced-motion a
// playing run's picture changes in steps REDUCED_MOTION_MS apart (the view never tweens between
// frames in either case), and nothing moves until the learner presses Play.

import {
  FILL_WORDS, announcement, cellBounds, cellReadout, classOneShare, curveLabels, drawDelay, latest, moveCursor,
  planeDescription, planeLabel, regressionDescription, regressionPlaneLabel, relabelNow, startCursor,
} from "./access.js";
import { CURVE_FIELDS, PINNED_ALPHA, drawCurves, pinnedKey, pinnedWords } from "./curves.js";
import {
  DRAW_HELP, HIT_PX, addPoint, changeText, countText, drawSummary, encodePoints, lastPointIn, nearestPoint, removePoint,
} from "./draw.js";
import { NetworkPane } from "./network.js";
import { FONT_PX, css, drawBoundary, hover, pointsOf, rgbOf } from "./plane.js";
import { HttpFrames, ROUTE_TRIES, SocketFrames, postPause, sleep } from "./transport.js";
import { unpack } from "./wire.js";

const FIT_BOTTOM_GAP_PX = 10;     // presenter mode: what stays free below the figures on the first screen
const FIT_MIN_PLANE_PX = 240;     // ... and the shortest plane it draws when the screen has less room
const CURVES_MS = 250;
const PENDING_MS = 10000;         // a drawing sent this recently and not back yet outlives its view            // while a run plays, the curves are redrawn at most four times a second

// A run's name from the server, as text in the legend's HTML.
function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Focus in a place that takes typed text: Streamlit's shortcuts are off there, so is the view's.
function isTyping(target) {
  return !!(target && target.closest &&
            target.closest("input, textarea, select, [contenteditable=''], [contenteditable=true]"));
}

// How far `element` sits below where it would be with everything scrolled to the top: the
// scroll offsets of its ancestors, across the shadow root the view lives in.
function scrolledAbove(element) {
  let total = window.scrollY || 0;
  for (let node = element; node; node = node.parentNode || node.host) {
    if (node.scrollTop) total += node.scrollTop;
  }
  return total;
}

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
    // Drawing your own points (draw.js): shown when the scene has a drawing (dataset `drawn`).
    this.drawTools = this.root.querySelector(".draw-tools");
    this.drawCount = this.drawTools.querySelector(".draw-count");
    this.drawClasses = [...this.drawTools.querySelectorAll("input[type=radio]")];
    this.drawClear = this.drawTools.querySelector(".draw-clear");
    this.drawn = null;              // the drawing on screen: [[x, y, class], ...]; null: not drawing
    this.drawSent = null;           // the drawing last sent, until a scene brings it back
    this.drawRevision = 0;
    this.drawClear.addEventListener("click", () => this.editDrawing([], "Removed", null));
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
    this.reducedMotion();
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
    this.onClick = (event) => this.pausePressed(event);
    document.addEventListener("click", this.onClick, true);
    // Streamlit presses a button for its keyboard shortcut without a click event: the Pause
    // button's key pauses from here at once too (not while typing, where Streamlit ignores it).
    this.onKey = (event) => {
      if (!this.pauseShortcut || event.key.toUpperCase() !== this.pauseShortcut) return;
      if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
      const button = document.querySelector(`.st-key-${this.pauseKey} button`);
      if (button) this.pausePressed({ target: button });
    };
    document.addEventListener("keydown", this.onKey, true);
    this.plane.addEventListener("mousemove", (e) => hover(this, e));
    this.plane.addEventListener("mouseleave", () => {
      if (this.cursorShown) this.readCursor(false); else this.tooltip.hidden = true;
    });
    // The cursor shows for the keyboard's focus; a click that focuses the plane keeps the
    // pointer's own read-out (an arrow key then shows the cursor).
    this.plane.addEventListener("focus", () => { if (this.plane.matches(":focus-visible")) this.showCursor(true); });
    this.plane.addEventListener("blur", () => this.showCursor(false));
    this.plane.addEventListener("keydown", (e) => this.cursorKey(e));
    this.plane.addEventListener("click", (e) => this.drawClick(e));
  }

  // -- drawing your own points ----------------------------------------------------------------------
  // The scene's drawing. A scene that brings back what this view sent last (or any, when it
  // sent nothing since) is what the page holds; while an edit is on its way, the view keeps its own.
  // An edit on its way outlives the view: a view mounted anew (Streamlit may re-create the
  // element while a page run replaces another) takes it over from the page's window.
  setDrawing(draw) {
    this.drawTools.hidden = !draw;
    if (!draw) { this.drawn = null; this.drawSent = null; return; }
    const pending = window.__moonsDrawPending;
    if (this.drawSent === null && pending && pending.text !== draw.text && !this.drawn && draw.editable
        && Date.now() - pending.at < PENDING_MS) {
      this.drawn = pending.points.map((p) => [...p]);
      this.drawSent = pending.text;
      this.drawRevision += 1;
      this.setTriggerValue("points", pending.text);     // sent again: this view's own to wait for
    } else if (this.drawSent === null || draw.text === this.drawSent) {
      this.drawn = draw.points.map((p) => [...p]);
      this.drawSent = null;
      this.drawRevision += 1;
    }
    if (pending && pending.text === draw.text) window.__moonsDrawPending = null;
    const sc = this.scene;
    this.drawClasses.forEach((input, cls) => {
      input.disabled = !draw.editable;
      input.nextElementSibling.textContent = `class ${cls} (${sc.colours.class_names[cls]} ${sc.class_shapes[cls]}s)`;
    });
    this.drawClear.disabled = !draw.editable;
    this.drawCount.textContent = countText(this.drawn, draw);
  }

  get canDraw() {
    return !!(this.scene && this.scene.draw && this.scene.draw.editable && this.drawn);
  }

  get drawClass() {
    return this.drawClasses[1].checked ? 1 : 0;
  }

  // A new drawing: shown at once, announced, and sent to the page (which puts it in the link and
  // starts a run on it).
  editDrawing(points, verb, point) {
    if (!this.canDraw) return;
    const draw = this.scene.draw;
    this.drawn = points;
    this.drawRevision += 1;
    this.drawSent = encodePoints(points, draw.step);
    window.__moonsDrawPending = { text: this.drawSent, points, at: Date.now() };
    this.drawCount.textContent = countText(points, draw);
    this.readout.textContent = changeText(verb, point, points, draw);
    this.root.dataset.drawn = this.drawSent;
    this.draw();
    this.setTriggerValue("points", this.drawSent);
  }

  // A click on the plane: on a point, remove it (Shift: add one there anyway); elsewhere, add
  // one of the chosen class.
  drawClick(event) {
    const t = this.toPlane;
    if (!this.canDraw || !t) return;
    const box = this.plane.getBoundingClientRect();
    const mx = event.clientX - box.left, my = event.clientY - box.top;
    if (mx < t.left || mx > t.left + t.plotW || my < t.top || my > t.top + t.plotH) return;
    const hit = event.shiftKey ? -1 : nearestPoint(this.drawn, mx, my, t, HIT_PX * this.scale);
    if (hit >= 0) {
      this.editDrawing(removePoint(this.drawn, hit), "Removed", this.drawn[hit]);
      return;
    }
    const x = t.x0 + (mx - t.left) / t.plotW * (t.x1 - t.x0);
    const y = t.y1 - (my - t.top) / t.plotH * (t.y1 - t.y0);
    this.addAt(x, y);
  }

  addAt(x, y) {
    const added = addPoint(this.drawn, x, y, this.drawClass, this.scene.draw);
    if (added.points) {
      this.editDrawing(added.points, "Added", added.point);
      return;
    }
    // Said where it was asked for (the cursor's read-out) and shown beside the count.
    this.readout.textContent = `Not added: ${added.reason}.`;
    this.drawCount.textContent = `${countText(this.drawn, this.scene.draw)}. Not added: ${added.reason}.`;
  }

  // Enter adds a point at the keyboard cursor's centre; Delete (or Backspace) removes the last
  // point drawn in its cell.
  drawKey(event) {
    if (!this.canDraw) return false;
    const bounds = cellBounds(this.cursor, this.scene.extent);
    if (event.key === "Enter") {
      this.addAt((bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2);
    } else if (event.key === "Delete" || event.key === "Backspace") {
      const index = lastPointIn(this.drawn, bounds);
      if (index >= 0) this.editDrawing(removePoint(this.drawn, index), "Removed", this.drawn[index]);
      else this.readout.textContent = "No drawn point in this cell.";
    } else {
      return false;
    }
    event.preventDefault();
    event.stopPropagation();
    this.cursorShown = true;
    return true;
  }

  reducedMotion() {
    const reduced = !!(this.motion && this.motion.matches);
    const value = reduced ? "reduced" : "full";
    if (this.root.dataset.motion !== value) this.root.dataset.motion = value;
    return reduced;
  }

  // -- the keyboard cursor ------------------------------------------------------------------------
  showCursor(shown) {
    this.cursorShown = shown;
    if (shown) this.readCursor(true); else this.tooltip.hidden = true;
    this.draw();
  }

  // Arrow keys (Shift: CURSOR_JUMP cells), Home and End move the cursor; every other key is the
  // page's (Tab, the playback shortcuts). Handled keys stop here: arrows would scroll the page.
  cursorKey(event) {
    if (event.ctrlKey || event.altKey || event.metaKey) return;
    if (this.drawKey(event)) return;
    const moved = moveCursor(this.cursor, event.key, event.shiftKey);
    if (!moved) return;
    event.preventDefault();
    event.stopPropagation();
    this.cursor = moved;
    this.cursorShown = true;
    this.readCursor(true);
    this.draw();
  }

  // The read-out at the cursor in the tooltip beside its cell; `announce`: and in the live
  // region (a key moved it; a new frame under a still cursor only refreshes what is shown).
  readCursor(announce) {
    if (!this.scene || !this.frame) return;
    const sc = this.scene;
    const lines = cellReadout(this.cursor, sc.extent, this.frame.grid, sc.resolution, pointsOf(this), undefined,
                              !!sc.regression);
    const text = lines.join("\n");
    if (this.tooltip.textContent !== text) this.tooltip.textContent = text;
    this.tooltip.hidden = false;
    if (announce) this.readout.textContent = lines.join(". ");
    const t = this.toPlane;
    if (t) {
      // Beside the cell, on the side with room: the cell stays in sight.
      const [left, right, , top] = cellBounds(this.cursor, sc.extent);
      const width = this.plane.clientWidth || 400, tipWidth = this.tooltip.offsetWidth;
      const x = t.px(right) + 8 + tipWidth <= width ? t.px(right) + 8 : t.px(left) - 8 - tipWidth;
      this.tooltip.style.left = `${Math.max(0, x)}px`;
      this.tooltip.style.top = `${t.py(top)}px`;
    }
  }

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

  readTheme() {
    const style = getComputedStyle(this.root);
    const text = style.getPropertyValue("--st-text-color") || style.color;
    const background = style.getPropertyValue("--st-background-color") || "#ffffff";
    const font = style.getPropertyValue("--st-font") || style.fontFamily || "sans-serif";
    const key = `${text}|${background}|${font}`;
    if (key === this.themeKey) return false;
    this.themeKey = key;
    this.text = rgbOf(text.trim(), [26, 29, 35]);
    this.background = rgbOf(background.trim(), [255, 255, 255]);
    this.font = font.trim();
    this.dark = this.background.reduce((a, b) => a + b, 0) < 3 * 128;
    this.root.dataset.theme = this.dark ? "dark" : "light";
    return true;
  }

  // While a run plays, frames come from the page's frame route (components/frame_route.py),
  // one request at a time, up to fifteen a second; the page itself does not rerun.
  poll(url) {
    if (url !== this.polling) {
      this.polling = url;
      if (url) this.pollLoop(url);
    }
    this.showState();
  }

  // Whether the view is following a playing run, for tests and the benchmark: "playing",
  // "pausing" (Pause pressed, the frame of where the run stopped not here yet) or "paused".
  showState() {
    this.root.dataset.state = this.polling ? "playing" : this.pausing ? "pausing" : "paused";
  }

  // Pause pressed while the run plays. The run stops now, through the frame route, and the view
  // shows the pause at once, then the frame of where the run stopped (the frame on screen may
  // be a slice or two behind): a busy browser takes a few hundred milliseconds to re-render
  // Streamlit's page for the button's rerun, which follows with the rest of the paused page
  // (the same model, the results).
  async pausePressed(event) {
    const url = this.polling;
    if (!url || !this.pauseKey || !event.target.closest) return;
    const button = event.target.closest(`.st-key-${this.pauseKey} button`);
    if (!button || button.disabled) return;
    this.polling = null;                  // no more frames: the loop ends
    const pausing = this.pausing = {};
    if (this.frame && this.frame.paused_status) this.frame = { ...this.frame, status: this.frame.paused_status };
    this.showState();
    this.draw();
    const bytes = await postPause(url, this.protocol, this.history.epoch.length);
    if (this.pausing !== pausing) return;  // the page has drawn since (Play again, a rerun)
    this.pausing = null;
    if (bytes && this.polling === null) this.update(bytes, "paused");
    this.showState();
  }

  async pollLoop(url) {
    // One loop at a time: a loop still waiting for its answer when the page hands the view the
    // same URL again (Pause, then Play within a second) ends instead of running beside the new one.
    const generation = this.pollGeneration = (this.pollGeneration || 0) + 1;
    const mine = () => this.polling === url && this.pollGeneration === generation;
    let frames = null;
    while (mine()) {
      const started = performance.now();
      try {
        if (frames === null) {
          frames = (this.socketsWork !== false && await SocketFrames.open(url, this.protocol)) || new HttpFrames(url);
          this.socketsWork = frames.kind === "socket";
          this.root.dataset.transport = frames.kind;
          this.transport = frames;
          if (!mine()) break;
        }
        const bytes = await frames.next(this.history.epoch.length);
        if (!mine()) break;
        if (bytes === null) {
          // The server refuses a socket for a view it does not know before opening it, so a
          // socket that failed to open for a view that is gone says nothing about sockets.
          if (frames.kind === "http" && !frames.delivered) this.socketsWork = undefined;
          this.polling = null;
          break;
        }
        this.routeWorked = true;
        const header = this.update(bytes, "polled");
        if (header && header.ended) {           // the run ended: the page shows the results
          this.polling = null;
          this.setTriggerValue("ended", Date.now());
          break;
        }
      } catch (error) {
        // A socket that never delivered a frame is not coming through (a proxy, a filter):
        // fetch from now on. Otherwise the server is restarting: try again shortly.
        if (frames && frames.kind === "socket" && !frames.delivered) this.socketsWork = false;
        // Fetches that fail too, before this view ever had a frame by the route: nothing gets
        // through. The page feeds the view by reruns from now on, and says so.
        if (frames && frames.kind === "http" && !this.routeWorked && error.message !== "busy"
            && (this.routeFailures = (this.routeFailures || 0) + 1) >= ROUTE_TRIES) {
          this.polling = null;
          frames.close();
          this.transport = null;
          this.setTriggerValue("no_route", Date.now());
          break;
        }
        if (frames) frames.close();
        frames = this.transport = null;
        await sleep(500);
      }
      await sleep(Math.max(0, this.protocol.frame_ms - (performance.now() - started)));
    }
    if (frames) frames.close();
    if (this.transport === frames) this.transport = null;
    if (this.pollGeneration === generation) this.showState();   // ended, gone or paused: whichever way
  }

  // A frame: from the page (`how` false), polled while the run plays ("polled", dropped once the
  // view stopped polling) or the answer to the view's Pause ("paused").
  update(bytes, how = false) {
    const { header, blobs } = unpack(bytes);
    const polled = how !== false;
    if (how === "polled" && this.polling === null) return null;
    if (header.scene) {
      this.scene = { ...header.scene, blobs };
      this.sceneId = header.scene.id;
      this.network.setScene(header.scene, blobs);
      this.setDrawing(header.scene.draw || null);
    } else if (header.scene_id !== this.sceneId) {
      this.setTriggerValue("resync", header.scene_id);   // a frame for a scene this view lacks
      return;
    }
    const frame = header.frame;
    if (frame.history_from > this.history.epoch.length) {
      this.setTriggerValue("resync", `history-${frame.history_from}`);
      return;
    }
    for (const name of ["epoch", ...CURVE_FIELDS]) {
      this.history[name].length = frame.history_from;
      this.history[name].push(...frame.history[name]);
    }
    this.frame = { ...frame, grid: blobs.grid, pointProbability: blobs.point_probability };
    // A pinned run's curves (compare_panel.py) come with the page's frames and, while Play
    // trains a comparison link's pinned run too, with every frame; others leave them as they are.
    if ("pinned" in frame) this.pinned = frame.pinned;
    // The network's picture comes with some frames only (at most five a second while a run
    // plays); the page's own frames and the pause's may put its units in a new order.
    if (frame.network) this.network.update(frame.network, blobs, how !== "polled");
    this.frames += 1;
    this.root.dataset.frames = String(this.frames);
    this.root.dataset.epoch = String(frame.epoch);
    // A fingerprint of the picture, for tests and benchmarks that watch it change.
    this.root.dataset.gridSum = String(blobs.grid.reduce((a, b) => a + b, 0));
    if (!polled) this.readTheme();
    // Drawn now, or under reduced motion a playing run's frame may wait for its step (the
    // latest frame is drawn then; those in between never are).
    const wait = drawDelay(this.frameDrawnAt, performance.now(), this.reducedMotion(), frame.playing);
    if (wait === 0) this.showFrame(polled);
    else this.drawTimer ??= setTimeout(() => this.showFrame(true), wait);
    this.speak();
    this.describe();
    if (!polled) {
      this.pausing = null;            // the page drew the run as the server has it
      // The frame route's protocol (its close code, pause message, pace and timings): the
      // page's header carries it, and the transport reads it from here.
      if (header.protocol) this.protocol = header.protocol;
      this.pauseKey = header.pause_key || null;
      this.pauseShortcut = header.pause_shortcut ? header.pause_shortcut.toUpperCase() : null;
      this.poll(header.poll || null);
    }
    // Drawn paused while the page below still shows the run playing: ask for the page now.
    if (!polled && header.settle) setTimeout(() => this.setTriggerValue("settle", Date.now()), 0);
    return header;
  }

  // Draw the latest frame, and note when: under reduced motion the next playing frame waits for
  // its step; tests read the shortest gap between two of a playing run's pictures.
  showFrame(polled) {
    clearTimeout(this.drawTimer);
    this.drawTimer = null;
    const started = performance.now();
    if (this.frame.playing && this.playingDrawnAt !== null) {
      const gap = started - this.playingDrawnAt;
      const shortest = Math.min(gap, Number(this.root.dataset.shortestPlayingGap || Infinity));
      this.root.dataset.shortestPlayingGap = shortest.toFixed(0);
    }
    this.playingDrawnAt = this.frame.playing ? started : null;
    this.frameDrawnAt = started;
    this.root.dataset.playingDraws = String(Number(this.root.dataset.playingDraws || 0) + (this.frame.playing ? 1 : 0));
    this.draw(polled);
    if (this.cursorShown) this.readCursor(false);
    this.root.dataset.drawMs = (performance.now() - started).toFixed(1);
  }

  // The live region: a playing run every ANNOUNCE_EVERY epochs, a pause, the end (access.js).
  speak() {
    const fr = this.frame;
    const said = announcement(this.spoken, {
      epoch: fr.epoch, epochs: fr.epochs, playing: !!fr.playing, endNote: fr.end_note,
      metrics: latest(this.history), regression: !!(this.scene && this.scene.regression),
    });
    this.spoken = said.memory;
    if (said.text) this.announcer.textContent = said.text;
  }

  // The canvases' names and the plane's description, with the current numbers; while a run
  // plays at most every LABEL_MS. The plane keeps its name while it has the focus: some screen
  // readers read a focused element's new name aloud, over the cursor's read-out.
  describe() {
    const now = performance.now(), fr = this.frame, sc = this.scene;
    if (!relabelNow(this.labelledAt, now, !!fr.playing)) return;
    this.labelledAt = now;
    const metrics = latest(this.history);
    const set = (element, name) => { if (element.getAttribute("aria-label") !== name) element.setAttribute("aria-label", name); };
    const [loss, accuracy] = curveLabels(metrics, sc.bayes_accuracy, !!sc.regression);
    const pinned = pinnedWords(this.pinned);
    set(this.lossCanvas, loss + pinned.loss);
    set(this.accuracyCanvas, accuracy + pinned.accuracy);
    if (!this.plane.matches(":focus")) {
      set(this.plane, sc.regression ? regressionPlaneLabel(fr.epoch, fr.epochs, metrics, fr.grid)
        : planeLabel(fr.epoch, fr.epochs, metrics, classOneShare(fr.grid)));
    }
    if (this.describedScene !== this.sceneId) {       // the points change with the scene only
      this.describedScene = this.sceneId;
      const describePoints = sc.regression ? regressionDescription : planeDescription;
      const points = sc.groups.length ? describePoints(
        sc.groups, (name) => sc.blobs[`${name}_y`], sc.class_shapes, sc.colours.class_names) : "";
      this.planeDescription.textContent = !sc.draw ? points
        : `${points || drawSummary(sc.draw.points, sc.draw)} ${sc.draw.editable ? DRAW_HELP : ""}`.trim();
    }
  }

  get scale() {
    return this.scene ? this.scene.scale : 1;
  }

  // -- layout ---------------------------------------------------------------------------------
  sizeCanvas(canvas, width, height) {
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
    this.cutTexts.set(canvas, []);
    return ctx;
  }

  // `polled`: a frame of a playing run (the curves may wait for a later one).
  draw(polled = false) {
    if (!this.scene || !this.frame) return;
    if (!this.themeKey) this.readTheme();
    const s = this.scale;
    const total = this.root.clientWidth || 800;     // read before this frame's writes: no forced layout
    if (this.root.style.getPropertyValue("--scale") !== String(s)) this.root.style.setProperty("--scale", String(s));
    // The canvases' text size, for tests that compare it with the normal view (canvas text is
    // not in the DOM).
    const fontPx = String(FONT_PX * s);
    for (const element of [this.root, this.boundaryFigure, this.curvesFigure]) {
      if (element.dataset.fontPx !== fontPx) element.dataset.fontPx = fontPx;
    }
    // Every frame: the counter and the plane's title show the same epoch.
    if (this.status.textContent !== this.frame.status) this.status.textContent = this.frame.status;
    const wide = total >= 900 * Math.min(s, 1.2);
    this.root.classList.toggle("wide", wide);
    const boundaryWidth = wide ? Math.floor(total * 0.58) : total;
    const curvesWidth = wide ? total - boundaryWidth - 16 : total;
    // The legends and the history note first: in presenter mode their height is part of the room.
    this.drawLegends();
    const fr = this.frame;
    const note = fr.history_note || "";
    this.historyNote.hidden = !note;
    if (this.historyNote.textContent !== note) this.historyNote.textContent = note;
    const room = this.scene.fit_viewport ? this.firstScreenRoom() : null;
    const belowPlane = room === null ? 0 : this.belowCanvases(this.boundaryFigure, [this.plane]);
    drawBoundary(this, boundaryWidth, room === null ? null : Math.max(FIT_MIN_PLANE_PX, room - belowPlane));
    let curvesHeight = null;
    if (room !== null && wide) {
      // Beside the plane, the curves end where the boundary's figure ends (a plane as wide as
      // its column can be shorter than the room), the gap between the two panels included.
      const belowCurves = this.belowCanvases(this.curvesFigure, [this.lossCanvas, this.accuracyCanvas]);
      const column = Math.min(room, this.planeHeight + belowPlane);
      curvesHeight = Math.max(2 * 120 + 8, column - belowCurves + 8);
    }
    // The curves change with an epoch, a setting change, the replayed epoch, a size or a theme,
    // not with every frame: redrawn only then, and while a run plays at most every CURVES_MS (a
    // preset run finishes an epoch every frame or two; the boundary is what moves).
    const curvesLayout = [curvesWidth, wide ? this.planeHeight : 0, curvesHeight, s, this.themeKey,
                          this.sceneId, fr.changes.length, fr.epochs, fr.history_note, fr.replay_epoch,
                          pinnedKey(this.pinned)].join("|");
    const curvesKey = `${curvesLayout}|${this.history.epoch.length}`;
    const now = performance.now();
    const throttled = polled && curvesLayout === this.curvesLayout && now - this.curvesDrawn < CURVES_MS;
    if (curvesKey !== this.curvesKey && !throttled) {
      this.curvesKey = curvesKey;
      this.curvesLayout = curvesLayout;
      this.curvesDrawn = now;
      drawCurves(this, curvesWidth, wide ? (curvesHeight ?? this.planeHeight) : null);
    }
    this.network.draw();
    const cut = [...this.cutTexts.values()].flat().join("\n");
    if (this.root.dataset.clippedCanvasText !== cut) this.root.dataset.clippedCanvasText = cut;
  }

  // Presenter mode: the height from the top of the figures to the bottom of the first screen
  // (the page scrolled to the top). The browser knows the projector's size; the server does not.
  firstScreenRoom() {
    const top = this.panes.getBoundingClientRect().top + scrolledAbove(this.panes);
    return window.innerHeight - top - FIT_BOTTOM_GAP_PX;
  }

  // What a figure holds besides its canvases (legend, note, gaps), in pixels.
  belowCanvases(figure, canvases) {
    const canvasHeight = canvases.reduce((sum, c) => sum + c.getBoundingClientRect().height, 0);
    return figure.getBoundingClientRect().height - canvasHeight;
  }

  // fillText, and a note of any text that does not fit inside its canvas (rotations included).
  label(ctx, text, x, y) {
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
          this.cutTexts.get(ctx.canvas).push(text);
          return;
        }
      }
    }
  }

  // The longest of `texts` that fits in `width` pixels at the context's font (the last, else).
  fitting(ctx, texts, width) {
    return texts.find((t) => ctx.measureText(t).width <= width) ?? texts[texts.length - 1];
  }

  drawLegends() {
    const sc = this.scene;
    const swatch = (colour, shape) => `<span class="swatch ${shape}" style="--c:${colour}"></span>`;
    // The class by colour and shape, the split by fill: five entries instead of one per pair.
    // Regression: the colour and shape are the target's sign.
    const classWords = sc.regression ? ["target below 0", "target 0 or more"] : ["class 0", "class 1"];
    const items = [0, 1].map((label) => `<span>${swatch(sc.colours.classes[label], `${sc.class_shapes[label]} filled`)}` +
                                        `${classWords[label]}: ${sc.colours.class_names[label]} ${sc.class_shapes[label]}s</span>`);
    for (const group of sc.groups) {
      items.push(`<span>${swatch(css(this.text), `circle ${group.fill}`)}${group.label}: ${FILL_WORDS[group.fill]}</span>`);
    }
    const board = sc.draw && !sc.groups.length;     // drawn points too few to train: no model yet
    if (board) items.push(`<span>${swatch(css(this.text), "circle filled")}your points: filled</span>`);
    else if (sc.regression) items.push("<span>shading: the model's output value, \u22121 to 1</span>");
    else items.push(`<span>${swatch(css(this.text), "line")}decision boundary (P = 0.5)</span>`);
    if (sc.blobs.bayes) items.push(`<span>${swatch(sc.colours.bayes, "dashed")}best possible boundary (Bayes)</span>`);
    const boundaryLegend = items.join("");
    // Compared with what was set last, not with innerHTML (the browser respells the style
    // attributes): drawn with every frame, the legends are rebuilt only when they change.
    if (this.boundaryLegendHtml !== boundaryLegend) this.boundaryLegend.innerHTML = this.boundaryLegendHtml = boundaryLegend;
    const [train, val] = sc.colours.curves;
    // Comparing: this run's lines are named by what sets it apart, the pinned run's follow in grey.
    const pinned = this.pinned;
    const now = pinned ? `${escapeHtml(pinned.now_label)} ` : "";
    const curveItems = [
      `<span>${swatch(train, "line")}${now}train</span>`, `<span>${swatch(val, "dashed")}${now}validation</span>`,
    ];
    if (pinned) {
      const grey = css(this.text, PINNED_ALPHA), name = escapeHtml(pinned.label);
      curveItems.push(`<span class="pinned">${swatch(grey, "line")}${name} train</span>`,
                      `<span class="pinned">${swatch(grey, "dashed")}${name} validation</span>`);
    }
    curveItems.push(sc.regression ? "<span>R\u00b2: 1 is a perfect fit; no ceiling for regression</span>"
      : Number.isFinite(sc.bayes_accuracy)
      ? `<span>${swatch(sc.colours.bayes, "dotted")}best possible test accuracy ${(100 * sc.bayes_accuracy).toFixed(2)}%</span>`
      : "<span>best possible test accuracy unknown (drawn points)</span>");
    const curves = curveItems.join("");
    if (this.curvesLegendHtml !== curves) this.curvesLegend.innerHTML = this.curvesLegendHtml = curves;
  }
}

export function render(component) {
  const { parentElement, setTriggerValue } = component;
  let view = parentElement.__moonsLive;
  if (!view) {
    view = parentElement.__moonsLive = new LiveView(parentElement, setTriggerValue);
  }
  view.setTriggerValue = setTriggerValue;
  if (component.data) view.update(component.data);
  return () => {
    view.destroy();
    delete parentElement.__moonsLive;
  };
}
