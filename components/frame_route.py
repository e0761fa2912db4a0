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

The route exists when the app is served by `serve.py` (an `st.App` with this route); under a
bare `streamlit run streamlit_app.py` there is no route (`SERVED` is False) and pages fall back
to fragment reruns. Tokens are random and per learner; the registry holds only weak references,
so a source lives exactly as long as the learner's session state that owns it.
"""
from __future__ import annotations

import secrets
import threading
import weakref
from collections.abc import Callable

SERVED = False          # set by serve.py when the route is mounted
PATH = "api/frames"     # relative to the page's URL, so a proxy prefix carries over


class FrameSource:
    """One learner's frames: `produce(since)` returns the next message (or None: gone), and
    `pause()`, where given, stops what the frames show (the view's Pause, without a rerun)."""

    def __init__(self, produce: Callable[[int], bytes | None],
                 pause: Callable[[], None] | None = None) -> None:
        self.produce, self.pause = produce, pause
        self.token = secrets.token_urlsafe(18)

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


def pause_for(token: str) -> bool:
    """The view's Pause for `token`'s source; whether the token is known."""
    source = _source(token)
    if source is None:
        return False
    if source.pause is not None:
        source.pause()
    return True


PAUSE = "pause"     # the stream message that pauses instead of asking for a frame


GONE = 4404     # the close code a stream gets for a token the server does not know


def routes() -> list:
    """The Starlette routes serve.py mounts: `GET <PATH>/<token>?since=N` answers one frame;
    `<PATH>/<token>/stream` is a WebSocket that answers one frame per message the browser sends
    (its `since`), so the browser still asks for each frame when it is ready to draw it, at a
    fraction of a request's cost on both ends. The message "pause" (on the socket, or as
    `POST <PATH>/<token>/pause`) pauses and is not answered: the view acts on its Pause at once,
    before the page's rerun."""
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    async def frame(request: Request) -> Response:
        message = frame_for(request.path_params["token"], _since(request.query_params.get("since")))
        if message is None:
            return Response(status_code=404)
        return Response(message, media_type="application/octet-stream",
                        headers={"Cache-Control": "no-store"})

    async def pause(request: Request) -> Response:
        return Response(status_code=204 if pause_for(request.path_params["token"]) else 404)

    async def stream(socket: WebSocket) -> None:
        token = socket.path_params["token"]
        await socket.accept()
        try:
            while True:
                asked = await socket.receive_text()
                if asked == PAUSE:
                    if not pause_for(token):
                        await socket.close(code=GONE)
                        return
                    continue
                message = frame_for(token, _since(asked))
                if message is None:
                    await socket.close(code=GONE)
                    return
                await socket.send_bytes(message)
        except WebSocketDisconnect:
            return

    return [Route("/" + PATH + "/{token}", frame, methods=["GET"]),
            Route("/" + PATH + "/{token}/pause", pause, methods=["POST"]),
            WebSocketRoute("/" + PATH + "/{token}/stream", stream)]


def _since(asked: str | None) -> int:
    """The epochs the browser already holds, as it wrote them; 0 for anything else."""
    try:
        return max(0, int(asked or "0"))
    except ValueError:
        return 0
