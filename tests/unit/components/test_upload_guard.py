"""components/upload_guard.py: uploads rate-limited and bounded per session, orphans swept.

The middleware is driven as uvicorn would drive it (raw ASGI), in front of a stand-in for
Streamlit's upload handler that reads the body and stores the file in a real
MemoryUploadedFileManager. The last tests pin what the guard reads of Streamlit beyond its public
API, so an upgrade that moves it fails here. tests/e2e/test_server_memory.py runs it in a real
server.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from types import SimpleNamespace

import pytest
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from components import upload_guard
from components.upload_guard import UploadGuard


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeRuntime:
    """What the guard uses of Streamlit's Runtime, over a real upload manager."""

    def __init__(self, *active: str) -> None:
        self.uploaded_file_mgr = MemoryUploadedFileManager("/_stcore/upload_file")
        self.active = set(active)
        self.stored: set[str] = set()               # disconnected, kept for a reconnect
        self._session_mgr = SimpleNamespace(list_sessions=lambda: [
            SimpleNamespace(session=SimpleNamespace(id=s)) for s in sorted(self.active | self.stored)])

    def is_active_session(self, session_id: str) -> bool:
        return session_id in self.active


def _streamlit_upload(runtime: FakeRuntime, calls: list[str]):
    """Streamlit's PUT handler, reduced: read the body, keep it under the file id, answer 204."""
    async def app(scope, receive, send):
        calls.append(scope["path"])
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        session_id, file_id = scope["path"].rsplit("/", 2)[-2:]
        runtime.uploaded_file_mgr.add_file(session_id, UploadedFileRec(file_id, "x.pt", "", body))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
    return app


def _call(app, method: str, path: str, body: bytes = b"x" * 1000) -> tuple[int, dict, bool, bool]:
    """(status, headers, whether any of the body was read before the answer, whether all of it
    was read in the end) of one request through `app`; the body comes in two pieces."""
    read, sent = [False], []
    pieces = [{"type": "http.request", "body": body[:10], "more_body": True},
              {"type": "http.request", "body": body[10:], "more_body": False}]

    async def receive():
        read[0] = read[0] or not sent
        return pieces.pop(0) if pieces else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "headers": [], "query_string": b""}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:      # the suite may run a loop here
        pool.submit(asyncio.run, app(scope, receive, send)).result()
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, read[0], not pieces


def _put(app, session: str, file_id: str) -> tuple[int, dict, bool, bool]:
    return _call(app, "PUT", f"/_stcore/upload_file/{session}/{file_id}")


@pytest.fixture
def guarded():
    runtime, calls, clock = FakeRuntime("s1", "s2"), [], Clock()
    guard = UploadGuard(_streamlit_upload(runtime, calls), runtime=runtime, clock=clock, keep=10)
    return guard, runtime, calls, clock


def test_a_burst_then_one_put_per_interval_and_a_refusal_reads_no_body(guarded):
    guard, runtime, calls, clock = guarded
    assert [_put(guard, "s1", f"f{n}")[0] for n in range(upload_guard.BURST)] == [204] * upload_guard.BURST
    status, headers, read, drained = _put(guard, "s1", "one-too-many")
    assert (status, read) == (429, False), "refused before any of the body is read"
    assert drained, "then read away, so that the connection is not reset under the answer"
    assert int(headers["retry-after"]) >= 1
    assert len(calls) == upload_guard.BURST, "Streamlit never saw the refused one"
    assert _put(guard, "s2", "f0")[0] == 204, "another session has its own bucket"
    clock.now += upload_guard.EVERY
    assert _put(guard, "s1", "later")[0] == 204
    assert _put(guard, "s1", "too-soon")[0] == 429


def test_a_refusal_answers_first_and_ends_only_once_the_body_is_read_away():
    """uvicorn (h11) closes a connection whose answer ended before its request did, resetting
    it under the answer; so the 429's status goes first and its end after the body."""
    runtime, log = FakeRuntime("s1"), []
    guard = UploadGuard(_streamlit_upload(runtime, []), runtime=runtime, clock=Clock(), burst=0)
    pieces = [{"type": "http.request", "body": b"x" * 10, "more_body": True},
              {"type": "http.request", "body": b"x" * 10, "more_body": False}]

    async def receive():
        log.append("receive")
        return pieces.pop(0)

    async def send(message):
        log.append(f"{message['type']} {message.get('status', '')}".strip())

    scope = {"type": "http", "method": "PUT", "path": "/_stcore/upload_file/s1/f", "headers": []}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, guard(scope, receive, send)).result()
    assert log == ["http.response.start 429", "receive", "receive", "http.response.body"]
    assert runtime.uploaded_file_mgr.file_storage == {}


def test_other_requests_and_unknown_sessions_pass_untouched(guarded):
    guard, runtime, calls, clock = guarded
    for _ in range(3 * upload_guard.BURST):
        assert _put(guard, "no-such-session", "f")[0] == 204        # Streamlit answers those
        assert _call(guard, "DELETE", "/_stcore/upload_file/s1/f")[0] == 204
        assert _call(guard, "GET", "/_stcore/health")[0] == 204
    assert guard._buckets == {}, "no bucket for an unknown session"


def test_buckets_of_quiet_sessions_are_forgotten(guarded):
    guard, runtime, calls, clock = guarded
    _put(guard, "s1", "a")
    clock.now += upload_guard.BURST * upload_guard.EVERY
    _put(guard, "s2", "a")
    assert set(guard._buckets) == {"s2"}


def test_a_session_holds_at_most_keep_files_the_oldest_dropped_first():
    runtime, calls = FakeRuntime("s1", "s2"), []
    guard = UploadGuard(_streamlit_upload(runtime, calls), runtime=runtime, clock=Clock(), keep=2)
    storage = runtime.uploaded_file_mgr.file_storage
    for file_id in ("first", "second", "third", "fourth"):
        assert _put(guard, "s1", file_id)[0] == 204
    assert list(storage["s1"]) == ["third", "fourth"]
    assert _put(guard, "s1", "fourth")[0] == 204                  # the same file again
    assert list(storage["s1"]) == ["third", "fourth"]
    _put(guard, "s2", "other")
    assert list(storage["s2"]) == ["other"] and list(storage["s1"]) == ["third", "fourth"]
    assert runtime.uploaded_file_mgr.get_stats(), "the manager's own totals stay right"
    held = runtime.uploaded_file_mgr.get_stats()["cache_memory_bytes"][0].byte_length
    assert held == 3 * 1000


def test_overlapping_puts_of_one_session_still_leave_at_most_keep_files():
    """Uploads that all found room before any was stored (a client sending them at once)."""
    runtime, calls = FakeRuntime("s1"), []
    upload = _streamlit_upload(runtime, calls)

    async def overlapping():
        gate, arrived = asyncio.Event(), []

        async def slow_upload(scope, receive, send):
            arrived.append(scope["path"])      # past the guard's first look at the session
            await gate.wait()
            await upload(scope, receive, send)

        guard = UploadGuard(slow_upload, runtime=runtime, clock=Clock(), keep=2)
        sent: list[dict] = []

        async def receive():
            return {"type": "http.request", "body": b"x" * 1000, "more_body": False}

        async def send(message):
            sent.append(message)

        puts = [asyncio.create_task(guard({"type": "http", "method": "PUT", "headers": [],
                                           "path": f"/_stcore/upload_file/s1/f{n}"}, receive, send))
                for n in range(upload_guard.BURST)]
        while len(arrived) < len(puts):
            await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(*puts)
        return [m["status"] for m in sent if m["type"] == "http.response.start"]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        statuses = pool.submit(asyncio.run, overlapping()).result()
    assert statuses == [204] * upload_guard.BURST
    assert len(runtime.uploaded_file_mgr.file_storage["s1"]) == 2


def test_files_of_sessions_streamlit_forgot_are_swept():
    runtime = FakeRuntime("live")
    runtime.stored.add("closed-tab")                 # may still reconnect: kept
    manager = runtime.uploaded_file_mgr
    for session in ("live", "closed-tab", "expired", "expired-too"):
        manager.add_file(session, UploadedFileRec("f", "x.pt", "", b"x" * 100))
    assert upload_guard.sweep_orphans(runtime) == 2
    assert set(manager.file_storage) == {"live", "closed-tab"}
    assert upload_guard.sweep_orphans(runtime) == 0


def test_the_sweep_runs_while_serving(monkeypatch):
    runtime = FakeRuntime()
    runtime.uploaded_file_mgr.add_file("gone", UploadedFileRec("f", "x.pt", "", b"x"))
    monkeypatch.setattr(upload_guard, "_runtime", lambda: runtime)

    async def serve():
        async with upload_guard.lifespan(None, every=0.01):
            while runtime.uploaded_file_mgr.file_storage:
                await asyncio.sleep(0.01)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, asyncio.wait_for(serve(), 30)).result()


# --- What the guard reads of Streamlit (pinned: an upgrade that changes it fails here) ----------

def test_streamlit_keeps_uploads_where_the_guard_looks():
    from streamlit.runtime import Runtime

    assert isinstance(inspect.getattr_static(Runtime, "uploaded_file_mgr"), property)
    assert callable(Runtime.is_active_session) and callable(Runtime.instance)
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    for file_id in ("b", "a", "c"):
        manager.add_file("s", UploadedFileRec(file_id, "x", "", b"123"))
    assert list(manager.file_storage["s"]) == ["b", "a", "c"], "insertion order: oldest first"
    assert upload_guard.held_files(manager, "s") == ["b", "a", "c"]
    assert upload_guard.held_files(manager, "none") == [] and "none" not in manager.file_storage
    manager.remove_file(session_id="s", file_id="b")
    manager.remove_session_files("s")
    assert "s" not in manager.file_storage and manager.get_stats() == {}


def test_streamlit_serves_uploads_from_memory_and_lists_its_sessions_where_the_sweep_looks():
    from streamlit.runtime import Runtime, memory_session_storage
    from streamlit.runtime.runtime import RuntimeConfig
    from streamlit.runtime.session_manager import SessionManager
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager
    from streamlit.web.server.starlette import starlette_app

    assert "MemoryUploadedFileManager(" in inspect.getsource(starlette_app)
    assert "self._session_mgr = config.session_manager_class(" in inspect.getsource(Runtime.__init__)
    default = RuntimeConfig.__dataclass_fields__["session_manager_class"].default
    assert default is WebsocketSessionManager and SessionManager in default.__mro__
    # list_sessions: connected sessions and those stored for a reconnect (SessionManager's API).
    assert list(inspect.signature(SessionManager.list_sessions).parameters) == ["self"]
    assert "_session_storage.list()" in inspect.getsource(WebsocketSessionManager.list_sessions)
    # The leak the sweep mends: the store of disconnected sessions expires them without a
    # shutdown (no removal callback), so Streamlit never drops their files.
    assert "on_remove" not in inspect.getsource(memory_session_storage.MemorySessionStorage.__init__)
