"""The class database's engine, and the guard every class-store call runs behind, so that no
fault of the database (PostgreSQL frozen or gone, a SQLite file locked, read-only or deleted)
ever holds a page longer than a couple of seconds.

Timeouts at every level, because a frozen server enforces none of its own:

- PostgreSQL: `connect_timeout` (the client gives up on a server that accepts the TCP connection
  but never answers), `statement_timeout` and `lock_timeout` (the server cancels a query stuck
  behind a lock), TCP keepalives and `tcp_user_timeout` (a server whose host vanished).
- SQLite: the busy wait on another process's lock is at most `SQLITE_BUSY_SECONDS`, not
  Python's default of 5 s (the store had 30).
- And a client-side deadline over all of it: a SIGSTOPped PostgreSQL's kernel still accepts
  connections and acknowledges the bytes sent, so a query (or the pool's pre-ping) on an open
  connection waits forever and no server-side timeout fires. Each call therefore runs in a
  worker thread, and the caller waits at most `deadline` seconds for it (so a class member's
  page says "out of reach" within 2 s), then gets StoreUnavailable. While it waits, the caller
  steps out of its page-run slot (`SCRIPT_RUNS.stepped_out`), so a learner in no class finds the
  slot free and their page is as fast as with a healthy database.

Worker threads are bounded (`workers`, each holding at most one database connection): a call
that outlives its deadline keeps its thread until the database answers, and is counted as
stuck; once every worker is stuck, calls fail at once instead of starting more. After a call
times out or the database refuses a connection, it is known to be down for `cooldown` seconds
(a circuit breaker): calls fail at once with the same message, then one call at a time probes it.

A call that times out but commits later (the database was slow, not gone): the caller was told
the class is out of reach, and the transaction still lands. Nothing is counted twice for it:
- an answer carries the learner's sequence number; the page keeps it pending and sends it again
  (components/class_session.py), and the store takes a resent answer whose number it already
  holds for a replay (ReplayedAnswer, nothing changes);
- a join that commits late leaves a member row whose token no browser holds: the seat is never
  seen again, and a seat not seen for a few minutes does not count toward the class's limit, and
  the class's data goes when the class ends or expires;
- the teacher's actions (send, reveal, end, the challenge) set a value, so doing one twice is
  doing it once.
The same holds for the one retry made here (a write refused by a read-only connection is retried
once on a fresh one): the refused transaction rolled back, so the retry is the first write.

Recovery needs no restart: an error of the connection (refused, read-only, locked, broken)
disposes the pool, so no connection opened during the fault stays in use (a SQLite connection
opened while its file was read-only stays read-only for its life); PostgreSQL connections are
pre-pinged before use; a SQLite file is checked (its inode) before each call: deleted or
replaced, the old connections (which would go on writing into the deleted file) are closed, a
new file is made and migrated, and the caller is told the class's data is gone.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import math
import os
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DBAPIError

from workbench.common.jobs import SCRIPT_RUNS

T = TypeVar("T")

DEADLINE_SECONDS = 1.5          # the longest a page waits for one store call
SLOT_GRACE_SECONDS = 0.05       # how long a call waits before giving its page-run slot back
WORKERS = 8                     # store calls at once per process (and the pool's connections)
COOLDOWN_SECONDS = 3.0          # after a fault, calls fail at once for this long, then one probes
SQLITE_BUSY_SECONDS = 1.0       # the longest SQLite waits for another connection's lock
CONNECT_TIMEOUT_SECONDS = 2     # libpq's smallest useful value (it rounds 1 up to 2)
STATEMENT_TIMEOUT_MS = 3000     # the sweep's batches and every query finish far inside it
LOCK_TIMEOUT_MS = 1000

OUT_OF_REACH = ("The class database is out of reach just now (it did not answer within "
                "{seconds:g} s); your work on this page is safe, and answers are sent when it is back.")
UNREACHABLE = ("The class database cannot be reached just now; your work on this page is safe, "
               "and answers are sent when it is back.")
READ_ONLY = ("The class database is read-only just now (its file or server refuses writes), so "
             "nothing new can be recorded; your work on this page is safe, and answers are sent "
             "when it is writable again.")
LOCKED = ("The class database is locked by another program just now; your work on this page is "
          "safe, and answers are sent when it is free again.")
FILE_REMOVED = ("The class database's file was removed or replaced while the server ran, so the "
                "classes started before then and their answers are lost: the teacher needs to "
                "start a new class (a new, empty database is ready).")
ANSWERED_WITH_ERROR = ("The class database answered with an error; your work on this page is "
                       "safe. If it persists, tell whoever runs this server.")


class DatabaseFault(Exception):
    """A fault of the database itself, said in words a teacher understands. (store.py turns it
    into StoreUnavailable, which the pages know.)"""


def sqlalchemy_url(url: str) -> str:
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]      # psycopg 3, not psycopg2
    return url


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases and in-memory ones)."""
    if not url.startswith("sqlite"):
        return None
    path = url.split(":///", 1)[1] if ":///" in url else ""
    path = path.split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def make_engine(url: str, workers: int = WORKERS) -> Engine:
    url = sqlalchemy_url(url)
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_SECONDS,
                                                  "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(connection, _record):
            cursor = connection.cursor()
            # WAL: the board's reads do not wait for a learner's write; foreign keys: on.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()
        return engine
    options = (f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c lock_timeout={LOCK_TIMEOUT_MS} "
               "-c idle_in_transaction_session_timeout=10000")
    # pre_ping: a connection the server dropped (a PostgreSQL restart) is replaced, not used.
    # One connection per worker, and a little room for the tests' and migrations' own use;
    # pool_timeout short: a worker never waits long for a connection.
    return create_engine(url, pool_pre_ping=True, pool_size=workers, max_overflow=4, pool_timeout=1,
                         connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS, "options": options,
                                       "keepalives": 1, "keepalives_idle": 10,
                                       "keepalives_interval": 5, "keepalives_count": 3,
                                       "tcp_user_timeout": 10000})


def describe(error: DBAPIError) -> tuple[str, bool]:
    """What the database's error means for a teacher, and whether it is a fault of the
    connection (the pool is disposed and the breaker opens) rather than of one query."""
    original = error.orig
    text = str(original).lower()
    sqlstate = getattr(original, "sqlstate", None) or ""
    if "readonly" in text or "read-only" in text or sqlstate == "25006":
        return READ_ONLY, True
    if "database is locked" in text or "database table is locked" in text:
        return LOCKED, True
    if (error.connection_invalidated or type(original).__name__ in {"OperationalError",
                                                                     "InterfaceError"}
            or sqlstate.startswith("08") or sqlstate.startswith("57")):
        # 08: connection exceptions; 57: the server shutting down, or a query it cancelled.
        return UNREACHABLE, True
    return ANSWERED_WITH_ERROR, False


class Database:
    """An engine, and `call`: run one unit of store work behind the deadline and breaker."""

    def __init__(self, url: str, *, deadline: float = DEADLINE_SECONDS, workers: int = WORKERS,
                 cooldown: float = COOLDOWN_SECONDS,
                 breaker_clock: Callable[[], float] = time.monotonic,
                 while_waiting: Callable[[], AbstractContextManager[object]] = SCRIPT_RUNS.stepped_out
                 ) -> None:
        self.url = url
        self.engine = make_engine(url, workers)
        self.deadline, self.workers, self.cooldown = deadline, workers, cooldown
        self.clock = breaker_clock
        self.while_waiting = while_waiting
        self.file = sqlite_path(sqlalchemy_url(url))
        self._file_identity: tuple[int, int] | None = None
        self.generation = 0             # +1 each time a new SQLite file replaces a lost one
        self.file_lost_at: float | None = None     # wall time the file was found gone, if ever
        self._lock = threading.Lock()
        self._free = threading.BoundedSemaphore(workers)
        self._stuck = 0
        self._down_until = -math.inf
        self._down_message: str | None = None
        self._probing = False
        self._inside = threading.local()
        self._file_lock = threading.Lock()

    # -- state, for the pages and the tests ------------------------------------------------------
    @property
    def stuck(self) -> int:
        """Workers still waiting on calls whose callers gave up on them."""
        with self._lock:
            return self._stuck

    @property
    def down(self) -> str | None:
        """The message of the fault the database is known to have, or None."""
        with self._lock:
            return self._down_message

    # -- the call ------------------------------------------------------------------------------
    def call(self, work: Callable[[], T]) -> T:
        """`work()`'s result, computed on a worker thread; DatabaseFault if the database fails
        or does not answer within the deadline. Other exceptions of `work` pass through."""
        if getattr(self._inside, "active", False):
            return work()               # a store call made inside one: already on a worker
        self._admit()
        started = time.monotonic()
        message = OUT_OF_REACH.format(seconds=self.deadline)
        future: concurrent.futures.Future = concurrent.futures.Future()
        # A call usually takes milliseconds: it keeps its page-run slot for the first
        # SLOT_GRACE_SECONDS (stepping out and queueing for a slot again would cost a busy class
        # more than it saves), and steps out only if it waits longer than that.
        if self._free.acquire(timeout=SLOT_GRACE_SECONDS):
            self._start(work, future)
            with contextlib.suppress(concurrent.futures.TimeoutError):
                return future.result(timeout=SLOT_GRACE_SECONDS)
        with self.while_waiting():
            if not future.running() and not future.done():
                if not self._free.acquire(timeout=self._remaining(started)):
                    self._trip(message)
                    raise DatabaseFault(message)
                self._start(work, future)
            try:
                return future.result(timeout=self._remaining(started))
            except concurrent.futures.TimeoutError:
                self._abandon(future)
                self._trip(message)
                raise DatabaseFault(message) from None

    def _remaining(self, started: float) -> float:
        return max(0.0, self.deadline - (time.monotonic() - started))

    def _start(self, work: Callable[[], T], future: concurrent.futures.Future) -> None:
        """Run `work` on a new worker thread (a free worker's permit already taken)."""
        future.set_running_or_notify_cancel()
        threading.Thread(target=self._work, args=(work, future), name="class-store",
                         daemon=True).start()

    def _admit(self) -> None:
        with self._lock:
            if self._stuck >= self.workers:
                raise DatabaseFault(self._down_message or OUT_OF_REACH.format(seconds=self.deadline))
            if self._down_message is None:
                return
            if self.clock() < self._down_until or self._probing:
                raise DatabaseFault(self._down_message)
            self._probing = True        # the cooldown is over: this call tries the database

    def _abandon(self, future: concurrent.futures.Future) -> None:
        with self._lock:
            self._stuck += 1

        def unstuck(_):
            with self._lock:
                self._stuck -= 1
        future.add_done_callback(unstuck)

    def _trip(self, message: str) -> None:
        with self._lock:
            self._down_message, self._down_until = message, self.clock() + self.cooldown
            self._probing = False

    def _healthy(self) -> None:
        with self._lock:
            self._down_message, self._down_until, self._probing = None, -math.inf, False

    def _work(self, work: Callable[[], T], future: concurrent.futures.Future) -> None:
        self._inside.active = True
        try:
            try:
                result = self._run(work)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)
        finally:
            self._inside.active = False
            self._free.release()

    def _run(self, work: Callable[[], T]) -> T:
        self._check_file()
        for attempt in (1, 2):
            try:
                result = work()
            except DBAPIError as exc:
                message, of_the_connection = describe(exc)
                if not of_the_connection:
                    self._healthy()
                    raise DatabaseFault(message) from exc
                # No connection opened during the fault is used again (a SQLite connection
                # opened on a read-only file stays read-only, a PostgreSQL one may be broken).
                self.engine.dispose()
                if message == READ_ONLY and attempt == 1:
                    continue            # the refused write rolled back: try once on a fresh one
                self._trip(message)
                raise DatabaseFault(message) from exc
            except BaseException:
                self._healthy()         # the database answered; the store refused (a ClassError)
                raise
            self._healthy()
            if self.file is not None and self._file_identity is None:
                self._check_file()      # the first call made the file: know it from now on
            return result
        raise AssertionError("unreachable")

    # -- a SQLite file deleted or replaced -------------------------------------------------------
    def _check_file(self) -> None:
        if self.file is None:
            return
        with self._file_lock:
            self._check_file_locked()

    def _check_file_locked(self) -> None:
        assert self.file is not None
        try:
            stat = os.stat(self.file)
            identity: tuple[int, int] | None = (stat.st_dev, stat.st_ino)
        except FileNotFoundError:
            identity = None
        known = self._file_identity
        if identity is not None and (known is None or identity == known):
            self._file_identity = identity
            return
        if known is None:
            return                      # no file yet: the first connection makes it
        # Deleted or replaced under the open connections: they would go on reading and writing
        # the old file (a deleted one until they close). Close them; the next connection makes
        # (or opens) the file at the path, and the store migrates it afresh.
        self.engine.dispose()
        self._file_identity = None
        self.generation += 1
        self.file_lost_at = time.time()
        raise DatabaseFault(FILE_REMOVED)

    def dispose(self) -> None:
        self.engine.dispose()
