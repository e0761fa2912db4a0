"""The class store's queries: start, join, answer, reveal, send, post a run, set the challenge,
the roster (remove, rename, hide names, close joining), pin checks, end, expire.

Every method is one transaction, and every input that reaches it from a learner (a code, a
nickname, a check's key and option, a posted run) is validated here, whatever the page already
checked: a `ClassError` carries the message the page shows, and nothing is written. The teacher's
actions need the teacher key; a learner's need the member token their session was given on
joining, so no one answers for another learner or steers a class they did not start.

`WORKBENCH_DATABASE_URL` chooses the database: unset, a SQLite file in `data/` (one process,
`make run` needs no setup); a `postgresql://` URL for several replicas (deploy/compose.yaml).
Every method runs behind workbench/classroom/database.py's guard: a page waits at most 1.5 s
for it, without holding its page-run slot, and a database that is frozen, read-only, locked or
whose file was deleted becomes StoreUnavailable, saying which, and heals without a restart.
Expired classes are deleted in batches of SWEEP_BATCH, each its own transaction.
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, and_, case, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from workbench.classroom import codes, names
from workbench.classroom.database import Database, DatabaseFault
from workbench.classroom.pacing import MAX_TIMER_SECONDS, CheckPace, Pacing, closed_message
from workbench.classroom.schema import (CLASS_TABLES, answers, check_states, classes,
                                        data_of_link_version_7, members, migrate, pinned_checks,
                                        posted_runs, prediction_votes, predictions, reveals)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_URL = f"sqlite:///{ROOT / 'data' / 'classroom.sqlite3'}"
URL_SETTING = "WORKBENCH_DATABASE_URL"

IDLE_EXPIRY_SECONDS = 24 * 3600        # a class ends a day after its last activity
KEEP_REPORT_DAYS = 7                   # an ended class's report is kept this long, if asked
ACTIVITY_EVERY_SECONDS = 60            # reads refresh the activity time at most this often
SWEEP_EVERY_SECONDS = 600              # how often a process deletes the classes that expired
SWEEP_BATCH = 100                      # expired classes deleted per transaction
MAX_MEMBERS = 300                      # a lecture hall, and then some: learners present at once
# A seat not seen for this long is "away": it does not count toward MAX_MEMBERS or "Learners in
# the class" (the roster still lists it). A member's page is seen every SEEN_EVERY_SECONDS while
# it is open (the follow fragment's heartbeat), so 180 s is six missed heartbeats: a phone
# locked for a minute stays present, a closed tab or a script's session is away in 3 minutes.
PRESENT_SECONDS = 180
SEEN_EVERY_SECONDS = 30                # a heartbeat writes last_seen_at at most this often
# Rows kept per class, away ones included: when it is reached, away members who gave no answer
# and posted no run give their row up (their seat was free already).
MAX_MEMBER_ROWS = 2 * MAX_MEMBERS
MAX_PINNED = 12
MAX_ANSWERS_WRITTEN = 200              # per learner and class, replaced answers included (35 checks)
MAX_RUNS_PER_MEMBER = 10
MAX_RUNS_PER_CLASS = 300
MAX_CHALLENGE_PARAMETERS = 10**8       # above any model the moons trainer can build (4 x 256 wide)
# The challenge's data until the teacher sets others: the lesson's assignment, in the words of
# workbench/moons_trainer/challenge.py's `data_settings` (a test checks they agree).
DEFAULT_CHALLENGE_DATA = "moons, 3000 points, noise 0.25, seed 42, split 70/15/15"
MAX_DATA_SETTINGS = 200                 # the columns' width (schema.py)
CHECK_KEY = re.compile(r"^[a-z0-9_]{1,80}$")
# A posted run's link: a page of this app and its query, nothing a browser could read as another
# site ("//host", "/\\host") or a script; the board puts it behind an "Open" link.
RUN_LINK = re.compile(r"^/[a-z0-9_]{1,40}(\?[A-Za-z0-9_.,()\[\]:%&=+~-]*)?$")
MAX_OPTION = 200
MAX_LINK = 2000
MAX_TITLE = 200


class ClassError(Exception):
    """Something the person asked for that the class store refuses; the message says why."""


class CheckClosed(ClassError):
    """An answer to a check the teacher closed, or whose timer ran out: not recorded."""


class ReplayedAnswer(ClassError):
    """An answer the store already holds (or an older one) arrived again; nothing changed."""


class StoreUnavailable(ClassError):
    """The database could not be reached; the tools keep working and the page says so."""


class RemovedFromClass(ClassError):
    """The teacher removed this learner: their token opens nothing any more."""


class JoiningClosed(ClassError):
    """The teacher closed the class to new learners."""


ENDED_CLASS = ("Class {code} has ended: its teacher ended it, and it takes no more answers or "
               "runs. Your own work here is kept.")
_NAME_JUST_TAKEN = "Someone in this class took that name a moment ago. Pick another."
UNKNOWN_CLASS = ("There is no class {code}: check the code with your teacher. A class ends when "
                 "its teacher ends it or after a day without activity.")


@dataclass(frozen=True)
class StartedClass:
    code: str
    teacher_key: str                   # shown once; only its digest is stored


@dataclass(frozen=True)
class Membership:
    code: str
    token: str                         # this learner's secret; only its digest is stored
    nickname: str


@dataclass(frozen=True)
class Send:
    number: int                        # 0: the teacher has sent the class nowhere yet
    link: str
    title: str
    pacing: int = 0                    # grows with each open, close, timer or reset of a check


@dataclass(frozen=True)
class Heartbeat:
    """What a learner's open page learns each time it is seen: where the class is sent, and
    the name it has now (the teacher may have renamed them)."""
    send: Send
    nickname: str


@dataclass(frozen=True)
class ClassView:
    code: str
    created_at: float
    members: int                       # present: seen within PRESENT_SECONDS, not removed
    send: Send
    away: int = 0                      # members whose page was not seen lately
    joining_closed: bool = False
    hide_names: bool = False
    word_filter: bool = True


@dataclass(frozen=True)
class EndedClass:
    """A class its teacher ended, keeping its report until `keep_until`."""
    code: str
    ended_at: float
    keep_until: float


@dataclass(frozen=True)
class ReportMember:
    seat: int
    nickname: str
    joined_at: float
    present: bool


@dataclass(frozen=True)
class ReportAnswer:
    seat: int
    check_key: str
    option: str
    answered_at: float


@dataclass(frozen=True)
class ReportPrediction:
    """A prediction the teacher revealed (one never revealed stays out of the report: its votes
    were hidden from everyone, the teacher included), with each learner's vote by seat."""
    question: str
    options: tuple[str, ...]
    expected: int | None               # the teacher's mark; None: an opinion poll or a check
    check_key: str | None              # a built-in check, whose answer PyTorch computes
    votes: tuple[tuple[int, int], ...]     # (seat, option index)


@dataclass(frozen=True)
class ClassRecord:
    """Everything the class's report is built from (workbench/classroom/report.py): its members
    (removed ones left out, with their answers and runs), every answer, every posted run with
    its learner's seat, and the switches that shape what the report shows."""
    code: str
    created_at: float
    ended_at: float | None
    keep_until: float | None
    hide_names: bool
    members: list[ReportMember]
    answers: list[ReportAnswer]
    runs: list[tuple[int, RunEntry]]                # (seat, run), oldest first
    predictions: list[ReportPrediction] = field(default_factory=list)   # revealed, oldest first


@dataclass(frozen=True)
class RosterEntry:
    """One learner as the teacher's roster shows them. `seat` is the public handle the
    teacher's actions name (a browser never sees a token or its digest)."""
    seat: int
    nickname: str
    joined_at: float
    last_seen_at: float
    answers: int
    runs: int
    present: bool


@dataclass(frozen=True)
class CheckTally:
    check_key: str
    answered: int
    counts: dict[str, int] = field(default_factory=dict)
    revealed: bool = False
    pinned: bool = False


@dataclass(frozen=True)
class RunEntry:
    """A finished training run as the challenge board shows it."""
    link: str
    optimizer: str
    learning_rate: float
    test_accuracy: float
    bayes_ceiling: float
    parameter_count: int
    nickname: str = ""
    posted_at: float = 0.0
    data_settings: str = ""     # the data it trained on (moons_trainer.challenge.data_settings)


@dataclass(frozen=True)
class ChallengeBoard:
    """A class's posted runs, oldest first, and the teacher's challenge: the best test accuracy
    with at most `max_parameters` parameters (None: no limit set) on the data `data_settings`
    (runs on other data are listed apart, never ranked against it)."""
    runs: list[RunEntry]
    max_parameters: int | None
    hide_names: bool = False           # the teacher keeps names off the projected boards
    data_settings: str = DEFAULT_CHALLENGE_DATA


def _reachable(method: Callable) -> Callable:
    """The method runs behind the database's guard (deadline, breaker, recovery; see
    workbench/classroom/database.py): a fault of the database becomes StoreUnavailable, whose
    message the page shows instead of breaking. After a SQLite file was lost, "there is no
    class" says why."""
    @functools.wraps(method)
    def wrapper(store: ClassStore, *args, **kwargs):
        try:
            return store.database.call(lambda: method(store, *args, **kwargs))
        except DatabaseFault as exc:
            raise StoreUnavailable(str(exc)) from exc
        except ClassError as exc:
            lost_at = store.database.file_lost_at
            if lost_at is not None and str(exc).startswith(_UNKNOWN_CLASS_START):
                when = time.strftime("%H:%M", time.localtime(lost_at))
                raise ClassError(f"{exc} The class database's file was removed at {when}, and "
                                 "every class started before then went with it: the teacher "
                                 "needs to start a new class.") from exc
            raise
    return wrapper


_UNKNOWN_CLASS_START = UNKNOWN_CLASS.split("{", 1)[0]


class ClassStore:
    def __init__(self, url: str, clock: Callable[[], float] = time.time, **guard) -> None:
        """`guard`: Database's deadline, workers, cooldown, breaker_clock, while_waiting (tests)."""
        self.url = url
        self.database = Database(url, **guard)
        self.engine: Engine = self.database.engine
        self.clock = clock
        self._migrated_generation: int | None = None
        self._swept_at = -math.inf
        self._sweep_more = False
        self.sweep_batches: list[int] = []     # the last sweep's batch sizes (for the tests)

    @classmethod
    def from_environment(cls) -> ClassStore:
        return cls(os.environ.get(URL_SETTING) or DEFAULT_URL)

    def _ready(self, sweep: bool = True) -> Engine:
        """The engine, the schema migrated on first use (not at import: an unreachable database
        must not stop the app from starting) and again on a new SQLite file. Every
        SWEEP_EVERY_SECONDS the expired classes are deleted, one batch per call until a batch
        comes back short, so no call waits for more than one small transaction of it."""
        if self._migrated_generation != self.database.generation:
            migrate(self.engine)
            self._migrated_generation = self.database.generation
        if sweep and (self._sweep_more or self.clock() - self._swept_at > SWEEP_EVERY_SECONDS):
            if not self._sweep_more:
                self._swept_at = self.clock()
            self._sweep_more = self._sweep(batches=1) == SWEEP_BATCH
        return self.engine

    def dispose(self) -> None:
        self.database.dispose()

    # --- the class ------------------------------------------------------------------------
    @_reachable
    def start_class(self) -> StartedClass:
        engine = self._ready()
        key = codes.new_secret()
        now = self.clock()
        for _ in range(20):
            code = codes.new_code()
            try:
                with engine.begin() as connection:
                    connection.execute(insert(classes).values(
                        code=code, teacher_key_digest=codes.digest(key), created_at=now,
                        last_activity_at=now, send_number=0, send_link="", send_title=""))
                return StartedClass(code, key)
            except IntegrityError:
                continue                                  # the code is taken: draw another
        raise ClassError("No free class code was found; try again.")

    def _live_class(self, connection, raw_code: str, ended_ok: bool = False):
        """The class row for a code a person typed, or ClassError; an expired class is ended here.
        A class its teacher ended (keeping its report) is refused unless `ended_ok`."""
        code = codes.normalise_code(raw_code)
        if code is None:
            shown = str(raw_code)[:12]
            raise ClassError(f"“{shown}” is not a class code: a code is {codes.CODE_LENGTH} letters "
                             "and digits, as your teacher shows it.")
        row = connection.execute(select(classes).where(classes.c.code == code)).first()
        if row is None or _expired(row, self.clock()):
            # Expired: unknown from now on; the next sweep deletes its data.
            raise ClassError(UNKNOWN_CLASS.format(code=code))
        if row.ended_at is not None and not ended_ok:
            raise ClassError(ENDED_CLASS.format(code=row.code))
        return row

    def _touch(self, connection, row, force: bool = True) -> None:
        now = self.clock()
        if force or now - row.last_activity_at > ACTIVITY_EVERY_SECONDS:
            connection.execute(update(classes).where(classes.c.code == row.code)
                               .values(last_activity_at=now))

    def _teacher_class(self, connection, code: str, teacher_key: str, ended_ok: bool = False):
        row = self._live_class(connection, code, ended_ok)
        if not codes.same_digest(teacher_key or "", row.teacher_key_digest):
            raise ClassError(f"This teacher key does not open class {row.code}: only the teacher "
                             "who started it (or their private teacher link) can.")
        return row

    @_reachable
    def find_class(self, code: str) -> ClassView:
        with self._ready().begin() as connection:
            row = self._live_class(connection, code)
            present, away = self._seat_counts(connection, row.code)
            return ClassView(row.code, row.created_at, present, _send_of(row), away,
                             bool(row.joining_closed), bool(row.hide_names), bool(row.word_filter))

    def _seat_counts(self, connection, code: str) -> tuple[int, int]:
        """(present, away) among the class's members not removed."""
        cutoff = self.clock() - PRESENT_SECONDS
        present, total = connection.execute(
            select(func.coalesce(func.sum(case((members.c.last_seen_at >= cutoff, 1), else_=0)), 0),
                   func.count())
            .where(and_(members.c.class_code == code, members.c.removed_at.is_(None)))).one()
        return int(present), int(total) - int(present)

    @_reachable
    def check_teacher(self, code: str, teacher_key: str) -> str:
        """The class's code if `teacher_key` opens it, else ClassError."""
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            self._touch(connection, row, force=False)
            return row.code

    @_reachable
    def end_class(self, code: str, teacher_key: str, keep_days: int = 0) -> EndedClass | None:
        """End the class. `keep_days` 0: delete its data now (an ended class's too: the
        report's *Delete now*). Otherwise keep its report that many days (at most
        KEEP_REPORT_DAYS): learners are refused from now on, and only the teacher key reads it."""
        if isinstance(keep_days, bool) or not isinstance(keep_days, int) \
                or not 0 <= keep_days <= KEEP_REPORT_DAYS:
            raise ClassError(f"A report is kept from 0 to {KEEP_REPORT_DAYS} days.")
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key, ended_ok=True)
            if not keep_days:
                _delete_class(connection, row.code)
                return None
            now = self.clock()
            ended_at = row.ended_at if row.ended_at is not None else now
            keep_until = now + keep_days * 24 * 3600
            connection.execute(update(classes).where(classes.c.code == row.code).values(
                ended_at=ended_at, keep_until=keep_until, last_activity_at=now))
            return EndedClass(row.code, ended_at, keep_until)

    @_reachable
    def ended(self, code: str, teacher_key: str) -> EndedClass | None:
        """The class's end, if its teacher ended it and its report is kept; None while it runs.
        ClassError when the key does not open it or it is gone."""
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key, ended_ok=True)
            if row.ended_at is None:
                return None
            return EndedClass(row.code, row.ended_at, row.keep_until)

    @_reachable
    def expire_idle(self) -> int:
        """Delete every class idle for more than a day; returns how many. (Each process also
        does it every SWEEP_EVERY_SECONDS, a batch per use of the store.)"""
        self._ready(sweep=False)
        self._swept_at, self._sweep_more = self.clock(), False
        return self._sweep()

    def _sweep(self, batches: int | None = None) -> int:
        """Delete up to `batches` batches (None: all) of SWEEP_BATCH expired classes, each batch
        its own transaction: a sweep of 10,000 classes is 100 short transactions that the
        learners' writes pass between, not one that holds the database for seconds."""
        now = self.clock()
        self.sweep_batches = []
        while batches is None or len(self.sweep_batches) < batches:
            with self.engine.begin() as connection:
                codes_ = connection.execute(
                    select(classes.c.code).where(_expired_clause(now))
                    .order_by(classes.c.last_activity_at).limit(SWEEP_BATCH)).scalars().all()
                if codes_:
                    for table in CLASS_TABLES:
                        connection.execute(delete(table).where(table.c.class_code.in_(codes_)))
                    connection.execute(delete(classes).where(classes.c.code.in_(codes_)))
            self.sweep_batches.append(len(codes_))
            if len(codes_) < SWEEP_BATCH:
                break
        return sum(self.sweep_batches)

    # --- members --------------------------------------------------------------------------
    @_reachable
    def join(self, code: str, nickname: str = "") -> Membership:
        """A new seat in the class, under `nickname` (checked: names.check) or a made-up name
        no one in the class has. Refused when the teacher closed joining or MAX_MEMBERS
        learners are present. Two joins at once that pick one name or seat: the database's
        unique indexes let one win, and the other tries again with the names now taken."""
        if len(str(nickname or "")) > codes.NICKNAME_MAX * 4:
            raise ClassError(f"A nickname has at most {codes.NICKNAME_MAX} characters.")
        for attempt in range(5):
            try:
                with self._ready().begin() as connection:
                    return self._join(connection, code, nickname)
            except IntegrityError:
                if attempt == 4:
                    raise ClassError("Many learners are joining at this moment: try again.") from None
        raise AssertionError("unreachable")

    def _join(self, connection, code: str, nickname: str) -> Membership:
        row = self._live_class(connection, code)
        # Joins to one class one at a time: a write to the class row first (a no-op) holds
        # PostgreSQL's row lock, and SQLite's write lock, until this transaction ends (pysqlite
        # opens a transaction only at the first write; reads before it see no lock), so each
        # join reads the seats and names the one before it committed. Without it, twelve joins
        # at once drew the same next seat and most failed their retries (test_roster_store.py).
        connection.execute(update(classes).where(classes.c.code == row.code)
                           .values(last_activity_at=classes.c.last_activity_at))
        row = connection.execute(select(classes).where(classes.c.code == row.code)).one()
        if row.joining_closed:
            raise JoiningClosed(f"Class {row.code} is closed to new learners: your teacher has "
                                "closed joining. Ask them to open it again.")
        present, away = self._seat_counts(connection, row.code)
        if present >= MAX_MEMBERS:
            raise ClassError(f"Class {row.code} is full ({MAX_MEMBERS} learners are in it).")
        if present + away >= MAX_MEMBER_ROWS:
            self._drop_idle_seats(connection, row.code)
            present, away = self._seat_counts(connection, row.code)
            if present + away >= MAX_MEMBER_ROWS:
                raise ClassError(f"Class {row.code} is full: {MAX_MEMBER_ROWS} learners have "
                                 "joined it.")
        taken = self._taken_keys(connection, row.code)
        name = _checked_name(nickname, taken, bool(row.word_filter)) or names.generated(taken)
        seat = (connection.execute(select(func.max(members.c.seat))
                                   .where(members.c.class_code == row.code)).scalar() or 0) + 1
        token = codes.new_secret()
        now = self.clock()
        connection.execute(insert(members).values(
            token_digest=codes.digest(token), class_code=row.code, nickname=name,
            joined_at=now, answers_written=0, seat=seat, name_key=names.name_key(name),
            last_seen_at=now, removed_at=None))
        self._touch(connection, row)
        return Membership(row.code, token, name)

    def _taken_keys(self, connection, code: str, *, except_digest: str = "") -> set[str]:
        return set(connection.execute(select(members.c.name_key).where(and_(
            members.c.class_code == code, members.c.name_key.is_not(None),
            members.c.token_digest != except_digest))).scalars())

    def _drop_idle_seats(self, connection, code: str) -> None:
        """Away members who gave nothing to the class (no answer, no run) give their row up."""
        cutoff = self.clock() - PRESENT_SECONDS
        posted = select(posted_runs.c.member_digest).where(posted_runs.c.class_code == code)
        connection.execute(delete(members).where(and_(
            members.c.class_code == code, members.c.last_seen_at < cutoff,
            members.c.answers_written == 0, members.c.removed_at.is_(None),
            members.c.token_digest.not_in(posted))))

    def _member(self, connection, code: str, token: str):
        row = self._live_class(connection, code)
        member = connection.execute(select(members).where(and_(
            members.c.token_digest == codes.digest(token or ""),
            members.c.class_code == row.code))).first()
        if member is None:
            raise ClassError(f"You are not in class {row.code} (any more): join it again by its "
                             "link or code.")
        if member.removed_at is not None:
            raise RemovedFromClass(f"Your teacher removed you from class {row.code}. Your answers "
                                   "and runs have left the class board; your own work here is kept.")
        return row, member

    def _seen(self, connection, member, force: bool = False) -> None:
        now = self.clock()
        if force or now - member.last_seen_at >= SEEN_EVERY_SECONDS:
            connection.execute(update(members).where(members.c.token_digest == member.token_digest)
                               .values(last_seen_at=now))

    @_reachable
    def heartbeat(self, code: str, token: str) -> Heartbeat:
        """A learner's page is open: it is seen now (written at most every SEEN_EVERY_SECONDS),
        and learns where the class is sent and its current name. ClassError (RemovedFromClass)
        when the learner is no member any more, so their page can say why."""
        with self._ready().begin() as connection:
            row, member = self._member(connection, code, token)
            self._seen(connection, member)
            return Heartbeat(_send_of(row), member.nickname)

    @_reachable
    def resume(self, code: str, token: str) -> tuple[Membership, int]:
        """A learner back after a reload (their browser kept `token`): the same membership, so
        the board counts them once, and the highest sequence number of their recorded answers,
        so the new session's answers number above it and are not taken for replays. ClassError
        when the token is no member of the class (any more)."""
        with self._ready().begin() as connection:
            row, member = self._member(connection, code, token)
            last_sequence = connection.execute(
                select(func.max(answers.c.sequence))
                .where(answers.c.member_digest == member.token_digest)).scalar() or 0
            self._touch(connection, row, force=False)
            self._seen(connection, member, force=True)
            return Membership(row.code, token, member.nickname), int(last_sequence)

    @_reachable
    def rename(self, code: str, token: str, nickname: str) -> str:
        """The learner renames themselves (checked as on joining; empty: a made-up name)."""
        try:
            with self._ready().begin() as connection:
                row, member = self._member(connection, code, token)
                return self._rename(connection, row, member, nickname)
        except IntegrityError:
            raise ClassError(_NAME_JUST_TAKEN) from None

    def _rename(self, connection, row, member, nickname: str) -> str:
        if len(str(nickname or "")) > codes.NICKNAME_MAX * 4:
            raise ClassError(f"A nickname has at most {codes.NICKNAME_MAX} characters.")
        taken = self._taken_keys(connection, row.code, except_digest=member.token_digest)
        name = _checked_name(nickname, taken, bool(row.word_filter)) or names.generated(taken)
        # Two renames to one name at once: the unique index refuses the second (IntegrityError,
        # turned into _NAME_JUST_TAKEN by the caller, after its transaction is rolled back).
        connection.execute(update(members).where(members.c.token_digest == member.token_digest)
                           .values(nickname=name, name_key=names.name_key(name)))
        return name

    # --- the roster (the teacher's) -------------------------------------------------------------
    @_reachable
    def roster(self, code: str, teacher_key: str) -> list[RosterEntry]:
        """Every learner in the class (removed ones left out), in seat order: name, joined, last
        seen, answers given, runs posted, present or away."""
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            given = (select(answers.c.member_digest, func.count().label("n"))
                     .where(answers.c.class_code == row.code)
                     .group_by(answers.c.member_digest).subquery())
            posted = (select(posted_runs.c.member_digest, func.count().label("n"))
                      .where(posted_runs.c.class_code == row.code)
                      .group_by(posted_runs.c.member_digest).subquery())
            found = connection.execute(
                select(members.c.seat, members.c.nickname, members.c.joined_at,
                       members.c.last_seen_at, func.coalesce(given.c.n, 0),
                       func.coalesce(posted.c.n, 0))
                .outerjoin(given, given.c.member_digest == members.c.token_digest)
                .outerjoin(posted, posted.c.member_digest == members.c.token_digest)
                .where(and_(members.c.class_code == row.code, members.c.removed_at.is_(None)))
                .order_by(members.c.seat)).all()
        cutoff = self.clock() - PRESENT_SECONDS
        return [RosterEntry(seat, nickname, joined, seen, int(given_n), int(runs_n), seen >= cutoff)
                for seat, nickname, joined, seen, given_n, runs_n in found]

    def _seat_member(self, connection, row, seat: int):
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise ClassError("That is not a seat of this class.")
        member = connection.execute(select(members).where(and_(
            members.c.class_code == row.code, members.c.seat == seat,
            members.c.removed_at.is_(None)))).first()
        if member is None:
            raise ClassError(f"No learner sits in seat {seat} of class {row.code} (any more).")
        return member

    @_reachable
    def remove_member(self, code: str, teacher_key: str, seat: int) -> str:
        """The teacher removes the learner in `seat`: their answers and runs leave the board,
        their seat and name are free, their token opens nothing and says they were removed.
        Returns the name they had."""
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            member = self._seat_member(connection, row, seat)
            for table in (posted_runs, answers):
                connection.execute(delete(table).where(table.c.member_digest == member.token_digest))
            connection.execute(update(members).where(members.c.token_digest == member.token_digest)
                               .values(removed_at=self.clock(), name_key=None))
            self._touch(connection, row)
            return member.nickname

    @_reachable
    def rename_member(self, code: str, teacher_key: str, seat: int, nickname: str) -> str:
        """The teacher renames the learner in `seat` (checked as a learner's own name is)."""
        try:
            with self._ready().begin() as connection:
                row = self._teacher_class(connection, code, teacher_key)
                member = self._seat_member(connection, row, seat)
                name = self._rename(connection, row, member, nickname)
                self._touch(connection, row)
                return name
        except IntegrityError:
            raise ClassError(_NAME_JUST_TAKEN) from None

    @_reachable
    def set_class_options(self, code: str, teacher_key: str, *, joining_closed: bool | None = None,
                          hide_names: bool | None = None, word_filter: bool | None = None) -> None:
        """The teacher's switches; None leaves one as it is."""
        values = {name: bool(value) for name, value in (("joining_closed", joining_closed),
                                                        ("hide_names", hide_names),
                                                        ("word_filter", word_filter))
                  if value is not None}
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            connection.execute(update(classes).where(classes.c.code == row.code)
                               .values(last_activity_at=self.clock(), **values))

    @_reachable
    def set_pinned(self, code: str, teacher_key: str, check_key: str, pinned: bool) -> None:
        """Pin a check to the board (shown first, in the order pinned) or unpin it."""
        if not CHECK_KEY.match(str(check_key)):
            raise ClassError("That is not a knowledge check of the workbench.")
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            connection.execute(delete(pinned_checks).where(and_(
                pinned_checks.c.class_code == row.code, pinned_checks.c.check_key == check_key)))
            if pinned:
                count = connection.execute(select(func.count()).select_from(pinned_checks).where(
                    pinned_checks.c.class_code == row.code)).scalar_one()
                if count >= MAX_PINNED:
                    raise ClassError(f"At most {MAX_PINNED} checks can be pinned: unpin one first.")
                connection.execute(insert(pinned_checks).values(
                    class_code=row.code, check_key=check_key, pinned_at=self.clock()))
            self._touch(connection, row)

    @_reachable
    def leave(self, code: str, token: str) -> None:
        """The learner leaves: their answers and posted runs go with them."""
        with self._ready().begin() as connection:
            try:
                _, member = self._member(connection, code, token)
            except ClassError:
                return                                    # already gone: leaving is done
            for table in (posted_runs, answers):
                connection.execute(delete(table).where(table.c.member_digest == member.token_digest))
            connection.execute(delete(members).where(members.c.token_digest == member.token_digest))

    # --- answers --------------------------------------------------------------------------
    @_reachable
    def record_answer(self, code: str, token: str, check_key: str, option: str,
                      options: Sequence[str], sequence: int) -> None:
        """Record the learner's answer to a check, replacing their earlier one. An answer whose
        sequence number is not above the stored answer's is a replay: ReplayedAnswer, nothing
        changes."""
        if not CHECK_KEY.match(str(check_key)):
            raise ClassError("That is not a knowledge check of the workbench.")
        if option not in options or len(option) > MAX_OPTION:
            raise ClassError("That answer is not one of the check's options.")
        if not isinstance(sequence, int) or sequence < 1:
            raise ClassError("That answer carries no valid sequence number.")
        with self._ready().begin() as connection:
            row, member = self._member(connection, code, token)
            refused = closed_message(self._pace(connection, row.code, check_key), self.clock())
            if refused:
                raise CheckClosed(refused)
            stored = connection.execute(select(answers.c.sequence).where(and_(
                answers.c.member_digest == member.token_digest,
                answers.c.check_key == check_key))).scalar()
            if stored is not None and sequence <= stored:
                raise ReplayedAnswer("This answer was recorded already: nothing changed.")
            # The bound is part of the update, so two writes at once cannot both pass it.
            counted = connection.execute(
                update(members).where(and_(members.c.token_digest == member.token_digest,
                                           members.c.answers_written < MAX_ANSWERS_WRITTEN))
                .values(answers_written=members.c.answers_written + 1)).rowcount
            if not counted:
                raise ClassError(f"You have sent {MAX_ANSWERS_WRITTEN} answers in this class, the "
                                 "most one learner can: later answers are not recorded.")
            values = dict(option=option, sequence=sequence, answered_at=self.clock())
            if stored is None:
                connection.execute(insert(answers).values(
                    member_digest=member.token_digest, class_code=row.code, check_key=check_key,
                    **values))
            else:
                connection.execute(update(answers).where(and_(
                    answers.c.member_digest == member.token_digest,
                    answers.c.check_key == check_key)).values(**values))
            self._touch(connection, row, force=False)

    @_reachable
    def tallies(self, code: str, teacher_key: str) -> list[CheckTally]:
        """Per check answered (or pinned) in the class: how many answered and the count per
        option. The pinned checks first, in the order pinned; then the most answered first, so
        one learner answering seven checks in a row cannot push the class's question down; a tie
        goes to the check answered last. For the teacher only."""
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            self._touch(connection, row, force=False)
            counted = connection.execute(
                select(answers.c.check_key, answers.c.option, func.count(),
                       func.max(answers.c.answered_at))
                .where(answers.c.class_code == row.code)
                .group_by(answers.c.check_key, answers.c.option)).all()
            shown = set(connection.execute(select(reveals.c.check_key)
                                           .where(reveals.c.class_code == row.code)).scalars())
            pinned = list(connection.execute(
                select(pinned_checks.c.check_key).where(pinned_checks.c.class_code == row.code)
                .order_by(pinned_checks.c.pinned_at, pinned_checks.c.check_key)).scalars())
        per_check: dict[str, dict[str, int]] = {key: {} for key in pinned}
        latest: dict[str, float] = {}
        for check_key, option, count, at in counted:
            per_check.setdefault(check_key, {})[option] = count
            latest[check_key] = max(latest.get(check_key, -math.inf), at)
        order = {key: place for place, key in enumerate(pinned)}
        totals = {key: sum(per_check[key].values()) for key in per_check}
        return [CheckTally(key, totals[key], per_check[key], key in shown, key in order)
                for key in sorted(per_check, key=lambda k: (order.get(k, len(order)), -totals[k],
                                                            -latest.get(k, -math.inf), k))]

    @_reachable
    def set_revealed(self, code: str, teacher_key: str, check_key: str, revealed: bool) -> None:
        if not CHECK_KEY.match(str(check_key)):
            raise ClassError("That is not a knowledge check of the workbench.")
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            connection.execute(delete(reveals).where(and_(reveals.c.class_code == row.code,
                                                          reveals.c.check_key == check_key)))
            if revealed:
                connection.execute(insert(reveals).values(class_code=row.code, check_key=check_key))
            self._touch(connection, row)

    # --- pacing (the teacher's) -------------------------------------------------------------
    def _pace(self, connection, code: str, check_key: str) -> CheckPace:
        found = connection.execute(select(check_states).where(and_(
            check_states.c.class_code == code, check_states.c.check_key == check_key))).first()
        return OPEN_PACE if found is None else CheckPace(bool(found.closed), found.closes_at,
                                                         found.round)

    def _set_pace(self, connection, row, check_key: str, **values) -> None:
        """Write the check's state (a row the first time) and count a pacing change."""
        changed = connection.execute(update(check_states).where(and_(
            check_states.c.class_code == row.code, check_states.c.check_key == check_key))
            .values(**values)).rowcount
        if not changed:
            connection.execute(insert(check_states).values(
                class_code=row.code, check_key=check_key,
                **{"closed": False, "closes_at": None, "round": 0, **values}))
        connection.execute(update(classes).where(classes.c.code == row.code).values(
            pacing_number=classes.c.pacing_number + 1, last_activity_at=self.clock()))

    @_reachable
    def pace_check(self, code: str, teacher_key: str, check_key: str, *, closed: bool,
                   timer_seconds: float | None = None) -> CheckPace:
        """Open a check (`closed=False`; with `timer_seconds`, it closes by itself then) or close
        it. Answers given meanwhile stay; a closed check refuses new ones (CheckClosed)."""
        _valid_check_key(check_key)
        if timer_seconds is not None and (isinstance(timer_seconds, bool)
                                          or not isinstance(timer_seconds, (int, float))
                                          or not 1 <= timer_seconds <= MAX_TIMER_SECONDS):
            raise ClassError(f"A timer runs from 1 second to {MAX_TIMER_SECONDS // 60} minutes.")
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            closes_at = None if closed or timer_seconds is None else self.clock() + timer_seconds
            self._set_pace(connection, row, check_key, closed=closed, closes_at=closes_at)
            return self._pace(connection, row.code, check_key)

    @_reachable
    def reset_check(self, code: str, teacher_key: str, check_key: str) -> int:
        """Delete every answer to the check, so the class answers it again (its timer and
        closing are undone: it is open); returns how many answers were deleted."""
        _valid_check_key(check_key)
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            deleted = connection.execute(delete(answers).where(and_(
                answers.c.class_code == row.code, answers.c.check_key == check_key))).rowcount
            before = self._pace(connection, row.code, check_key)
            self._set_pace(connection, row, check_key, closed=False, closes_at=None,
                           round=before.round + 1)
            connection.execute(delete(reveals).where(and_(reveals.c.class_code == row.code,
                                                          reveals.c.check_key == check_key)))
            return int(deleted)

    @_reachable
    def pacing(self, code: str) -> Pacing:
        """The class's paced checks, for its learners' pages and its teacher's board: what a
        check's state is, not who answered it, so the class code is enough to read it."""
        with self._ready().begin() as connection:
            row = self._live_class(connection, code)
            found = connection.execute(select(check_states).where(
                check_states.c.class_code == row.code)).all()
        return Pacing(row.pacing_number, {r.check_key: CheckPace(bool(r.closed), r.closes_at, r.round)
                                          for r in found})

    @_reachable
    def not_answered(self, code: str, teacher_key: str, check_keys: Sequence[str]) -> dict[str, list[str]]:
        """Per check, the present learners (seen within PRESENT_SECONDS) who have not answered
        it, by name in seat order: the teacher's "who has not answered yet"."""
        for check_key in check_keys:
            _valid_check_key(check_key)
        cutoff = self.clock() - PRESENT_SECONDS
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            present = connection.execute(
                select(members.c.token_digest, members.c.nickname).where(and_(
                    members.c.class_code == row.code, members.c.removed_at.is_(None),
                    members.c.last_seen_at >= cutoff)).order_by(members.c.seat)).all()
            answered = set(connection.execute(
                select(answers.c.check_key, answers.c.member_digest).where(and_(
                    answers.c.class_code == row.code,
                    answers.c.check_key.in_(list(check_keys))))).all()) if check_keys else set()
        return {key: [p.nickname for p in present if (key, p.token_digest) not in answered]
                for key in check_keys}

    # --- the report (the teacher's) ---------------------------------------------------------
    @_reachable
    def record(self, code: str, teacher_key: str) -> ClassRecord:
        """Everything the class's report is built from; the teacher's only, also after End
        while the report is kept."""
        cutoff = self.clock() - PRESENT_SECONDS
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key, ended_ok=True)
            people = connection.execute(
                select(members.c.token_digest, members.c.seat, members.c.nickname,
                       members.c.joined_at, members.c.last_seen_at)
                .where(and_(members.c.class_code == row.code, members.c.removed_at.is_(None)))
                .order_by(members.c.seat)).all()
            seat_of = {person.token_digest: person.seat for person in people}
            given = connection.execute(
                select(answers.c.member_digest, answers.c.check_key, answers.c.option,
                       answers.c.answered_at)
                .where(answers.c.class_code == row.code)
                .order_by(answers.c.answered_at, answers.c.check_key)).all()
            posted = connection.execute(
                select(posted_runs).where(posted_runs.c.class_code == row.code)
                .order_by(posted_runs.c.id)).all()
            revealed = connection.execute(
                select(predictions).where(and_(predictions.c.class_code == row.code,
                                               predictions.c.revealed_at.is_not(None)))
                .order_by(predictions.c.id)).all()
            voted = connection.execute(
                select(prediction_votes.c.prediction_id, prediction_votes.c.member_digest,
                       prediction_votes.c.option_index)
                .where(prediction_votes.c.class_code == row.code)).all()
        names_now = {person.seat: person.nickname for person in people}
        return ClassRecord(
            row.code, row.created_at, row.ended_at, row.keep_until, bool(row.hide_names),
            [ReportMember(p.seat, p.nickname, p.joined_at, p.last_seen_at >= cutoff) for p in people],
            [ReportAnswer(seat_of[a.member_digest], a.check_key, a.option, a.answered_at)
             for a in given if a.member_digest in seat_of],
            [(seat_of[r.member_digest],
              RunEntry(r.link, r.optimizer, r.learning_rate, r.test_accuracy, r.bayes_ceiling,
                       r.parameter_count, names_now[seat_of[r.member_digest]], r.posted_at,
                       r.data_settings))
             for r in posted if r.member_digest in seat_of],
            [ReportPrediction(p.question, tuple(json.loads(p.options)), p.expected, p.check_key,
                              tuple(sorted((seat_of[v.member_digest], v.option_index) for v in voted
                                           if v.prediction_id == p.id and v.member_digest in seat_of)))
             for p in revealed])

    # --- the send -------------------------------------------------------------------------
    @_reachable
    def send(self, code: str, teacher_key: str, link: str, title: str) -> Send:
        """Send the class to `link` (a path on this app, with its query)."""
        if not link.startswith("/") or link.startswith("//") or len(link) > MAX_LINK:
            raise ClassError("A class is sent to a page of this app: a link starting with /.")
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            number = row.send_number + 1
            connection.execute(update(classes).where(classes.c.code == row.code).values(
                send_number=number, send_link=link, send_title=str(title)[:MAX_TITLE],
                last_activity_at=self.clock()))
            return Send(number, link, str(title)[:MAX_TITLE])

    @_reachable
    def current_send(self, code: str) -> Send:
        with self._ready().begin() as connection:
            row = self._live_class(connection, code)
            return _send_of(row)

    # --- posted runs ----------------------------------------------------------------------
    @_reachable
    def post_run(self, code: str, token: str, run: RunEntry) -> bool:
        """Post the learner's finished run; False if they posted the same link before (the same
        settings train the same run, so the board gains nothing), and nothing changes."""
        _valid_run(run)
        with self._ready().begin() as connection:
            row, member = self._member(connection, code, token)
            posted_before = connection.execute(select(posted_runs.c.id).where(and_(
                posted_runs.c.member_digest == member.token_digest,
                posted_runs.c.link == run.link))).first()
            if posted_before is not None:
                return False
            mine = connection.execute(select(func.count()).select_from(posted_runs).where(
                posted_runs.c.member_digest == member.token_digest)).scalar_one()
            if mine >= MAX_RUNS_PER_MEMBER:
                raise ClassError(f"You have posted {MAX_RUNS_PER_MEMBER} runs, the most one learner "
                                 "can post in a class.")
            total = connection.execute(select(func.count()).select_from(posted_runs).where(
                posted_runs.c.class_code == row.code)).scalar_one()
            if total >= MAX_RUNS_PER_CLASS:
                raise ClassError(f"The class board holds {MAX_RUNS_PER_CLASS} runs and is full.")
            connection.execute(insert(posted_runs).values(
                class_code=row.code, member_digest=member.token_digest, nickname=member.nickname,
                link=run.link, optimizer=run.optimizer, learning_rate=run.learning_rate,
                test_accuracy=run.test_accuracy, bayes_ceiling=run.bayes_ceiling,
                parameter_count=run.parameter_count, posted_at=self.clock(),
                # A run posted without its data (an older caller): read from its link, as the
                # migration to version 7 read the runs posted before it.
                data_settings=run.data_settings or data_of_link_version_7(run.link)))
            self._touch(connection, row, force=False)
            return True

    @_reachable
    def challenge_board(self, code: str, *, teacher_key: str = "", token: str = "") -> ChallengeBoard:
        """The class's runs and challenge, for its teacher (`teacher_key`) or one of its learners
        (`token`): a class code alone opens no board, so no one reads a class they are not in."""
        with self._ready().begin() as connection:
            if teacher_key:
                row = self._teacher_class(connection, code, teacher_key)
            else:
                row, _ = self._member(connection, code, token)
            # The member's current name, not the one they had when posting (a rename, the
            # teacher's included, shows at once).
            found = connection.execute(
                select(posted_runs, members.c.nickname.label("current_name"))
                .join(members, members.c.token_digest == posted_runs.c.member_digest)
                .where(and_(posted_runs.c.class_code == row.code, members.c.removed_at.is_(None)))
                .order_by(posted_runs.c.id)).all()
        runs = [RunEntry(r.link, r.optimizer, r.learning_rate, r.test_accuracy, r.bayes_ceiling,
                         r.parameter_count, r.current_name, r.posted_at, r.data_settings)
                for r in found]
        return ChallengeBoard(runs, row.challenge_max_parameters, bool(row.hide_names),
                              row.challenge_data or DEFAULT_CHALLENGE_DATA)

    @_reachable
    def set_challenge(self, code: str, teacher_key: str, max_parameters: int | None,
                      data_settings: str | None = None) -> None:
        """The teacher sets the challenge's bound on parameters (None: no limit) and, when
        `data_settings` is given, the data every competing run must have trained on (the words
        of moons_trainer.challenge.data_settings); None keeps the data as they are."""
        if max_parameters is not None and (
                isinstance(max_parameters, bool) or not isinstance(max_parameters, int)
                or not 0 < max_parameters <= MAX_CHALLENGE_PARAMETERS):
            raise ClassError(f"The challenge's parameter limit is a whole number from 1 to "
                             f"{MAX_CHALLENGE_PARAMETERS:,}.")
        if data_settings is not None and not _valid_data_settings(data_settings):
            raise ClassError("The challenge's data settings cannot be read.")
        values: dict = {"challenge_max_parameters": max_parameters, "last_activity_at": self.clock()}
        if data_settings is not None:
            values["challenge_data"] = data_settings
        with self._ready().begin() as connection:
            row = self._teacher_class(connection, code, teacher_key)
            connection.execute(update(classes).where(classes.c.code == row.code).values(**values))


OPEN_PACE = CheckPace()


def _send_of(row) -> Send:
    return Send(row.send_number, row.send_link, row.send_title, row.pacing_number)


def _expired(row, now: float) -> bool:
    """An ended class once its report's keeping ran out; a running one after a day idle."""
    if row.ended_at is not None:
        return row.keep_until is None or now >= row.keep_until
    return now - row.last_activity_at > IDLE_EXPIRY_SECONDS


def _expired_clause(now: float):
    """_expired, as the sweep's WHERE clause."""
    return or_(and_(classes.c.ended_at.is_(None),
                    classes.c.last_activity_at < now - IDLE_EXPIRY_SECONDS),
               and_(classes.c.ended_at.is_not(None),
                    or_(classes.c.keep_until.is_(None), classes.c.keep_until <= now)))


def _valid_check_key(check_key: str) -> None:
    if not CHECK_KEY.match(str(check_key)):
        raise ClassError("That is not a knowledge check of the workbench.")


def _delete_class(connection, code: str) -> None:
    for table in CLASS_TABLES:
        connection.execute(delete(table).where(table.c.class_code == code))
    connection.execute(delete(classes).where(classes.c.code == code))


def _checked_name(raw: str | None, taken: set[str], word_filter: bool) -> str:
    """names.check's verdict as the store's ClassError; "" for no name given."""
    try:
        return names.check(raw, taken_keys=taken, word_filter=word_filter)
    except names.NameRefused as exc:
        raise ClassError(str(exc)) from None


def _valid_data_settings(words: object) -> bool:
    return (isinstance(words, str) and 0 < len(words) <= MAX_DATA_SETTINGS and words.isprintable()
            and words == words.strip())


def _valid_run(run: RunEntry) -> None:
    numbers = (run.learning_rate, run.test_accuracy, run.bayes_ceiling)
    if (not isinstance(run.link, str) or len(run.link) > MAX_LINK or not RUN_LINK.match(run.link)
            or not isinstance(run.optimizer, str) or not 0 < len(run.optimizer) <= 40
            or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in numbers)
            or not 0 <= run.test_accuracy <= 1 or not 0 <= run.bayes_ceiling <= 1
            or not 0 < run.learning_rate <= 10
            or isinstance(run.parameter_count, bool) or not isinstance(run.parameter_count, int)
            or not 0 < run.parameter_count <= MAX_CHALLENGE_PARAMETERS
            or not (run.data_settings == "" or _valid_data_settings(run.data_settings))):
        raise ClassError("That run cannot be posted: its numbers are out of range.")
