"""collate_fn: a list of items -> one batch, tagged with the process that built it."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import default_collate, get_worker_info

PAD_VALUE = 0               # token ids start at 1, so 0 is free to mean "padding"


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

