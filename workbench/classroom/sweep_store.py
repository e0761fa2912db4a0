"""The class sweep in the class store: start one, hand out cells, keep each cell's runs, read
the board. Functions of a ClassStore, behind its guard (the same deadline and messages as every
store call), in a module of their own so the store's other work is untouched.

- `start_sweep`: the teacher's grid (workbench/classroom/sweep.py); every learner present gets
  a cell, round-robin in seat order (seat 1 cell 1, seat 2 cell 2, ...). A new sweep replaces
  the class's earlier one, its cells and runs.
- `my_cell`: a learner's cell; one who had none (joined late, or was away) gets the
  least-filled cell, the lowest number on a tie.
- `keep_run`: a finished run the trainer posted; the cell keeps it only when its link trains
  exactly the cell's settings (the pace and the views aside): a learner who changed a setting
  trained their own run, which the challenge board still shows, but the cell does not keep.
- `sweep_board`: every cell, its learners and its kept runs, for the teacher or a learner.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import and_, delete, func, insert, select

from workbench.classroom.schema import members, sweep_runs, sweep_seats, sweeps
from workbench.classroom.store import PRESENT_SECONDS, ClassError, ClassStore, _reachable
from workbench.classroom.sweep import (Cell, CellResult, Grid, SweepBoard, assign_round_robin,
                                       compact_losses, least_filled, same_run, settings_of_link)

MAX_RUNS_PER_CELL = 40           # a cell keeps its first runs; more add nothing (same settings)
Kept = Literal["kept", "kept before", "other settings", "no sweep"]
# The link a sweep sends the class to: each follower's page opens its own cell's link instead
# (components/class_session.py's follow fragment, through `destination`).
SWEEP_SEND_PATH = "/moons_trainer"
SWEEP_SEND_PARAM = "sweep"


@dataclass(frozen=True)
class MyCell:
    number: int                  # the class's sweep number
    grid: Grid
    cell: Cell

    @property
    def words(self) -> str:
        return self.grid.describe(self.cell)


def sweep_send_link(number: int) -> str:
    return f"{SWEEP_SEND_PATH}?{SWEEP_SEND_PARAM}={number}"


def is_sweep_send(link: str) -> bool:
    return link.startswith(f"{SWEEP_SEND_PATH}?{SWEEP_SEND_PARAM}=")


def _sweep_row(connection, code: str):
    return connection.execute(select(sweeps).where(sweeps.c.class_code == code)).first()


def _cell_counts(connection, code: str) -> dict[int, int]:
    """Learners per cell, among members not removed (a learner who left has no seat row)."""
    found = connection.execute(
        select(sweep_seats.c.cell, func.count())
        .join(members, members.c.token_digest == sweep_seats.c.member_digest)
        .where(and_(sweep_seats.c.class_code == code, members.c.removed_at.is_(None)))
        .group_by(sweep_seats.c.cell)).all()
    return {int(cell): int(count) for cell, count in found}


@_reachable
def start_sweep(store: ClassStore, code: str, teacher_key: str, grid: Grid) -> int:
    """Start the class's sweep over `grid` (replacing any earlier one); returns its number."""
    with store._ready().begin() as connection:
        row = store._teacher_class(connection, code, teacher_key)
        earlier = _sweep_row(connection, row.code)
        number = (earlier.number if earlier is not None else 0) + 1
        for table in (sweep_runs, sweep_seats, sweeps):
            connection.execute(delete(table).where(table.c.class_code == row.code))
        connection.execute(insert(sweeps).values(class_code=row.code, number=number,
                                                 grid=grid.to_json(), started_at=store.clock()))
        cutoff = store.clock() - PRESENT_SECONDS
        seats = dict(connection.execute(
            select(members.c.seat, members.c.token_digest).where(and_(
                members.c.class_code == row.code, members.c.removed_at.is_(None),
                members.c.last_seen_at >= cutoff))).all())
        cells = assign_round_robin(list(seats), grid.size)
        if cells:
            connection.execute(insert(sweep_seats), [
                {"member_digest": seats[seat], "class_code": row.code, "cell": cell}
                for seat, cell in cells.items()])
        store._touch(connection, row)
        return number


@_reachable
def end_sweep(store: ClassStore, code: str, teacher_key: str) -> None:
    """The class's sweep, its cells and its kept runs, deleted."""
    with store._ready().begin() as connection:
        row = store._teacher_class(connection, code, teacher_key)
        for table in (sweep_runs, sweep_seats, sweeps):
            connection.execute(delete(table).where(table.c.class_code == row.code))


@_reachable
def my_cell(store: ClassStore, code: str, token: str) -> MyCell | None:
    """This learner's cell (given now, the least-filled, if they had none); None: no sweep."""
    with store._ready().begin() as connection:
        row, member = store._member(connection, code, token)
        sweep = _sweep_row(connection, row.code)
        if sweep is None:
            return None
        grid = Grid.from_json(sweep.grid)
        cell = connection.execute(select(sweep_seats.c.cell).where(
            sweep_seats.c.member_digest == member.token_digest)).scalar()
        if cell is None:
            # One late joiner at a time per class (the class row's lock, as a join takes it),
            # so two arriving together do not both pick the same least-filled cell.
            store._touch(connection, row)
            cell = least_filled(_cell_counts(connection, row.code), grid.size)
            connection.execute(insert(sweep_seats).values(
                member_digest=member.token_digest, class_code=row.code, cell=cell))
        return MyCell(sweep.number, grid, grid.cell(int(cell)))


@_reachable
def keep_run(store: ClassStore, code: str, token: str, link: str, test_accuracy: float,
             losses: list[float]) -> tuple[Kept, MyCell | None]:
    """Offer a finished run (its link, the test accuracy and per-epoch validation losses it
    measured) to the learner's cell; says whether the cell kept it."""
    if not (isinstance(test_accuracy, (int, float)) and math.isfinite(test_accuracy)
            and 0 <= test_accuracy <= 1):
        raise ClassError("That run cannot be kept: its test accuracy is out of range.")
    settings = settings_of_link(str(link))
    curve = compact_losses(losses)
    with store._ready().begin() as connection:
        row, member = store._member(connection, code, token)
        sweep = _sweep_row(connection, row.code)
        if sweep is None:
            return "no sweep", None
        grid = Grid.from_json(sweep.grid)
        cell_index = connection.execute(select(sweep_seats.c.cell).where(
            sweep_seats.c.member_digest == member.token_digest)).scalar()
        if cell_index is None:
            return "no sweep", None                 # not given a cell yet: the page asks first
        mine = MyCell(sweep.number, grid, grid.cell(int(cell_index)))
        if settings is None or not same_run(settings, mine.cell.settings):
            return "other settings", mine
        kept = connection.execute(select(sweep_runs.c.member_digest).where(and_(
            sweep_runs.c.class_code == row.code, sweep_runs.c.cell == mine.cell.index))).scalars().all()
        if member.token_digest in kept or len(kept) >= MAX_RUNS_PER_CELL:
            return "kept before", mine
        connection.execute(insert(sweep_runs).values(
            class_code=row.code, member_digest=member.token_digest, cell=mine.cell.index,
            test_accuracy=float(test_accuracy), losses=json.dumps(curve),
            posted_at=store.clock()))
        store._touch(connection, row, force=False)
        return "kept", mine


@_reachable
def sweep_board(store: ClassStore, code: str, *, teacher_key: str = "",
                token: str = "") -> SweepBoard | None:
    """Every cell of the class's sweep with its learners and kept runs (oldest first); None:
    no sweep. For the teacher (`teacher_key`) or a learner of the class (`token`)."""
    with store._ready().begin() as connection:
        if teacher_key:
            row = store._teacher_class(connection, code, teacher_key)
        else:
            row, _ = store._member(connection, code, token)
        sweep = _sweep_row(connection, row.code)
        if sweep is None:
            return None
        counts = _cell_counts(connection, row.code)
        runs = connection.execute(
            select(sweep_runs.c.cell, sweep_runs.c.test_accuracy, sweep_runs.c.losses)
            .join(members, members.c.token_digest == sweep_runs.c.member_digest)
            .where(and_(sweep_runs.c.class_code == row.code, members.c.removed_at.is_(None)))
            .order_by(sweep_runs.c.id)).all()
    grid = Grid.from_json(sweep.grid)
    per_cell: dict[int, list[tuple[float, tuple[float, ...]]]] = {}
    for cell, accuracy, losses in runs:
        per_cell.setdefault(int(cell), []).append((float(accuracy), tuple(json.loads(losses))))
    results = tuple(
        CellResult(cell, counts.get(cell.index, 0),
                   tuple(a for a, _ in per_cell.get(cell.index, [])),
                   tuple(curve for _, curve in per_cell.get(cell.index, [])))
        for cell in grid.cells())
    return SweepBoard(sweep.number, grid, results)


def destination(store: ClassStore, code: str, token: str, link: str) -> str:
    """Where a follower goes for a send: its own cell's link for a sweep's send, else `link`.
    A database out of reach (or no sweep any more) leaves the send's own link."""
    if not is_sweep_send(link):
        return link
    try:
        mine = my_cell(store, code, token)
    except ClassError:
        return link
    return mine.cell.link if mine is not None else link
