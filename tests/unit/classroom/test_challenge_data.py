"""A challenge is one problem (issue 44 item 8): only runs on the challenge's data compete, runs
on other data are listed apart, and the store records each run's data and the challenge's on
SQLite and PostgreSQL (schema version 7)."""
from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import text

from app_pages.moons_trainer.class_post import run_link
from tests.unit.classroom.conftest import database_before
from workbench.classroom import codes
from workbench.classroom.challenge import best_within, challenge_sentence, competes
from workbench.classroom.schema import LATEST, data_of_link_version_7, migrate
from workbench.classroom.store import DEFAULT_CHALLENGE_DATA, ChallengeBoard, ClassError, RunEntry
from workbench.moons_trainer.challenge import data_from_link, data_settings
from workbench.moons_trainer.settings import PRESET

MOONS = DEFAULT_CHALLENGE_DATA
GAUSSIANS = data_settings(dataclasses.replace(PRESET, dataset="gaussians"))


def _run(name: str, accuracy: float, parameters: int, data: str, link: str = "/moons_trainer") -> RunEntry:
    return RunEntry(link, "Adam", 0.01, accuracy, 0.95, parameters, name, 0.0, data)


# The audit's board: a 9-parameter Two Gaussians run at 99.33% among moons runs.
RUNS = [_run("Ada", 0.91, 97, MOONS), _run("Gus", 0.9933, 9, GAUSSIANS, "/moons_trainer?dataset=gaussians"),
        _run("Bo", 0.89, 49, MOONS)]


# --- the data's words ------------------------------------------------------------------------------
def test_the_default_challenge_data_are_the_lesson_presets():
    assert data_settings(PRESET) == DEFAULT_CHALLENGE_DATA
    assert GAUSSIANS == "gaussians, 3000 points, noise 0.25, seed 42, split 70/15/15"


@pytest.mark.parametrize("changes", [{}, {"dataset": "circles", "noise": 0.1}, {"n": 600, "seed": 7},
                                     {"split": "80/10/10", "dataset": "xor", "noise": 0.0},
                                     {"noise": 1.0, "lr": 0.05, "hidden": (8,)}])
def test_the_migration_reads_a_runs_data_from_its_link_as_the_trainer_writes_them(changes):
    settings = dataclasses.replace(PRESET, **changes)
    assert data_of_link_version_7(run_link(settings)) == data_settings(settings)


def test_the_teachers_link_gives_the_challenges_data():
    assert data_from_link("/moons_trainer?dataset=circles&noise=0.1&lr=3") == (
        "circles, 3000 points, noise 0.1, seed 42, split 70/15/15", "")
    assert data_from_link("https://class.example/moons_trainer?dataset=Gaussians&n=600")[0] == (
        "gaussians, 600 points, noise 0.25, seed 42, split 70/15/15")
    assert data_from_link("dataset=xor&split=80/10/10")[0] == (
        "xor, 3000 points, noise 0.25, seed 42, split 80/10/10")
    for refused, why in (("/moons_trainer?dataset=plane", "known best possible"),
                         ("/moons_trainer?dataset=drawn", "known best possible"),
                         ("/moons_trainer?dataset=foo", "`dataset=foo`")):
        data, problem = data_from_link(refused)
        assert data is None and why in problem


# --- the ranking, both ways ----------------------------------------------------------------------
def test_runs_on_other_data_do_not_compete_with_the_challenges():
    board = ChallengeBoard(RUNS, None)                   # no limit; the preset's data
    assert board.data_settings == MOONS
    assert best_within(board).nickname == "Ada"          # not Gus's 99.33% on the Gaussians
    assert [competes(run, board) for run in RUNS] == [True, False, True]
    sentence = challenge_sentence(board)
    assert sentence.startswith(f"Best test accuracy with any number of parameters on {MOONS}: Ada, "
                               "91.00% with 97 parameters")
    assert sentence.endswith("1 run(s) on other data are listed apart, not ranked against it.")


def test_a_challenge_on_the_gaussians_ranks_the_gaussians_run():
    board = ChallengeBoard(RUNS, 50, data_settings=GAUSSIANS)
    assert best_within(board).nickname == "Gus"
    sentence = challenge_sentence(board)
    assert sentence.startswith(f"Best test accuracy with at most 50 parameters on {GAUSSIANS}: Gus, "
                               "99.33% with 9 parameters")
    assert "2 run(s) on other data are listed apart" in sentence


def test_no_run_on_the_challenges_data_says_so():
    circles = data_from_link("dataset=circles")[0]
    board = ChallengeBoard(RUNS, None, data_settings=circles)
    assert best_within(board) is None
    assert challenge_sentence(board) == (
        f"No posted run trained on {circles} yet: the challenge is the best test accuracy with any "
        "number of parameters there. 3 run(s) on other data are listed apart, not ranked against it.")
    # On its data but over the limit: the smallest of those runs is named, not Gus's 9.
    assert challenge_sentence(ChallengeBoard(RUNS, 20)).startswith(
        f"No posted run on {MOONS} has at most 20 parameters yet: the smallest has 49.")
    assert challenge_sentence(ChallengeBoard([], 20)) == (
        f"No runs posted yet. The challenge: the best test accuracy with at most 20 parameters on {MOONS}.")


# --- the store, SQLite and PostgreSQL ------------------------------------------------------------
def test_the_store_keeps_each_runs_data_and_the_challenges(store):
    started = store.start_class()
    ada, gus = store.join(started.code, "Ada"), store.join(started.code, "Gus")
    store.post_run(started.code, ada.token, dataclasses.replace(RUNS[0], nickname=""))
    # An entry without its data (an older caller) gets them from its link.
    store.post_run(started.code, gus.token, dataclasses.replace(RUNS[1], nickname="", data_settings=""))
    board = store.challenge_board(started.code, teacher_key=started.teacher_key)
    assert [(run.nickname, run.data_settings) for run in board.runs] == [("Ada", MOONS), ("Gus", GAUSSIANS)]
    assert board.data_settings == MOONS and best_within(board).nickname == "Ada"

    store.set_challenge(started.code, started.teacher_key, 100, GAUSSIANS)
    board = store.challenge_board(started.code, token=ada.token)
    assert (board.max_parameters, board.data_settings) == (100, GAUSSIANS)
    assert best_within(board).nickname == "Gus"
    store.set_challenge(started.code, started.teacher_key, None)         # the data stay
    assert store.challenge_board(started.code, token=ada.token).data_settings == GAUSSIANS
    for bad in ("", " moons", "x" * 201, "moons\n", 5):
        with pytest.raises(ClassError, match="data settings"):
            store.set_challenge(started.code, started.teacher_key, None, bad)
    with pytest.raises(ClassError, match="cannot be posted"):
        store.post_run(started.code, ada.token, dataclasses.replace(RUNS[2], data_settings="x\ty"))
    assert store.challenge_board(started.code, token=ada.token).data_settings == GAUSSIANS


def test_a_database_before_the_challenges_data_gains_the_runs_data_from_their_links(store):
    """The database is as every migration before the one that adds the challenge's data left it."""
    with store.engine.begin() as connection:
        before = database_before(connection, "A challenge is one problem")
        now = store.clock_for_test.now
        connection.execute(text("INSERT INTO classes (code, teacher_key_digest, created_at, "
                                "last_activity_at, send_number, send_link, send_title, "
                                "challenge_max_parameters) VALUES "
                                f"('AAAAAA', '{codes.digest('k')}', {now}, {now}, 0, '', '', 100)"))
        connection.execute(text("INSERT INTO members (token_digest, class_code, nickname, joined_at, "
                                f"answers_written, seat, name_key, last_seen_at) VALUES ('d1', "
                                f"'AAAAAA', 'Ada', {now}, 0, 1, 'ada', {now})"))
        for link in ("/moons_trainer?hidden=8", "/moons_trainer?dataset=gaussians&n=600&noise=0.1"):
            connection.execute(text(
                "INSERT INTO posted_runs (class_code, member_digest, nickname, link, optimizer, "
                "learning_rate, test_accuracy, bayes_ceiling, parameter_count, posted_at) VALUES "
                f"('AAAAAA', 'd1', 'Ada', '{link}', 'SGD', 0.1, 0.9, 0.95, 41, {now})"))
    assert migrate(store.engine) == before
    board = store.challenge_board("AAAAAA", teacher_key="k")
    assert [run.data_settings for run in board.runs] == [
        MOONS, "gaussians, 600 points, noise 0.1, seed 42, split 70/15/15"]
    assert (board.max_parameters, board.data_settings) == (100, MOONS)
    assert migrate(store.engine) == LATEST                          # again: nothing to do
