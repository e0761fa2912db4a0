// Where the live view's frames come from.
//
// A WebSocket on the frame route (`<url>/stream`): each frame is one message answering the
// view's "ready, I hold this many epochs", so a slow browser is never sent frames it cannot
// draw. A message costs the browser a fraction of a fetch (no request, no headers, no loader),
// which matters with a whole class drawing ten frames a second. Where the socket cannot open
// (a proxy that passes only plain HTTP), or closes or stalls before its first frame, the same
// answers come by `fetch`.
//
// `protocol` is what the page sends in its header (app_pages/moons_trainer/live_canvas.py's
// `protocol()`): the close code for a view the server no longer knows (`gone`), the pause
// message (`pause`), and the socket's timings, both under the run's lease (a view that asks for
// no frame for a lease is taken for a closed tab, and its run stops).

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const ROUTE_TRIES = 3;     // failed fetches, with no frame ever, before the page feeds the view

export class SocketFrames {
  // A socket not open within protocol.socket_open_ms is given up for fetch.
  static open(url, protocol) {
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
      const timer = setTimeout(() => { socket.onerror = null; socket.close(); resolve(null); },
                               protocol.socket_open_ms);
      socket.onopen = () => { clearTimeout(timer); resolve(new SocketFrames(socket, protocol)); };
      socket.onerror = () => { clearTimeout(timer); resolve(null); };
    });
  }

  constructor(socket, protocol) {
    this.kind = "socket";
    this.socket = socket;
    this.protocol = protocol;
    this.pending = null;
    this.delivered = false;           // whether a frame ever came this way
    socket.onmessage = (event) => {
      this.delivered = true;
      this.settle((p) => p.resolve(new Uint8Array(event.data)));
    };
    socket.onclose = (event) => this.settle((p) => (event.code === protocol.gone ? p.resolve(null)
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

  // The next frame, null once the server no longer knows this view. A socket that answers
  // nothing for protocol.socket_patience_ms is given up (for fetch, if it never delivered).
  next(since) {
    if (this.socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error("closed"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.settle((p) => p.reject(new Error("no answer"))),
                               this.protocol.socket_patience_ms);
      this.pending = { resolve, reject, timer };
      this.socket.send(String(since));
    });
  }

  close() {
    this.socket.onclose = null;
    this.socket.close();
    this.settle((p) => p.resolve(null));
  }
}

export class HttpFrames {
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

  close() {}
}

// The view's Pause: the server stops the run and answers the frame of where it stopped (a
// request of its own, not behind the socket's frame in flight). Null where no answer came: the
// page's own Pause still stops the run and its rerun draws it.
export async function postPause(url, protocol, since) {
  const target = new URL(`${url}/${protocol.pause}`, document.baseURI);
  target.searchParams.set("since", String(since));
  try {
    const response = await fetch(target, { method: "POST", cache: "no-store" });
    return response.ok ? new Uint8Array(await response.arrayBuffer()) : null;
  } catch (error) {
    return null;
  }
}
