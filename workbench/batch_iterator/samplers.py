"""Samplers: the order of the indices, and a custom batch sampler that groups by length."""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch
from torch.utils.data import (
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

from workbench.batch_iterator.datasets import IndexedDataset
from workbench.batch_iterator.settings import BatchSettings

BUCKET_POOL = 4             # the bucket batch sampler sorts pools of 4 batches by length


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

