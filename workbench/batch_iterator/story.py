"""The pipeline in words: the sentences beside the pipeline picture and the index grid."""
from __future__ import annotations

from workbench.batch_iterator.runs import LoaderRun
from workbench.batch_iterator.samplers import draws_per_epoch
from workbench.batch_iterator.settings import BatchSettings


def short_list(values: tuple[int, ...], limit: int = 12) -> str:
    """`values` as a Python list, its first `limit` items only: a list that fits in a box."""
    shown = ", ".join(str(v) for v in values[:limit])
    return f"[{shown}{', …' if len(values) > limit else ''}]"


def empty_loader_words(draws: int, batch_size: int, drop_last: bool) -> str:
    """Why a loader yields no batch, from its numbers: "fewer than batch_size" and "drop_last
    drops it" only when they are what happened."""
    if draws == 0:
        return "The sampler draws no indices in an epoch, so there is nothing to batch."
    if drop_last and draws < batch_size:
        return (f"Every epoch has {draws} indices, fewer than `batch_size={batch_size}`, and "
                "`drop_last=True` drops the only, short, batch.")
    return (f"Every epoch has {draws} indices (`batch_size={batch_size}`, "
            f"`drop_last={drop_last}`), and the batch sampler made no batch of them.")


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
