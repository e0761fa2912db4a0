"""The dataset: a map-style Dataset whose items say who they are (index, features, class).

The same settings always give the same dataset (fixed seeds); the learner's `seed` drives only
the loader's generator, so changing it changes the order, never the data.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch.utils.data import Dataset

from workbench.batch_iterator.settings import MAX_N, BatchSettings

DATA_SEED = 2024            # the dataset is fixed; `seed` only drives the loader's generator


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

