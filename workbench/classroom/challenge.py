"""The class challenge: the best test accuracy among the posted runs with at most N parameters.

Pure functions of the board's rows, so the sentence the teacher projects is computed from the
data and tested both ways (a winner, and none within the limit).
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence

from workbench.classroom.store import ChallengeBoard, RunEntry


def board_digest(board: ChallengeBoard) -> str:
    """A digest of everything the board holds (every field of every run, names included, the
    challenge, and any setting the board carries): equal digests draw the same board, so a
    board is built once per change and class, and a viewer's page redraws it only when the
    digest moved. The whole dataclass's repr, so a field added to the board is covered."""
    return hashlib.blake2b(repr(board).encode(), digest_size=16).hexdigest()


def within(run: RunEntry, max_parameters: int | None) -> bool:
    """Whether a run competes: no limit set, or at most `max_parameters` parameters."""
    return max_parameters is None or run.parameter_count <= max_parameters


def best_within(runs: Sequence[RunEntry], max_parameters: int | None) -> RunEntry | None:
    """The winner: highest test accuracy; a tie goes to the smaller model (the point of the
    challenge), then to the run posted first (it got there first)."""
    competing = [run for run in runs if within(run, max_parameters)]
    if not competing:
        return None
    return min(competing, key=lambda run: (-run.test_accuracy, run.parameter_count, run.posted_at))


def challenge_sentence(runs: Sequence[RunEntry], max_parameters: int | None) -> str:
    """One plain sentence (no markup: the page escapes the nickname) naming the best run."""
    limit = "any number of parameters" if max_parameters is None else \
        f"at most {max_parameters:,} parameters"
    if not runs:
        return f"No runs posted yet. The challenge: the best test accuracy with {limit}."
    best = best_within(runs, max_parameters)
    if best is None:
        smallest = min(run.parameter_count for run in runs)
        return (f"No posted run has {limit} yet: the smallest has {smallest:,}. "
                "Try fewer or narrower hidden layers.")
    outside = sum(not within(run, max_parameters) for run in runs)
    tail = f" ({outside} run(s) over the limit do not compete.)" if outside else ""
    return (f"Best test accuracy with {limit}: {best.nickname or 'anonymous'}, "
            f"{100 * best.test_accuracy:.2f}% with {best.parameter_count:,} parameters "
            f"({best.optimizer}, lr {best.learning_rate:g}; best possible "
            f"{100 * best.bayes_ceiling:.2f}%).{tail}")
