"""A batch as text: what `__getitem__` returned for its indices, and what `collate_fn` made."""
from __future__ import annotations

from workbench.batch_iterator.datasets import IndexedDataset
from workbench.batch_iterator.runs import BatchRecord


def tensor_listing(record: BatchRecord) -> str:
    """Each tensor of the batch as PyTorch prints it, with its shape and dtype."""
    parts = []
    for key, value in record.tensors.items():
        dtype = str(value.dtype).replace("torch.", "")
        parts.append(f'batch["{key}"]  # {list(value.shape)} {dtype}\n{value!r}')
    parts.append(f'batch["worker"]  # from collate_fn\ntensor({record.worker})')
    return "\n\n".join(parts)


def items_listing(dataset: IndexedDataset, record: BatchRecord, limit: int = 4) -> str:
    """What `__getitem__` returns for the batch's first indices: the list collate_fn receives."""
    lines = []
    for index in record.indices[:limit]:
        item = dataset[index]
        item.pop("noise", None)  # a fresh random draw each call: the batch shows the real one
        shown = ", ".join(f"{k!r}: {v!r}" for k, v in item.items())
        lines.append(f"dataset[{index}]\n# -> {{{shown}}}")
    if record.size > limit:
        lines.append(f"# ... {record.size - limit} more items")
    return "\n".join(lines)


