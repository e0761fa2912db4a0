"""A run's replay: the model's weights at the end of every epoch (and before the first), kept so
that the page can show the run as it was at any finished epoch.

Weights, not pictures: from them PyTorch recomputes anything the page draws (the boundary, every
hidden unit's map, the test accuracy) exactly as it was, and they are small (the lesson preset's
2,305 parameters are 9 KB an epoch). A run keeps at most `MAX_BYTES` of them: past that, every
other recorded epoch goes (like `layer_history.py`'s stride), so a long run of a wide model keeps
its epochs evenly spaced, the first one always. This module never imports streamlit.
"""
from __future__ import annotations

import torch
from torch import nn

MAX_BYTES = 2 * 2**20       # per run: 227 epochs of the preset, then every other one


class WeightRecord:
    """The model's `state_dict` (CPU copies) at the end of recorded epochs."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.stride = 1
        self._kept: dict[int, dict[str, torch.Tensor]] = {}
        self._steps: dict[int, int] = {}

    def record(self, epoch: int, model: nn.Module, steps: int) -> bool:
        """Keep the model's weights as they are at the end of `epoch` (0: before training),
        after `steps` optimizer steps, if the stride keeps that epoch; True when it did."""
        if epoch % self.stride:
            return False
        with torch.no_grad():
            self._kept[epoch] = {name: value.detach().to("cpu", copy=True)
                                 for name, value in model.state_dict().items()}
        self._steps[epoch] = steps
        while self.bytes > self.max_bytes and len(self._kept) > 2:
            self.stride *= 2
            self._kept = {e: w for e, w in self._kept.items() if e % self.stride == 0}
        return epoch in self._kept

    @property
    def epochs(self) -> list[int]:
        return sorted(self._kept)

    @property
    def bytes(self) -> int:
        return sum(t.numel() * t.element_size() for weights in self._kept.values()
                   for t in weights.values())

    def weights(self, epoch: int) -> dict[str, torch.Tensor]:
        """The recorded weights of `epoch` (KeyError for an epoch the record does not hold)."""
        return self._kept[epoch]

    def steps(self, epoch: int) -> int:
        """The optimizer steps taken when `epoch`'s weights were recorded."""
        return self._steps[epoch]

    def clear(self) -> None:
        self._kept.clear()
        self._steps.clear()
        self.stride = 1


def _size(count: int) -> str:
    """Bytes as the page writes them: `2 MiB`, `9.0 KiB`."""
    if count >= 2**20:
        return f"{count / 2**20:.3g} MiB"
    return f"{count / 2**10:.1f} KiB"


def _listed(epochs: list[int]) -> str:
    """`0, 16 and 32`; a long list shortened to its first three and last: `0, 8, 16, ..., 496`."""
    if len(epochs) > 5:
        return ", ".join(map(str, epochs[:3])) + f", ..., {epochs[-1]}"
    return ", ".join(map(str, epochs[:-1])) + f" and {epochs[-1]}" if len(epochs) > 1 else str(epochs[0])


def kept_words(record: WeightRecord, finished: int) -> str:
    """What the replay can show, from the record itself: every epoch up to `finished` while the
    record is within its bound, or which epochs it kept once it had to thin them out."""
    epochs = [e for e in record.epochs if e <= finished]
    if not epochs:
        return "No epoch's weights are kept yet."
    bound = _size(record.max_bytes)
    if record.stride == 1 and epochs == list(range(epochs[0], finished + 1)):
        return (f"Every finished epoch's weights are kept (epochs {epochs[0]} to {finished}: "
                f"{_size(record.bytes)} of the run's {bound} bound)")
    each = _size(record.bytes // max(len(record.epochs), 1))
    return (f"A run keeps at most {bound} of weights and this network's take {each} an epoch, "
            f"so only every {record.stride}th epoch is kept: epochs {_listed(epochs)}")

