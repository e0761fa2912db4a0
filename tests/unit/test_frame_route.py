"""The frame route: a learner's frames by an unguessable token, gone with the learner's state."""
import asyncio
import concurrent.futures
import gc

from components import frame_route
from components.frame_route import FrameSource


def _get(path: str) -> tuple[int, bytes, dict]:
    """Call the route as Starlette would, without a server."""
    (route,) = frame_route.routes()
    sent: list[dict] = []
    token, _, query = path.partition("?")

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/" + frame_route.PATH + "/" + token,
             "query_string": query.encode(), "headers": [], "path_params": {"token": token}}
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
