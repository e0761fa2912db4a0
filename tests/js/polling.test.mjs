// Following a playing run and pausing it from the view (static/live/polling.js) on a fake view,
// with the frame route answered by a fake fetch: the loop asks with the epochs it holds, stops
// when the run ends or the route forgets the view, and Pause shows at once.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement, recorder } from "./fakes.mjs";
import { followState, isTyping, pauseKeyDown, pausePressed, poll, pollLoop } from "../../static/live/polling.js";

const PROTOCOL = { gone: 4404, pause: "pause", frame_ms: 0 };
let pauseButton = null;
globalThis.document = { baseURI: "http://app.test/", querySelector: (selector) => (selector === ".st-key-mt_pause button" ? pauseButton : null) };

// Answers fetches in turn with `answers` ([status, bytes, headers]) and records what was asked.
function fakeFetch(answers) {
  const asked = [];
  globalThis.fetch = async (url, options = {}) => {
    asked.push([String(url), options.method || "GET"]);
    const [status, bytes, headers] = answers.shift() ?? [404, new Uint8Array(0), { "X-Frame-Route": "gone" }];
    return new Response(bytes, { status, headers });
  };
  return asked;
}

function fakeView(updates = () => ({})) {
  const r = recorder(["update", "draw", "setTriggerValue"], { update: updates });
  return { ...r.methods, calls: r.calls, named: r.named, root: new FakeElement(), polling: null, pausing: null,
           protocol: PROTOCOL, history: { epoch: [1, 2, 3] }, socketsWork: false, pauseKey: "mt_pause", frame: null };
}

const frame = (n) => Uint8Array.from([n]);

test("followState: playing while polling, pausing until the pause's frame, else paused", () => {
  assert.equal(followState("/frames/x", null), "playing");
  assert.equal(followState(null, {}), "pausing");
  assert.equal(followState(null, null), "paused");
});

test("isTyping: inside a text field the shortcuts are off", () => {
  const field = { closest: (s) => (s.includes("textarea") ? {} : null) };
  assert.equal(isTyping(field), true);
  assert.equal(isTyping({ closest: () => null }), false);
  assert.equal(isTyping(null), false);
  assert.equal(isTyping({}), false);
});

test("the loop asks with the epochs the view holds, hands frames over, and stops when the run ends", async () => {
  const asked = fakeFetch([[200, frame(1)], [200, frame(2)], [200, frame(3)]]);
  let n = 0;
  const view = fakeView(() => ((n += 1) === 3 ? { ended: true } : {}));
  view.polling = "/frames/x";
  await pollLoop(view, "/frames/x");
  assert.deepEqual(view.named("update").map((c) => [c[1][0], c[2]]), [[1, "polled"], [2, "polled"], [3, "polled"]]);
  assert.deepEqual(asked[0], ["http://app.test/frames/x?since=3", "GET"]);
  assert.equal(view.polling, null);
  assert.equal(view.named("setTriggerValue")[0][1], "ended");
  assert.equal(view.root.dataset.transport, "http");
  assert.equal(view.root.dataset.state, "paused");
  assert.equal(view.transport, null);
  assert.equal(view.routeWorked, true);
});

test("the loop stops when the route no longer knows the view", async () => {
  fakeFetch([]);
  const view = fakeView();
  view.polling = "/frames/x";
  await pollLoop(view, "/frames/x");
  assert.equal(view.polling, null);
  assert.equal(view.named("update").length, 0);
  assert.equal(view.socketsWork, undefined);    // gone says nothing of whether sockets work
  assert.equal(view.root.dataset.state, "paused");
});

test("poll: a new URL starts following, the same one does not start a second loop, null stops", async () => {
  const asked = fakeFetch([]);
  const view = fakeView();
  poll(view, "/frames/x");
  assert.equal(view.root.dataset.state, "playing");
  poll(view, "/frames/x");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(asked.length, 1);
  poll(view, null);
  assert.equal(view.root.dataset.state, "paused");
});

test("Pause: the run stops from here at once, shows pausing, then the frame of where it stopped", async () => {
  const asked = fakeFetch([[200, frame(9)]]);
  const view = fakeView();
  view.polling = "/frames/x";
  view.frame = { status: "epoch 3 of 10", paused_status: "Paused at epoch 3 of 10" };
  const button = { disabled: false };
  const pressed = pausePressed(view, { target: { closest: (s) => (s === ".st-key-mt_pause button" ? button : null) } });
  assert.equal(view.polling, null);
  assert.equal(view.root.dataset.state, "pausing");
  assert.equal(view.frame.status, "Paused at epoch 3 of 10");
  assert.equal(view.named("draw").length, 1);
  await pressed;
  assert.deepEqual(asked, [["http://app.test/frames/x/pause?since=3", "POST"]]);
  assert.deepEqual(view.named("update").map((c) => [c[1][0], c[2]]), [[9, "paused"]]);
  assert.equal(view.root.dataset.state, "paused");
});

test("Pause ignores other clicks, a disabled button, and a view that is not playing", async () => {
  const asked = fakeFetch([[200, frame(9)]]);
  const view = fakeView();
  view.polling = "/frames/x";
  await pausePressed(view, { target: { closest: () => null } });
  await pausePressed(view, { target: { closest: () => ({ disabled: true }) } });
  await pausePressed(view, { target: {} });
  assert.equal(view.polling, "/frames/x");
  view.polling = null;
  await pausePressed(view, { target: { closest: () => ({ disabled: false }) } });
  assert.equal(asked.length, 0);
});

test("the Pause button's shortcut pauses from here too, but not with a modifier or while typing", async () => {
  fakeFetch([[200, frame(9)], [200, frame(9)]]);
  const button = { disabled: false };
  button.closest = () => button;
  pauseButton = button;
  const view = fakeView();
  view.pauseShortcut = "P";
  view.polling = "/frames/x";
  pauseKeyDown(view, { key: "p", ctrlKey: true, target: {} });
  pauseKeyDown(view, { key: "p", target: { closest: () => ({}) } });     // in a text field
  pauseKeyDown(view, { key: "x", target: {} });
  assert.equal(view.polling, "/frames/x");
  pauseKeyDown(view, { key: "p", target: {} });
  assert.equal(view.polling, null);
  assert.equal(view.root.dataset.state, "pausing");
});
