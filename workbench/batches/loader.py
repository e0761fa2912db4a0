"""The DataLoader pipeline, batch by batch: Dataset -> Sampler -> BatchSampler -> __getitem__
-> collate_fn -> batch.

Nothing here imitates PyTorch: `run_loader` builds a real `torch.utils.data.DataLoader` from a
small settings dataclass, iterates it epoch by epoch and writes down what came out as plain
records (epoch, batch number, sample indices, the batch's tensors, the worker that built it).
The pictures on the page and the runnable script in the code panel are drawn from the same
settings, so what the page shows is what `DataLoader` yields.

Everything a worker process needs (the dataset, the collate function, `worker_init_fn`, the
custom batch sampler) is defined at module level, so it can be pickled into a worker started by
"forkserver": forking a threaded web server can deadlock, starting from a clean server cannot.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import multiprocessing
import os
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import context as mp_context
from multiprocessing import forkserver, reduction, spawn, util
from multiprocessing.context import set_spawning_popen

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
)

from workbench.common.errors import ExplainedError, explain
from workbench.common.links import BoolParam, ChoiceParam, IntParam, LinkSchema

# The names a lesson link uses; each maps to a sentence on the page.
DATASETS = ("points", "sequences", "moons")
SAMPLERS = ("default", "sequential", "random", "replacement", "subset", "weighted")
BATCH_SAMPLERS = ("none", "bucket")
COLLATES = ("default", "pad")

MIN_N, MAX_N = 4, 500
MAX_BATCH = 500
MAX_EPOCHS = 5
MAX_WORKERS = 2
MAX_NUM_SAMPLES = 1000
MAX_RUN_BATCHES = 2000      # a run records at most this many batches (memory per learner)
DATA_SEED = 2024            # the dataset is fixed; `seed` only drives the loader's generator
PAD_VALUE = 0               # token ids start at 1, so 0 is free to mean "padding"
# A page run stays within 3 s of server time: the loader run stops (marked truncated) after
# RUN_TIME_LIMIT_S, and a worker that stalls raises after as long (DataLoader(timeout=...)).
# The test suite raises it (WORKBENCH_LOADER_SECONDS) so that a busy CI machine still records
# every batch it compares.
RUN_TIME_LIMIT_S = float(os.environ.get("WORKBENCH_LOADER_SECONDS", "2.5"))
WORKER_TIMEOUT_S = RUN_TIME_LIMIT_S
BUCKET_POOL = 4             # the bucket batch sampler sorts pools of 4 batches by length


@dataclass(frozen=True)
class BatchSettings:
    """Everything that decides which batches a DataLoader yields, and how they are built."""

    n: int = 20
    batch_size: int = 6
    shuffle: bool = True
    drop_last: bool = False
    sampler: str = "default"
    seed: int = 0
    num_workers: int = 0
    epochs: int = 2
    dataset: str = "points"
    minority_percent: int = 25
    num_samples: int = 0            # 0: as many draws as the dataset (or subset) has items
    batch_sampler: str = "none"
    collate: str = "default"
    worker_init: bool = False
    augment: bool = False
    pin_memory: bool = False
    prefetch_factor: int = 2
    persistent_workers: bool = False


LINK_SCHEMA = LinkSchema(BatchSettings, [
    IntParam("n", MIN_N, MAX_N, help="number of samples in the dataset"),
    IntParam("batch", 1, MAX_BATCH, field="batch_size", help="batch_size"),
    BoolParam("shuffle", help="shuffle=True: a new random order every epoch"),
    BoolParam("drop_last", help="drop the last batch when it is smaller than batch_size"),
    ChoiceParam("sampler", SAMPLERS, help="which sampler orders the indices"),
    IntParam("seed", 0, 2**31 - 1, help="seed of the torch.Generator passed as generator="),
    IntParam("workers", 0, MAX_WORKERS, field="num_workers", help="num_workers"),
    IntParam("epochs", 1, MAX_EPOCHS, help="how many epochs to run"),
    ChoiceParam("dataset", DATASETS, help="points, sequences (variable length) or moons"),
    IntParam("minority", 5, 50, field="minority_percent", help="percent of samples in class 1"),
    IntParam("num_samples", 0, MAX_NUM_SAMPLES, help="draws per epoch (0: the dataset's size)"),
    ChoiceParam("batch_sampler", BATCH_SAMPLERS, help="none, or a custom bucket-by-length one"),
    ChoiceParam("collate", COLLATES, help="default_collate or a padding collate_fn"),
    BoolParam("worker_init", help="pass worker_init_fn=seed_worker"),
    BoolParam("augment", help="items carry noise from the dataset's own NumPy generator"),
    BoolParam("pin_memory", help="pin_memory=True"),
    IntParam("prefetch", 1, 8, field="prefetch_factor", help="prefetch_factor (workers only)"),
    BoolParam("persistent", field="persistent_workers", help="persistent_workers=True"),
])


# %% The dataset: items that show their index and class -------------------------------------

class IndexedDataset(Dataset):
    """A map-style dataset whose items say who they are: `index`, features `x` and class `y`.

    With `noise_seed`, every item also carries `noise`, drawn from the dataset's *own* NumPy
    generator, the way a random augmentation would be. Each worker process gets a copy of that
    generator in the same state: the classic pitfall `seed_worker` fixes.
    """

    def __init__(self, features: torch.Tensor | Sequence[torch.Tensor], labels: torch.Tensor,
                 noise_seed: int | None = None) -> None:
        self.features = features
        self.labels = labels
        self.rng = np.random.default_rng(noise_seed) if noise_seed is not None else None

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        item = {"index": torch.tensor(index), "x": self.features[index], "y": self.labels[index]}
        if self.rng is not None:
            item["noise"] = torch.tensor(round(float(self.rng.normal()), 4))
        return item

    @property
    def lengths(self) -> list[int]:
        """How long each item's `x` is (its number of features, or tokens)."""
        return [len(x) for x in self.features]


def class_labels(n: int, minority_percent: int) -> torch.Tensor:
    """n labels, `minority_percent` of them class 1, at fixed random positions."""
    generator = torch.Generator().manual_seed(DATA_SEED)
    minority = max(1, round(n * minority_percent / 100))
    labels = torch.zeros(n, dtype=torch.int64)
    labels[torch.randperm(n, generator=generator)[:minority]] = 1
    return labels


def make_dataset(settings: BatchSettings, moons: tuple[torch.Tensor, torch.Tensor] | None = None
                 ) -> IndexedDataset:
    """The dataset the settings describe: the same one every time for the same settings."""
    noise_seed = settings.seed if settings.augment else None
    if settings.dataset == "moons" and moons is not None:
        features, labels = moons
        # Worker processes receive the dataset by pickling: keep it in ordinary CPU memory.
        return IndexedDataset(features[:MAX_N].detach().float().cpu(),
                              labels[:MAX_N].detach().long().cpu(), noise_seed)
    n = settings.n
    labels = class_labels(n, settings.minority_percent)
    generator = torch.Generator().manual_seed(DATA_SEED + 1)
    if settings.dataset == "sequences":
        lengths = torch.randint(1, 7, (n,), generator=generator).tolist()
        tokens = [torch.randint(1, 100, (length,), generator=generator) for length in lengths]
        return IndexedDataset(tokens, labels, noise_seed)
    centres = torch.tensor([[-1.0, 0.0], [1.0, 0.5]])
    points = torch.randn(n, 2, generator=generator) * 0.6 + centres[labels]
    return IndexedDataset(torch.round(points, decimals=2), labels, noise_seed)


# %% Samplers: the order of the indices -----------------------------------------------------

def subset_indices(n: int) -> list[int]:
    """The subset SubsetRandomSampler draws from: every index but each 4th (a held-out split)."""
    return [i for i in range(n) if i % 4 != 3]


def class_balancing_weights(labels: torch.Tensor) -> torch.Tensor:
    """One weight per sample, 1 / (size of its class): each class is drawn equally often."""
    counts = torch.bincount(labels)
    return 1.0 / counts[labels].double()


def draws_per_epoch(settings: BatchSettings, dataset_size: int) -> int:
    """How many indices the sampler yields in one epoch."""
    if settings.sampler == "subset":
        return len(subset_indices(dataset_size))
    if settings.sampler in ("random", "replacement", "weighted") and settings.num_samples:
        return settings.num_samples
    return dataset_size


def make_sampler(settings: BatchSettings, dataset: IndexedDataset,
                 generator: torch.Generator) -> Sampler[int] | None:
    """The sampler the settings name; None lets DataLoader choose from `shuffle`."""
    num_samples = settings.num_samples or None
    if settings.sampler == "sequential":
        return SequentialSampler(dataset)
    if settings.sampler == "random":
        return RandomSampler(dataset, num_samples=num_samples, generator=generator)
    if settings.sampler == "replacement":
        return RandomSampler(dataset, replacement=True, num_samples=num_samples, generator=generator)
    if settings.sampler == "subset":
        return SubsetRandomSampler(subset_indices(len(dataset)), generator=generator)
    if settings.sampler == "weighted":
        return WeightedRandomSampler(class_balancing_weights(dataset.labels),
                                     num_samples=num_samples or len(dataset), replacement=True,
                                     generator=generator)
    return None


class BucketBatchSampler(Sampler[list[int]]):
    """A custom batch_sampler: batches of items of similar length, so padding stays small.

    Shuffle all indices, cut them into pools of `BUCKET_POOL` batches, sort each pool by length,
    cut the pool into batches, then shuffle the order of the batches.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, drop_last: bool,
                 generator: torch.Generator) -> None:
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.generator = generator

    def __iter__(self) -> Iterator[list[int]]:
        order = torch.randperm(len(self.lengths), generator=self.generator).tolist()
        pool_size = self.batch_size * BUCKET_POOL
        batches: list[list[int]] = []
        for start in range(0, len(order), pool_size):
            pool = sorted(order[start:start + pool_size], key=lambda i: self.lengths[i])
            batches += [pool[i:i + self.batch_size] for i in range(0, len(pool), self.batch_size)]
        if self.drop_last:
            batches = [b for b in batches if len(b) == self.batch_size]
        for position in torch.randperm(len(batches), generator=self.generator).tolist():
            yield batches[position]

    def __len__(self) -> int:
        full, rest = divmod(len(self.lengths), self.batch_size)
        return full if self.drop_last or rest == 0 else full + 1


# %% collate_fn: a list of items -> one batch -----------------------------------------------

@dataclass(frozen=True)
class TaggingCollate:
    """default_collate (or padding), then the id of the worker that ran it, as `worker`.

    `collate_fn` runs where the batch is built, so `get_worker_info()` names that worker
    (None in the main process, recorded as -1).
    """

    pad: bool = False

    def __call__(self, items: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
        batch = pad_collate(items) if self.pad else default_collate(items)
        info = get_worker_info()
        batch["worker"] = torch.tensor(-1 if info is None else info.id)
        return batch


def pad_collate(items: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Like default_collate, but `x` of different lengths is padded to the longest."""
    xs = [item["x"] for item in items]
    rest = default_collate([{k: v for k, v in item.items() if k != "x"} for item in items])
    lengths = torch.tensor([len(x) for x in xs])
    return {**rest, "x": pad_sequence(xs, batch_first=True, padding_value=PAD_VALUE),
            "lengths": lengths}


def seed_worker(worker_id: int) -> None:
    """worker_init_fn: give this worker's copy of the dataset its own NumPy generator.

    `get_worker_info().seed` is base_seed + worker_id: different per worker and per epoch.
    """
    info = get_worker_info()
    if info is not None and getattr(info.dataset, "rng", None) is not None:
        info.dataset.rng = np.random.default_rng(info.seed % 2**32)


try:
    from multiprocessing.popen_forkserver import Popen as _ForkServerPopen
except ImportError:  # Windows: no forkserver; workers are spawned instead
    _ForkServerPopen = object  # type: ignore[assignment,misc]


class _ScriptSafePopen(_ForkServerPopen):  # type: ignore[misc,valid-type]
    """Starts a worker from the forkserver without re-running the parent's main script.

    Inside Streamlit, `sys.modules["__main__"]` is the app script, so multiprocessing would
    run the whole app again in every worker before it could load a batch (and AppTest's
    router fails there). This is CPython's `popen_forkserver.Popen._launch` with the
    instructions to import the parent's main module removed: the workers need only the
    importable `workbench` modules their pickled dataset and functions name.
    """

    def _launch(self, process_obj) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_path", None)
        prep_data.pop("init_main_from_name", None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _WorkerProcess(getattr(mp_context, "ForkServerProcess", mp_context.Process)):  # type: ignore[misc]
    @staticmethod
    def _Popen(process_obj):  # noqa: N802 (the name multiprocessing calls)
        return _ScriptSafePopen(process_obj)


class WorkerContext(getattr(mp_context, "ForkServerContext", mp_context.BaseContext)):  # type: ignore[misc]
    """forkserver: workers are forks of a clean, single-threaded server process, never of
    the threaded web server (forking that can deadlock)."""

    Process = _WorkerProcess


def worker_context() -> multiprocessing.context.BaseContext:
    """Where DataLoader worker processes come from (forkserver; spawn where it is missing)."""
    if _ForkServerPopen is not object and "forkserver" in multiprocessing.get_all_start_methods():
        context = WorkerContext()
        # The server imports torch and this module once; each worker is a cheap fork of it.
        context.set_forkserver_preload(["workbench.batches.loader"])
        return context
    return multiprocessing.get_context("spawn")


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
               tick: Callable[[], bool] | None = None,
               time_limit_s: float = RUN_TIME_LIMIT_S) -> LoaderRun:
    """Iterate the real DataLoader for `settings.epochs` epochs and record every batch.

    `tick` is called before each batch (to renew a heavy-job lease); returning False stops the
    run early, as does `time_limit_s`. Raises what PyTorch raises (ValueError for exclusive
    options, RuntimeError from collate); `explain_loader_error` turns it into words.
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
                iterator = iter(loader)
                for number, batch in enumerate(iterator):
                    stopped = _stop_reason(len(records), started, time_limit_s, tick)
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


def _stop_reason(recorded: int, started: float, time_limit_s: float,
                 tick: Callable[[], bool] | None) -> str:
    if recorded >= MAX_RUN_BATCHES:
        return f"it reached {MAX_RUN_BATCHES} batches"
    if time.perf_counter() - started > time_limit_s:
        return f"it ran for {time_limit_s:g} s"
    if tick is not None and not tick():
        return "its heavy-job slot was taken back"
    return ""


def _shut_down(loader: DataLoader, iterator: object | None) -> None:
    """Stop worker processes now rather than whenever the garbage collector gets to them."""
    for it in (iterator, getattr(loader, "_iterator", None)):
        shutdown = getattr(it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()


# %% Errors as content -----------------------------------------------------------------------

_WORKER_TRACEBACK = re.compile(r"Original Traceback \(most recent call last\):.*", re.S)

_LOADER_RULES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (r"stack expects each tensor to be equal size",
     "default_collate cannot stack items of different lengths",
     "`default_collate` turns a list of items into one batch with `torch.stack`, which needs "
     "every tensor to have the same shape. These sequences have different lengths.",
     ("use a collate_fn that pads, e.g. with `torch.nn.utils.rnn.pad_sequence`",
      "or a batch_sampler that groups items of equal length")),
    (r"prefetch_factor option could only be specified in multiprocessing",
     "prefetch_factor needs worker processes",
     "`prefetch_factor` is how many batches each worker prepares ahead. With `num_workers=0` "
     "the main process loads each batch when it is asked for, so there is nothing to prefetch.",
     ("set num_workers to 1 or more", "or leave prefetch_factor as None")),
    (r"persistent_workers option needs num_workers > 0",
     "persistent_workers needs worker processes",
     "`persistent_workers=True` keeps worker processes alive between epochs. With "
     "`num_workers=0` there are none to keep.",
     ("set num_workers to 1 or more", "or leave persistent_workers=False")),
    (r"batch_size=None option disables auto-batching",
     "batch_size=None turns batching off",
     "With `batch_size=None` the sampler's items go to `__getitem__` one by one with no "
     "batching, so there is no last batch for `drop_last` to drop.",
     ("drop `drop_last`", "or give a batch_size")),
    (r"DataLoader worker .* exited unexpectedly|timed out",
     "A worker process stopped answering",
     "The DataLoader waited for a worker longer than its `timeout`, or the worker died. On a "
     "busy server this can happen; the run was stopped instead of hanging.",
     ("try again with num_workers=0",)),
)


def explain_loader_error(exc: BaseException) -> ExplainedError:
    """PyTorch's message (without a worker's traceback) and what it means for a DataLoader."""
    message = str(exc).strip()
    if "Original Traceback" in message:
        # A worker's exception arrives with its traceback as text: keep its first line and the
        # final error line, never the traceback.
        tail = [line for line in message.splitlines() if line.strip()]
        message = _WORKER_TRACEBACK.sub("", message).strip() + "\n" + (tail[-1] if tail else "")
    for pattern, title, explanation, fixes in _LOADER_RULES:
        if re.search(pattern, message):
            return ExplainedError(title, message, explanation, fixes, type(exc).__name__)
    explained = explain(exc)
    return dataclasses.replace(explained, message=message)


EXCLUSIVE_COMBINATIONS: dict[str, dict] = {
    "sampler= with shuffle=True": {"sampler": "sequential", "shuffle": True},
    "batch_sampler= with batch_size=6": {"batch_sampler": "bucket", "batch_size": 6},
    "batch_sampler= with drop_last=True": {"batch_sampler": "bucket", "drop_last": True},
    "batch_size=None with drop_last=True": {"batch_size": None, "drop_last": True},
}


def try_exclusive(name: str, n: int = 20) -> tuple[str, ExplainedError | None]:
    """Build a DataLoader with one forbidden combination; (the call, PyTorch's error)."""
    combo = EXCLUSIVE_COMBINATIONS[name]
    dataset = make_dataset(BatchSettings(n=n))
    options: dict = {}
    call = []
    if "sampler" in combo:
        options["sampler"] = SequentialSampler(dataset)
        call.append("sampler=SequentialSampler(dataset)")
    if "batch_sampler" in combo:
        options["batch_sampler"] = BatchSampler(SequentialSampler(dataset), 6, False)
        call.append("batch_sampler=BatchSampler(SequentialSampler(dataset), 6, False)")
    for key in ("shuffle", "batch_size", "drop_last"):
        if key in combo:
            options[key] = combo[key]
            call.append(f"{key}={combo[key]}")
    code = "DataLoader(dataset, " + ", ".join(call) + ")"
    try:
        DataLoader(dataset, **options)
    except ValueError as exc:
        return code, explain_loader_error(exc)
    return code, None


# %% The worker NumPy-RNG pitfall ------------------------------------------------------------

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


def batches_per_epoch(n: int, batch_size: int, drop_last: bool) -> int:
    """What len(DataLoader) says, by asking it."""
    return len(DataLoader(range(n), batch_size=batch_size, drop_last=drop_last))


# %% The pipeline in words, for the picture of it --------------------------------------------

def describe_sampler(settings: BatchSettings, dataset_size: int) -> str:
    draws = draws_per_epoch(settings, dataset_size)
    if settings.batch_sampler == "bucket":
        return f"(inside the batch sampler)\nrandperm({dataset_size}) with the generator"
    text = {
        "default": ("RandomSampler\n(DataLoader's, for\nshuffle=True)" if settings.shuffle
                    else "SequentialSampler\n(DataLoader's, for\nshuffle=False)"),
        "sequential": "SequentialSampler\n0, 1, 2, … in order",
        "random": "RandomSampler\na permutation per epoch",
        "replacement": "RandomSampler\nreplacement=True",
        "subset": "SubsetRandomSampler\na permutation of the subset",
        "weighted": "WeightedRandomSampler\nweights 1 / class size",
    }[settings.sampler]
    seeded = "" if settings.sampler == "sequential" or (
        settings.sampler == "default" and not settings.shuffle) else f"\nseed {settings.seed}"
    return f"{text}{seeded}\n{draws} indices/epoch"


def describe_batch_sampler(settings: BatchSettings) -> str:
    if settings.batch_sampler == "bucket":
        return (f"BucketBatchSampler\n(custom, by length)\nbatch_size={settings.batch_size}\n"
                f"drop_last={settings.drop_last}")
    return (f"made by DataLoader from\nbatch_size={settings.batch_size}\n"
            f"drop_last={settings.drop_last}")


def describe_collate(settings: BatchSettings) -> str:
    if settings.collate == "pad":
        return "pad_collate (custom)\npad_sequence for x,\nstack the rest"
    return "default_collate\ntorch.stack\nper key"


def grid_story(run: LoaderRun) -> list[str]:
    """What the index grid shows for these settings, in sentences."""
    s = run.settings
    summaries = run.summaries()
    random_order = s.batch_sampler == "bucket" or s.sampler not in ("default", "sequential") \
        or (s.sampler == "default" and s.shuffle)
    lines = []
    if random_order:
        differ = s.epochs > 1 and [r.indices for r in run.epoch_records(0)] != \
            [r.indices for r in run.epoch_records(1)]
        lines.append(
            f"Each epoch calls `iter(loader)` again and the sampler draws a new order from the "
            f"same `torch.Generator` (seed {s.seed}), whose state has moved on"
            + (": so epoch 1's batches differ from epoch 0's." if differ else ".")
            + " The same seed gives exactly these batches again.")
    else:
        lines.append("No shuffling: every epoch yields the same batches, in index order.")
    dropped = summaries[0].dropped
    if dropped > 0 and s.sampler not in ("replacement", "weighted"):
        lines.append(f"✕ marks the {dropped} sample(s) of the short last batch that "
                     "`drop_last=True` threw away"
                     + ("; with a random order they are different samples each epoch."
                        if random_order else "."))
    if s.sampler in ("replacement", "weighted"):
        lines.append("Drawn with replacement: `b×k` means drawn k times (first in batch b); "
                     "✕ means never drawn this epoch.")
    if s.sampler == "subset":
        lines.append("Every 4th index is held out: SubsetRandomSampler never draws it (blank).")
    return lines
