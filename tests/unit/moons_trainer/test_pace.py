"""The Speed setting's pace (workbench/moons_trainer/pace.py): steps handed out by a clock, the same run."""
from __future__ import annotations

import dataclasses

import pytest

from workbench.moons_trainer.pace import CATCH_UP_SECONDS, LONGEST_WAIT, Pace
from workbench.moons_trainer.settings import PRESET, TABLE
from workbench.moons_trainer.training import TrainingSession


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_full_speed_allows_any_number_of_steps_and_never_waits():
    pace = Pace(None)
    assert pace.allowed(0, 33) is None and pace.wait(33) == 0.0


def test_steps_are_handed_out_at_epochs_per_second_times_steps_per_epoch():
    clock = Clock()
    pace = Pace(5.0, clock=clock)                   # 5 epochs of 10 steps: 50 steps a second
    assert pace.allowed(0, 10) == 0                 # the clock starts now
    clock.now += 0.1
    assert pace.allowed(0, 10) == 5
    assert pace.allowed(5, 10) == 0                 # those five done: wait for the next
    assert pace.wait(10) == pytest.approx(1 / 50)
    clock.now += 0.2
    assert pace.allowed(5, 10) == 10                # 0.3 s in: 15 in all


def test_a_machine_that_fell_behind_carries_on_at_the_pace_without_racing():
    clock = Clock()
    pace = Pace(5.0, clock=clock)
    pace.allowed(0, 10)
    clock.now += 10.0                               # ten seconds with no turn at all
    assert pace.allowed(3, 10) == int(CATCH_UP_SECONDS * 50)
    clock.now += 0.1
    assert pace.allowed(3 + 12, 10) == 5, "from there on, the pace again"


def test_a_slow_pace_still_looks_again_often_and_a_restart_starts_the_clock_again():
    clock = Clock()
    pace = Pace(1.0, clock=clock)
    assert pace.wait(2) == LONGEST_WAIT             # a step due every 0.5 s: look every 0.1 s
    pace.allowed(0, 2)
    clock.now += 3.0
    pace.restart(25.0)
    assert pace.allowed(0, 2) == 0 and pace.epochs_per_second == 25.0


def test_the_run_is_the_same_at_every_speed():
    settings = dataclasses.replace(PRESET, n=300, epochs=3, speed="2")
    straight = TrainingSession(settings)
    straight.run_to_end()
    clock = Clock()
    paced, pace = TrainingSession(settings), Pace(settings.epochs_per_second, clock=clock)
    slices = 0
    while not paced.done:
        clock.now += 0.05
        allowed = pace.allowed(paced.steps, paced.steps_per_epoch)
        if allowed:
            paced.run_for(allowed, 60)
            slices += 1
    assert slices > settings.epochs, "the pace split the run into many small slices"
    assert paced.history.val_loss == straight.history.val_loss
    assert [p.tolist() for p in paced.model.parameters()] == [p.tolist() for p in straight.model.parameters()]


def test_speed_is_a_link_setting_with_a_watchable_default():
    assert PRESET.speed == "5" and PRESET.epochs_per_second == 5.0
    assert TABLE.read({"speed": "max"})[0].epochs_per_second is None
    assert TABLE.read({"speed": "25"})[0].epochs_per_second == 25.0
    assert TABLE.write(dataclasses.replace(PRESET, speed="max")) == {"speed": "max"}
