"""The figures docs/lesson-links.md quotes for the moons trainer's lesson links, measured by
training each link exactly as written (the page's own `TrainingSession`, no Streamlit).

    .venv/bin/python -m bench.lesson_links --save     (`make bench` runs it)

saves them to docs/figures/lesson_links.json, and tests/unit/test_lesson_link_figures.py fails
when a figure quoted in docs/lesson-links.md (`QUOTES`) is not the saved one, and retrains the
circles links to check that the saved figures are what the code gives. It lives in harness/, not
bench/, because the tests import it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl

import torch
from torch import nn

from workbench.moons_trainer.settings import TABLE
from workbench.moons_trainer.training import TrainingSession

NEAR_ZERO = 0.01      # "within 0.01 of zero", as the doc says it


@dataclass(frozen=True)
class Link:
    name: str
    query: str          # the link's query, exactly as the doc prints it after `/moons_trainer?`


LINKS = (
    Link("circles_squares", "dataset=circles&hidden=&features=x1_sq,x2_sq&lr=0.03&epochs=30"),
    Link("circles_coordinates", "dataset=circles&hidden=&features=x1,x2&lr=0.03&epochs=30"),
    Link("no_penalty", "hidden=16&reg_rate=0.01"),
    Link("l1", "hidden=16&reg=L1&reg_rate=0.01"),
    Link("l2", "hidden=16&reg=L2&reg_rate=0.01"),
    Link("multigauss_clean", "dataset=multigauss&noise=0"),
    Link("plane", "dataset=plane"),
)
CIRCLES = ("circles_squares", "circles_coordinates")


def train(link: Link) -> TrainingSession:
    """The link's run to its last epoch, as the page trains it on Play."""
    settings, problems = TABLE.read(dict(parse_qsl(link.query, keep_blank_values=True)))
    if problems:
        raise ValueError(f"{link.query}: {problems}")
    session = TrainingSession(settings)
    session.run_to_end()
    return session


def first_layer_weights(session: TrainingSession) -> torch.Tensor:
    return next(m for m in session.model.modules() if isinstance(m, nn.Linear)).weight.detach()


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def _classification(prefix: str, session: TrainingSession) -> dict[str, str]:
    report = session.test_report()
    assert report.bayes_accuracy is not None
    return {f"{prefix} test accuracy": _percent(report.accuracy),
            f"{prefix} best possible": _percent(report.bayes_accuracy),
            f"{prefix} test points": f"{report.n}"}


def _regression(prefix: str, session: TrainingSession) -> dict[str, str]:
    report = session.test_report()
    assert report.mse is not None and report.r2 is not None and report.best_mse is not None
    assert report.best_r2 is not None
    return {f"{prefix} test MSE": f"{report.mse:.4f}", f"{prefix} test R²": f"{report.r2:.3f}",
            f"{prefix} best possible MSE": f"{report.best_mse:.4f}",
            f"{prefix} best possible R²": f"{report.best_r2:.3f}"}


def _weights(prefix: str, session: TrainingSession) -> dict[str, str]:
    weights = first_layer_weights(session)
    return {f"{prefix} first-layer weights": f"{weights.numel()}",
            f"{prefix} within 0.01 of zero": f"{int((weights.abs() < NEAR_ZERO).sum())}",
            f"{prefix} exactly zero": f"{int((weights == 0).sum())}",
            f"{prefix} sum of squares": f"{float(weights.square().sum()):.3f}"}


MEASURES: dict[str, Callable[[str, TrainingSession], dict[str, str]]] = {
    "circles_squares": _classification, "circles_coordinates": _classification,
    "no_penalty": _weights, "l1": _weights, "l2": _weights,
    "multigauss_clean": _regression, "plane": _regression,
}


def measure(links: tuple[Link, ...] = LINKS) -> dict[str, str]:
    """Every figure of these links, named `<link> <what>`; with the three penalty links, the L2
    run's sum of squares as a multiple of the unpenalised run's."""
    figures: dict[str, str] = {}
    for link in links:
        figures.update(MEASURES[link.name](link.name, train(link)))
    if {"no_penalty", "l2"} <= {link.name for link in links}:
        ratio = float(figures["l2 sum of squares"]) / float(figures["no_penalty sum of squares"])
        figures["l2 sum of squares over no_penalty's"] = f"{ratio:.2f}x"
    return figures


# Each sentence docs/lesson-links.md quotes, its figures filled in from the saved file: the
# test finds every one in the doc, so a stale number (or a reworded sentence) fails.
QUOTES = (
    "`/moons_trainer?dataset=circles&hidden=&features=x1_sq,x2_sq&lr=0.03&epochs=30` reaches "
    "{circles_squares test accuracy} on its {circles_squares test points} test points (the best "
    "possible on the same points: {circles_squares best possible}), where `features=x1,x2` "
    "scores {circles_coordinates test accuracy}",
    "`/moons_trainer?hidden=16&reg=L1&reg_rate=0.01` leaves {l1 within 0.01 of zero} of the first "
    "layer's {l1 first-layer weights} weights within 0.01 of zero ({l1 exactly zero} exactly zero; "
    "{no_penalty within 0.01 of zero} without a penalty, `/moons_trainer?hidden=16&reg_rate=0.01`) "
    "and `reg=L2` cuts their sum of squares to {l2 sum of squares over no_penalty's} the "
    "unpenalised run's",
    "`/moons_trainer?dataset=multigauss&noise=0` ends at test MSE {multigauss_clean test MSE}, R² "
    "{multigauss_clean test R²} (best possible R² {multigauss_clean best possible R²}); "
    "`/moons_trainer?dataset=plane` (noise 0.25) at MSE {plane test MSE}, R² {plane test R²}, "
    "where the best possible predictor has MSE {plane best possible MSE}, R² "
    "{plane best possible R²}",
)


def saved_figures(record: dict) -> dict[str, str]:
    """The figures of a saved file (docs/figures/lesson_links.json), by name: each row's name
    without the link the benchmark wrote after it."""
    return {what.split(" (`", 1)[0]: figure for what, figure in record["rows"]}


def quotes(figures: dict[str, str]) -> list[str]:
    """The doc's sentences with these figures in them."""
    filled = []
    for quote in QUOTES:        # not str.format: the figures' names hold dots ("within 0.01")
        for what, figure in figures.items():
            quote = quote.replace("{" + what + "}", figure)
        if "{" in quote:
            raise KeyError(f"a figure this sentence names was not measured: {quote}")
        filled.append(quote)
    return filled
