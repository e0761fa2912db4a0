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


def test_pause_is_posted_and_answered_with_the_frame_produced_after_the_source_paused():
    events = []
    source = frame_route.register(FrameSource(lambda since: events.append(("frame", since)) or b"still",
                                              pause=lambda: events.append(("pause",))))
    status, body, headers = _get(f"{source.token}/pause?since=5", method="POST")
    assert (status, body) == (200, b"still") and events == [("pause",), ("frame", 5)]
    assert headers["cache-control"] == "no-store"
    assert _get("not-a-token/pause", method="POST")[0] == 404
    assert _get(f"{source.token}/pause?since={'9' * 40}", method="POST")[0] == 400
    # A source that cannot pause (no run) answers its frame.
    quiet = frame_route.register(FrameSource(lambda since: b"x"))
    assert _get(f"{quiet.token}/pause", method="POST")[:2] == (200, b"x")
    # The socket carries only asks for frames: a message that is not a number asks from 0.
    assert [m["bytes"] for m in _stream(source.token, [frame_route.PAUSE])[1:]] == [b"still"]
    assert events[-1] == ("frame", 0) and events.count(("pause",)) == 1


# --- The route's limits, through Starlette's TestClient (a real ASGI app, no server) ------------
import logging  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import pytest  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402


def _client(**limits) -> TestClient:
    return TestClient(Starlette(routes=frame_route.routes(**limits)))


def _stream_path(token: str) -> str:
    return f"/{frame_route.PATH}/{token}/stream"


def test_an_unknown_tokens_socket_is_refused_before_it_is_accepted():
    """Refused at the handshake, so nothing can be sent on it (a probe sent 190 MB messages to
    unknown tokens: the old route accepted first and read the message before looking)."""
    with _client() as client:
        with pytest.raises(WebSocketDisconnect) as refused:
            with client.websocket_connect(_stream_path("not-a-token")):
                pass
        assert refused.value.code == frame_route.GONE
        source = frame_route.register(FrameSource(lambda since: b"x"))
        token = source.token
        del source
        gc.collect()
        with pytest.raises(WebSocketDisconnect):
            with client.websocket_connect(_stream_path(token)):
                pass


def test_a_binary_message_closes_the_socket_without_an_error_logged(caplog):
    source = frame_route.register(FrameSource(lambda since: b"frame"))
    caplog.set_level(logging.WARNING)
    with _client() as client, client.websocket_connect(_stream_path(source.token)) as socket:
        socket.send_bytes(b"\x00" * 100)
        closed = socket.receive()
    assert closed == {"type": "websocket.close", "code": frame_route.UNSUPPORTED, "reason": ""}
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_a_message_longer_than_the_protocols_closes_the_socket_as_too_big():
    asked = []
    source = frame_route.register(FrameSource(lambda since: asked.append(since) or b"frame"))
    with _client() as client, client.websocket_connect(_stream_path(source.token)) as socket:
        socket.send_text("7" * frame_route.MAX_ASK)           # the longest a view may send
        assert socket.receive_bytes() == b"frame"
        socket.send_text("7" * (frame_route.MAX_ASK + 1))
        assert socket.receive() == {"type": "websocket.close", "code": frame_route.TOO_BIG, "reason": ""}
    assert asked == [int("7" * frame_route.MAX_ASK)], "the long one was not answered"
    with _client() as client:
        assert client.get(f"/{source.url}?since={'7' * (frame_route.MAX_ASK + 1)}").status_code == 400


@pytest.mark.timeout(60)          # a socket never closed would wait forever
def test_a_silent_socket_is_closed_after_the_idle_timeout():
    source = frame_route.register(FrameSource(lambda since: b"frame"))
    with _client(idle_seconds=0.2) as client, client.websocket_connect(_stream_path(source.token)) as socket:
        socket.send_text("0")
        assert socket.receive_bytes() == b"frame"       # a message resets the clock...
        assert socket.receive() == {"type": "websocket.close", "code": frame_route.IDLE, "reason": ""}


def test_a_token_has_at_most_two_sockets_open():
    source = frame_route.register(FrameSource(lambda since: b"frame"))
    path = _stream_path(source.token)
    with _client() as client:
        with client.websocket_connect(path) as first, client.websocket_connect(path):
            with pytest.raises(WebSocketDisconnect) as refused:
                with client.websocket_connect(path):
                    pass
            assert refused.value.code == frame_route.BUSY
            first.close()
            # A closed one makes room again (the server counts it down when it hears the close).
            deadline = time.monotonic() + 30
            while frame_route._streams.get(source.token, 0) > 1:
                assert time.monotonic() < deadline, "the closed socket was never counted down"
                time.sleep(0.01)
            with client.websocket_connect(path) as third:
                third.send_text("0")
                assert third.receive_bytes() == b"frame"
    assert source.token not in frame_route._streams


def test_one_frame_per_interval_per_token_however_many_ways_it_is_asked(monkeypatch):
    """Two sockets and GETs of one token, asking as fast as they can: every ask is answered (held,
    not refused), every frame waited for a turn of its own, the turns are an interval apart, and
    no frame was made before its turn. (Ordering and counts: a loaded machine only makes frames
    later, so nothing here waits for or bounds a duration.)"""
    interval = 0.05
    made: list[float] = []
    source = frame_route.register(FrameSource(lambda since: made.append(time.monotonic()) or b"f",
                                              interval=interval))
    turns: list[float] = []
    book = frame_route._frame_delay

    def booked(source, now, **kwargs):
        delay = book(source, now, **kwargs)
        if delay is not None:
            turns.append(now + delay)
        return delay

    monkeypatch.setattr(frame_route, "_frame_delay", booked)
    answers: list[bytes] = []
    errors: list[BaseException] = []

    def by_socket(client):
        with client.websocket_connect(_stream_path(source.token)) as socket:
            for n in range(6):
                socket.send_text(str(n))
                answers.append(socket.receive_bytes())

    def by_get(client):
        for n in range(3):                  # one at a time, as a view that fetches asks
            answers.append(client.get(f"/{source.url}?since={n}").content)

    with _client() as client:
        def run(ask):
            try:
                ask(client)
            except BaseException as error:       # noqa: BLE001 - reported below
                errors.append(error)

        askers = [threading.Thread(target=run, args=(ask,)) for ask in (by_socket, by_socket, by_get)]
        for asker in askers:
            asker.start()
        for asker in askers:
            asker.join(120)
    assert not errors and answers == [b"f"] * 15, errors
    assert len(made) == len(turns) == 15, "each frame had a turn of its own"
    turns.sort()
    assert all(later - earlier >= interval - 1e-9 for earlier, later in zip(turns, turns[1:], strict=False))
    # Each frame was made at or after its own turn, so the k-th made is no earlier than the k-th
    # turn (asyncio wakes a sleeper at most its clock's resolution early).
    assert all(when >= turn - 1e-6 for when, turn in zip(sorted(made), turns, strict=True))


def test_turns_are_booked_ahead_and_a_get_beyond_the_waiting_ones_gets_429():
    source = FrameSource(lambda since: b"f", interval=1.0)
    assert frame_route._frame_delay(source, 100.0) == 0.0          # the first: at once
    assert frame_route._frame_delay(source, 100.25) == 0.75        # held until its turn
    waits = [frame_route._frame_delay(source, 100.25) for _ in range(frame_route.MAX_WAITING - 1)]
    assert waits == [1.75 + n for n in range(frame_route.MAX_WAITING - 1)]
    assert frame_route._frame_delay(source, 100.25) is None         # MAX_WAITING already wait
    assert frame_route._frame_delay(source, 100.25, capped=False) == 0.75 + frame_route.MAX_WAITING
    # Over HTTP: with the turns booked far ahead, a GET is refused at once rather than held.
    source = frame_route.register(FrameSource(lambda since: b"f"))
    source.next_frame_at = time.monotonic() + 600
    with _client() as client:
        refused = client.get(f"/{source.url}?since=0")
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"


def test_a_pause_acts_at_once_and_a_stream_of_them_is_slowed():
    source = FrameSource(lambda since: b"f", interval=1.0)
    assert frame_route._pause_delay(source, 50.0) == 0.0
    assert frame_route._pause_delay(source, 50.5) == 0.5
    assert frame_route._pause_delay(source, 60.0) == 0.0


def test_a_pause_that_blocks_keeps_the_event_loop_serving_frames():
    """The source waits for its run's slice in a worker thread: another view's frame is
    answered meanwhile."""
    release = threading.Event()
    slow = frame_route.register(FrameSource(lambda since: b"stopped", pause=lambda: release.wait(5)))
    other = frame_route.register(FrameSource(lambda since: b"other"))
    with _client() as client:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pausing = pool.submit(client.post, f"/{frame_route.PATH}/{slow.token}/pause")
            assert client.get(f"/{frame_route.PATH}/{other.token}").content == b"other"
            assert not pausing.done()
            release.set()
            assert pausing.result(timeout=5).content == b"stopped"
