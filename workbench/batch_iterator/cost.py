"""What batching costs: one `__getitem__` per sample plus `default_collate`, versus one
`__getitem__` per batch.

A `TensorDataset` can index a whole list of indices at once. Passing a `BatchSampler` as the
`sampler` with `batch_size=None` hands `__getitem__` each batch's index list, so the DataLoader
does one indexing per batch instead of one per sample plus a stack. With the same seeded
generator it draws the same indices, so the batches are identical (`same_batches` checks it).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


@dataclass(frozen=True)
class BatchingCost:
    samples: int
    batch_size: int
    per_sample_us: float        # DataLoader(batch_size=...): per-sample __getitem__ + collate
    whole_batch_us: float       # DataLoader(sampler=BatchSampler(...), batch_size=None)
    bare_us: float              # a bare loop: X[perm[i:i+b]] with no DataLoader at all
    same_batches: bool

    @property
    def ratio(self) -> float:
        """How many times slower per-sample fetching is than whole-batch fetching."""
        return self.per_sample_us / self.whole_batch_us

    def bare_loop_words(self) -> str:
        """What the bare loop's timing says against the two loaders', from the three numbers:
        it is usually the fastest, but timings this short can come out in any order."""
        if self.bare_us <= min(self.per_sample_us, self.whole_batch_us):
            return "is the floor: the fastest of the three here"
        return ("came out slower than a loader this time: timings this short are noisy, "
                "press Measure again")


def tensor_dataset(samples: int, features: int = 2, seed: int = 0) -> TensorDataset:
    generator = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randn(samples, features, generator=generator),
                         torch.randint(0, 2, (samples,), generator=generator))


def per_sample_loader(dataset: TensorDataset, batch_size: int, generator: torch.Generator) -> DataLoader:
    """The textbook loader: one `__getitem__` per sample, then `default_collate`."""
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=generator)


def whole_batch_loader(dataset: TensorDataset, batch_size: int, generator: torch.Generator) -> DataLoader:
    """The same batches, one indexing call each: a BatchSampler is the sampler and automatic
    batching is off (`batch_size=None`), so TensorDataset receives a whole list of indices."""
    batches = BatchSampler(RandomSampler(dataset, generator=generator), batch_size, drop_last=False)
    return DataLoader(dataset, sampler=batches, batch_size=None, generator=generator)


def _seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def bare_batches(dataset: TensorDataset, batch_size: int, seed: int) -> Iterable:
    features, labels = dataset.tensors
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
    for start in range(0, len(order), batch_size):
        index = order[start:start + batch_size]
        yield features[index], labels[index]


def _best_epoch_seconds(make_batches: Callable[[], Iterable], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _batch in make_batches():
            pass
        best = min(best, time.perf_counter() - started)
    return best


def same_batches(dataset: TensorDataset, batch_size: int, seed: int) -> bool:
    pairs = zip(per_sample_loader(dataset, batch_size, _seeded(seed)),
                whole_batch_loader(dataset, batch_size, _seeded(seed)), strict=True)
    return all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) for a, b in pairs)


def measure_batching_cost(samples: int = 2048, batch_size: int = 32, repeats: int = 3,
                          seed: int = 0) -> BatchingCost:
    """Time one epoch three ways (best of `repeats`), in microseconds per sample."""
    dataset = tensor_dataset(samples, seed=seed)
    per_sample = _best_epoch_seconds(lambda: per_sample_loader(dataset, batch_size, _seeded(seed)),
                                     repeats)
    whole = _best_epoch_seconds(lambda: whole_batch_loader(dataset, batch_size, _seeded(seed)), repeats)
    bare = _best_epoch_seconds(lambda: bare_batches(dataset, batch_size, seed), repeats)
    return BatchingCost(samples, batch_size, per_sample / samples * 1e6, whole / samples * 1e6,
                        bare / samples * 1e6, same_batches(dataset, batch_size, seed))
