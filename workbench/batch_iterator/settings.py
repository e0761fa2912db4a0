"""The batch iterator's settings: the dataclass and its one table.

Every field's lesson-link name, range or choices, widget label and help are written here and
nowhere else: the page's widgets, the lesson links, the share panel and docs/lesson-links.md's table are
all drawn from `TABLE`. The link names are public (teachers type them into slides): keep them.
"""
from __future__ import annotations

from dataclasses import dataclass

from workbench.common.links import (
    MAX_SEED,
    BoolParam,
    ChoiceParam,
    IntParam,
    LinkSchema,
    Widget,
)

# The names a lesson link uses; each maps to a sentence on the page.
DATASETS = ("points", "sequences", "moons")
SAMPLERS = ("default", "sequential", "random", "replacement", "subset", "weighted")
BATCH_SAMPLERS = ("none", "bucket")
COLLATES = ("default", "pad")

MIN_N, MAX_N = 4, 500
MAX_BATCH = 500
MAX_EPOCHS = 5
MAX_WORKERS = 2
MAX_NUM_SAMPLES = 1000


@dataclass(frozen=True)
class BatchSettings:
    """Everything that decides which batches a DataLoader yields, and how they are built."""

    n: int = 20
    batch_size: int = 6
    shuffle: bool = True
    drop_last: bool = False
    sampler: str = "default"
    seed: int = 0
    num_workers: int = 0
    epochs: int = 2
    dataset: str = "points"
    minority_percent: int = 25
    num_samples: int = 0            # 0: as many draws as the dataset (or subset) has items
    batch_sampler: str = "none"
    collate: str = "default"
    worker_init: bool = False
    augment: bool = False
    pin_memory: bool = False
    prefetch_factor: int = 2
    persistent_workers: bool = False


SLIDER = Widget(kind="slider")

TABLE = LinkSchema(BatchSettings, [
    IntParam("n", MIN_N, MAX_N, label="Samples N", widget=SLIDER,
             help="len(dataset)", meaning="number of samples in the dataset"),
    IntParam("batch", 1, MAX_BATCH, field="batch_size", label="batch_size",
             help="How many samples each batch holds; the last one may be smaller."),
    BoolParam("shuffle", label="shuffle",
              help="Shorthand for a RandomSampler: a new order every epoch. Mutually exclusive "
                   "with your own sampler.",
              meaning="shuffle=True: a new random order every epoch"),
    BoolParam("drop_last", label="drop_last",
              help="Throw away the last batch when it is smaller than batch_size."),
    ChoiceParam("sampler", SAMPLERS, label="sampler=",
                help="Which sampler orders the indices. None lets DataLoader pick one from "
                     "shuffle.",
                meaning="which sampler orders the indices",
                widget=Widget(choice_labels={
                    "default": "None (DataLoader picks one from shuffle)",
                    "sequential": "SequentialSampler",
                    "random": "RandomSampler",
                    "replacement": "RandomSampler(replacement=True)",
                    "subset": "SubsetRandomSampler (3 of every 4)",
                    "weighted": "WeightedRandomSampler (balance classes)",
                })),
    IntParam("seed", 0, MAX_SEED, label="Seed of generator=",
             help="torch.Generator().manual_seed(seed), passed as generator=: the same seed "
                  "gives the same batches, every epoch's order still differs.",
             meaning="seed of the torch.Generator passed as generator="),
    IntParam("workers", 0, MAX_WORKERS, field="num_workers", label="num_workers", widget=SLIDER,
             help="0: the main process loads every batch. 1-2: real worker processes started "
                  "with the forkserver method, each building whole batches.",
             meaning="worker processes (0: the main process loads every batch)"),
    IntParam("epochs", 1, MAX_EPOCHS, label="Epochs", widget=SLIDER,
             help="How many times the loader is iterated: one `for batch in loader` each.",
             meaning="how many epochs to run"),
    ChoiceParam("dataset", DATASETS, label="Dataset",
                help="Each item is a dict {index, x, y}: it says which sample it is and its "
                     "class.",
                meaning="points, sequences (variable length) or moons (the Moons trainer's "
                        "training split)",
                widget=Widget(choice_labels={"points": "Points: 2 features, 2 classes",
                                             "sequences": "Sequences of different lengths",
                                             "moons": "Your moons training split"})),
    IntParam("minority", 5, 50, field="minority_percent", label="Class 1 share (%)",
             widget=SLIDER,
             help="Class imbalance: the WeightedRandomSampler lesson needs a rare class.",
             meaning="percent of samples in class 1"),
    IntParam("num_samples", 0, MAX_NUM_SAMPLES, label="num_samples (0: len(dataset))",
             help="How many indices the sampler draws per epoch (random, replacement and "
                  "weighted samplers).",
             meaning="draws per epoch (0: the dataset's size)"),
    ChoiceParam("batch_sampler", BATCH_SAMPLERS, label="batch_sampler=",
                help="A custom batch sampler yields whole index lists; batch_size and drop_last "
                     "go to it.",
                meaning="none, or a custom bucket-by-length one",
                widget=Widget(choice_labels={"none": "None (BatchSampler from batch_size)",
                                             "bucket": "BucketBatchSampler (custom, by length)"})),
    ChoiceParam("collate", COLLATES, label="collate_fn=",
                help="How a list of items becomes one batch.",
                meaning="default_collate or a padding collate_fn",
                widget=Widget(choice_labels={"default": "default_collate",
                                             "pad": "pad_collate (padding)"})),
    BoolParam("worker_init", label="worker_init_fn",
              help="worker_init_fn=seed_worker runs once in each worker as it starts and "
                   "reseeds the dataset's NumPy generator.",
              meaning="pass worker_init_fn=seed_worker"),
    BoolParam("augment", label="Random augmentation",
              help="Each item carries `noise` from the dataset's own np.random.Generator, as a "
                   "random crop or flip would. See the worker pitfall below.",
              meaning="items carry noise from the dataset's own NumPy generator"),
    BoolParam("pin_memory", label="pin_memory",
              help="Copies each batch into page-locked memory so a later "
                   ".to('cuda', non_blocking=True) can overlap with compute. Only useful with "
                   "a GPU.",
              meaning="pin_memory=True: batches in page-locked memory"),
    IntParam("prefetch", 1, 8, field="prefetch_factor", label="prefetch_factor", widget=SLIDER,
             help="Batches each worker prepares ahead of time (only with workers).",
             meaning="batches each worker prepares ahead (workers only)"),
    BoolParam("persistent", field="persistent_workers", label="persistent_workers",
              help="Keep the worker processes alive between epochs instead of starting new "
                   "ones."),
])
