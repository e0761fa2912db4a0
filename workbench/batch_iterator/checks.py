"""The batch iterator's knowledge checks, on its page and in the batching lesson.

Each `compute` function is what the learner reads after committing: it asks a real DataLoader.
"""
from __future__ import annotations

import torch
from torch.utils.data import DataLoader

from workbench.common.checks import Answer, Check


def batch_count_with_and_without_drop_last() -> Answer:
    dropped = [len(batch) for batch in DataLoader(range(20), batch_size=6, drop_last=True)]
    kept = [len(batch) for batch in DataLoader(range(20), batch_size=6, drop_last=False)]
    if len(dropped) == len(kept):
        option = f"{len(kept)} either way"
    else:
        option = f"{len(dropped)} with drop_last, {len(kept)} without"
    return Answer(option, f"drop_last=True: {len(dropped)} batches of {dropped}, "
                          f"drop_last=False: {len(kept)} batches of {kept}",
                  "20 = 3 × 6 + 2: three full batches and a short one of 2 samples. "
                  "`drop_last=True` throws the short one away.")


BATCH_ITERATOR_COUNT = Check(
    "batch_iterator_count",
    "A DataLoader over N=20 samples with `batch_size=6`: how many batches does one epoch "
    "yield, with and without `drop_last=True`?",
    ("3 with drop_last, 4 without", "3 either way", "4 either way",
     "4 with drop_last, 3 without"),
    batch_count_with_and_without_drop_last)


def batches_per_epoch() -> Answer:
    loader = DataLoader(range(20), batch_size=6)
    sizes = [len(batch) for batch in loader]
    return Answer(str(len(loader)), f"len(loader) = {len(loader)}; batch sizes {sizes}",
                  "20 = 3 x 6 + 2: the last 2 samples form a short batch.")


BATCHES_PER_EPOCH = Check(
    "batches_per_epoch", "How many batches does one epoch yield?", ("3", "4", "6"),
    batches_per_epoch)


def batches_per_epoch_with_drop_last() -> Answer:
    loader = DataLoader(range(20), batch_size=6, drop_last=True)
    sizes = [len(batch) for batch in loader]
    return Answer(str(len(loader)), f"len(loader) = {len(loader)}; batch sizes {sizes}",
                  "20 = 3 x 6 + 2: the last 2 samples form a short batch, which drop_last "
                  "throws away.")


BATCHES_WITH_DROP_LAST = Check(
    "batches_with_drop_last", "And with drop_last=True?", ("3", "4"),
    batches_per_epoch_with_drop_last)


def first_batch_of_two_epochs() -> Answer:
    generator = torch.Generator().manual_seed(0)
    loader = DataLoader(range(20), batch_size=6, shuffle=True, generator=generator)
    first = next(iter(loader)).tolist()    # epoch 1: iter() asks the sampler for an order
    second = next(iter(loader)).tolist()   # epoch 2: a new order from the same generator
    return Answer("different" if first != second else "the same",
                  f"epoch 1: {first}; epoch 2: {second}",
                  "A RandomSampler draws a new permutation from the generator each time the "
                  "loader is iterated.")


RESHUFFLE = Check(
    "batches_reshuffle", "Are the first batches of epoch 1 and epoch 2 the same?",
    ("the same", "different"), first_batch_of_two_epochs)
