"""The class store's tables (SQLAlchemy Core), and the versioned migrations that create them.

Why a schema-version table with ordered migrations and not Alembic: the store has a handful of
tables, and every replica must bring a fresh database up to date by itself at start (`make run`
needs no setup, a compose replica no migration step). A list of numbered functions applied in
order, each in the transaction that also records its number, does that in one screen of code
with no configuration directory or extra dependency; the version row tells which have run. The
lock around it (an advisory lock on PostgreSQL, a file lock beside a SQLite file) keeps two
replicas starting together from running the same migration twice.

Times are stored as float seconds since the epoch (UTC): SQLite has no time-zone-aware type,
and the store only compares and subtracts times.
"""
from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from sqlalchemy import (Boolean, Column, Connection, Engine, Float, ForeignKey, Index, Integer,
                        MetaData, PrimaryKeyConstraint, String, Table, select, text, update)

METADATA = MetaData()

schema_version = Table(
    "schema_version", METADATA,
    Column("version", Integer, nullable=False),
)

classes = Table(
    "classes", METADATA,
    Column("code", String(12), primary_key=True),
    Column("teacher_key_digest", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("last_activity_at", Float, nullable=False),
    # The send: where the teacher last sent the class. `send_number` grows with every send, so
    # a follower's page knows a send is new without comparing addresses.
    Column("send_number", Integer, nullable=False, default=0),
    Column("send_link", String(2000), nullable=False, default=""),
    Column("send_title", String(200), nullable=False, default=""),
    # The challenge (version 2): the best test accuracy with at most this many parameters;
    # NULL: no limit set, every posted run competes.
    Column("challenge_max_parameters", Integer, nullable=True),
    # The roster's switches (version 3): no new learner admitted; names kept off the projected
    # boards; the word filter on nicknames (on unless the teacher switches it off).
    Column("joining_closed", Boolean, nullable=False, default=False),
    Column("hide_names", Boolean, nullable=False, default=False),
    Column("word_filter", Boolean, nullable=False, default=True),
    # The report and pacing (version 4). `ended_at`: when the teacher ended the class, keeping
    # its report (NULL: it runs); `keep_until`: when the sweep deletes an ended class. A learner
    # finds an ended class ended; its teacher still reads the report. `pacing_number` grows with
    # every open, close, timer or reset of a check, so a learner's page knows to draw again.
    Column("ended_at", Float, nullable=True),
    Column("keep_until", Float, nullable=True),
    Column("pacing_number", Integer, nullable=False, default=0),
    # Version 7: the challenge's data, in the words of `data_settings` (workbench/moons_trainer/
    # challenge.py); NULL: the lesson's assignment data (store.DEFAULT_CHALLENGE_DATA). Only runs
    # on these data compete: a challenge is one problem.
    Column("challenge_data", String(200), nullable=True),
)

members = Table(
    "members", METADATA,
    Column("token_digest", String(64), primary_key=True),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("nickname", String(64), nullable=False),
    Column("joined_at", Float, nullable=False),
    # Every answer written (a replaced one too), so one session cannot flood the class.
    Column("answers_written", Integer, nullable=False, default=0),
    # Version 3: the seat number, the roster's public handle for a learner (a browser never sees
    # a token digest); the name's comparison key (names.name_key), one per class, NULL once the
    # learner is removed (their name is free again); the last time their page was seen (a seat
    # not seen for a few minutes does not count toward the class's limit); when the teacher
    # removed them (their token stops working and their page says why).
    Column("seat", Integer, nullable=False, default=0),
    Column("name_key", String(200), nullable=True),
    Column("last_seen_at", Float, nullable=False, default=0.0),
    Column("removed_at", Float, nullable=True),
    Index("members_seat", "class_code", "seat", unique=True),
    Index("members_name_key", "class_code", "name_key", unique=True),
)

answers = Table(
    "answers", METADATA,
    Column("member_digest", String(64), ForeignKey("members.token_digest", ondelete="CASCADE"),
           nullable=False),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("check_key", String(80), nullable=False),
    Column("option", String(200), nullable=False),
    # The learner's own count of answers sent: an answer that arrives with a number not above
    # the stored one is a replay (or a late retry) and changes nothing.
    Column("sequence", Integer, nullable=False),
    Column("answered_at", Float, nullable=False),
    PrimaryKeyConstraint("member_digest", "check_key"),
)

reveals = Table(
    "reveals", METADATA,
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False),
    Column("check_key", String(80), nullable=False),
    PrimaryKeyConstraint("class_code", "check_key"),
)

posted_runs = Table(
    "posted_runs", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("member_digest", String(64), ForeignKey("members.token_digest", ondelete="CASCADE"),
           nullable=False),
    Column("nickname", String(64), nullable=False),
    Column("link", String(2000), nullable=False),
    Column("optimizer", String(40), nullable=False),
    Column("learning_rate", Float, nullable=False),
    Column("test_accuracy", Float, nullable=False),
    Column("bayes_ceiling", Float, nullable=False),
    Column("parameter_count", Integer, nullable=False),
    Column("posted_at", Float, nullable=False),
    # Version 7: the data the run trained on ("moons, 3000 points, noise 0.25, seed 42, split
    # 70/15/15"), compared with the challenge's.
    Column("data_settings", String(200), nullable=False, default=""),
)

# The checks the teacher pinned to the board (version 3), shown first whatever else is answered.
pinned_checks = Table(
    "pinned_checks", METADATA,
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False),
    Column("check_key", String(80), nullable=False),
    Column("pinned_at", Float, nullable=False),
    PrimaryKeyConstraint("class_code", "check_key"),
)

# The teacher's pacing of a check (version 4): closed (no answers taken), or open until
# `closes_at` (a timer; NULL: no timer); `round` grows when the teacher resets the check, which
# deletes its answers so the class answers it again.
check_states = Table(
    "check_states", METADATA,
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False),
    Column("check_key", String(80), nullable=False),
    Column("closed", Boolean, nullable=False, default=False),
    Column("closes_at", Float, nullable=True),
    Column("round", Integer, nullable=False, default=0),
    PrimaryKeyConstraint("class_code", "check_key"),
)

# Predict, then run (version 5): the questions the teacher poses, the class's current one the
# last posed; `options` is a JSON list of texts; `expected` the index of the option the teacher
# says the experiment will show (NULL: an opinion poll, or a built-in check, whose answer PyTorch
# computes); `revealed_at` set once the teacher reveals (votes are then locked); `closed_at`
# once the teacher takes it down or poses the next.
predictions = Table(
    "predictions", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("question", String(1200), nullable=False),
    Column("options", String(4000), nullable=False),
    Column("expected", Integer, nullable=True),
    Column("check_key", String(80), nullable=True),
    Column("posed_at", Float, nullable=False),
    Column("revealed_at", Float, nullable=True),
    Column("closed_at", Float, nullable=True),       # taken off learners' screens
)

# One vote per learner and prediction (the primary key refuses a second).
prediction_votes = Table(
    "prediction_votes", METADATA,
    Column("prediction_id", Integer, ForeignKey("predictions.id", ondelete="CASCADE"),
           nullable=False),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("member_digest", String(64), ForeignKey("members.token_digest", ondelete="CASCADE"),
           nullable=False),
    Column("option_index", Integer, nullable=False),
    Column("voted_at", Float, nullable=False),
    PrimaryKeyConstraint("prediction_id", "member_digest"),
)

# The class as one experiment (version 6, workbench/classroom/sweep_store.py): the class's
# sweep (one at a time: its grid as JSON, numbered so a new sweep starts empty), each learner's
# cell, and the runs each cell kept (exactly the cell's settings), with a compact loss curve.
sweeps = Table(
    "sweeps", METADATA,
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"),
           primary_key=True),
    Column("number", Integer, nullable=False),
    Column("grid", String(4000), nullable=False),
    Column("started_at", Float, nullable=False),
)

sweep_seats = Table(
    "sweep_seats", METADATA,
    Column("member_digest", String(64), ForeignKey("members.token_digest", ondelete="CASCADE"),
           primary_key=True),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("cell", Integer, nullable=False),
)

sweep_runs = Table(
    "sweep_runs", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("member_digest", String(64), ForeignKey("members.token_digest", ondelete="CASCADE"),
           nullable=False),
    Column("cell", Integer, nullable=False),
    Column("test_accuracy", Float, nullable=False),
    Column("losses", String(2000), nullable=False),     # JSON list of per-epoch validation losses
    Column("posted_at", Float, nullable=False),
)

# Deleting a class deletes its rows in this order (children first), so it works whether or not
# the database enforces the foreign keys' ON DELETE CASCADE (SQLite does only when asked).
CLASS_TABLES = (sweep_runs, sweep_seats, sweeps, prediction_votes, predictions, posted_runs, answers,
                reveals, pinned_checks, check_states, members)


# The classes table as version 1 created it: version 2 added a column to it.
_classes_version_1 = Table(
    "classes", MetaData(),
    Column("code", String(12), primary_key=True),
    Column("teacher_key_digest", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("last_activity_at", Float, nullable=False),
    Column("send_number", Integer, nullable=False, default=0),
    Column("send_link", String(2000), nullable=False, default=""),
    Column("send_title", String(200), nullable=False, default=""),
)


# The members table as version 1 created it: version 3 added columns and indexes to it.
_members_version_1 = Table(
    "members", _classes_version_1.metadata,
    Column("token_digest", String(64), primary_key=True),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("nickname", String(64), nullable=False),
    Column("joined_at", Float, nullable=False),
    Column("answers_written", Integer, nullable=False, default=0),
)


# The posted_runs table as version 1 created it: version 7 added a column to it.
_posted_runs_version_1 = Table(
    "posted_runs", _classes_version_1.metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", String(12), ForeignKey("classes.code", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("member_digest", String(64), ForeignKey("members.token_digest", ondelete="CASCADE"),
           nullable=False),
    Column("nickname", String(64), nullable=False),
    Column("link", String(2000), nullable=False),
    Column("optimizer", String(40), nullable=False),
    Column("learning_rate", Float, nullable=False),
    Column("test_accuracy", Float, nullable=False),
    Column("bayes_ceiling", Float, nullable=False),
    Column("parameter_count", Integer, nullable=False),
    Column("posted_at", Float, nullable=False),
)


def _version_1(connection: Connection) -> None:
    """The first schema: classes, members, answers, reveals, posted runs.
    (When a later migration changes one of these tables, its version-1 shape is copied here.)"""
    _classes_version_1.create(connection)
    _members_version_1.create(connection)
    METADATA.create_all(connection, tables=[answers, reveals])
    _posted_runs_version_1.create(connection)


def _version_2(connection: Connection) -> None:
    """The challenge board's setting: the teacher's bound on a posted run's parameter count.
    Nullable, so every existing class reads as "no limit" without rewriting its row."""
    connection.execute(text("ALTER TABLE classes ADD COLUMN challenge_max_parameters INTEGER"))


def _version_3(connection: Connection) -> None:
    """The roster: seats, name keys, last seen and removal on members; the class's switches;
    pinned checks. Existing members get seats in the order they joined, were last seen when
    they joined (so they count as away until their page is next seen), and a name key; two
    existing members whose names look alike keep their names, the later one's key made unique
    with its seat (a key is only ever compared, never shown)."""
    from workbench.classroom.names import name_key           # pure; no cycle at import time

    for column, default in (("joining_closed", "FALSE"), ("hide_names", "FALSE"),
                            ("word_filter", "TRUE")):
        connection.execute(text(f"ALTER TABLE classes ADD COLUMN {column} BOOLEAN NOT NULL "
                                f"DEFAULT {default}"))
    connection.execute(text("ALTER TABLE members ADD COLUMN seat INTEGER NOT NULL DEFAULT 0"))
    connection.execute(text("ALTER TABLE members ADD COLUMN name_key VARCHAR(200)"))
    connection.execute(text("ALTER TABLE members ADD COLUMN last_seen_at FLOAT NOT NULL DEFAULT 0"))
    connection.execute(text("ALTER TABLE members ADD COLUMN removed_at FLOAT"))
    rows = connection.execute(select(members.c.token_digest, members.c.class_code,
                                     members.c.nickname, members.c.joined_at)
                              .order_by(members.c.class_code, members.c.joined_at,
                                        members.c.token_digest)).all()
    seats: dict[str, int] = {}
    keys: dict[str, set[str]] = {}
    for row in rows:
        seat = seats[row.class_code] = seats.get(row.class_code, 0) + 1
        taken = keys.setdefault(row.class_code, set())
        key = name_key(row.nickname) or f"#{seat}"
        if key in taken:
            key = f"{key}#{seat}"
        taken.add(key)
        connection.execute(update(members).where(members.c.token_digest == row.token_digest)
                           .values(seat=seat, name_key=key, last_seen_at=row.joined_at))
    for index in members.indexes:
        if index.name in ("members_seat", "members_name_key"):
            index.create(connection)
    pinned_checks.create(connection)


def _version_4(connection: Connection) -> None:
    """The report kept after End, and pacing: the class's end and keep times, its pacing
    number, and the checks' states. Every existing class reads as running, every check open."""
    connection.execute(text("ALTER TABLE classes ADD COLUMN ended_at FLOAT"))
    connection.execute(text("ALTER TABLE classes ADD COLUMN keep_until FLOAT"))
    connection.execute(text("ALTER TABLE classes ADD COLUMN pacing_number INTEGER NOT NULL "
                            "DEFAULT 0"))
    check_states.create(connection)


def _version_5(connection: Connection) -> None:
    """Predict, then run: the questions a teacher poses and the class's votes."""
    METADATA.create_all(connection, tables=[predictions, prediction_votes])


def _version_6(connection: Connection) -> None:
    """The class as one experiment: the sweep, each learner's cell, the runs each cell kept.
    New tables only."""
    METADATA.create_all(connection, tables=[sweeps, sweep_seats, sweep_runs])


# The moons trainer's data settings and their defaults when version 7 was written: a run's link
# carries a setting only where it differs from its default (the settings table's `write`).
_DATA_DEFAULTS_VERSION_7 = {"dataset": "moons", "n": "3000", "noise": "0.25", "seed": "42",
                            "split": "70/15/15"}


def data_of_link_version_7(link: str) -> str:
    """The data settings of a run posted before version 7, read from its link, in the words
    `workbench.moons_trainer.challenge.data_settings` writes (a copy, frozen with this migration)."""
    query = dict(parse_qsl(urlsplit(link).query, keep_blank_values=True))
    value = {name: query.get(name, default) for name, default in _DATA_DEFAULTS_VERSION_7.items()}
    try:
        noise = f"{float(value['noise']):g}"
    except ValueError:
        noise = value["noise"]
    return (f"{value['dataset'].lower()}, {value['n']} points, noise {noise}, seed {value['seed']}, "
            f"split {value['split']}")


def _version_7(connection: Connection) -> None:
    """A challenge is one problem: each posted run records its data, and the class its
    challenge's data (NULL: the lesson's assignment). Runs posted before get theirs from
    their links."""
    connection.execute(text("ALTER TABLE classes ADD COLUMN challenge_data VARCHAR(200)"))
    connection.execute(text("ALTER TABLE posted_runs ADD COLUMN data_settings VARCHAR(200) "
                            "NOT NULL DEFAULT ''"))
    for row in connection.execute(select(posted_runs.c.id, posted_runs.c.link)).all():
        connection.execute(update(posted_runs).where(posted_runs.c.id == row.id)
                           .values(data_settings=data_of_link_version_7(row.link)[:200]))


# In order; a migration is never edited once released, only a new one appended.
MIGRATIONS: tuple[Callable[[Connection], None], ...] = (_version_1, _version_2, _version_3,
                                                        _version_4, _version_5, _version_6,
                                                        _version_7)
LATEST = len(MIGRATIONS)


@contextlib.contextmanager
def _sqlite_file_lock(engine: Engine) -> Iterator[None]:
    """Two processes opening one SQLite file at once: the second waits beside the file."""
    if engine.dialect.name != "sqlite" or engine.url.database in (None, "", ":memory:"):
        yield
        return
    with open(Path(engine.url.database).with_suffix(".migration-lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def current_version(connection: Connection) -> int:
    if not connection.dialect.has_table(connection, "schema_version"):
        return 0
    return connection.execute(select(schema_version.c.version)).scalar() or 0


def migrate(engine: Engine) -> int:
    """Bring the database up to LATEST; returns the version found before."""
    with _sqlite_file_lock(engine), engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            # Held until this transaction ends: a second replica waits here, then finds it done.
            connection.execute(text("SELECT pg_advisory_xact_lock(29029029)"))
        METADATA.create_all(connection, tables=[schema_version])
        found = current_version(connection)
        if found > LATEST:
            raise RuntimeError(f"the class database has schema version {found}, newer than this "
                               f"app's {LATEST}: update the app")
        for number in range(found + 1, LATEST + 1):
            MIGRATIONS[number - 1](connection)
        if found == 0:
            connection.execute(schema_version.insert().values(version=LATEST))
        elif found < LATEST:
            connection.execute(schema_version.update().values(version=LATEST))
        return found
