"""Evaluating a model: `model.eval()`, `torch.no_grad()`, then the model's mode as it was.

Written once here so every place that evaluates a learner's model restores it the same way.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn


@contextmanager
def evaluating(model: nn.Module) -> Iterator[nn.Module]:
    """Run the block with `model` in eval mode and without recording a graph; afterwards the
    model is back in the mode it had (training or not), even if the block raised."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train(was_training)
