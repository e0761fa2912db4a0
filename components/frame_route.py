"""Frames for a browser component without a Streamlit rerun: a per-learner HTTP mailbox.

A fragment rerun costs the browser a re-render of Streamlit's whole element tree (about 80 ms
of JavaScript per rerun on the moons trainer's page, measured with Chromium's performance
metrics), so a view that changes ten times a second cannot be fed by reruns. Instead the page
registers a `FrameSource` (a callable that packs the current frame) and hands the browser its
URL; the component asks for frames itself, one at a time, and the page runs only when
something else changes. It asks on a WebSocket, `/api/frames/<token>/stream` (one text message
out, one binary frame back), or, where no socket comes through, by `GET /api/frames/<token>`:
per frame, the socket costs Chromium about 2 ms of CPU outside the page against about 6.5 ms
for a fetch (bench/live_frames.py measures the whole).

The route is mounted by the app's one entry (streamlit_app.py), however it is launched. Where
a proxy in front of the server lets neither the socket nor the fetch through, the view tells the
page (its "no_route" trigger) and the page feeds it by fragment reruns instead, and says so.
Tokens are random and per learner; the registry holds only weak references, so a source lives
exactly as long as the learner's session state that owns it.

The route is public: anyone can open it with any token, so it spends nothing on a request it
will not serve (see `routes()` for each limit and why).
"""
from __future__ import annotations

import asyncio
import secrets
import threading
import time
import weakref
from collections.abc import Callable

PATH = "api/frames"     # relative to the page's URL, so a proxy prefix carries over

# The least time between two frames of one view, in seconds, whoever asks (every socket and
# GET of the token together). The live view (static/live/) asks at most every ASK_SECONDS and the
# moons trainer takes a new picture at most every SNAPSHOT_SECONDS = 0.06 s (live.py, which
# passes it): an ask sooner than 60 ms after the last one would get the same picture. The 6 ms
# between the two is slack for a request that arrives early because its predecessor was late.
FRAME_INTERVAL = 0.06
ASK_SECONDS = 0.066     # the view's pace while a run plays: up to fifteen frames a second

# The view's socket, both under the run's lease (workbench/common/jobs.py's ttl, 1.8 s): a view
# that asks for no frame for that long is taken for a closed tab, and its run stops.
SOCKET_OPEN_SECONDS = 1.0       # a socket not open by then is given up for fetch
SOCKET_PATIENCE_SECONDS = 1.2   # ... and so is one that answers nothing for this long


class FrameSource:
    """One learner's frames: `produce(since)` returns the next message (or None: gone), and
    `pause()`, where given, stops what the frames show (the view's Pause, without a rerun) and
    returns once it is still, so that the frame produced next shows where it stopped. It may
    block (it runs in a worker thread, never on the event loop).
    `interval`: the least time between two frames served for this source (FRAME_INTERVAL)."""

    def __init__(self, produce: Callable[[int], bytes | None],
                 pause: Callable[[], None] | None = None, *, interval: float = FRAME_INTERVAL) -> None:
        self.produce, self.pause = produce, pause
        self.interval = interval
        self.token = secrets.token_urlsafe(18)
        # The route's bookkeeping, only ever touched on the server's event loop: when this
        # source's next frame and next pause may be served (time.monotonic()).
        self.next_frame_at = 0.0
        self.next_pause_at = 0.0

    @property
    def url(self) -> str:
        return f"{PATH}/{self.token}"


_sources: weakref.WeakValueDictionary[str, FrameSource] = weakref.WeakValueDictionary()
_lock = threading.Lock()


def register(source: FrameSource) -> FrameSource:
    with _lock:
        _sources[source.token] = source
    return source


def _source(token: str) -> FrameSource | None:
    with _lock:
        return _sources.get(token)


def frame_for(token: str, since: int) -> bytes | None:
    """What the route answers: the learner's current frame, or None for an unknown token."""
    source = _source(token)
    return None if source is None else source.produce(since)


def pause_for(token: str, since: int) -> bytes | None:
    """The view's Pause for `token`'s source: the frame of where it stopped (None: unknown token).
    Blocking: call it in a worker thread."""
    source = _source(token)
    if source is None:
        return None
    if source.pause is not None:
        source.pause()
    return source.produce(since)


PAUSE = "pause"     # the path under a token that pauses: POST <PATH>/<token>/pause?since=N

# Close codes of the stream. Refused before the handshake is accepted, a socket never sees its
# code (the server answers the handshake with HTTP 403); these are for the server's own record.
GONE = 4404         # the server does not know the token (also: the learner's source went away)
BUSY = 4429         # refused: the token already has MAX_STREAMS sockets open
IDLE = 4408         # closed: no message for IDLE_SECONDS
UNSUPPORTED = 1003  # closed: a binary message (RFC 6455's "unsupported data")
TOO_BIG = 1009      # closed: a message longer than MAX_ASK (RFC 6455's "message too big")

MAX_ASK = 32            # characters: the socket's messages (and `since=`) are a decimal `since`
MAX_STREAMS = 2         # sockets per token: the view holds one; its replacement may overlap it
IDLE_SECONDS = 30.0     # a playing view asks every ASK_SECONDS, a paused one closes its socket
MAX_WAITING = 4         # asks of one token held at once (room for its sockets' and two GETs);
                        # a GET beyond them gets 429

_streams: dict[str, int] = {}       # open sockets per token (event loop only)


def _frame_delay(source: FrameSource, now: float, *, capped: bool = True) -> float | None:
    """Book `source`'s next frame turn: how long to hold this ask first, or None when `capped`
    and MAX_WAITING asks already wait for theirs. Every socket and GET of a token shares the
    turns, so a view gets one frame per interval however many ways it asks."""
    at = max(now, source.next_frame_at)
    if capped and at - now > MAX_WAITING * source.interval:
        return None
    source.next_frame_at = at + source.interval
    return at - now


def _pause_delay(source: FrameSource, now: float) -> float:
    """The same for a pause, on turns of its own: a learner's Pause acts at once (it is the first
    in an interval), a stream of them is slowed to one per interval."""
    at = max(now, source.next_pause_at)
    source.next_pause_at = at + source.interval
    return at - now


# The route's own "I do not know this view" carries this header, so the browser can tell it from
# a 404 or 403 that a proxy in front of the server answers for a path it does not pass.
GONE_HEADERS = {"X-Frame-Route": "gone"}


def routes(*, idle_seconds: float = IDLE_SECONDS) -> list:
    """The Starlette routes streamlit_app.py mounts: `GET <PATH>/<token>?since=N` answers one frame;
    `<PATH>/<token>/stream` is a WebSocket that answers one frame per message the browser sends
    (its `since`), so the browser still asks for each frame when it is ready to draw it, at a
    fraction of a request's cost on both ends. `POST <PATH>/<token>/pause?since=N` pauses and
    answers the frame of where the run stopped: the view acts on its Pause at once, before the
    page's rerun, and shows what the page will show after it (a request of its own, so that
    it does not wait behind the socket's frame in flight).

    Limits, so that an unknown token costs a dictionary lookup and a known one one learner's view:
    - the token is looked up before a socket is accepted: an unknown one's handshake is refused,
      so nothing can be sent on it (server.maxMessageSize bounds what an accepted one can send);
    - at most MAX_STREAMS sockets per token; a socket silent for `idle_seconds` is closed;
    - a text message longer than MAX_ASK closes the socket (1009); a binary one closes it too
      (1003): the view never sends one, so whatever does is not the view, and answering it
      with a close costs one message where ignoring it would let it send on at wire speed;
    - one frame per FrameSource.interval per token: an ask that comes sooner is held (never
      answered early, never refused while MAX_WAITING or fewer wait), so a view that asks
      too often, on any number of sockets, gets its frames at the interval and costs the server
      no more than one well-behaved view. Holding uses asyncio.sleep: the event loop runs on.
    """
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    async def frame(request: Request) -> Response:
        token = request.path_params["token"]
        asked = request.query_params.get("since")
        if asked is not None and len(asked) > MAX_ASK:
            return Response(status_code=400)
        source = _source(token)
        if source is None:
            return Response(status_code=404, headers=GONE_HEADERS)
        delay = _frame_delay(source, time.monotonic())
        if delay is None:
            return Response(status_code=429, headers={"Retry-After": "1"})
        del source                      # held without a reference: the learner may go meanwhile
        if delay:
            await asyncio.sleep(delay)
        message = frame_for(token, _since(asked))
        if message is None:
            return Response(status_code=404, headers=GONE_HEADERS)
        return Response(message, media_type="application/octet-stream",
                        headers={"Cache-Control": "no-store"})

    async def pause(request: Request) -> Response:
        token = request.path_params["token"]
        asked = request.query_params.get("since")
        if asked is not None and len(asked) > MAX_ASK:
            return Response(status_code=400)
        source = _source(token)
        if source is None:
            return Response(status_code=404, headers=GONE_HEADERS)
        delay = _pause_delay(source, time.monotonic())
        del source
        if delay:
            await asyncio.sleep(delay)
        # The source waits for its run's slice under way: in a worker thread, the loop runs on.
        message = await asyncio.to_thread(pause_for, token, _since(asked))
        if message is None:
            return Response(status_code=404, headers=GONE_HEADERS)
        return Response(message, media_type="application/octet-stream",
                        headers={"Cache-Control": "no-store"})

    async def stream(socket: WebSocket) -> None:
        token = socket.path_params["token"]
        source = _source(token)
        if source is None:
            await socket.close(code=GONE)           # before accept(): the handshake is refused
            return
        if _streams.get(token, 0) >= MAX_STREAMS:
            await socket.close(code=BUSY)
            return
        del source                      # the socket must not keep the learner's source alive
        _streams[token] = _streams.get(token, 0) + 1
        try:
            await socket.accept()
            await _serve_stream(socket, token, idle_seconds)
        except WebSocketDisconnect:
            return
        finally:
            _streams[token] -= 1
            if not _streams[token]:
                del _streams[token]

    return [Route("/" + PATH + "/{token}", frame, methods=["GET"]),
            Route("/" + PATH + "/{token}/" + PAUSE, pause, methods=["POST"]),
            WebSocketRoute("/" + PATH + "/{token}/stream", stream)]


async def _serve_stream(socket, token: str, idle_seconds: float) -> None:
    """Answer the stream's messages until the browser leaves, the source goes, or a limit
    closes it (see `routes()`)."""
    while True:
        try:
            message = await asyncio.wait_for(socket.receive(), idle_seconds)
        except TimeoutError:
            await socket.close(code=IDLE)
            return
        if message["type"] == "websocket.disconnect":
            return
        asked = message.get("text")
        if asked is None:
            await socket.close(code=UNSUPPORTED)
            return
        if len(asked) > MAX_ASK:
            await socket.close(code=TOO_BIG)
            return
        source = _source(token)
        if source is None:
            await socket.close(code=GONE)
            return
        # A socket's ask always waits for its turn, never refused: at most MAX_STREAMS sockets
        # of a token each hold one ask, so the turns booked ahead stay few.
        delay = _frame_delay(source, time.monotonic(), capped=False)
        del source
        if delay:
            await asyncio.sleep(delay)
        reply = frame_for(token, _since(asked))
        if reply is None:
            await socket.close(code=GONE)
            return
        await socket.send_bytes(reply)


def _since(asked: str | None) -> int:
    """The epochs the browser already holds, as it wrote them; 0 for anything else."""
    try:
        return max(0, int(asked or "0"))
    except ValueError:
        return 0
