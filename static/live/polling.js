// Following a playing run, and pausing it from the view. While a run plays, frames come from the
// page's frame route (components/frame_route.py), one request at a time, no sooner than the
// route's pace (`protocol.frame_ms`, from the page's header); the page itself does not rerun.
// Where they come by is transport.js's. The page's Pause button (its click, or its keyboard
// shortcut) pauses the run from here at once, without waiting for Streamlit's rerun.
//
// The view (view.js) holds the state these read and write: `polling` (the frame route's URL
// while the view follows a run, else null), `pausing`, `protocol`, `pauseKey`, `pauseShortcut`,
// `transport`, `socketsWork`, `routeWorked`, `routeFailures`; frames go to `view.update`.

import { HttpFrames, ROUTE_TRIES, SocketFrames, postPause, sleep } from "./transport.js";

// What the view is doing with a run, for tests and the benchmark (the root's data-state):
// "playing" (following it), "pausing" (Pause pressed, the frame of where the run stopped not
// here yet) or "paused".
export function followState(polling, pausing) {
  return polling ? "playing" : pausing ? "pausing" : "paused";
}

// Focus in a place that takes typed text: Streamlit's shortcuts are off there, so is the view's.
export function isTyping(target) {
  return !!(target && target.closest &&
            target.closest("input, textarea, select, [contenteditable=''], [contenteditable=true]"));
}

// The page hands the view its frame route's URL with every page frame (null: the run does not
// play); a new one starts the loop.
export function poll(view, url) {
  if (url !== view.polling) {
    view.polling = url;
    if (url) pollLoop(view, url);
  }
  showState(view);
}

export function showState(view) {
  view.root.dataset.state = followState(view.polling, view.pausing);
}

// Streamlit presses a button for its keyboard shortcut without a click event: the Pause
// button's key pauses from here at once too (not while typing, where Streamlit ignores it).
export function pauseKeyDown(view, event) {
  if (!view.pauseShortcut || event.key.toUpperCase() !== view.pauseShortcut) return;
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
  const button = document.querySelector(`.st-key-${view.pauseKey} button`);
  if (button) pausePressed(view, { target: button });
}

// Pause pressed while the run plays. The run stops now, through the frame route, and the view
// shows the pause at once, then the frame of where the run stopped (the frame on screen may
// be a slice or two behind): a busy browser takes a few hundred milliseconds to re-render
// Streamlit's page for the button's rerun, which follows with the rest of the paused page
// (the same model, the results).
export async function pausePressed(view, event) {
  const url = view.polling;
  if (!url || !view.pauseKey || !event.target.closest) return;
  const button = event.target.closest(`.st-key-${view.pauseKey} button`);
  if (!button || button.disabled) return;
  view.polling = null;                  // no more frames: the loop ends
  const pausing = view.pausing = {};
  if (view.frame && view.frame.paused_status) view.frame = { ...view.frame, status: view.frame.paused_status };
  showState(view);
  view.draw();
  const bytes = await postPause(url, view.protocol, view.history.epoch.length);
  if (view.pausing !== pausing) return;  // the page has drawn since (Play again, a rerun)
  view.pausing = null;
  if (bytes && view.polling === null) view.update(bytes, "paused");
  showState(view);
}

export async function pollLoop(view, url) {
  // One loop at a time: a loop still waiting for its answer when the page hands the view the
  // same URL again (Pause, then Play within a second) ends instead of running beside the new one.
  const generation = view.pollGeneration = (view.pollGeneration || 0) + 1;
  const mine = () => view.polling === url && view.pollGeneration === generation;
  let frames = null;
  while (mine()) {
    const started = performance.now();
    try {
      if (frames === null) {
        frames = (view.socketsWork !== false && await SocketFrames.open(url, view.protocol)) || new HttpFrames(url);
        view.socketsWork = frames.kind === "socket";
        view.root.dataset.transport = frames.kind;
        view.transport = frames;
        if (!mine()) break;
      }
      const bytes = await frames.next(view.history.epoch.length);
      if (!mine()) break;
      if (bytes === null) {
        // The server refuses a socket for a view it does not know before opening it, so a
        // socket that failed to open for a view that is gone says nothing about sockets.
        if (frames.kind === "http" && !frames.delivered) view.socketsWork = undefined;
        view.polling = null;
        break;
      }
      view.routeWorked = true;
      const header = view.update(bytes, "polled");
      if (header && header.ended) {           // the run ended: the page shows the results
        view.polling = null;
        view.setTriggerValue("ended", Date.now());
        break;
      }
    } catch (error) {
      // A socket that never delivered a frame is not coming through (a proxy, a filter):
      // fetch from now on. Otherwise the server is restarting: try again shortly.
      if (frames && frames.kind === "socket" && !frames.delivered) view.socketsWork = false;
      // Fetches that fail too, before this view ever had a frame by the route: nothing gets
      // through. The page feeds the view by reruns from now on, and says so.
      if (frames && frames.kind === "http" && !view.routeWorked && error.message !== "busy"
          && (view.routeFailures = (view.routeFailures || 0) + 1) >= ROUTE_TRIES) {
        view.polling = null;
        frames.close();
        view.transport = null;
        view.setTriggerValue("no_route", Date.now());
        break;
      }
      if (frames) frames.close();
      frames = view.transport = null;
      await sleep(500);
    }
    await sleep(Math.max(0, view.protocol.frame_ms - (performance.now() - started)));
  }
  if (frames) frames.close();
  if (view.transport === frames) view.transport = null;
  if (view.pollGeneration === generation) showState(view);   // ended, gone or paused: whichever way
}
