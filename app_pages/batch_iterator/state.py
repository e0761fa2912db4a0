"""One learner's batch iterator: the last loader run and where the stepper stands in it.

It lives in `learner_state("batch_iterator", ...)`, which survives sidebar navigation: coming
back with the same settings finds the same run and the same batch. A settings change runs the
loader again and sends the stepper back to the first batch, and says so.
"""
from __future__ import annotations

import contextlib

from dataclasses import dataclass

import torch

from workbench.batch_iterator import runs
from workbench.batch_iterator.cost import BatchingCost
from workbench.batch_iterator.runs import BatchRecord, LoaderRun, explain_loader_error
from workbench.batch_iterator.settings import TABLE, BatchSettings
from workbench.common.errors import ExplainedError
from workbench.common.jobs import SCHEDULER

Moons = tuple[torch.Tensor, torch.Tensor]  # features and labels of the moons training split


@dataclass
class BatchPageState:
    settings: BatchSettings | None = None
    data_token: int | None = None
    run: LoaderRun | None = None
    error: ExplainedError | None = None
    position: int = 0               # index into run.records: the batch the learner stepped to
    notice: str = ""                # what the last reset threw away, shown once
    cost: BatchingCost | None = None
    pitfall: tuple[LoaderRun, LoaderRun] | None = None
    pitfall_error: str = ""
    loader_runs: int = 0            # DataLoader runs so far (a new one redraws the whole page)
    drawn_for_run: int = -1         # the loader run the sections outside the batch view show

    @property
    def current(self) -> BatchRecord | None:
        """The batch the stepper shows (None while there is no batch)."""
        if self.run is None or not self.run.records or self.error is not None:
            return None
        self.position = min(max(self.position, 0), len(self.run.records) - 1)
        return self.run.records[self.position]

    def step(self, delta: int) -> None:
        if self.run is not None and self.run.records:
            self.position = min(max(self.position + delta, 0), len(self.run.records) - 1)

    def update(self, settings: BatchSettings, moons: Moons | None, data_token: int | None) -> None:
        """Run the DataLoader once per settings change; stepping only reads the records."""
        if self.settings == settings and self.data_token == data_token:
            return
        self.notice = self._reset_notice(settings, data_token)
        self.settings, self.data_token = settings, data_token
        self.run, self.error, self.position = None, None, 0
        self.loader_runs += 1
        # Worker runs start processes: they wait for their turn in the scheduler the moons
        # trainer's live runs share (never refused), so a class does not start 30 at once.
        turn = SCHEDULER.turn() if settings.num_workers > 0 else contextlib.nullcontext()
        try:
            with turn:
                self.run = runs.run_loader(settings, moons)
        except (ValueError, RuntimeError, TypeError) as exc:
            self.error = explain_loader_error(exc)

    def run_again(self) -> None:
        """Forget the last run, so the next page run iterates the DataLoader anew."""
        self.settings = None

    def _reset_notice(self, settings: BatchSettings, data_token: int | None) -> str:
        """'Back to the first batch (epoch 0, batch 0): batch_size changed. ...' when the
        stepper had moved on: the position is what a settings change throws away."""
        current = self.current
        if current is None or self.position == 0 or self.settings is None:
            return ""
        changed = [p.label for p in TABLE.params
                   if getattr(self.settings, p.field) != getattr(settings, p.field)]
        if data_token != self.data_token:
            changed.append("the moons training split")
        what = " and ".join(changed) if len(changed) <= 2 else ", ".join(changed[:-1]) + \
            f" and {changed[-1]}"
        return (f"Back to the first batch (epoch 0, batch 0): {what} changed. You were at "
                f"epoch {current.epoch}, batch {current.number} (batch {self.position + 1} of "
                "the run).")
