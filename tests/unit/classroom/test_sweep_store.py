"""The class sweep (workbench/classroom/sweep.py, sweep_store.py) on SQLite and PostgreSQL:
the grid read through the settings table, cells handed out round-robin in seat order and the
least-filled one to a late joiner, and a cell that keeps only runs of exactly its settings."""
from __future__ import annotations

import dataclasses

import pytest

from workbench.classroom import sweep_store
from workbench.classroom.store import ClassError, RemovedFromClass
from workbench.classroom.sweep import (Grid, SweepRefused, assign_round_robin, compact_losses,
                                       least_filled, make_grid, same_run, settings_of_link)
from workbench.moons_trainer.settings import TABLE

BASE = "/moons_trainer?n=300&epochs=3&speed=max"


def _grid() -> Grid:
    return make_grid(BASE, [("lr", "0.01 0.1 1"), ("hidden", "4 8 16")])


# --- the grid (pure) ----------------------------------------------------------------------------
def test_a_grid_is_read_through_the_settings_table_and_each_cell_link_opens_its_settings():
    grid = _grid()
    assert grid.shape == (3, 3) and grid.size == 9
    cells = grid.cells()
    assert [c.values for c in cells[:4]] == [("0.01", "4"), ("0.01", "8"), ("0.01", "16"),
                                              ("0.1", "4")]
    third = cells[2]
    assert third.settings.lr == 0.01 and third.settings.hidden == (16,)
    assert third.settings.n == 300 and third.settings.epochs == 3
    assert settings_of_link(third.link) == third.settings
    assert grid.describe(third) == "lr 0.01 x hidden 16 (3 of 9)"
    assert Grid.from_json(grid.to_json()) == grid


@pytest.mark.parametrize(("axes", "said"), [
    ([("lr", "0.1 7")], "Learning rate: `7` is outside what the trainer takes"),
    ([("lr", "0.1 fast")], "Learning rate: `fast` cannot be used"),
    ([("lr", "0.1 0.10")], "0.1 is typed twice"),
    ([("hidden", "8 999")], "`999` is outside"),
    ([("lr", "")], "at least one value"),
    ([("lr", "0.1"), ("lr", "0.2")], "two different settings"),
    ([("speed", "1 2")], "not a setting a sweep can vary"),
    ([], "one setting or two"),
    ([("dataset", "moons plane")], "classification"),
])
def test_a_grid_the_table_refuses_says_why(axes, said):
    with pytest.raises(SweepRefused, match=said):
        make_grid("", axes)


def test_a_base_link_the_table_refuses_says_why():
    with pytest.raises(SweepRefused, match="base experiment"):
        make_grid("/moons_trainer?lr=fast", [("hidden", "4 8")])


def test_round_robin_in_seat_order_and_the_least_filled_cell():
    assert assign_round_robin([5, 1, 3, 2], 3) == {1: 0, 2: 1, 3: 2, 5: 0}
    assert least_filled({0: 2, 1: 1, 2: 1}, 3) == 1
    assert least_filled({0: 1, 1: 1, 2: 1}, 4) == 3


def test_the_pace_and_views_are_not_the_run():
    settings = _grid().cell(0).settings
    assert same_run(settings, dataclasses.replace(settings, speed="1", net=True))
    assert not same_run(settings, dataclasses.replace(settings, lr=0.02))


def test_a_loss_curve_is_stored_compact():
    curve = compact_losses([1 / (k + 1) for k in range(500)] + [float("nan")])
    assert len(curve) == 60 and curve[0] == 1.0 and curve[-1] == float(f"{1 / 500:.5g}")


# --- the store --------------------------------------------------------------------------------
def _class_of(store, learners: int):
    started = store.start_class()
    seats = [store.join(started.code, f"Learner {k}") for k in range(learners)]
    return started, seats


def test_cells_are_handed_out_round_robin_in_seat_order(store):
    started, seats = _class_of(store, 11)
    number = sweep_store.start_sweep(store, started.code, started.teacher_key, _grid())
    assert number == 1
    cells = [sweep_store.my_cell(store, started.code, s.token) for s in seats]
    assert [c.cell.number for c in cells] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2]
    assert cells[2].words == "lr 0.01 x hidden 16 (3 of 9)"
    board = sweep_store.sweep_board(store, started.code, teacher_key=started.teacher_key)
    assert [r.learners for r in board.results] == [2, 2, 1, 1, 1, 1, 1, 1, 1]
    assert board.trained == 0 and not any(r.trained for r in board.results)


def test_a_late_joiner_gets_the_least_filled_cell(store):
    started, seats = _class_of(store, 10)
    sweep_store.start_sweep(store, started.code, started.teacher_key, _grid())
    store.remove_member(started.code, started.teacher_key, 3)            # cell 3 is empty now
    late = store.join(started.code, "Late")
    assert sweep_store.my_cell(store, started.code, late.token).cell.number == 3
    later = store.join(started.code, "Later")
    assert sweep_store.my_cell(store, started.code, later.token).cell.number == 2
    with pytest.raises(RemovedFromClass):
        sweep_store.my_cell(store, started.code, seats[2].token)


def test_the_cell_keeps_only_runs_of_its_settings(store):
    started, seats = _class_of(store, 2)
    sweep_store.start_sweep(store, started.code, started.teacher_key, _grid())
    mine = sweep_store.my_cell(store, started.code, seats[0].token)
    changed = dataclasses.replace(mine.cell.settings, lr=0.05)
    other = "/moons_trainer?" + "&".join(f"{k}={v}" for k, v in TABLE.write(changed).items())
    assert sweep_store.keep_run(store, started.code, seats[0].token, other, 0.9, [0.5])[0] == \
        "other settings"
    # Another cell's exact settings are not this learner's cell either.
    second = sweep_store.my_cell(store, started.code, seats[1].token).cell.link
    assert sweep_store.keep_run(store, started.code, seats[0].token, second, 0.9, [0.5])[0] == \
        "other settings"
    slow_view = mine.cell.link + "&speed=1&net=true"           # the same run, watched slowly
    kept, cell = sweep_store.keep_run(store, started.code, seats[0].token, slow_view, 0.875,
                                      [0.7, 0.5, 0.4])
    assert kept == "kept" and cell.cell.index == 0
    assert sweep_store.keep_run(store, started.code, seats[0].token, mine.cell.link, 0.875,
                                [0.7, 0.5, 0.4])[0] == "kept before"
    board = sweep_store.sweep_board(store, started.code, token=seats[1].token)
    assert board.results[0].accuracies == (0.875,) and board.results[0].losses == ((0.7, 0.5, 0.4),)
    assert board.trained == 1 and not board.results[1].trained
    with pytest.raises(ClassError, match="out of range"):
        sweep_store.keep_run(store, started.code, seats[0].token, mine.cell.link, 1.5, [])


def test_a_new_sweep_starts_empty_and_no_sweep_keeps_nothing(store):
    started, seats = _class_of(store, 1)
    assert sweep_store.my_cell(store, started.code, seats[0].token) is None
    assert sweep_store.keep_run(store, started.code, seats[0].token, "/moons_trainer", 0.9, [])[0] \
        == "no sweep"
    sweep_store.start_sweep(store, started.code, started.teacher_key, _grid())
    link = sweep_store.my_cell(store, started.code, seats[0].token).cell.link
    sweep_store.keep_run(store, started.code, seats[0].token, link, 0.9, [0.3])
    assert sweep_store.start_sweep(store, started.code, started.teacher_key,
                                   make_grid(BASE, [("opt", "SGD Adam")])) == 2
    board = sweep_store.sweep_board(store, started.code, teacher_key=started.teacher_key)
    assert board.number == 2 and board.grid.shape == (2, 1) and board.trained == 0
    assert sweep_store.destination(store, started.code, seats[0].token,
                                   sweep_store.sweep_send_link(2)) == board.grid.cell(0).link
    assert sweep_store.destination(store, started.code, seats[0].token, "/lessons") == "/lessons"
    with pytest.raises(ClassError):
        sweep_store.start_sweep(store, started.code, "not the key", _grid())
    sweep_store.end_sweep(store, started.code, started.teacher_key)
    assert sweep_store.sweep_board(store, started.code, teacher_key=started.teacher_key) is None
    store.end_class(started.code, started.teacher_key)               # deletes with the class


def test_a_learner_who_leaves_or_is_removed_takes_their_cell_and_runs_along(store):
    started, seats = _class_of(store, 3)
    sweep_store.start_sweep(store, started.code, started.teacher_key,
                            make_grid(BASE, [("opt", "SGD Adam")]))
    for learner in seats[:2]:
        cell = sweep_store.my_cell(store, started.code, learner.token).cell
        sweep_store.keep_run(store, started.code, learner.token, cell.link, 0.8, [0.5])
    board = sweep_store.sweep_board(store, started.code, teacher_key=started.teacher_key)
    assert [r.learners for r in board.results] == [2, 1] and board.trained == 2
    store.leave(started.code, seats[0].token)
    store.remove_member(started.code, started.teacher_key, 2)
    board = sweep_store.sweep_board(store, started.code, teacher_key=started.teacher_key)
    assert [r.learners for r in board.results] == [1, 0] and board.trained == 0
