"""DataLoader options that exclude each other: PyTorch's own ValueError for each."""
from __future__ import annotations

from torch.utils.data import BatchSampler, DataLoader, SequentialSampler

from workbench.batch_iterator.datasets import make_dataset
from workbench.batch_iterator.runs import explain_loader_error
from workbench.batch_iterator.settings import BatchSettings
from workbench.common.errors import ExplainedError

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

