"""The runnable script behind the batch iterator page: the same DataLoader, as plain PyTorch.

`loader_script(settings)` is a pure function of the settings. Run as is, the script prints
each batch's sample indices epoch by epoch, exactly as the page lists them (the tests run it and
compare). Sections are separated by `# %%` lines, so a notebook export can split on them.
"""
from __future__ import annotations

import textwrap
from collections.abc import Sequence

from workbench.batch_iterator.collate import PAD_VALUE
from workbench.batch_iterator.datasets import DATA_SEED
from workbench.batch_iterator.runs import WORKER_TIMEOUT_S
from workbench.batch_iterator.samplers import BUCKET_POOL
from workbench.batch_iterator.settings import BatchSettings

LINE_FORMAT = "epoch {epoch} batch {number}: indices {indices} worker {worker}"


def _imports(settings: BatchSettings) -> str:
    names = ["DataLoader", "Dataset", "default_collate", "get_worker_info"]
    names += {
        "sequential": ["SequentialSampler"], "random": ["RandomSampler"],
        "replacement": ["RandomSampler"], "subset": ["SubsetRandomSampler"],
        "weighted": ["WeightedRandomSampler"],
    }.get(settings.sampler, [])
    if settings.batch_sampler == "bucket":
        names.append("Sampler")
    lines = ["# %% Imports"]
    if settings.augment or (settings.worker_init and settings.num_workers > 0):
        lines.append("import numpy as np")
    lines.append("import torch")
    if settings.collate == "pad":
        lines.append("from torch.nn.utils.rnn import pad_sequence")
    lines.append(f"from torch.utils.data import {', '.join(sorted(set(names)))}")
    return "\n".join(lines)


def _dataset(settings: BatchSettings, moons_labels: Sequence[int] | None) -> str:
    lines = ["# %% The dataset: items that show their index and class"]
    if settings.dataset == "moons" and moons_labels is not None:
        lines += [
            "# The page used your moons training split. Only the labels decide which batches",
            "# the samplers make, so they are here; put your own features in place of zeros.",
            "labels = torch.tensor(" + textwrap.fill(
                str(list(moons_labels)), width=88, subsequent_indent="    ") + ")",
            "features = torch.zeros(len(labels), 2)",
        ]
    else:
        minority = max(1, round(settings.n * settings.minority_percent / 100))
        lines += [
            f"N = {settings.n}",
            f"data_generator = torch.Generator().manual_seed({DATA_SEED})",
            "labels = torch.zeros(N, dtype=torch.int64)",
            f"labels[torch.randperm(N, generator=data_generator)[:{minority}]] = 1"
            f"  # {settings.minority_percent}% in class 1",
            f"data_generator = torch.Generator().manual_seed({DATA_SEED + 1})",
        ]
        if settings.dataset == "sequences":
            lines += [
                "lengths = torch.randint(1, 7, (N,), generator=data_generator).tolist()",
                "features = [torch.randint(1, 100, (length,), generator=data_generator)",
                "            for length in lengths]  # token ids of different lengths",
            ]
        else:
            lines += [
                "centres = torch.tensor([[-1.0, 0.0], [1.0, 0.5]])",
                "points = torch.randn(N, 2, generator=data_generator) * 0.6 + centres[labels]",
                "features = torch.round(points, decimals=2)",
            ]
    lines += [
        "",
        "",
        "class IndexedDataset(Dataset):",
        '    """Item i is a dict: its index, its features x and its class y."""',
        "",
        "    def __init__(self, features, labels, noise_seed=None):",
        "        self.features, self.labels = features, labels",
    ]
    if settings.augment:
        lines += ["        # The dataset's own NumPy generator, as a random augmentation would use.",
                  "        self.rng = np.random.default_rng(noise_seed)"]
    lines += [
        "",
        "    def __len__(self):",
        "        return len(self.labels)",
        "",
        "    def __getitem__(self, index):",
        '        item = {"index": torch.tensor(index), "x": self.features[index], '
        '"y": self.labels[index]}',
    ]
    if settings.augment:
        lines.append('        item["noise"] = torch.tensor(round(float(self.rng.normal()), 4))')
    lines += ["        return item", "", ""]
    lines.append("dataset = IndexedDataset(features, labels"
                 + (f", noise_seed={settings.seed})" if settings.augment else ")"))
    return "\n".join(lines)


def _sampler(settings: BatchSettings) -> str:
    num_samples = settings.num_samples or None
    lines = ["# %% The sampler decides the order of the indices",
             f"generator = torch.Generator().manual_seed({settings.seed})"]
    sampler = {
        "default": "None  # DataLoader makes one from shuffle=: "
                   + ("RandomSampler(dataset, generator=generator)" if settings.shuffle
                      else "SequentialSampler(dataset)"),
        "sequential": "SequentialSampler(dataset)",
        "random": f"RandomSampler(dataset, num_samples={num_samples}, generator=generator)",
        "replacement": f"RandomSampler(dataset, replacement=True, num_samples={num_samples}, "
                       "generator=generator)",
        "subset": "SubsetRandomSampler([i for i in range(len(dataset)) if i % 4 != 3], "
                  "generator=generator)",
        "weighted": "WeightedRandomSampler(weights, num_samples="
                    f"{num_samples or 'len(dataset)'}, replacement=True, generator=generator)",
    }[settings.sampler]
    if settings.sampler == "weighted":
        lines += ["# 1 / (size of its class) per sample: each class is drawn equally often",
                  "weights = 1.0 / torch.bincount(labels)[labels].double()"]
    lines.append(f"sampler = {sampler}")
    if settings.batch_sampler == "bucket":
        lines += [
            "",
            "",
            "class BucketBatchSampler(Sampler):",
            '    """Batches of items of similar length, so padding stays small."""',
            "",
            "    def __init__(self, lengths, batch_size, drop_last, generator):",
            "        self.lengths, self.batch_size = lengths, batch_size",
            "        self.drop_last, self.generator = drop_last, generator",
            "",
            "    def __iter__(self):",
            "        order = torch.randperm(len(self.lengths), generator=self.generator).tolist()",
            f"        pool_size = self.batch_size * {BUCKET_POOL}",
            "        batches = []",
            "        for start in range(0, len(order), pool_size):",
            "            pool = sorted(order[start:start + pool_size], key=lambda i: self.lengths[i])",
            "            batches += [pool[i:i + self.batch_size] "
            "for i in range(0, len(pool), self.batch_size)]",
            "        if self.drop_last:",
            "            batches = [b for b in batches if len(b) == self.batch_size]",
            "        for position in torch.randperm(len(batches), generator=self.generator).tolist():",
            "            yield batches[position]",
            "",
            "    def __len__(self):",
            "        full, rest = divmod(len(self.lengths), self.batch_size)",
            "        return full if self.drop_last or rest == 0 else full + 1",
            "",
            "",
            "batch_sampler = BucketBatchSampler([len(x) for x in features], "
            f"batch_size={settings.batch_size},",
            f"                                   drop_last={settings.drop_last}, "
            "generator=generator)",
        ]
    return "\n".join(lines)


def _collate(settings: BatchSettings) -> str:
    lines = ["# %% collate_fn turns a list of items into one batch"]
    if settings.collate == "pad":
        lines += [
            "def collate(items):",
            '    """default_collate, but x of different lengths is padded to the longest."""',
            '    xs = [item["x"] for item in items]',
            '    batch = default_collate([{k: v for k, v in item.items() if k != "x"} '
            "for item in items])",
            f'    batch["x"] = pad_sequence(xs, batch_first=True, padding_value={PAD_VALUE})',
            '    batch["lengths"] = torch.tensor([len(x) for x in xs])',
        ]
    else:
        lines += ["def collate(items):", "    batch = default_collate(items)"]
    lines += [
        "    info = get_worker_info()  # None in the main process",
        '    batch["worker"] = torch.tensor(-1 if info is None else info.id)',
        "    return batch",
    ]
    if settings.num_workers > 0 and settings.worker_init:
        lines += [
            "",
            "",
            "def seed_worker(worker_id):",
            '    """Give this worker\'s copy of the dataset its own NumPy generator."""',
            "    info = get_worker_info()",
            '    if getattr(info.dataset, "rng", None) is not None:',
            "        info.dataset.rng = np.random.default_rng(info.seed % 2**32)",
        ]
    return "\n".join(lines)


def _loader(settings: BatchSettings) -> str:
    args = ["dataset"]
    if settings.batch_sampler == "bucket":
        args.append("batch_sampler=batch_sampler")
    else:
        args += [f"batch_size={settings.batch_size}", f"drop_last={settings.drop_last}"]
    args += [f"shuffle={settings.shuffle}", "sampler=sampler", "collate_fn=collate",
             "generator=generator"]
    if settings.pin_memory:
        args.append("pin_memory=True")
    if settings.num_workers > 0:
        args += [f"num_workers={settings.num_workers}",
                 f"prefetch_factor={settings.prefetch_factor}",
                 f"persistent_workers={settings.persistent_workers}",
                 '# a clean parent process for the workers, and no wait forever',
                 'multiprocessing_context="forkserver"', f"timeout={WORKER_TIMEOUT_S:g}"]
        if settings.worker_init:
            args.insert(-3, "worker_init_fn=seed_worker")
    body = ""
    for arg in args:
        body += f"    {arg}\n" if arg.startswith("#") else f"    {arg},\n"
    note = ""
    if settings.num_workers > 0:
        note = ("# Workers receive the dataset and collate by pickling, which finds them by the\n"
                "# module that defines them: run this as a file (python batch_iterator.py). In a\n"
                "# notebook, move them into a .py module or use num_workers=0.\n")
    return "# %% The DataLoader, with the options exactly as set on the page\n" + note + \
        f"loader = DataLoader(\n{body})"


def _main(settings: BatchSettings) -> str:
    line = LINE_FORMAT.format(epoch="{epoch}", number="{number}",
                              indices="{batch['index'].tolist()}",
                              worker="{int(batch['worker'])}")
    return "\n".join([
        "# %% Each batch's sample indices, epoch by epoch",
        "def main():",
        f"    for epoch in range({settings.epochs}):",
        "        for number, batch in enumerate(loader):",
        f'            print(f"{line}")',
        "",
        "",
        "# Worker processes import this file again: only the main process may start them.",
        'if __name__ == "__main__":',
        "    main()",
    ])


def loader_script(settings: BatchSettings, moons_labels: Sequence[int] | None = None) -> str:
    """The whole runnable script for `settings` (`moons_labels` when the dataset is moons)."""
    header = ('"""The DataLoader from the PyTorch Workbench\'s batch iterator page.\n\n'
              "Prints each batch's sample indices, epoch by epoch: the same batches as the page.\n"
              '"""')
    parts = [header, _imports(settings), _dataset(settings, moons_labels), _sampler(settings),
             _collate(settings), _loader(settings), _main(settings)]
    return "\n\n".join(parts) + "\n"


def record_line(epoch: int, number: int, indices: Sequence[int], worker: int) -> str:
    """One batch as the script prints it, for the page to show the same text."""
    return LINE_FORMAT.format(epoch=epoch, number=number, indices=list(indices), worker=worker)
