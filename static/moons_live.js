// The moons trainer's live view, drawn in the browser: the predicted probability over the plane,
// its 0.5 contour, the points, axes, colour bar and legend, and the loss/accuracy curves.
//
// Loaded once per browser tab by the tiny loader in app_pages/moons_trainer/live_canvas.py and
// called with every frame the server sends. A frame is one binary message (see `unpack`): a JSON
// header and typed arrays. The scene (points, axes, colours) comes only when it changes; each
// training frame brings the new probability grid as uint8 and the epochs finished since the last
// frame, which are appended to the curves. Nothing here fetches anything.

const FONT_PX = 12;
const FIT_BOTTOM_GAP_PX = 10;     // presenter mode: what stays free below the figures on the first screen
const FIT_MIN_PLANE_PX = 240;     // ... and the shortest plane it draws when the screen has less room
const FRAME_MS = 66;              // a frame at most every 66 ms while polling: up to fifteen a second
const CURVES_MS = 250;            // while a run plays, the curves are redrawn at most four times a second
const CURVE_FIELDS = ["train_loss", "val_loss", "train_acc", "val_acc"];

// ---- the wire format ------------------------------------------------------------------------
// [u32 little-endian header length][header JSON, UTF-8][blobs, each at a 4-byte aligned offset].
// header.blobs maps a name to [offset, length, dtype] with offsets from the start of the message.
function unpack(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headerLength)));
  const blobs = {};
  for (const [name, [offset, length, dtype]] of Object.entries(header.blobs || {})) {
    const copy = bytes.slice(offset, offset + length); // own, aligned buffer
    blobs[name] = dtype === "float32" ? new Float32Array(copy.buffer) : copy;
  }
  return { header, blobs };
}

// ---- where frames come from ------------------------------------------------------------------
// A WebSocket on the frame route (`<url>/stream`): each frame is one message answering the
// view's "ready, I hold this many epochs", so a slow browser is never sent frames it cannot
// draw. A message costs the browser a fraction of a fetch (no request, no headers, no loader),
// which matters with a whole class drawing ten frames a second. Where the socket cannot open
// (a proxy that passes only plain HTTP), or closes or stalls before its first frame, the same
// answers come by `fetch`.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const ROUTE_TRIES = 3;            // failed fetches, with no frame ever, before the page feeds the view
const GONE = 4404;                // the server's close code for a token it does not know
// Both under the run's lease (1.8 s, workbench/common/jobs.py): a view that asks for no frame
// for that long is taken for a closed tab, and its run stops.
const SOCKET_OPEN_MS = 1000;      // a socket not open by then is given up for fetch
const SOCKET_PATIENCE_MS = 1200;  // ... and so is one that answers nothing for this long

class SocketFrames {
  static open(url, timeoutMs = SOCKET_OPEN_MS) {
    return new Promise((resolve) => {
      const address = new URL(`${url}/stream`, document.baseURI);
      address.protocol = address.protocol === "https:" ? "wss:" : "ws:";
      let socket;
      try {
        socket = new WebSocket(address);
      } catch (error) {
        resolve(null);
        return;
      }
      socket.binaryType = "arraybuffer";
      const timer = setTimeout(() => { socket.onerror = null; socket.close(); resolve(null); }, timeoutMs);
      socket.onopen = () => { clearTimeout(timer); resolve(new SocketFrames(socket)); };
      socket.onerror = () => { clearTimeout(timer); resolve(null); };
    });
  }

  constructor(socket) {
    this.kind = "socket";
    this.socket = socket;
    this.pending = null;
    this.delivered = false;           // whether a frame ever came this way
    socket.onmessage = (event) => {
      this.delivered = true;
      this.settle((p) => p.resolve(new Uint8Array(event.data)));
    };
    socket.onclose = (event) => this.settle((p) => (event.code === GONE ? p.resolve(null)
                                                                         : p.reject(new Error("closed"))));
  }

  settle(how) {
    const pending = this.pending;
    this.pending = null;
    if (pending) {
      clearTimeout(pending.timer);
      how(pending);
    }
  }

  next(since) {            // the next frame, null once the server no longer knows this view
    if (this.socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error("closed"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.settle((p) => p.reject(new Error("no answer"))), SOCKET_PATIENCE_MS);
      this.pending = { resolve, reject, timer };
      this.socket.send(String(since));
    });
  }

  pause() {               // whether the message went (else the view posts it)
    if (this.socket.readyState !== WebSocket.OPEN) return false;
    this.socket.send("pause");
    return true;
  }

  close() {
    this.socket.onclose = null;
    this.socket.close();
    this.settle((p) => p.resolve(null));
  }
}

class HttpFrames {
  constructor(url) {
    this.kind = "http";
    this.source = new URL(url, document.baseURI);
    this.delivered = false;
  }

  async next(since) {
    this.source.searchParams.set("since", String(since));
    const response = await fetch(this.source, { cache: "no-store" });
    // Too many asks (the server's or the proxy's limits): not gone, try again shortly.
    if (response.status === 429 || response.status === 503) throw new Error("busy");
    // The route's own 404 for a view it no longer knows says so; any other refusal is a proxy
    // (or a filter) that does not pass the route.
    if (!response.ok && response.headers.get("X-Frame-Route") === "gone") return null;
    if (!response.ok) throw new Error("blocked");
    this.delivered = true;
    return new Uint8Array(await response.arrayBuffer());
  }

  pause() {               // no socket to say it on: the view posts it
    return false;
  }

  close() {}
}

// ---- small helpers --------------------------------------------------------------------------
function niceTicks(lo, hi, count) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / Math.max(count, 1);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) || raw;
  const ticks = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + 1e-9; t += step) {
    ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

function formatTick(value, step) {
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return value.toFixed(decimals).replace("-", "\u2212");
}

function hexToRgb(hex) {
  const h = hex.replace("#", "");
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
}

function rgbOf(cssColour, fallback) {
  const m = /rgba?\(([^)]+)\)/.exec(cssColour || "");
  if (m) return m[1].split(",").slice(0, 3).map((v) => parseFloat(v));
  if ((cssColour || "").startsWith("#") && cssColour.length >= 7) return hexToRgb(cssColour);
  return fallback;
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

function mix(a, b, t) {
  return [0, 1, 2].map((i) => a[i] + (b[i] - a[i]) * t);
}

function css(rgb, alpha = 1) {
  return `rgba(${rgb.map((v) => Math.round(v)).join(",")},${alpha})`;
}

// Marching squares: the segments where a grid (rows = y, cols = x, values at the nodes) crosses
// `level`, in grid coordinates (col, row). Saddle cells are resolved by the cell's mean.
function contourSegments(values, rows, cols, level) {
  const segments = [];
  const at = (r, c) => values[r * cols + c];
  const lerp = (a, b) => (level - a) / (b - a);
  for (let r = 0; r < rows - 1; r++) {
    for (let c = 0; c < cols - 1; c++) {
      const v0 = at(r, c), v1 = at(r, c + 1), v2 = at(r + 1, c + 1), v3 = at(r + 1, c);
      const code = (v0 > level ? 1 : 0) | (v1 > level ? 2 : 0) | (v2 > level ? 4 : 0) | (v3 > level ? 8 : 0);
      if (code === 0 || code === 15) continue;
      const bottom = [c + lerp(v0, v1), r], right = [c + 1, r + lerp(v1, v2)];
      const top = [c + lerp(v3, v2), r + 1], left = [c, r + lerp(v0, v3)];
      const centreHigh = (v0 + v1 + v2 + v3) / 4 > level;
      const cases = {
        1: [[left, bottom]], 2: [[bottom, right]], 3: [[left, right]], 4: [[right, top]],
        5: centreHigh ? [[left, top], [bottom, right]] : [[left, bottom], [right, top]],
        6: [[bottom, top]], 7: [[left, top]], 8: [[top, left]], 9: [[top, bottom]],
        10: centreHigh ? [[bottom, left], [top, right]] : [[bottom, right], [top, left]],
        11: [[top, right]], 12: [[right, left]], 13: [[right, bottom]], 14: [[bottom, left]],
      };
      for (const s of cases[code]) segments.push(s);
    }
  }
  return segments;
}

// ---- the view -------------------------------------------------------------------------------
class LiveView {
  constructor(parent, setTriggerValue) {
    this.setTriggerValue = setTriggerValue;
    this.root = document.createElement("div");
    this.root.className = "moons-live";
    this.root.innerHTML = `
      <link rel="stylesheet" href="${new URL("moons_live.css", import.meta.url).href}">
      <div class="status" role="status" aria-live="off"></div>
      <div class="panes">
        <figure class="boundary">
          <canvas class="plane" role="img"></canvas>
          <div class="tooltip" hidden></div>
          <figcaption class="legend"></figcaption>
        </figure>
        <figure class="curves">
          <canvas class="loss" role="img" aria-label="Loss per epoch"></canvas>
          <canvas class="accuracy" role="img" aria-label="Accuracy per epoch"></canvas>
          <figcaption class="legend"></figcaption>
          <p class="history-note" hidden></p>
        </figure>
      </div>`;
    parent.appendChild(this.root);
    this.status = this.root.querySelector(".status");
    this.plane = this.root.querySelector("canvas.plane");
    this.tooltip = this.root.querySelector(".tooltip");
    this.boundaryLegend = this.root.querySelector(".boundary .legend");
    this.lossCanvas = this.root.querySelector("canvas.loss");
    this.accuracyCanvas = this.root.querySelector("canvas.accuracy");
    this.curvesLegend = this.root.querySelector(".curves .legend");
    this.panes = this.root.querySelector(".panes");
    this.boundaryFigure = this.root.querySelector("figure.boundary");
    this.curvesFigure = this.root.querySelector("figure.curves");
    this.historyNote = this.root.querySelector(".history-note");
    this.scene = null;
    this.polling = null;
    this.frame = null;
    this.history = { epoch: [], train_loss: [], val_loss: [], train_acc: [], val_acc: [] };
    this.frames = 0;
    window.__moonsLiveMounts = (window.__moonsLiveMounts || 0) + 1;
    this.root.dataset.mount = String(window.__moonsLiveMounts);
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
    this.plane.addEventListener("mousemove", (e) => this.hover(e));
    this.plane.addEventListener("mouseleave", () => { this.tooltip.hidden = true; });
  }

  destroy() {
    this.resize.disconnect();
    window.removeEventListener("resize", this.onWindowResize);
    document.removeEventListener("click", this.onClick, true);
    clearInterval(this.themeTimer);
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

  // Whether the view is following a playing run, for tests and the benchmark.
  showState() {
    this.root.dataset.state = this.polling ? "playing" : "paused";
  }

  // Pause pressed while the run plays. The run stops now, through the frame route, and the view
  // shows the pause: a busy browser takes a few hundred milliseconds to re-render Streamlit's
  // page for the button's rerun, which follows with the rest of the paused page (the model as
  // it stays, the results).
  pausePressed(event) {
    const url = this.polling;
    if (!url || !this.pauseKey || !event.target.closest) return;
    const button = event.target.closest(`.st-key-${this.pauseKey} button`);
    if (!button || button.disabled) return;
    this.polling = null;                  // no more frames: the loop ends
    if (!(this.transport && this.transport.pause())) {
      fetch(new URL(`${url}/pause`, document.baseURI), { method: "POST", cache: "no-store" })
        .catch(() => {});                 // the page's own Pause still stops the run
    }
    if (this.frame && this.frame.paused_status) this.frame = { ...this.frame, status: this.frame.paused_status };
    this.showState();
    this.draw();
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
          frames = (this.socketsWork !== false && await SocketFrames.open(url)) || new HttpFrames(url);
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
        const header = this.update(bytes, true);
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
      await sleep(Math.max(0, FRAME_MS - (performance.now() - started)));
    }
    if (frames) frames.close();
    if (this.transport === frames) this.transport = null;
    if (this.pollGeneration === generation) this.showState();   // ended, gone or paused: whichever way
  }

  update(bytes, polled = false) {
    const { header, blobs } = unpack(bytes);
    if (polled && this.polling === null) return null;
    if (header.scene) {
      this.scene = { ...header.scene, blobs };
      this.sceneId = header.scene.id;
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
    this.frames += 1;
    this.root.dataset.frames = String(this.frames);
    this.root.dataset.epoch = String(frame.epoch);
    // A fingerprint of the picture, for tests and benchmarks that watch it change.
    this.root.dataset.gridSum = String(blobs.grid.reduce((a, b) => a + b, 0));
    if (!polled) this.readTheme();
    const started = performance.now();
    this.draw(polled);
    this.root.dataset.drawMs = (performance.now() - started).toFixed(1);
    if (!polled) {
      this.pauseKey = header.pause_key || null;
      this.poll(header.poll || null);
    }
    // Drawn paused while the page below still shows the run playing: ask for the page now.
    if (!polled && header.settle) setTimeout(() => this.setTriggerValue("settle", Date.now()), 0);
    return header;
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
    this.drawBoundary(boundaryWidth, room === null ? null : Math.max(FIT_MIN_PLANE_PX, room - belowPlane));
    let curvesHeight = null;
    if (room !== null && wide) {
      // Beside the plane, the curves end where the boundary's figure ends (a plane as wide as
      // its column can be shorter than the room), the gap between the two panels included.
      const belowCurves = this.belowCanvases(this.curvesFigure, [this.lossCanvas, this.accuracyCanvas]);
      const column = Math.min(room, this.planeHeight + belowPlane);
      curvesHeight = Math.max(2 * 120 + 8, column - belowCurves + 8);
    }
    // The curves change with an epoch, a setting change, a size or a theme, not with every
    // frame: redrawn only then, and while a run plays at most every CURVES_MS (a preset run
    // finishes an epoch every frame or two; the boundary is what moves).
    const curvesLayout = [curvesWidth, wide ? this.planeHeight : 0, curvesHeight, s, this.themeKey,
                          this.sceneId, fr.changes.length, fr.epochs, fr.history_note].join("|");
    const curvesKey = `${curvesLayout}|${this.history.epoch.length}`;
    const now = performance.now();
    const throttled = polled && curvesLayout === this.curvesLayout && now - this.curvesDrawn < CURVES_MS;
    if (curvesKey !== this.curvesKey && !throttled) {
      this.curvesKey = curvesKey;
      this.curvesLayout = curvesLayout;
      this.curvesDrawn = now;
      this.drawCurves(curvesWidth, wide ? (curvesHeight ?? this.planeHeight) : null);
    }
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

  // -- the plane ------------------------------------------------------------------------------
  // `limit`: the tallest the canvas may be (presenter mode's room on the first screen), else
  // the scene's max_height.
  drawBoundary(width, limit = null) {
    const sc = this.scene, fr = this.frame, s = this.scale;
    const font = FONT_PX * s;
    const [x0, x1, y0, y1] = sc.extent;
    const margin = { left: font * 4.2, right: font * 7.6, top: font * 2.4, bottom: font * 3.6 };
    let plotW = width - margin.left - margin.right;
    let plotH = plotW * (y1 - y0) / (x1 - x0);
    const maxH = (limit ?? sc.max_height) - margin.top - margin.bottom;
    if (plotH > maxH) { plotH = maxH; plotW = plotH * (x1 - x0) / (y1 - y0); }
    const height = plotH + margin.top + margin.bottom;
    this.planeHeight = height;
    const ctx = this.sizeCanvas(this.plane, width, height);
    const left = margin.left + Math.max(0, (width - margin.left - margin.right - plotW) / 2);
    const top = margin.top;
    const px = (x) => left + (x - x0) / (x1 - x0) * plotW;
    const py = (y) => top + (y1 - y) / (y1 - y0) * plotH;
    this.toPlane = { px, py, left, top, plotW, plotH, x0, x1, y0, y1 };

    // Shading: one pixel per grid node, stretched so each node's colour is centred on it.
    const n = sc.resolution;
    const low = hexToRgb(sc.colours.class0_shade), high = hexToRgb(sc.colours.class1_shade);
    // P = 0.5 is the page background in dark mode: a white band would glare on a projector.
    const white = this.dark ? this.background : hexToRgb(sc.colours.middle);
    const base = this.background;
    // The grid is uint8: the colour of each of its 256 values, worked out once per theme.
    const shadeKey = [this.themeKey, this.sceneId, n].join("|");
    if (this.shadeKey !== shadeKey) {
      this.shadeKey = shadeKey;
      this.shades = new Uint8ClampedArray(256 * 3);
      for (let v = 0; v < 256; v++) {
        const p = v / 255;
        const colour = p < 0.5 ? mix(low, white, p / 0.5) : mix(white, high, (p - 0.5) / 0.5);
        this.shades.set(mix(base, colour, sc.shade_opacity), 3 * v);
      }
      this.tile = document.createElement("canvas");
      this.tile.width = n; this.tile.height = n;
      this.tileImage = new ImageData(n, n);
    }
    const image = this.tileImage, shades = this.shades;
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) {
        const v = 3 * fr.grid[r * n + c];
        const i = ((n - 1 - r) * n + c) * 4;        // row 0 is the lowest y: the image's bottom
        image.data[i] = shades[v]; image.data[i + 1] = shades[v + 1]; image.data[i + 2] = shades[v + 2];
        image.data[i + 3] = 255;
      }
    }
    const tile = this.tile;
    tile.getContext("2d").putImageData(image, 0, 0);
    const dx = (x1 - x0) / (n - 1), dy = (y1 - y0) / (n - 1);
    ctx.save();
    ctx.beginPath(); ctx.rect(left, top, plotW, plotH); ctx.clip();
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(tile, px(x0 - dx / 2), py(y1 + dy / 2), px(x1 + dx / 2) - px(x0 - dx / 2),
                  py(y0 - dy / 2) - py(y1 + dy / 2));

    // The decision boundary (P = 0.5) and, on request, the best possible one.
    const toXY = ([c, r]) => [px(x0 + c * dx), py(y0 + r * dy)];
    this.strokeSegments(ctx, contourSegments(fr.grid, n, n, 127.5).map((seg) => seg.map(toXY)),
                        css(this.text), 3 * s, []);      // P = 0.5 is 127.5 of 255
    if (sc.blobs.bayes) {
      if (this.bayesFor !== this.sceneId) {         // fixed for the scene: traced once
        this.bayesFor = this.sceneId;
        this.bayesSegments = contourSegments(sc.blobs.bayes, n, n, 0);
      }
      this.strokeSegments(ctx, this.bayesSegments.map((seg) => seg.map(toXY)),
                          sc.colours.bayes, 3 * s, [8 * s, 6 * s]);
    }

    ctx.restore();

    // What does not change from frame to frame (points, axes, colour bar) is drawn once per
    // size, theme and scene into a layer of its own, and laid over each frame's shading.
    const ratio = window.devicePixelRatio || 1;
    const layerKey = [width, height, ratio, this.themeKey, this.sceneId].join('|');
    if (this.layerKey !== layerKey) {
      this.layerKey = layerKey;
      this.layer = this.layer || document.createElement('canvas');
      this.layer.width = Math.round(width * ratio); this.layer.height = Math.round(height * ratio);
      const layer = this.layer.getContext('2d');
      layer.setTransform(ratio, 0, 0, ratio, 0, 0);
      this.cutTexts.set(this.layer, []);
      this.drawStatic(layer, { sc, s, font, px, py, left, top, plotW, plotH, margin, x0, x1, y0, y1, low, white, high, base });
    }
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.layer, 0, 0);
    ctx.restore();

    ctx.fillStyle = css(this.text);
    ctx.font = `${font * 1.15}px ${this.font}`;
    ctx.textAlign = "left"; ctx.textBaseline = "middle";
    this.label(ctx, this.fitting(ctx, [`Epoch ${fr.epoch}: the solid line is the decision boundary (P = 0.5)`,
                                       `Epoch ${fr.epoch}: solid line = decision boundary`, `Epoch ${fr.epoch}`],
                                 width - left), left, margin.top / 2);

    this.plane.setAttribute("aria-label",
      `Decision boundary of the model at epoch ${fr.epoch}, over the ${sc.groups.map((g) => g.label).join(", ")} points`);
  }

  drawStatic(ctx, { sc, s, font, px, py, left, top, plotW, plotH, margin, x0, x1, y0, y1, low, white, high, base }) {
    ctx.save();
    ctx.beginPath(); ctx.rect(left, top, plotW, plotH); ctx.clip();
    // The points: train circles, validation diamonds, test crosses.
    for (const group of sc.groups) {
      const xy = sc.blobs[`${group.name}_xy`], labels = sc.blobs[`${group.name}_y`];
      const size = group.size * s;
      ctx.lineWidth = 0.6 * s;
      ctx.strokeStyle = sc.colours.outline;
      for (let i = 0; i < labels.length; i++) {
        const x = px(xy[2 * i]), y = py(xy[2 * i + 1]);
        ctx.globalAlpha = 0.85;
        ctx.fillStyle = sc.colours.classes[labels[i]];
        ctx.beginPath();
        if (group.symbol === "diamond") {
          ctx.moveTo(x, y - size); ctx.lineTo(x + size, y); ctx.lineTo(x, y + size); ctx.lineTo(x - size, y);
          ctx.closePath(); ctx.fill(); ctx.stroke();
        } else if (group.symbol === "x") {
          ctx.strokeStyle = sc.colours.classes[labels[i]]; ctx.lineWidth = 2 * s;
          ctx.moveTo(x - size, y - size); ctx.lineTo(x + size, y + size);
          ctx.moveTo(x + size, y - size); ctx.lineTo(x - size, y + size); ctx.stroke();
          ctx.strokeStyle = sc.colours.outline; ctx.lineWidth = 0.6 * s;
        } else {
          ctx.arc(x, y, size, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
        }
      }
    }
    ctx.globalAlpha = 1;
    ctx.restore();

    // Frame, ticks, titles.
    const ink = css(this.text), faint = css(this.text, 0.35);
    ctx.strokeStyle = faint; ctx.lineWidth = s; ctx.strokeRect(left, top, plotW, plotH);
    ctx.fillStyle = ink;
    ctx.font = `${font}px ${this.font}`;
    const xTicks = niceTicks(x0, x1, Math.max(3, Math.floor(plotW / (font * 6))));
    const yTicks = niceTicks(y0, y1, Math.max(3, Math.floor(plotH / (font * 4))));
    const xStep = xTicks[1] - xTicks[0] || 1, yStep = yTicks[1] - yTicks[0] || 1;
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    for (const t of xTicks) {
      ctx.fillRect(px(t) - s / 2, top + plotH, s, font * 0.4);
      this.label(ctx, formatTick(t, xStep), px(t), top + plotH + font * 0.6);
    }
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    for (const t of yTicks) {
      ctx.fillRect(left - font * 0.4, py(t) - s / 2, font * 0.4, s);
      this.label(ctx, formatTick(t, yStep), left - font * 0.6, py(t));
    }
    ctx.textAlign = "center"; ctx.textBaseline = "bottom";
    this.label(ctx, sc.x_title, left + plotW / 2, top + plotH + margin.bottom - font * 0.3);
    ctx.save();
    ctx.translate(left - margin.left + font * 0.9, top + plotH / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    this.label(ctx, sc.y_title, 0, 0);
    ctx.restore();
    // Colour bar.
    const barX = left + plotW + font * 1.2, barW = font * 1.1, barTop = top + plotH * 0.1, barH = plotH * 0.8;
    const gradient = ctx.createLinearGradient(0, barTop + barH, 0, barTop);
    for (const [stop, colour] of [[0, low], [0.5, white], [1, high]]) {
      gradient.addColorStop(stop, css(mix(base, colour, sc.shade_opacity)));
    }
    ctx.fillStyle = gradient; ctx.fillRect(barX, barTop, barW, barH);
    ctx.strokeStyle = faint; ctx.strokeRect(barX, barTop, barW, barH);
    ctx.fillStyle = ink; ctx.font = `${font}px ${this.font}`;
    ctx.textAlign = "left"; ctx.textBaseline = "middle";
    for (const p of [0, 0.25, 0.5, 0.75, 1]) {
      const y = barTop + barH * (1 - p);
      ctx.fillRect(barX + barW, y - s / 2, font * 0.3, s);
      this.label(ctx, `${Math.round(p * 100)}%`, barX + barW + font * 0.45, y);
    }
    ctx.save();
    ctx.translate(barX + barW + font * 4.4, barTop + barH / 2);
    ctx.rotate(Math.PI / 2);
    ctx.textAlign = "center";
    this.label(ctx, "P(class 1)", 0, 0);
    ctx.restore();
  }

  strokeSegments(ctx, segments, colour, width, dash) {
    ctx.strokeStyle = colour; ctx.lineWidth = width; ctx.setLineDash(dash); ctx.lineCap = "round";
    ctx.beginPath();
    for (const [[ax, ay], [bx, by]] of segments) { ctx.moveTo(ax, ay); ctx.lineTo(bx, by); }
    ctx.stroke();
    ctx.setLineDash([]);
  }

  hover(event) {
    const t = this.toPlane, sc = this.scene, fr = this.frame;
    if (!t || !sc || !fr) return;
    const box = this.plane.getBoundingClientRect();
    const mx = event.clientX - box.left, my = event.clientY - box.top;
    if (mx < t.left || mx > t.left + t.plotW || my < t.top || my > t.top + t.plotH) {
      this.tooltip.hidden = true;
      return;
    }
    let best = null, bestDistance = (8 * this.scale) ** 2, offset = 0;
    for (const group of sc.groups) {
      const xy = sc.blobs[`${group.name}_xy`], labels = sc.blobs[`${group.name}_y`];
      for (let i = 0; i < labels.length; i++) {
        const d = (t.px(xy[2 * i]) - mx) ** 2 + (t.py(xy[2 * i + 1]) - my) ** 2;
        if (d < bestDistance) { bestDistance = d; best = { group, i, index: offset + i, x: xy[2 * i], y: xy[2 * i + 1], label: labels[i] }; }
      }
      offset += labels.length;
    }
    const f = (v) => v.toFixed(2).replace("-", "\u2212");
    let text;
    if (best) {
      const p = fr.pointProbability ? fr.pointProbability[best.index] / 255 : NaN;
      text = `${best.group.label} point, class ${best.label}\nx\u2081 = ${f(best.x)}, x\u2082 = ${f(best.y)}\n` +
             `model's P(class 1) \u2248 ${(100 * p).toFixed(0)}%`;
    } else {
      const x = t.x0 + (mx - t.left) / t.plotW * (t.x1 - t.x0);
      const y = t.y1 - (my - t.top) / t.plotH * (t.y1 - t.y0);
      const n = sc.resolution;
      const c = Math.round((x - t.x0) / (t.x1 - t.x0) * (n - 1));
      const r = Math.round((y - t.y0) / (t.y1 - t.y0) * (n - 1));
      const p = fr.grid[r * n + c] / 255;
      text = `x\u2081 = ${f(x)}, x\u2082 = ${f(y)}\nmodel's P(class 1) \u2248 ${(100 * p).toFixed(0)}%`;
    }
    this.tooltip.textContent = text;
    this.tooltip.hidden = false;
    this.tooltip.style.left = `${Math.min(mx + 14, box.width - 200)}px`;
    this.tooltip.style.top = `${my + 14}px`;
  }

  // -- curves ---------------------------------------------------------------------------------
  // `columnHeight`: beside the plane, the two panels share this height; below it (null), each
  // is 230 px (times the scale) tall.
  drawCurves(width, columnHeight) {
    const sc = this.scene, s = this.scale, fr = this.frame;
    const h = this.history;
    const each = columnHeight ? Math.max(120, (columnHeight - 8) / 2) : 230 * s;
    const panels = columnHeight ? [[this.lossCanvas, width, each], [this.accuracyCanvas, width, each]]
                               : [[this.lossCanvas, width / 2 - 6, each], [this.accuracyCanvas, width / 2 - 6, each]];
    const epochs = Math.max(fr.epochs, h.epoch.length ? h.epoch[h.epoch.length - 1] : 0, 1);
    const loss = [...h.train_loss, ...h.val_loss].filter(Number.isFinite);
    const lowAccuracy = Math.min(0.5, ...h.train_acc, ...h.val_acc);
    const panelSpecs = [
      { title: "Loss (BCE)", fields: ["train_loss", "val_loss"], lo: 0,
        hi: Math.max(0.1, ...loss) * 1.05, percent: false },
      { title: "Accuracy", fields: ["train_acc", "val_acc"], lo: lowAccuracy - 0.02, hi: 1.005,
        percent: true, ceiling: sc.bayes_accuracy },
    ];
    panels.forEach(([canvas, w, hgt], k) => this.drawPanel(canvas, w, hgt, panelSpecs[k], epochs));
  }

  drawPanel(canvas, width, height, spec, epochs) {
    const s = this.scale, font = FONT_PX * s, sc = this.scene, h = this.history;
    const ctx = this.sizeCanvas(canvas, width, height);
    const m = { left: font * 3.6, right: font * 0.8, top: font * 1.8, bottom: font * 2.8 };
    const w = width - m.left - m.right, hh = height - m.top - m.bottom;
    const px = (e) => m.left + e / epochs * w;
    const py = (v) => m.top + (spec.hi - v) / (spec.hi - spec.lo) * hh;
    const ink = css(this.text), faint = css(this.text, 0.15);
    ctx.font = `${font}px ${this.font}`;
    ctx.fillStyle = ink;
    ctx.textAlign = "left"; ctx.textBaseline = "middle";
    this.label(ctx, spec.title, m.left, m.top / 2);
    const yTicks = niceTicks(spec.lo, spec.hi, Math.max(2, Math.floor(hh / (font * 2.5))));
    const yStep = yTicks[1] - yTicks[0] || 1;
    ctx.textAlign = "right";
    for (const t of yTicks) {
      ctx.fillStyle = faint; ctx.fillRect(m.left, py(t), w, s);
      ctx.fillStyle = ink;
      this.label(ctx, spec.percent ? `${(100 * t).toFixed(yStep < 0.01 ? 1 : 0)}%` : formatTick(t, yStep),
                   m.left - font * 0.4, py(t));
    }
    const xTicks = niceTicks(0, epochs, Math.max(2, Math.floor(w / (font * 4))));
    const xStep = xTicks[1] - xTicks[0] || 1;
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    for (const t of xTicks) this.label(ctx, formatTick(t, Math.max(xStep, 1)), px(t), m.top + hh + font * 0.4);
    ctx.textBaseline = "bottom";
    this.label(ctx, "epoch", m.left + w / 2, height - font * 0.1);
    ctx.save();
    ctx.beginPath(); ctx.rect(m.left, m.top, w, hh); ctx.clip();
    for (const change of this.frame.changes) {      // where a setting changed mid-run
      ctx.strokeStyle = css(this.text, 0.55); ctx.lineWidth = 1.2 * s; ctx.setLineDash([3 * s, 3 * s]);
      ctx.beginPath(); ctx.moveTo(px(change.epoch), m.top); ctx.lineTo(px(change.epoch), m.top + hh); ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = ink; ctx.textAlign = "left"; ctx.textBaseline = "top";
      ctx.fillText(change.short, px(change.epoch) + 3 * s, m.top + 2 * s);
    }
    if (spec.ceiling !== undefined) {
      ctx.strokeStyle = sc.colours.bayes; ctx.lineWidth = 2 * s; ctx.setLineDash([2 * s, 3 * s]);
      ctx.beginPath(); ctx.moveTo(px(0), py(spec.ceiling)); ctx.lineTo(px(epochs), py(spec.ceiling)); ctx.stroke();
      ctx.setLineDash([]);
    }
    spec.fields.forEach((field, k) => {
      ctx.strokeStyle = sc.colours.curves[k]; ctx.lineWidth = 2 * s;
      ctx.setLineDash(k ? [6 * s, 4 * s] : []);
      ctx.beginPath();
      h[field].forEach((v, i) => {
        const x = px(h.epoch[i]), y = py(Math.min(Math.max(v, spec.lo - 1), spec.hi + 1));
        if (i === 0 || h.epoch[i] !== h.epoch[i - 1] + 1) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      });
      if (h[field].length === 1) {
        ctx.arc(px(h.epoch[0]), py(h[field][0]), 2 * s, 0, 2 * Math.PI);
      }
      ctx.stroke();
    });
    ctx.setLineDash([]);
    ctx.restore();
    ctx.strokeStyle = css(this.text, 0.35); ctx.lineWidth = s; ctx.strokeRect(m.left, m.top, w, hh);
  }

  drawLegends() {
    const sc = this.scene;
    const swatch = (colour, shape) => `<span class="swatch ${shape}" style="--c:${colour}"></span>`;
    const items = [];
    for (const group of sc.groups) {
      for (const label of [0, 1]) {
        items.push(`<span>${swatch(sc.colours.classes[label], group.symbol)}${group.label}, class ${label}</span>`);
      }
    }
    items.push(`<span>${swatch(css(this.text), "line")}decision boundary (P = 0.5)</span>`);
    if (sc.blobs.bayes) items.push(`<span>${swatch(sc.colours.bayes, "dashed")}best possible boundary (Bayes)</span>`);
    const boundaryLegend = items.join("");
    // Compared with what was set last, not with innerHTML (the browser respells the style
    // attributes): drawn with every frame, the legends are rebuilt only when they change.
    if (this.boundaryLegendHtml !== boundaryLegend) this.boundaryLegend.innerHTML = this.boundaryLegendHtml = boundaryLegend;
    const [train, val] = sc.colours.curves;
    const curves = [
      `<span>${swatch(train, "line")}train</span>`, `<span>${swatch(val, "dashed")}validation</span>`,
      `<span>${swatch(sc.colours.bayes, "dotted")}best possible test accuracy ${(100 * sc.bayes_accuracy).toFixed(2)}%</span>`,
    ].join("");
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
