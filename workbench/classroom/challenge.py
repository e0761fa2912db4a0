"""The class challenge: the best test accuracy among the posted runs with at most N parameters,
on the challenge's data.

A challenge is one problem: the teacher fixes the data (dataset, points, noise, seed and split,
`ChallengeBoard.data_settings`), and only runs trained on exactly those data compete. A run on
other data (a 9-parameter Two Gaussians run at 99% next to moons runs at 90%) is listed apart,
never ranked against them: its accuracy answers another question.

Pure functions of the board's rows, so the sentence the teacher projects is computed from the
data and tested both ways (a winner, and none within the limit or on the data).
"""
from __future__ import annotations

import hashlib

from workbench.classroom.store import ChallengeBoard, RunEntry


def board_digest(board: ChallengeBoard) -> str:
    """A digest of everything the board holds (every field of every run, names included, the
    challenge, and any setting the board carries): equal digests draw the same board, so a
    board is built once per change and class, and a viewer's page redraws it only when the
    digest moved. The whole dataclass's repr, so a field added to the board is covered."""
    return hashlib.blake2b(repr(board).encode(), digest_size=16).hexdigest()


def within(run: RunEntry, max_parameters: int | None) -> bool:
    """Whether a run is within the limit: no limit set, or at most `max_parameters` parameters."""
    return max_parameters is None or run.parameter_count <= max_parameters


def on_data(run: RunEntry, data_settings: str) -> bool:
    """Whether a run trained on the challenge's data."""
    return run.data_settings == data_settings


def competes(run: RunEntry, board: ChallengeBoard) -> bool:
    """Whether a run is ranked in the board's challenge: on its data and within its limit."""
    return on_data(run, board.data_settings) and within(run, board.max_parameters)


def best_within(board: ChallengeBoard) -> RunEntry | None:
    """The winner among the competing runs: highest test accuracy; a tie goes to the smaller
    model (the point of the challenge), then to the run posted first (it got there first)."""
    competing = [run for run in board.runs if competes(run, board)]
    if not competing:
        return None
    return min(competing, key=lambda run: (-run.test_accuracy, run.parameter_count, run.posted_at))


def challenge_sentence(board: ChallengeBoard) -> str:
    """One plain sentence (no markup: the page escapes the nickname) naming the best run on the
    challenge's data, and how many runs are listed apart because they trained on other data."""
    limit = "any number of parameters" if board.max_parameters is None else \
        f"at most {board.max_parameters:,} parameters"
    data = f"on {board.data_settings}"
    other = sum(not on_data(run, board.data_settings) for run in board.runs)
    apart = (f" {other} run(s) on other data are listed apart, not ranked against it."
             if other else "")
    if not board.runs:
        return f"No runs posted yet. The challenge: the best test accuracy with {limit} {data}."
    mine = [run for run in board.runs if on_data(run, board.data_settings)]
    if not mine:
        return (f"No posted run trained {data} yet: the challenge is the best test accuracy with "
                f"{limit} there.{apart}")
    best = best_within(board)
    if best is None:
        smallest = min(run.parameter_count for run in mine)
        return (f"No posted run {data} has {limit} yet: the smallest has {smallest:,}. "
                f"Try fewer or narrower hidden layers.{apart}")
    outside = sum(not within(run, board.max_parameters) for run in mine)
    tail = f" ({outside} run(s) over the limit do not compete.)" if outside else ""
    return (f"Best test accuracy with {limit} {data}: {best.nickname or 'anonymous'}, "
            f"{100 * best.test_accuracy:.2f}% with {best.parameter_count:,} parameters "
            f"({best.optimizer}, lr {best.learning_rate:g}; best possible "
            f"{100 * best.bayes_ceiling:.2f}%).{tail}{apart}")
