"""The class database's faults (workbench/classroom/database.py): a database that does not
answer, is locked by another program, turns read-only or loses its file. Each fault becomes a
StoreUnavailable that says what happened, no page holds its page-run slot while it waits, and
each heals without a restart. On SQLite and, where the fault exists there, PostgreSQL (a
throwaway server, paused with SIGSTOP: harness/postgres.py).

No timed assertions: "fails at once" is asserted as "no worker was started for it".
"""
from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from sqlalchemy import delete, event, func, insert, select, text

from harness.postgres import paused, restart
from workbench.classroom import database as db
from workbench.classroom.schema import CLASS_TABLES, METADATA, classes, members
from workbench.classroom.store import (IDLE_EXPIRY_SECONDS, SWEEP_BATCH, ClassError, ClassStore,
                                       StoreUnavailable)
from workbench.common.jobs import RunSlots

OPTIONS = ("(2, 3)", "(3, 2)", "(6,)")


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _store(url: str, **guard) -> ClassStore:
    return ClassStore(url, clock=Clock(), **guard)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.spawns)])
def url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'classroom.sqlite3'}"
        return
    url = request.getfixturevalue("postgres_url")
    yield url
    cleaner = ClassStore(url)
    with cleaner.engine.begin() as connection:
        METADATA.drop_all(connection)
    cleaner.dispose()


def _wait_until(condition, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        time.sleep(0.02)


# --- the guard itself: deadline, breaker, bounded workers, the page-run slot ------------------------
class Frozen:
    """Store work that hangs until released, as a query on a SIGSTOPped server does."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = 0

    def __call__(self) -> str:
        self.started += 1
        self.release.wait(30)
        return "answered late"


def test_a_call_that_does_not_answer_fails_after_the_deadline_and_then_at_once(tmp_path):
    clock = Clock()
    guard = db.Database(f"sqlite:///{tmp_path / 'x.sqlite3'}", deadline=0.2, workers=2,
                        cooldown=5, breaker_clock=clock)
    frozen = Frozen()
    with pytest.raises(db.DatabaseFault, match="out of reach"):
        guard.call(frozen)
    assert frozen.started == 1 and guard.stuck == 1
    # Known down: the next calls fail at once, without starting a worker.
    for _ in range(5):
        with pytest.raises(db.DatabaseFault, match="out of reach"):
            guard.call(frozen)
    assert frozen.started == 1
    # After the cooldown one call probes; it hangs too, so now both workers are stuck ...
    clock.now += 6
    with pytest.raises(db.DatabaseFault, match="out of reach"):
        guard.call(frozen)
    assert frozen.started == 2 and guard.stuck == 2
    # ... and with every worker stuck no call starts another, cooldown over or not.
    clock.now += 60
    with pytest.raises(db.DatabaseFault, match="out of reach"):
        guard.call(frozen)
    assert frozen.started == 2
    # The database answers again: the stuck calls finish, and the next probe heals it.
    frozen.release.set()
    _wait_until(lambda: guard.stuck == 0, "the stuck workers finished")
    assert guard.call(lambda: "fine") == "fine"
    assert guard.down is None
    assert guard.call(lambda: "still fine") == "still fine"
    guard.dispose()


def test_a_store_refusal_is_not_a_fault_and_closes_the_breaker_after_a_probe(tmp_path):
    clock = Clock()
    guard = db.Database(f"sqlite:///{tmp_path / 'x.sqlite3'}", deadline=0.2, workers=2,
                        cooldown=5, breaker_clock=clock)
    frozen = Frozen()
    with pytest.raises(db.DatabaseFault):
        guard.call(frozen)
    frozen.release.set()
    clock.now += 6

    def refuse():
        raise ClassError("There is no class ABCDEF")
    with pytest.raises(ClassError, match="no class"):            # the probe: the database answered
        guard.call(refuse)
    assert guard.down is None and guard.call(lambda: 1) == 1
    guard.dispose()


def test_a_page_run_waiting_on_a_frozen_database_gives_its_slot_to_another_page(tmp_path):
    slots = RunSlots(1)                                   # one core: one page run at a time
    guard = db.Database(f"sqlite:///{tmp_path / 'x.sqlite3'}", deadline=30, workers=2,
                        while_waiting=slots.stepped_out)
    frozen = Frozen()
    in_the_store, other_page_ran = threading.Event(), threading.Event()
    outcome: list[str] = []

    def class_member_page():
        with slots.run():
            in_the_store.set()
            outcome.append(guard.call(frozen))

    def unrelated_page():
        with slots.run():
            other_page_ran.set()

    member = threading.Thread(target=class_member_page)
    member.start()
    assert in_the_store.wait(10)
    _wait_until(lambda: frozen.started == 1, "the store call is under way")
    other = threading.Thread(target=unrelated_page)
    other.start()
    assert other_page_ran.wait(10), "the other page waited for the class member's store call"
    assert outcome == [] and not frozen.release.is_set()     # the store call is still blocked
    frozen.release.set()
    member.join(10)
    assert outcome == ["answered late"]
    with slots.run():                                       # and every slot came back
        pass
    guard.dispose()


# --- PostgreSQL frozen (SIGSTOP) ------------------------------------------------------------------
@pytest.mark.spawns
def test_a_paused_postgres_is_out_of_reach_without_holding_the_slot_and_heals(postgres_url):
    slots, breaker = RunSlots(1), Clock()
    store = _store(postgres_url, deadline=0.5, cooldown=5, breaker_clock=breaker,
                   while_waiting=slots.stepped_out)
    started = store.start_class()                            # the pool holds an open connection
    other_page_ran = threading.Event()
    failures: list[str] = []

    def unrelated_page():
        with slots.run():
            other_page_ran.set()

    with paused(postgres_url):
        def class_member_page():
            with slots.run():
                try:
                    store.find_class(started.code)
                except StoreUnavailable as exc:
                    failures.append(str(exc))
                threading.Thread(target=unrelated_page).start()   # queued behind this run's slot
        member = threading.Thread(target=class_member_page)
        member.start()
        member.join(30)
        assert failures and "out of reach" in failures[0]
        assert store.database.stuck == 1                    # the pre-ping waits on the frozen server
        assert other_page_ran.wait(10)
        # A store made during the pause (no pooled connection: it must connect) fails too.
        fresh = _store(postgres_url, deadline=0.5)
        with pytest.raises(StoreUnavailable, match="out of reach"):
            fresh.start_class()
        fresh.dispose()
        with pytest.raises(StoreUnavailable, match="out of reach"):   # known down: at once
            store.find_class(started.code)
        assert store.database.stuck == 1
    _wait_until(lambda: store.database.stuck == 0, "the frozen call finished after SIGCONT")
    breaker.now += 6
    assert store.find_class(started.code).code == started.code
    joined = store.join(started.code, "Ada")
    assert joined.nickname == "Ada"
    store.dispose()


@pytest.mark.spawns
def test_a_restarted_postgres_is_used_again_without_an_error(postgres_url):
    store = _store(postgres_url, breaker_clock=Clock())
    started = store.start_class()
    store.join(started.code, "Ada")                          # the pool holds open connections
    restart(postgres_url)                                    # every one of them cut
    assert store.find_class(started.code).members == 1       # pre-ping: a new connection
    assert store.join(started.code, "Grace").nickname == "Grace"
    assert store.database.down is None
    store.dispose()


# --- SQLite locked by another program ---------------------------------------------------------------
def test_a_sqlite_file_locked_by_another_program_says_so_and_heals(tmp_path):
    path = tmp_path / "classroom.sqlite3"
    breaker = Clock()
    store = _store(f"sqlite:///{path}", cooldown=5, breaker_clock=breaker)
    started = store.start_class()
    other_program = sqlite3.connect(path, timeout=0, isolation_level=None)
    other_program.execute("BEGIN EXCLUSIVE")
    other_program.execute("UPDATE classes SET send_title = 'x'")
    with pytest.raises(StoreUnavailable, match="locked by another program"):
        store.join(started.code, "Ada")
    with pytest.raises(StoreUnavailable, match="locked by another program"):
        store.find_class(started.code)                     # known locked: at once
    other_program.execute("ROLLBACK")
    other_program.close()
    breaker.now += 6
    assert store.join(started.code, "Ada").nickname == "Ada"
    assert store.find_class(started.code).members == 1
    store.dispose()


# --- read-only, then writable again -------------------------------------------------------------
class ReadOnly:
    """Makes the database refuse writes on connections opened while it is on, as a SQLite file
    made read-only does (a connection opened then stays read-only for its life: the fault this
    heals) and a PostgreSQL database set `default_transaction_read_only` does. As root, chmod
    would not stop SQLite writing, so `PRAGMA query_only` stands in for the file's mode: its
    error is the same SQLITE_READONLY."""

    def __init__(self, store: ClassStore) -> None:
        self.store, self.on = store, False
        self.sqlite = store.url.startswith("sqlite")
        if self.sqlite:
            event.listen(store.engine, "connect", self._connect)

    def _connect(self, connection, _record) -> None:
        if self.on:
            connection.execute("PRAGMA query_only=ON")

    def set(self, on: bool) -> None:
        self.on = on
        if not self.sqlite:
            admin = ClassStore(self.store.url).engine
            with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(text("SET default_transaction_read_only = off"))
                value = "on" if on else "off"
                connection.execute(text("ALTER DATABASE postgres SET "
                                        f"default_transaction_read_only = {value}"))
            admin.dispose()


def test_a_read_only_database_says_so_and_every_join_works_once_it_is_writable(url):
    """The fault of the issue: after the file was writable again, 6 of 12 joins failed on
    connections opened during the fault. Here the pool holds only such connections when the
    fault ends."""
    breaker = Clock()
    store = _store(url, cooldown=5, breaker_clock=breaker)
    started = store.start_class()
    read_only = ReadOnly(store)
    read_only.set(True)
    store.engine.dispose()                       # the pool reconnects (as it does over time)
    with pytest.raises(StoreUnavailable, match="read-only"):
        store.join(started.code, "Ada")
    opened = [store.engine.connect() for _ in range(4)]        # opened while the fault lasts
    for connection in opened:
        connection.close()                                      # back into the pool, read-only
    read_only.set(False)                                        # writable again; the pool is not
    breaker.now += 6
    joined = [store.join(started.code, f"Learner {n}") for n in range(12)]
    assert [m.nickname for m in joined] == [f"Learner {n}" for n in range(12)]
    assert store.find_class(started.code).members == 12
    store.dispose()


# --- the SQLite file deleted mid-class -------------------------------------------------------------
def test_a_deleted_sqlite_file_is_noticed_remade_and_the_loss_said(tmp_path):
    path = tmp_path / "classroom.sqlite3"
    store = _store(f"sqlite:///{path}")
    started = store.start_class()
    member = store.join(started.code, "Ada")
    for leftover in tmp_path.glob("classroom.sqlite3*"):
        leftover.unlink()
    with pytest.raises(StoreUnavailable, match="removed or replaced.*start a new class"):
        store.record_answer(started.code, member.token, "shapes", OPTIONS[0], OPTIONS, 1)
    # The answer went nowhere (not into the deleted file), and the class is known to be gone.
    with pytest.raises(ClassError, match="no class.*file was removed.*start a new class"):
        store.find_class(started.code)
    again = store.start_class()                              # a new class works at once
    assert store.join(again.code, "Ada").nickname == "Ada"
    assert path.exists()
    direct = sqlite3.connect(path)
    assert direct.execute("SELECT code FROM classes").fetchall() == [(again.code,)]
    assert direct.execute("SELECT count(*) FROM answers").fetchone() == (0,)
    direct.close()
    store.dispose()


def test_a_replaced_sqlite_file_is_noticed(tmp_path):
    path = tmp_path / "classroom.sqlite3"
    store = _store(f"sqlite:///{path}")
    started = store.start_class()
    other = tmp_path / "restored.sqlite3"
    backup = sqlite3.connect(other)
    sqlite3.connect(path).backup(backup)
    backup.close()
    other.replace(path)                                      # a restored backup, say
    with pytest.raises(StoreUnavailable, match="removed or replaced"):
        store.find_class(started.code)
    assert store.find_class(started.code).code == started.code     # the restored file's class
    store.dispose()


# --- the sweep in batches ---------------------------------------------------------------------------
def _many_idle_classes(store: ClassStore, count: int) -> None:
    """`count` classes with a member each, and nothing else: rows an earlier test left in the
    module's PostgreSQL database (a call that timed out there can commit after its test) go."""
    store.start_class()                                      # migrated
    now = store.clock()
    with store.engine.begin() as connection:
        for table in (*CLASS_TABLES, classes):
            connection.execute(delete(table))
        connection.execute(insert(classes), [
            dict(code=f"Z{n:05d}", teacher_key_digest="x", created_at=now, last_activity_at=now,
                 send_number=0, send_link="", send_title="") for n in range(count)])
        connection.execute(insert(members), [
            dict(token_digest=f"t{n}", class_code=f"Z{n:05d}", nickname="A", joined_at=now,
                 answers_written=0) for n in range(count)])


def _count(store: ClassStore, table) -> int:
    with store.engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(table)).scalar_one()


def test_the_sweep_deletes_in_batches_each_its_own_transaction(url):
    store = _store(url)
    _many_idle_classes(store, 2 * SWEEP_BATCH + 50)
    store.clock.now += IDLE_EXPIRY_SECONDS + 1
    with store.engine.begin() as connection:                 # active now: stays
        connection.execute(insert(classes).values(
            code="KEPTAA", teacher_key_digest="x", created_at=store.clock.now,
            last_activity_at=store.clock.now, send_number=0, send_link="", send_title=""))
    commits: list[int] = []
    event.listen(store.engine, "commit", lambda _connection: commits.append(1))
    assert store.expire_idle() == 2 * SWEEP_BATCH + 50
    assert store.sweep_batches == [SWEEP_BATCH, SWEEP_BATCH, 50]
    assert len(commits) == 3
    assert _count(store, classes) == 1 and _count(store, members) == 0
    assert store.find_class("KEPTAA").code == "KEPTAA"
    store.dispose()


def test_the_background_sweep_takes_one_batch_per_store_call(url):
    store = _store(url)
    _many_idle_classes(store, 2 * SWEEP_BATCH + 50)
    store.clock.now += IDLE_EXPIRY_SECONDS + 601             # expired, and a sweep is due
    total = 2 * SWEEP_BATCH + 50
    kept = store.start_class()
    assert store.sweep_batches == [SWEEP_BATCH]
    assert _count(store, classes) == total + 1 - SWEEP_BATCH
    store.find_class(kept.code)
    assert store.sweep_batches == [SWEEP_BATCH]
    store.find_class(kept.code)
    assert store.sweep_batches == [50]                       # short: this sweep is done
    assert _count(store, classes) == 1
    store.find_class(kept.code)
    assert store.sweep_batches == [50]                       # nothing more until the next one
    store.dispose()
