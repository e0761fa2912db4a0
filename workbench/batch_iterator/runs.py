"""A loader run: the real DataLoader built from the settings, iterated epoch by epoch, and
every batch it yielded written down as plain records.

Nothing here imitates PyTorch: `run_loader` builds a `torch.utils.data.DataLoader` the way a
learner would write it, iterates it and records what came out (epoch, batch number, sample
indices, the batch's tensors, the worker that built it). The pictures on the page and the
runnable script in the code panel come from the same settings, so what the page shows is what
`DataLoader` yields. A run is bounded in batches and in time, so one page run stays within a few
seconds of server time.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import time
import warnings
from collections.abc import Iterator
from typing import TypeVar
from dataclasses import dataclass, field, replace

import torch
from torch.utils.data import DataLoader

from workbench.batch_iterator.collate import TaggingCollate
from workbench.batch_iterator.datasets import IndexedDataset, make_dataset
from workbench.batch_iterator.samplers import (
    BucketBatchSampler,
    draws_per_epoch,
    make_sampler,
    subset_indices,
)
from workbench.batch_iterator.settings import BatchSettings
from workbench.batch_iterator.workers import seed_worker, worker_context
from workbench.common.errors import ExplainedError, explain
from workbench.common.jobs import breathe, lending

MAX_RUN_BATCHES = 2000      # a run records at most this many batches (memory per learner)
# A page run stays within 3 s of server time: the loader run stops (marked truncated) after
# RUN_TIME_LIMIT_S, and a worker that stalls raises after as long (DataLoader(timeout=...)).
# The test suite raises it (WORKBENCH_LOADER_SECONDS) so that a busy CI machine still records
# every batch it compares.
RUN_TIME_LIMIT_S = float(os.environ.get("WORKBENCH_LOADER_SECONDS", "2.5"))
WORKER_TIMEOUT_S = RUN_TIME_LIMIT_S


# %% The loader, built from the settings the way a learner would write it --------------------

def make_loader(settings: BatchSettings, dataset: IndexedDataset,
                generator: torch.Generator) -> DataLoader:
    """The DataLoader the settings describe. Raises PyTorch's own ValueError for options that
    exclude each other, because the options are passed exactly as set."""
    workers = settings.num_workers
    options: dict = {
        "shuffle": settings.shuffle,
        "sampler": make_sampler(settings, dataset, generator),
        "collate_fn": TaggingCollate(pad=settings.collate == "pad"),
        "num_workers": workers,
        "pin_memory": settings.pin_memory,
        "generator": generator,
    }
    if settings.batch_sampler == "bucket":
        options["batch_sampler"] = BucketBatchSampler(dataset.lengths, settings.batch_size,
                                                      settings.drop_last, generator)
    else:
        options.update(batch_size=settings.batch_size, drop_last=settings.drop_last)
    if workers > 0:
        options.update(worker_init_fn=seed_worker if settings.worker_init else None,
                       prefetch_factor=settings.prefetch_factor,
                       persistent_workers=settings.persistent_workers,
                       multiprocessing_context=worker_context(), timeout=WORKER_TIMEOUT_S)
    return DataLoader(dataset, **options)


# %% A run, written down as plain records ---------------------------------------------------

@dataclass(frozen=True)
class BatchRecord:
    epoch: int
    number: int                      # batch number within its epoch, from 0
    indices: tuple[int, ...]
    labels: tuple[int, ...]
    worker: int                      # get_worker_info().id, or -1 for the main process
    tensors: dict[str, torch.Tensor] = field(compare=False)

    @property
    def size(self) -> int:
        return len(self.indices)

    def class_counts(self, classes: int = 2) -> tuple[int, ...]:
        return tuple(self.labels.count(c) for c in range(classes))


@dataclass(frozen=True)
class EpochSummary:
    epoch: int
    batches: int
    samples_seen: int
    unique: int
    draws: int                       # indices the sampler yielded
    never_drawn: tuple[int, ...]     # indices of the pool that appear in no batch this epoch
    class_counts: tuple[int, ...]
    batch_sizes: tuple[int, ...]

    @property
    def repeats(self) -> int:
        return self.samples_seen - self.unique

    @property
    def dropped(self) -> int:
        """Draws that were made but landed in no batch (drop_last)."""
        return self.draws - self.samples_seen


@dataclass(frozen=True)
class LoaderRun:
    settings: BatchSettings
    records: tuple[BatchRecord, ...]
    labels: tuple[int, ...]          # class of every dataset item
    lengths: tuple[int, ...]         # length of every item's x
    pool: tuple[int, ...]            # the indices the sampler can draw from
    notes: tuple[str, ...]           # warnings PyTorch raised, in its words
    seconds: float
    stopped: str = ""                # why the run ended early ("" when it ran every epoch)

    @property
    def truncated(self) -> bool:
        return bool(self.stopped)

    @property
    def dataset_size(self) -> int:
        return len(self.labels)

    def epoch_records(self, epoch: int) -> list[BatchRecord]:
        return [r for r in self.records if r.epoch == epoch]

    @functools.cached_property
    def _summaries(self) -> tuple[EpochSummary, ...]:
        return tuple(self._summarise())

    def summaries(self) -> list[EpochSummary]:
        return list(self._summaries)

    def _summarise(self) -> list[EpochSummary]:
        draws = self.dataset_size if self.settings.batch_sampler == "bucket" \
            else draws_per_epoch(self.settings, self.dataset_size)
        out = []
        for epoch in range(self.settings.epochs):
            records = self.epoch_records(epoch)
            seen = [i for r in records for i in r.indices]
            labels = [c for r in records for c in r.labels]
            out.append(EpochSummary(
                epoch, len(records), len(seen), len(set(seen)), draws,
                tuple(sorted(set(self.pool) - set(seen))),
                tuple(labels.count(c) for c in range(2)),
                tuple(r.size for r in records)))
        return out


def _plain(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    # Clone so no record keeps a worker's shared-memory segment alive.
    return {k: v.detach().clone() for k, v in batch.items() if k != "worker"}


def run_loader(settings: BatchSettings, moons: tuple[torch.Tensor, torch.Tensor] | None = None,
               time_limit_s: float = RUN_TIME_LIMIT_S) -> LoaderRun:
    """Iterate the real DataLoader for `settings.epochs` epochs and record every batch.

    The run stops early at MAX_RUN_BATCHES batches or after `time_limit_s`. Raises what
    PyTorch raises (ValueError for exclusive options, RuntimeError from collate);
    `explain_loader_error` turns it into words.
    """
    dataset = make_dataset(settings, moons)
    generator = torch.Generator().manual_seed(settings.seed)
    started = time.perf_counter()
    records: list[BatchRecord] = []
    stopped = ""
    # Recording warnings swaps process-wide state, so only when one is expected: PyTorch's
    # pin_memory warning on a machine without an accelerator.
    recording = settings.pin_memory and not torch.accelerator.is_available()
    with warnings.catch_warnings(record=True) if recording else contextlib.nullcontext() as caught:
        if recording:
            warnings.simplefilter("always")
        loader = make_loader(settings, dataset, generator)
        iterator = None
        try:
            for epoch in range(settings.epochs):
                # While it waits for its worker processes (to start, for the next batch), the
                # run lends its scheduler turn to a learner training (jobs.lending): the
                # workers' time is theirs, not the server's core. Beside ten trainers, holding
                # the turn through those waits left them 0.46-0.70 of their pace.
                with lending() as lent:
                    iterator = iter(loader)
                started += lent.waited
                for number, (batch, waited) in enumerate(_lent(iterator)):
                    # Between batches the learners training get their turns; the time limit
                    # counts this run's own time, not the waits for a turn.
                    started += breathe() + waited
                    stopped = _stop_reason(len(records), started, time_limit_s)
                    if stopped:
                        break
                    indices = tuple(batch["index"].tolist())
                    records.append(BatchRecord(epoch, number, indices, tuple(batch["y"].tolist()),
                                               int(batch["worker"]), _plain(batch)))
                if stopped:
                    break
        finally:
            _shut_down(loader, iterator)
    notes = tuple(dict.fromkeys(str(w.message) for w in caught or ()))
    pool = subset_indices(len(dataset)) if settings.sampler == "subset" else range(len(dataset))
    return LoaderRun(settings, tuple(records), tuple(dataset.labels.tolist()),
                     tuple(dataset.lengths), tuple(pool), notes,
                     time.perf_counter() - started, stopped)


T = TypeVar("T")
_END = object()


def _lent(iterator: Iterator[T]) -> Iterator[tuple[T, float]]:
    """`iterator`'s items, each waited for with the scheduler turn lent (jobs.lending), with
    the seconds spent taking the turn back."""
    while True:
        with lending() as lent:
            item = next(iterator, _END)
        if item is _END:
            return
        yield item, lent.waited  # type: ignore[misc]


def _stop_reason(recorded: int, started: float, time_limit_s: float) -> str:
    if recorded >= MAX_RUN_BATCHES:
        return f"it reached {MAX_RUN_BATCHES} batches"
    if time.perf_counter() - started > time_limit_s:
        return f"it ran for {time_limit_s:g} s"
    return ""


def _shut_down(loader: DataLoader, iterator: object | None) -> None:
    """Stop worker processes now rather than whenever the garbage collector gets to them."""
    for it in (iterator, getattr(loader, "_iterator", None)):
        shutdown = getattr(it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()



# %% Errors as content -----------------------------------------------------------------------

_WORKER_TRACEBACK = re.compile(r"Original Traceback \(most recent call last\):.*", re.S)


def explain_loader_error(exc: BaseException) -> ExplainedError:
    """PyTorch's message (without a worker's traceback) and what it means for a DataLoader.

    The explanation comes from the one table of error explanations
    (`workbench.common.errors.RULES`)."""
    message = str(exc).strip()
    if "Original Traceback" in message:
        # A worker's exception arrives with its traceback as text: keep its first line and the
        # final error line, never the traceback.
        tail = [line for line in message.splitlines() if line.strip()]
        message = _WORKER_TRACEBACK.sub("", message).strip() + "\n" + (tail[-1] if tail else "")
    return replace(explain(exc), message=message)


# %% The worker NumPy-RNG pitfall, read from a run --------------------------------------------

@dataclass(frozen=True)
class NoiseByWorker:
    """The `noise` values each worker produced in one epoch, in the order it produced them."""

    epoch: int
    worker: int
    values: tuple[float, ...]


def noise_by_worker(run: LoaderRun) -> list[NoiseByWorker]:
    out = []
    for epoch in range(run.settings.epochs):
        by_worker: dict[int, list[float]] = {}
        for record in run.epoch_records(epoch):
            if "noise" in record.tensors:
                by_worker.setdefault(record.worker, []).extend(record.tensors["noise"].tolist())
        out += [NoiseByWorker(epoch, w, tuple(v)) for w, v in sorted(by_worker.items())]
    return out


def identical_streams(run: LoaderRun) -> bool:
    """True when two workers (or one worker in two epochs) drew the same noise sequence."""
    streams = [s.values for s in noise_by_worker(run) if s.worker >= 0]
    for a in range(len(streams)):
        for b in range(a + 1, len(streams)):
            k = min(len(streams[a]), len(streams[b]))
            if k and streams[a][:k] == streams[b][:k]:
                return True
    return False

