"""The class challenge: the sentence that names the best run within the parameter limit, and the
promise every board entry makes (its link, trained again, gives its posted test accuracy)."""
from __future__ import annotations

import dataclasses
from urllib.parse import parse_qsl, urlsplit

import pytest

from app_pages.classroom.challenge_board import OPTIMIZER_COLOURS, scatter_table, scatter
from app_pages.moons_trainer.class_post import run_link
from components.plain_text import md
from workbench.classroom.challenge import best_within, challenge_sentence, within
from workbench.classroom.store import (DEFAULT_CHALLENGE_DATA, RUN_LINK, ChallengeBoard, ClassStore,
                                       RunEntry)
from workbench.moons_trainer.challenge import finished_run, not_reproducible, train_again
from workbench.moons_trainer.settings import PRESET, TABLE
from workbench.moons_trainer.training import TrainingSession

# Small and fast: a few hundred points, one narrow layer, a few epochs.
SMALL = dataclasses.replace(PRESET, n=300, hidden=(6,), opt="SGD", lr=0.3, epochs=4, batch=32, seed=7)


def _entry(name: str, accuracy: float, parameters: int, posted_at: float = 0.0) -> RunEntry:
    return RunEntry("/moons_trainer", "Adam", 0.01, accuracy, 0.95, parameters, name, posted_at,
                    DEFAULT_CHALLENGE_DATA)


RUNS = [_entry("Ada", 0.97, 4_353), _entry("Bo", 0.93, 97), _entry("Cy", 0.91, 49),
        _entry("Di", 0.93, 65, posted_at=5.0)]


def test_the_best_run_within_the_limit_is_named():
    # Bo and Di tie at 93%: the smaller model wins; Ada's 97% is over the limit.
    assert best_within(ChallengeBoard(RUNS, 100)).nickname == "Di"
    assert best_within(ChallengeBoard(RUNS, None)).nickname == "Ada"
    assert [within(run, 100) for run in RUNS] == [False, True, True, True]
    sentence = challenge_sentence(ChallengeBoard(RUNS, 100))
    assert sentence.startswith(f"Best test accuracy with at most 100 parameters on {DEFAULT_CHALLENGE_DATA}: "
                               "Di, 93.00% with 65 parameters")
    assert "1 run(s) over the limit do not compete" in sentence and "other data" not in sentence


def test_no_run_within_the_limit_says_so():
    assert best_within(ChallengeBoard(RUNS, 10)) is None
    assert challenge_sentence(ChallengeBoard(RUNS, 10)) == (
        f"No posted run on {DEFAULT_CHALLENGE_DATA} has at most 10 parameters yet: the smallest has 49. "
        "Try fewer or narrower hidden layers.")
    assert challenge_sentence(ChallengeBoard([], 10)).startswith("No runs posted yet.")


def test_a_posted_run_reopened_by_its_link_reproduces_its_accuracy(tmp_path):
    session = TrainingSession(SMALL)
    session.run_to_end()
    assert not_reproducible(session) is None
    posted = finished_run(session)
    store = ClassStore(f"sqlite:///{tmp_path / 'classroom.sqlite3'}")
    started = store.start_class()
    learner = store.join(started.code, "Ada")
    store.post_run(started.code, learner.token, RunEntry(
        run_link(session.settings), SMALL.opt, SMALL.lr, posted.test_accuracy, posted.bayes_ceiling,
        posted.parameter_count))
    entry = store.challenge_board(started.code, teacher_key=started.teacher_key).runs[0]
    store.dispose()

    link = urlsplit(entry.link)
    assert link.path == "/moons_trainer"
    settings, problems = TABLE.read(dict(parse_qsl(link.query, keep_blank_values=True)))
    assert problems == [] and settings == SMALL
    again = train_again(settings)
    assert again.test_accuracy == entry.test_accuracy
    assert again.bayes_ceiling == entry.bayes_ceiling
    # The count PyTorch gives for the model the link builds.
    assert entry.parameter_count == sum(p.numel() for p in TrainingSession(settings).model.parameters())


def test_a_setting_changed_before_the_first_step_is_the_same_as_starting_with_it():
    session = TrainingSession(dataclasses.replace(SMALL, lr=0.05, opt="Adam", epochs=2))
    final = dataclasses.replace(SMALL, epochs=2)
    session.continue_with(final)                 # as the page does when the learner edits first
    session.run_to_end()
    assert session.changes and not_reproducible(session) is None
    assert finished_run(session).test_accuracy == train_again(final).test_accuracy


@pytest.mark.parametrize("changed", [{}, {"split": "60/20/20", "noise": 0.1, "wd": 1e-5},
                                     {"dataset": "spiral", "hidden": (), "act": "LeakyReLU",
                                      "speed": "max", "net": True, "lr": 0.25}])
def test_every_run_link_is_one_the_store_takes(changed):
    link = run_link(dataclasses.replace(PRESET, **changed))
    assert RUN_LINK.match(link), link
    settings, problems = TABLE.read(dict(parse_qsl(urlsplit(link).query, keep_blank_values=True)))
    assert problems == [] and settings == dataclasses.replace(PRESET, **changed)


@pytest.mark.parametrize("spoil", ["changed", "diverged"])
def test_a_run_its_link_cannot_retrace_is_not_posted(spoil):
    session = TrainingSession(dataclasses.replace(SMALL, epochs=2))
    if spoil == "changed":
        session.step_epoch()
        session.continue_with(dataclasses.replace(session.settings, lr=0.05))
        reason = "changed while it trained"
    else:
        session = TrainingSession(dataclasses.replace(SMALL, lr=1e6, epochs=2))
        reason = "stopped being a number"
    session.run_to_end()
    assert reason in not_reproducible(session)


def test_the_scatter_has_one_colour_per_optimizer_and_hollow_runs_over_the_limit():
    data = DEFAULT_CHALLENGE_DATA
    board = ChallengeBoard([RunEntry("/moons_trainer?opt=SGD", "SGD", 0.1, 0.9, 0.95, 97, "_Bo_", 0, data),
                            RunEntry("/moons_trainer", "AdamW", 0.003, 0.95, 0.95, 2_305, "Ada", 0, data),
                            RunEntry("/moons_trainer?opt=SGD", "SGD", 0.3, 0.8, 0.95, 49, "Cy", 0, data),
                            RunEntry("/moons_trainer?dataset=xor", "SGD", 0.3, 0.99, 0.99, 9, "Xo", 0,
                                     "xor, 3000 points, noise 0.25, seed 42, split 70/15/15")], 100)
    fig = scatter(board)
    assert fig.layout.xaxis.type == "log"
    assert [trace.name for trace in fig.data] == ["AdamW", "SGD"]             # the table's order
    assert [trace.marker.color for trace in fig.data] == [OPTIMIZER_COLOURS["AdamW"],
                                                          OPTIMIZER_COLOURS["SGD"]]
    assert list(fig.data[0].marker.symbol) == ["circle-open"]                 # 2,305 > 100
    assert list(fig.data[1].y) == [90.0, 80.0]
    # The data table is an st.table, which renders Markdown: the nicknames are escaped there.
    assert list(scatter_table(board)["nickname"]) == ["Ada", md("_Bo_"), "Cy"]
