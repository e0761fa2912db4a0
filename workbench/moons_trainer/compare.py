"""Two runs side by side: a pinned run and the run trained after it, from the same data and
initial weights, and what the page says when it compares them.

A learner pins a run, changes one setting (the optimizer, say) and trains again. Both runs draw
their initial weights from `torch.Generator().manual_seed(seed)` in the same order (model.py), so
the same seed and the same layer shapes give the same initial weights, and the same data settings
give the same points: the difference between the two runs is the setting that changed. This module
checks that claim on the runs themselves (their recorded epoch-0 weights, their validation loss
before any step) rather than assuming it, and words every judgement from the numbers.

A lesson link opens such a comparison with `vs=`: the settings the pinned run overrides, as
`name:value` pairs of the moons table separated by `;` (`vs=opt:SGD`, `vs=opt:SGD;lr:0.05`). The
link's own settings are the second run. This module never imports streamlit.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from workbench.moons_trainer.compare_settings import (  # noqa: F401  (the link's names, as before)
    MAX_OVERRIDES,
    SEPARATOR,
    TABLE,
    VIEW_ONLY,
    Comparison,
    OverridesParam,
)
from workbench.moons_trainer.settings import TABLE as MOONS_TABLE
from workbench.moons_trainer.settings import MoonsSettings, changes
from workbench.moons_trainer.training import Metrics, TrainingSession, evaluate


def pinned_settings(settings: MoonsSettings, overrides: tuple[tuple[str, str], ...]) -> MoonsSettings:
    """`settings` with a comparison link's overrides (already valid: `OverridesParam.parse`)."""
    values = {MOONS_TABLE[name].field: MOONS_TABLE[name].parse(text) for name, text in overrides}
    return dataclasses.replace(settings, **values)


def overrides_between(pinned: MoonsSettings, now: MoonsSettings) -> tuple[tuple[str, str], ...]:
    """The `vs=` that opens `now` against `pinned`: the pinned run's settings that differ."""
    out = []
    for p in MOONS_TABLE.params:
        if p.name not in VIEW_ONLY and getattr(pinned, p.field) != getattr(now, p.field):
            out.append((p.name, p.format(getattr(pinned, p.field))))
    return tuple(out)


def differences(pinned: MoonsSettings, now: MoonsSettings) -> list[str]:
    """What differs between the runs, in words (settings.changes, view-only settings left out)."""
    return changes(pinned, now, ignore=VIEW_ONLY)


def short_label(settings: MoonsSettings, other: MoonsSettings) -> str:
    """What sets a run apart from the other, short enough for a legend: `SGD`, `lr 0.05`,
    `SGD, lr 0.05`; empty when nothing differs."""
    words = []
    for name, text in overrides_between(settings, other):
        words.append(text if name in ("opt", "act", "dataset") else f"{name} {text or 'none'}")
    shown = ", ".join(words)
    return shown if len(shown) <= 40 else shown[:37] + "..."


# ---------------------------------------------------------------------------------------------
# What each run is, read from the run itself.
# ---------------------------------------------------------------------------------------------

def initial_weights(session: TrainingSession) -> dict[str, torch.Tensor] | None:
    """The weights the run started from (its epoch-0 record), None if the record lacks them."""
    record = session.weight_record
    return record.weights(0) if 0 in record.epochs else None


def same_initial_weights(a: TrainingSession, b: TrainingSession) -> bool:
    """Whether both runs started from exactly the same weights (compared, not assumed)."""
    wa, wb = initial_weights(a), initial_weights(b)
    if wa is None or wb is None or wa.keys() != wb.keys():
        return False
    return all(wa[k].shape == wb[k].shape and torch.equal(wa[k], wb[k]) for k in wa)


def same_data(a: TrainingSession, b: TrainingSession) -> bool:
    """Whether both runs train, validate and test on exactly the same points (compared, not
    inferred from the settings, so a new way to make data needs nothing here)."""
    return all(np.array_equal(getattr(a.split, name), getattr(b.split, name))
               for name in ("x_train", "y_train", "x_val", "y_val", "x_test", "y_test"))


REGRESSION_NOT_COMPARED = (
    "Comparisons are for classification runs: their numbers are accuracies next to the best "
    "possible one. A regression run (Plane or Multi Gaussian) has a mean squared error and R² "
    "instead, so no comparison is shown with one; unpin to leave it.")


def not_comparable(a: MoonsSettings, b: MoonsSettings) -> str | None:
    """Why two runs are not compared (either is a regression run); None if they are."""
    return REGRESSION_NOT_COMPARED if a.regression or b.regression else None


def initial_metrics(session: TrainingSession) -> Metrics | None:
    """Validation loss and accuracy of the run's initial weights, before any optimizer step."""
    weights = initial_weights(session)
    if weights is None:
        return None
    model = session.fresh_model()
    model.load_state_dict({k: v.to(session.device) for k, v in weights.items()}, strict=True)
    return evaluate(model, session.x_val, session.y_val, session.loss_fn)


@dataclass(frozen=True)
class RunSummary:
    """One run's numbers, as the comparison shows them."""

    label: str                  # "pinned" or "now", with what sets it apart: "pinned: SGD"
    settings: MoonsSettings
    epoch: int
    initial_val_loss: float | None
    val_loss: float | None      # at the last finished epoch; None before the first
    best_val_loss: float | None
    test_accuracy: float
    bayes_accuracy: float
    diverged: bool

    @property
    def trained(self) -> bool:
        return self.epoch > 0 and self.val_loss is not None

    @property
    def name(self) -> str:
        """The run in a sentence: `the pinned run (SGD)`, `this run (AdamW)`."""
        role, _, what = self.label.partition(": ")
        words = "the pinned run" if role == "pinned" else "this run"
        return f"{words} ({what})" if what else words


def summarise(session: TrainingSession, label: str) -> RunSummary:
    """The run's numbers (the caller holds `session.lock` if it may be training)."""
    h = session.history
    initial = initial_metrics(session)
    finite = [v for v in h.val_loss if math.isfinite(v)]
    report = session.test_report()
    return RunSummary(label, session.settings, session.epoch,
                      initial.loss if initial is not None else None,
                      h.val_loss[-1] if h.val_loss else None, min(finite) if finite else None,
                      report.accuracy, report.bayes_accuracy, session.diverged is not None)


def labels(pinned: MoonsSettings, now: MoonsSettings) -> tuple[str, str]:
    """The two runs' names in the legend and the table: `pinned: SGD`, `now: AdamW`."""
    a, b = short_label(pinned, now), short_label(now, pinned)
    return (f"pinned: {a}" if a else "pinned"), (f"now: {b}" if b else "now")


def _pct(value: float) -> str:
    return f"{100 * value:.2f}%"


def why_different_start(a: TrainingSession, b: TrainingSession) -> str:
    """Why two runs on the same data start from different weights, in words ('' if they do not)."""
    if same_initial_weights(a, b):
        return ""
    if a.loaded is not None or b.loaded is not None:
        return "one run's weights were uploaded"
    wa, wb = initial_weights(a), initial_weights(b)
    if wa is not None and wb is not None and (wa.keys() != wb.keys() or any(
            wa[k].shape != wb[k].shape for k in wa)):
        return shapes_differ_words(wa, wb, a.settings.architecture, b.settings.architecture)
    return ""


def identical_layers(wa: dict[str, torch.Tensor], wb: dict[str, torch.Tensor]) -> list[int]:
    """The layers (1 = the first Linear) whose every tensor is `torch.equal` in both runs'
    initial weights."""
    layers: dict[str, bool] = {}
    for name, value in wa.items():      # state_dict order: the layers in the model's order
        layer = name.rsplit(".", 1)[0]
        other = wb.get(name)
        same = other is not None and other.shape == value.shape and torch.equal(other, value)
        layers[layer] = layers.get(layer, True) and same
    return [i + 1 for i, same in enumerate(layers.values()) if same]


def shapes_differ_words(wa: dict[str, torch.Tensor], wb: dict[str, torch.Tensor],
                        arch_a: str, arch_b: str) -> str:
    """Why other layer shapes start from other weights, with the layers that still start alike
    (compared with torch.equal): the seed's generator fills the layers in order, so those
    before the first changed one get the same draws, and the draws land elsewhere from there."""
    same = identical_layers(wa, wb)
    if not same:
        return (f"the layers' shapes differ from the first layer on ({arch_a} and {arch_b}), so "
                "the seed's generator's draws land differently in every layer")
    names = ", ".join(f"Linear {i}" for i in same)
    return (f"the layers' shapes differ ({arch_a} and {arch_b}): the seed's generator fills the "
            f"layers in order, so {names} {'starts' if len(same) == 1 else 'start'} identical "
            "(torch.equal) and the draws land differently from the first changed layer on")


def comparison_sentences(pinned: RunSummary, now: RunSummary, *, same_init: bool, same_points: bool,
                         differ: list[str], init_reason: str = "") -> list[str]:
    """What the comparison says, every judgement computed from the two runs' numbers."""
    said = []
    if differ:
        said.append("What differs: " + "; ".join(differ) + ".")
    else:
        said.append("Nothing differs between the two runs' settings: the same run twice, which "
                    "shows that a seeded run is reproducible.")
    if same_init and same_points:
        start = ""
        if pinned.initial_val_loss is not None and now.initial_val_loss is not None:
            if pinned.initial_val_loss == now.initial_val_loss:
                start = (f" Before any step both have the same validation loss, "
                         f"{pinned.initial_val_loss:.4f}.")
            else:       # same weights and points, yet another loss: another activation or inputs
                start = (f" Before any step their validation losses differ ({pinned.initial_val_loss:.4f} "
                         f"and {now.initial_val_loss:.4f}): the same weights compute another "
                         "function here.")
        said.append("Both runs start from the same initial weights and train on the same data, so "
                    "what differs above is the only cause of any difference below." + start)
    elif not same_points:
        said.append("The runs draw different data (a data setting or the seed differs), so they "
                    "start from different points and their numbers compare different problems.")
    else:
        why = f" ({init_reason})" if init_reason else ""
        said.append(f"The runs start from different initial weights{why}: part of any difference "
                    "below comes from the start, not from the changed setting alone.")
    said.append(_verdict(pinned, now))
    said.append(_accuracies(pinned, now, same_points))
    return [s for s in said if s]


def _verdict(pinned: RunSummary, now: RunSummary) -> str:
    """Which run reached the lower validation loss, and when."""
    if not pinned.trained or not now.trained:
        waiting = [r.name for r in (pinned, now) if not r.trained]
        return f"Train {' and '.join(waiting)} to compare the validation losses."

    for run in (pinned, now):
        if run.diverged or run.val_loss is None or not math.isfinite(run.val_loss):
            other = now if run is pinned else pinned
            return (f"{_capital(run.name)} diverged (its loss stopped being a number); "
                    f"{other.name} {'diverged too' if other.diverged else 'did not'}.")
    assert pinned.val_loss is not None and now.val_loss is not None
    epochs = (f"after {now.epoch} epochs each" if pinned.epoch == now.epoch else
              f"after {pinned.epoch} and {now.epoch} epochs (not the same number: train both "
              "as far for a fair comparison)")
    if pinned.val_loss == now.val_loss:
        return f"Both runs reached the same validation loss, {now.val_loss:.4f}, {epochs}."
    low, high = (pinned, now) if pinned.val_loss < now.val_loss else (now, pinned)
    assert low.val_loss is not None and high.val_loss is not None
    return (f"{_capital(low.name)} reached the lower validation loss {epochs}: {low.val_loss:.4f} "
            f"against {high.val_loss:.4f} for {high.name}.")


def _accuracies(pinned: RunSummary, now: RunSummary, same_points: bool) -> str:
    """Each run's test accuracy next to the Bayes ceiling of its test points."""
    if not pinned.trained or not now.trained:
        return ""
    def gap(run: RunSummary) -> str:
        points = round(100 * (run.bayes_accuracy - run.test_accuracy), 2)
        if points > 0:
            return f"{points:.2f} points below the best possible"
        if points < 0:
            return f"{-points:.2f} points above the best possible (luck on these test points)"
        return "at the best possible"
    ceiling = (f"The best possible accuracy on these test points is {_pct(now.bayes_accuracy)}. "
               if same_points else "")
    return (f"{ceiling}Test accuracy: {pinned.name} {_pct(pinned.test_accuracy)} ({gap(pinned)}); "
            f"{now.name} {_pct(now.test_accuracy)} ({gap(now)}).")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------------------------------------
# A link's pinned run trains beside the learner's run.
# ---------------------------------------------------------------------------------------------

def keep_pace(pinned: TrainingSession, session: TrainingSession, seconds: float) -> bool:
    """Train `pinned` up to the epochs `session` has finished (to its own last epoch once
    `session` is done), for at most `seconds`; whether it is still short of them.

    A comparison link's two runs are trained together by one Play: the pinned run follows
    epoch by epoch, so both curves grow side by side at the learner's pace. Slicing changes
    nothing in either run (`run_for` carries on where it stopped). Step trains the pinned run's
    same epoch too."""
    started = time.perf_counter()
    with pinned.lock:
        goal = pinned.settings.epochs if session.done else min(session.epoch, pinned.settings.epochs)
        while not pinned.done and pinned.epoch < goal:
            left = seconds - (time.perf_counter() - started)
            if left <= 0:
                break
            pinned.run_for(10**9, left, stop_at_epoch_end=True)
        return not pinned.done and pinned.epoch < goal
