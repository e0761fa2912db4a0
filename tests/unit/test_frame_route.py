"""The frame route: a learner's frames by an unguessable token, gone with the learner's state."""
import asyncio
import concurrent.futures
import gc

from components import frame_route
from components.frame_route import FrameSource


def _route(kind: str):
    return next(r for r in frame_route.routes() if kind in type(r).__name__)


def _get(path: str, method: str = "GET") -> tuple[int, bytes, dict]:
    """Call the route for `method` and `path` (relative to the route's PATH) as Starlette would,
    without a server."""
    from starlette.routing import Match

    sent: list[dict] = []
    rest, _, query = path.partition("?")

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/" + frame_route.PATH + "/" + rest,
             "query_string": query.encode(), "headers": []}
    route, matched = next((r, child) for r in frame_route.routes()
                          for match, child in [r.matches(scope)] if match is Match.FULL)
    scope = {**scope, **matched}
    # Its own loop in its own thread: the suite may already run an event loop in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, route.app(scope, receive, send)).result()
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], body, {k.decode(): v.decode() for k, v in start["headers"]}


def test_a_registered_source_answers_with_its_frame_and_what_the_browser_has():
    asked = []
    source = frame_route.register(FrameSource(lambda since: asked.append(since) or b"frame"))
    status, body, headers = _get(f"{source.token}?since=7")
    assert (status, body) == (200, b"frame") and asked == [7]
    assert headers["content-type"] == "application/octet-stream"
    assert headers["cache-control"] == "no-store"
    assert _get(f"{source.token}?since=junk")[0] == 200 and asked[-1] == 0


def test_unknown_tokens_and_dropped_sources_get_404():
    assert _get("not-a-token")[0] == 404
    source = frame_route.register(FrameSource(lambda since: b"x"))
    token = source.token
    assert _get(token)[0] == 200
    del source                  # the learner's state is gone: so is the source
    gc.collect()
    assert _get(token)[0] == 404


def test_tokens_are_unguessable_and_urls_relative():
    a, b = FrameSource(lambda s: b""), FrameSource(lambda s: b"")
    assert a.token != b.token and len(a.token) >= 24
    assert a.url == f"api/frames/{a.token}" and not a.url.startswith("/")


def _stream(token: str, asked: list[str]) -> list[dict]:
    """Open the WebSocket route as Starlette would, send `asked` one message at a time, then
    disconnect; what the server sent."""
    route = _route("WebSocketRoute")
    incoming = [{"type": "websocket.connect"}] + [{"type": "websocket.receive", "text": a} for a in asked]
    incoming.append({"type": "websocket.disconnect", "code": 1000})
    sent: list[dict] = []

    async def receive():
        return incoming.pop(0)

    async def send(message):
        sent.append(message)

    scope = {"type": "websocket", "path": "/" + frame_route.PATH + "/" + token + "/stream",
             "query_string": b"", "headers": [], "path_params": {"token": token}}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, route.app(scope, receive, send)).result()
    return sent


def test_the_stream_answers_one_frame_per_message_with_what_the_browser_has():
    asked = []
    frames = iter([b"first", b"second", b"third"])
    source = frame_route.register(FrameSource(lambda since: asked.append(since) or next(frames)))
    sent = _stream(source.token, ["0", "3", "junk"])
    assert sent[0]["type"] == "websocket.accept"
    assert [m["bytes"] for m in sent[1:]] == [b"first", b"second", b"third"]
    assert asked == [0, 3, 0]


def test_the_stream_closes_with_gone_for_an_unknown_or_dropped_source():
    sent = _stream("not-a-token", ["0"])
    assert sent[-1] == {"type": "websocket.close", "code": frame_route.GONE, "reason": ""}
    source = frame_route.register(FrameSource(lambda since: b"x"))
    token = source.token
    del source
    gc.collect()
    assert _stream(token, ["0", "1"])[-1]["code"] == frame_route.GONE


def test_pause_reaches_the_source_by_post_or_on_the_stream_and_is_not_answered():
    paused, asked = [], []
    source = frame_route.register(FrameSource(lambda since: asked.append(since) or b"frame",
                                              pause=lambda: paused.append(True)))
    assert _get(f"{source.token}/pause", method="POST")[0] == 204 and paused == [True]
    sent = _stream(source.token, ["0", frame_route.PAUSE, "2"])
    assert [m["bytes"] for m in sent[1:]] == [b"frame", b"frame"], "one frame per since, none for pause"
    assert paused == [True, True] and asked == [0, 2]
    assert _get("not-a-token/pause", method="POST")[0] == 404
    assert _stream("not-a-token", [frame_route.PAUSE])[-1]["code"] == frame_route.GONE
    # A source that cannot pause (no run) takes the message and keeps answering frames.
    quiet = frame_route.register(FrameSource(lambda since: b"x"))
    assert [m.get("bytes") for m in _stream(quiet.token, [frame_route.PAUSE, "0"])[1:]] == [b"x"]
