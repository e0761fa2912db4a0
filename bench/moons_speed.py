"""How fast the moons trainer trains, against a bare PyTorch loop measured in the same run.

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.moons_speed [--save]

1. The lesson's assignment preset trained by the page's own code (`TrainingSession.run_to_end`,
   which also evaluates train and val every epoch for the live curves) and by a bare
   single-thread loop with the same model, the same initial weights and the same batches
   (indices from the same seeded generator, sliced out of the tensors directly). Ratio printed.
2. One epoch of batches through three DataLoaders with the same seeded batches: the textbook
   per-sample `TensorDataset` + default collate, a `BatchSampler` as the sampler with
   `batch_size=None`, and the page's `ShuffledBatchSampler` (the same permutation sliced as
   tensors), against the cost of the optimizer steps themselves: the evidence for the path.
3. The server's cost of one live frame: the snapshot of the weights' picture and its message.

Times are CPU seconds of this single-threaded process (`time.process_time`), the fastest of
several interleaved repeats.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import dataclasses  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

torch.set_num_threads(1)

from harness.figures import Run, parser  # noqa: E402
from workbench.batch_iterator.cost import per_sample_loader, whole_batch_loader  # noqa: E402
from workbench.moons_trainer.model import build_model, build_optimizer  # noqa: E402
from workbench.moons_trainer.settings import PRESET, MoonsSettings  # noqa: E402
from workbench.moons_trainer.training import (  # noqa: E402
    TrainingSession,
    batched_loader,
)

REPEATS = 9
# The preset with L1 on: the penalty's own backward, and the data loss's gradient the
# Weights & gradients tab keeps apart from it, cost what this run adds to the preset's.
PRESET_L1 = dataclasses.replace(PRESET, reg="L1", reg_rate=0.001)
# CPU time of this process, not wall time: the machine is shared, and time other processes
# take from this one's core would otherwise land on whichever loop happened to be running.
CLOCK = time.process_time


def page_training(settings: MoonsSettings = PRESET) -> tuple[float, float]:
    session = TrainingSession(settings)
    started = CLOCK()
    session.run_to_end()
    return CLOCK() - started, session.test_report().accuracy


def bare_training() -> tuple[float, float]:
    """The same model, weights, batches and optimizer, with nothing but the loop."""
    session = TrainingSession(PRESET)          # data and split only; the loop below is bare
    x, y = session.x_train, session.y_train
    model = build_model(PRESET.hidden, PRESET.act, PRESET.dropout,
                        torch.device("cpu"), torch.Generator().manual_seed(PRESET.seed))
    optimizer = build_optimizer(PRESET.opt, model.parameters(), PRESET.lr, PRESET.wd)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    generator = torch.Generator().manual_seed(PRESET.seed + 1)
    n = len(x)
    started = CLOCK()
    for _ in range(PRESET.epochs):
        # The DataLoader draws a base seed, then the RandomSampler draws one permutation.
        torch.empty((), dtype=torch.int64).random_(generator=generator)
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, PRESET.batch):
            idx = order[start:start + PRESET.batch]
            optimizer.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
        # RandomSampler draws one more (empty-tail) permutation when an epoch's iterator ends.
        torch.randperm(n, generator=generator)
    elapsed = CLOCK() - started
    model.eval()
    with torch.no_grad():
        accuracy = ((model(session.x_test) > 0).float() == session.y_test).float().mean().item()
    return elapsed, accuracy


def loader_costs() -> dict[str, float]:
    """Seconds per epoch: iterate each loader; and the optimizer steps alone on fixed batches."""
    session = TrainingSession(PRESET)
    dataset = session.train_set
    out: dict[str, list[float]] = {"per-sample DataLoader + collate": [], "BatchSampler as sampler": [],
                                   "ShuffledBatchSampler (page)": [], "optimizer steps only": []}
    batches = list(batched_loader(dataset, PRESET.batch, torch.Generator().manual_seed(1)))
    for _ in range(REPEATS):
        for name, make in (("per-sample DataLoader + collate", per_sample_loader),
                           ("BatchSampler as sampler", whole_batch_loader),
                           ("ShuffledBatchSampler (page)", batched_loader)):
            loader = make(dataset, PRESET.batch, torch.Generator().manual_seed(1))
            started = CLOCK()
            for _batch in loader:
                pass
            out[name].append(CLOCK() - started)
        started = CLOCK()
        for xb, yb in batches:
            session.train_step(xb, yb)
        out["optimizer steps only"].append(CLOCK() - started)
    return {k: min(v) for k, v in out.items()}


def frame_cost() -> tuple[float, float, int]:
    """One live frame's server work: the snapshot a training slice takes (one forward pass over
    the grid and the points) and the message a frame packs from it."""
    from app_pages.moons_trainer.live_canvas import RESOLUTION, frame
    from components.binary_payload import pack

    session = TrainingSession(PRESET)
    session.run_for(200, 10.0)
    snapshot_times, pack_times, sizes = [], [], []
    for _ in range(REPEATS * 4):
        started = CLOCK()
        snapshot = session.snapshot(RESOLUTION)
        snapshot_times.append(CLOCK() - started)
        started = CLOCK()
        header, blobs = frame(session, snapshot, "Epoch 1 / 50", 0, with_test=False, playing=True)
        message = pack({"frame": header, "scene_id": "x"}, blobs)
        pack_times.append(CLOCK() - started)
        sizes.append(len(message))
    return statistics.median(snapshot_times), statistics.median(pack_times), sizes[-1]


def main() -> None:
    run = Run("moons_speed", "The moons trainer's training against a bare PyTorch loop")
    parser(__doc__).parse_args()
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, preset {PRESET.architecture}, "
          f"n={PRESET.n}, batch {PRESET.batch}, {PRESET.epochs} epochs")
    page_training(), bare_training()              # warm up
    page, bare, page_l1 = [], [], []
    for _ in range(REPEATS):                      # interleaved, so drift hits both alike
        page.append(page_training())
        bare.append(bare_training())
        page_l1.append(page_training(PRESET_L1))
    # The fastest of interleaved repeats: on a shared machine, other processes only ever add time.
    page_s = min(t for t, _ in page)
    bare_s = min(t for t, _ in bare)
    print(f"fastest of {REPEATS} interleaved runs each")
    print(f"page training code : {page_s:.3f} s  (test accuracy {page[0][1]:.4f})")
    print(f"bare PyTorch loop  : {bare_s:.3f} s  (test accuracy {bare[0][1]:.4f})")
    print(f"ratio page / bare  : {page_s / bare_s:.3f}x")
    l1_s = min(t for t, _ in page_l1)
    print(f"page code with L1  : {l1_s:.3f} s  ({l1_s / page_s:.3f}x the preset's, "
          f"reg_rate {PRESET_L1.reg_rate:g})")
    preset = (f"the lesson's assignment preset ({PRESET.architecture}, n={PRESET.n}, batch {PRESET.batch}, "
              f"{PRESET.epochs} epochs), 1 thread, CPU time, fastest of {REPEATS} interleaved runs")
    rows = [(f"{preset}: the page's training code (`TrainingSession.run_to_end`) against a bare loop "
             "with the same model, weights and batches",
             f"page {page_s:.3f} s (test accuracy {page[0][1]:.4f}), bare {bare_s:.3f} s "
             f"(test accuracy {bare[0][1]:.4f}): {page_s / bare_s:.3f}x")]
    rows.append((f"the same preset with L1 (reg_rate {PRESET_L1.reg_rate:g}): the page's training code",
                 f"{l1_s:.3f} s, {l1_s / page_s:.3f}x the preset without it"))
    costs = loader_costs()
    steps = costs["optimizer steps only"]
    for name, seconds in costs.items():
        print(f"one epoch, {name:32s}: {1000 * seconds:7.2f} ms  ({seconds / steps:.2f}x the steps)")
    rows.append(("one epoch of the preset's batches, by loader, against the optimizer steps alone",
                 "; ".join(f"{name} {1000 * seconds:.2f} ms ({seconds / steps:.2f}x the steps)"
                           for name, seconds in costs.items())))
    snapshot_s, pack_s, size = frame_cost()
    print(f"live frame: snapshot (grid + points forward) {1000 * snapshot_s:.2f} ms; message packed "
          f"{1000 * pack_s:.2f} ms; {size / 1024:.1f} KB (bench/live_frames.py measures the wire)")
    rows.append(("one live frame's server work, median",
                 f"snapshot (grid + points forward) {1000 * snapshot_s:.2f} ms, message packed "
                 f"{1000 * pack_s:.2f} ms, {size / 1024:.1f} KB"))
    run.save(rows)


if __name__ == "__main__":
    main()
