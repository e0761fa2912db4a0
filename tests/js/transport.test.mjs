// Where the live view's frames come from (static/live/transport.js), with a fake WebSocket and a
// fake fetch: a socket answers "since" with a frame, the route's "gone" ends it, and fetch tells
// a busy server, a forgotten view and a blocking proxy apart.
import assert from "node:assert/strict";
import { test } from "node:test";

import { HttpFrames, SocketFrames, postPause } from "../../static/live/transport.js";

const PROTOCOL = { gone: 4404, pause: "pause", socket_open_ms: 50, socket_patience_ms: 50 };
globalThis.document = { baseURI: "https://app.test/base/" };

class FakeSocket {
  static OPEN = 1;
  static made = [];
  static opens = true;
  constructor(address) {
    this.address = String(address);
    this.sent = [];
    this.readyState = 0;
    FakeSocket.made.push(this);
    setTimeout(() => {
      if (FakeSocket.opens) { this.readyState = 1; this.onopen && this.onopen(); } else if (this.onerror) this.onerror();
    }, 0);
  }
  send(text) { this.sent.push(text); }
  close() { this.closed = true; }
}
globalThis.WebSocket = FakeSocket;

function fakeFetch(status, body = new Uint8Array([7]), headers = {}) {
  const asked = [];
  globalThis.fetch = async (url, options = {}) => {
    asked.push([String(url), options.method || "GET"]);
    if (status === null) throw new TypeError("network");
    return new Response(body, { status, headers });
  };
  return asked;
}

test("a socket opens on the route's stream, asks with the epochs held, and resolves the frame", async () => {
  FakeSocket.opens = true;
  const frames = await SocketFrames.open("frames/x", PROTOCOL);
  assert.equal(frames.kind, "socket");
  const socket = FakeSocket.made.at(-1);
  assert.equal(socket.address, "wss://app.test/base/frames/x/stream");
  const next = frames.next(12);
  assert.deepEqual(socket.sent, ["12"]);
  socket.onmessage({ data: new Uint8Array([1, 2]).buffer });
  assert.deepEqual([...await next], [1, 2]);
  assert.equal(frames.delivered, true);
  // The route's close code for a view it does not know: null; any other close: an error.
  const gone = frames.next(13);
  socket.onclose({ code: PROTOCOL.gone });
  assert.equal(await gone, null);
  const closed = frames.next(14);
  socket.onclose({ code: 1006 });
  await assert.rejects(closed, /closed/);
});

test("a socket that does not open is given up (null: the view fetches instead)", async () => {
  FakeSocket.opens = false;
  assert.equal(await SocketFrames.open("frames/x", PROTOCOL), null);
  FakeSocket.opens = true;
});

test("a socket that answers nothing within its patience is given up", async () => {
  const frames = await SocketFrames.open("frames/x", PROTOCOL);
  await assert.rejects(frames.next(1), /no answer/);
  frames.close();
  assert.equal(FakeSocket.made.at(-1).closed, true);
});

test("fetch: a frame, a forgotten view, a busy server, a blocking proxy", async () => {
  const asked = fakeFetch(200);
  const frames = new HttpFrames("frames/x");
  assert.deepEqual([...await frames.next(5)], [7]);
  assert.deepEqual(asked, [["https://app.test/base/frames/x?since=5", "GET"]]);
  assert.equal(frames.delivered, true);
  fakeFetch(404, new Uint8Array(0), { "X-Frame-Route": "gone" });
  assert.equal(await new HttpFrames("frames/x").next(5), null);
  fakeFetch(429);
  await assert.rejects(new HttpFrames("frames/x").next(5), /busy/);
  fakeFetch(404);
  await assert.rejects(new HttpFrames("frames/x").next(5), /blocked/);
});

test("postPause: POSTs under the route with the epochs held; null when no answer came", async () => {
  const asked = fakeFetch(200, new Uint8Array([3]));
  assert.deepEqual([...await postPause("frames/x", PROTOCOL, 8)], [3]);
  assert.deepEqual(asked, [["https://app.test/base/frames/x/pause?since=8", "POST"]]);
  fakeFetch(500);
  assert.equal(await postPause("frames/x", PROTOCOL, 8), null);
  fakeFetch(null);
  assert.equal(await postPause("frames/x", PROTOCOL, 8), null);
});
