"""Bounds on what one Streamlit session can park in the server's memory through file uploads.

Streamlit's upload endpoint, `PUT /_stcore/upload_file/<session id>/<file id>`, keeps every
file a session puts in `MemoryUploadedFileManager.file_storage[session id]`, under a file id
the client picks, until the session is shut down: one session could park any number of
server.maxUploadSize files (a probe held 466 MB with 100 PUTs in 1.9 s). The pages of this app
have one single-file uploader each, so a learner's tab needs at most the file it shows and the
one it is replacing it with. `UploadGuard`, an ASGI middleware mounted by streamlit_app.py:

- rate-limits PUTs per session with a token bucket (BURST at once, then one per EVERY seconds:
  a learner replacing a checkpoint a few times never waits), answering 429 before the body is
  read (the body is then read away without being kept, see `_too_many`);
- keeps at most KEEP files per session: before a new PUT is handed to Streamlit, the session's
  oldest files are dropped through the manager's own `remove_file`.

Streamlit drops a session's files when it shuts the session down, but a session whose tab
closed is kept for server.disconnectedSessionTTL seconds for a reconnect and then silently
evicted from its store without being shut down (streamlit/runtime/memory_session_storage.py:
a TTLCache with no removal callback), so its files were never dropped. `sweep_orphans` drops
the files of sessions Streamlit no longer knows; `lifespan` (streamlit_app.py) runs it every
SWEEP_SECONDS, and hands the freed pages back to the operating system.

What this reads of Streamlit that is not its public API (`file_storage`, the runtime's
`_session_mgr`) is pinned by tests/unit/components/test_upload_guard.py, so an upgrade that changes it
fails there, not silently here.
"""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

BURST = 5               # PUTs a session may make at once...
EVERY = 3.0             # ...then one per this many seconds
KEEP = 2                # files held per session: the one the uploader shows and its replacement
SWEEP_SECONDS = 10.0    # how often files of sessions Streamlit forgot are looked for

_UPLOAD = re.compile(r"/_stcore/upload_file/(?P<session>[^/]+)/(?P<file>[^/]+)$")
_LOGGER = logging.getLogger(__name__)


def _runtime() -> Any:
    from streamlit.runtime import Runtime

    return Runtime.instance()


def held_files(manager: Any, session_id: str) -> list[str]:
    """The file ids `session_id` holds, oldest first (`file_storage` is a dict of dicts, in
    insertion order; read without the manager's lock, so copied at once: list() of a dict is
    one step under the GIL)."""
    return list(manager.file_storage.get(session_id, {}))


class UploadGuard:
    """ASGI middleware: see the module's docstring. `runtime` (anything with `uploaded_file_mgr`
    and `is_active_session`) and `clock` are for tests; by default Streamlit's runtime."""

    def __init__(self, app: Callable, *, burst: int = BURST, every: float = EVERY, keep: int = KEEP,
                 runtime: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self.burst, self.every, self.keep = app, burst, every, keep
        self._runtime, self.clock = runtime, clock
        self._buckets: dict[str, tuple[float, float]] = {}     # session -> (tokens, when)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        found = (_UPLOAD.search(scope["path"])
                 if scope["type"] == "http" and scope["method"] == "PUT" else None)
        if found is None:
            await self.app(scope, receive, send)
            return
        runtime = self._runtime or _runtime()
        session_id, file_id = found["session"], found["file"]
        # Unknown sessions pass: Streamlit answers 400 without reading the body, and they get
        # no bucket here, so the buckets are bounded by the live sessions.
        if not runtime.is_active_session(session_id):
            await self.app(scope, receive, send)
            return
        if not self._take(session_id):
            await _too_many(receive, send, self.every)
            return
        manager, status = runtime.uploaded_file_mgr, []

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        self._trim(manager, session_id, besides=file_id)        # room for this one
        await self.app(scope, receive, sending)
        if status and status[0] < 300:
            # Again once stored: PUTs of one session that overlapped all found room before.
            self._trim(manager, session_id)

    def _take(self, session_id: str) -> bool:
        """One token from the session's bucket, if it has one."""
        now = self.clock()
        full_after = self.burst * self.every
        # A bucket left alone long enough to refill is the same as none: forget it.
        for stale in [s for s, (_, when) in self._buckets.items() if now - when >= full_after]:
            del self._buckets[stale]
        tokens, when = self._buckets.get(session_id, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - when) / self.every)
        if tokens < 1:
            self._buckets[session_id] = (tokens, now)
            return False
        self._buckets[session_id] = (tokens - 1, now)
        return True

    def _trim(self, manager: Any, session_id: str, besides: str | None = None) -> None:
        """Drop the session's oldest files until it holds at most `keep`, counting `besides`
        (a file on its way in) as one of them."""
        files = [f for f in held_files(manager, session_id) if f != besides]
        room = self.keep - (besides is not None)
        for oldest in files[:max(0, len(files) - room)]:
            manager.remove_file(session_id=session_id, file_id=oldest)


async def _too_many(receive: Callable, send: Callable, retry_after: float) -> None:
    """429, decided before any of the body is read. The status goes out first; then what the
    client still sends of the refused file is read away a chunk at a time, keeping none, and only
    then the response ends: uvicorn's HTTP/1.1 (h11) must close a connection whose response ended
    before its request did, and closing over unread bytes resets it, so the browser could see a
    network error instead of the 429. Past Streamlit's own cap for one upload it stops reading,
    and the connection is closed."""
    from streamlit import config

    body = b"Too many uploads: wait a moment and try again."
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                            (b"retry-after", str(max(1, round(retry_after))).encode())]})
    left = (config.get_option("server.maxUploadSize") + 1) * 1024 * 1024
    while left > 0:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body"):
            break
        left -= len(message.get("body", b""))
    await send({"type": "http.response.body", "body": body})


def known_sessions(runtime: Any) -> set[str]:
    """The sessions Streamlit can still serve or resume: connected, or stored for a reconnect."""
    return {info.session.id for info in runtime._session_mgr.list_sessions()}


def sweep_orphans(runtime: Any) -> int:
    """Drop the files of sessions Streamlit no longer knows; how many sessions had some.
    Call it on the event loop (Streamlit reads its session store there, unlocked)."""
    manager = runtime.uploaded_file_mgr
    known = known_sessions(runtime)
    orphans = [s for s in list(manager.file_storage) if s not in known]
    for session_id in orphans:
        manager.remove_session_files(session_id)
    if orphans:
        release_freed_memory()
    return len(orphans)


def release_freed_memory() -> None:
    """Hand freed heap pages back to the operating system. A file's bytes are allocated by
    malloc, and once glibc has raised its mmap threshold (it does after the first large block
    is freed) blocks of a few MB come from the heap; freed, they stay in the process unless
    trimmed. Elsewhere than glibc there is nothing to do."""
    name = ctypes.util.find_library("c")
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(name).malloc_trim(0)


@contextlib.asynccontextmanager
async def lifespan(app: Any, every: float = SWEEP_SECONDS) -> AsyncIterator[None]:
    """For `st.App(lifespan=...)`: sweeps orphaned uploads every `every` seconds while serving."""

    async def sweep_forever() -> None:
        while True:
            await asyncio.sleep(every)
            try:
                if dropped := sweep_orphans(_runtime()):
                    _LOGGER.info("dropped the uploads of %d closed sessions", dropped)
            except Exception:           # a Streamlit change must not stop the sweeping
                _LOGGER.exception("sweeping orphaned uploads failed")

    task = asyncio.create_task(sweep_forever(), name="upload_guard.sweep")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
