"""What a finished moons run posts to its class's challenge board, read from the run itself.

The numbers come from the server's own TrainingSession, never from anything a learner types: the
test accuracy it measured, the Bayes ceiling of its test split (the "Best possible" the page
shows) and its model's parameter count. A run is posted only when its lesson link retraces it
exactly, so every board entry opens by its link and reproduces its accuracy.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from workbench.moons_trainer.settings import TABLE, MoonsSettings
from workbench.moons_trainer.training import TrainingSession


def data_settings(settings: MoonsSettings) -> str:
    """The data a run trains on, in words that are also its key on the challenge board: two runs
    compete in one challenge only when these are equal (the same points, split the same way).
    The class store's migration to version 7 (workbench/classroom/schema.py) writes the same words
    for runs posted before; tests/unit/classroom/test_challenge.py checks that the two agree."""
    return (f"{settings.dataset}, {settings.n} points, noise {settings.noise:g}, "
            f"seed {settings.seed}, split {settings.split}")


DATA_PARAMETERS = ("dataset", "n", "noise", "seed", "split")


def data_from_link(link: str) -> tuple[str | None, str]:
    """The challenge's data read from a lesson link the teacher pastes (`/moons_trainer?...`, a
    whole address, or just its query): (data_settings, "") or (None, why not). Only the data's
    settings count; a setting the link leaves out takes its default, as opening the link does."""
    text = link.strip()
    query = urlsplit(text).query if ("?" in text or "://" in text) else text
    given = dict(parse_qsl(query, keep_blank_values=True))
    settings, problems = TABLE.read({k: v for k, v in given.items() if k in DATA_PARAMETERS})
    if problems:
        return None, "; ".join(f"`{p.param}={p.raw}`: {p.reason}" for p in problems)
    if settings.drawn or settings.regression:
        return None, ("The challenge ranks test accuracy against a known best possible accuracy: "
                      "pick one of the generated classification datasets (moons, circles, xor, "
                      "spiral, gaussians).")
    return data_settings(settings), ""


@dataclass(frozen=True)
class FinishedRun:
    settings: MoonsSettings
    test_accuracy: float
    bayes_ceiling: float
    parameter_count: int


def not_reproducible(session: TrainingSession) -> str | None:
    """Why this finished run's link would not retrace it (so it is not posted); None if it would."""
    if session.diverged is not None:
        return "a run whose loss stopped being a number is not posted"
    if session.settings.regression:
        return ("it is a regression run, and the board ranks test accuracy where a regression "
                "run has a mean squared error and R²")
    if session.bayes_test_accuracy is None:
        return ("it trained on drawn points, which have no best possible accuracy for the board "
                "to compare with")
    if session.loaded is not None:
        return "its weights were uploaded, and no link retraces uploaded weights"
    # A change before the first optimizer step (a learning rate set before Play) is the same as
    # starting with it: only one made after training began leaves the link behind.
    if any(change.step > 0 for change in session.changes):
        return ("its settings changed while it trained, and a link trains the final settings "
                "from the start")
    return None


def finished_run(session: TrainingSession) -> FinishedRun:
    """The run's results as the board records them (the caller holds `session.lock`)."""
    report = session.test_report()
    count = sum(p.numel() for p in session.model.parameters())
    return FinishedRun(session.settings, report.accuracy, report.bayes_accuracy, count)


def train_again(settings: MoonsSettings) -> FinishedRun:
    """Train the settings a link carries from scratch, as opening the link and pressing Play
    does: what the board's claim of reproducibility is checked against."""
    session = TrainingSession(settings)
    session.run_to_end()
    return finished_run(session)
