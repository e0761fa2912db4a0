"""What batching costs, measured here: per-sample DataLoader vs whole-batch vs a bare loop.

Run: .venv/bin/python -m bench.batching_cost [--save]
Prints microseconds per sample for one epoch (best of 5) and ratios against the bare PyTorch
loop `X[perm[i:i+b]]` measured in the same run, plus one SGD step of a tiny MLP for scale and
the page's own DataLoader run (20 samples, 2 epochs) with 0, 1 and 2 worker processes.
"""
from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch

from harness.figures import Run, parser
from workbench.batch_iterator.accumulation import small_mlp
from workbench.batch_iterator.cost import measure_batching_cost
from workbench.batch_iterator.runs import run_loader
from workbench.batch_iterator.settings import BatchSettings


def train_step_us_per_sample(batch_size: int, steps: int = 200) -> float:
    model = small_mlp(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch_size, 2, generator=generator)
    y = torch.randint(0, 2, (batch_size,), generator=generator)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(steps):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        best = min(best, time.perf_counter() - started)
    return best / (steps * batch_size) * 1e6


def main() -> None:
    run = Run("batching_cost", "What batching costs: per-sample DataLoader, whole batches, a bare loop")
    parser(__doc__).parse_args()
    rows = []
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {os.cpu_count()} cores, 1 intra-op thread")
    print(f"{'batch':>5} {'per-sample':>11} {'whole-batch':>12} {'bare':>7} "
          f"{'per/whole':>9} {'per/bare':>8} {'whole/bare':>10} {'MLP step':>9} {'same':>5}")
    for batch_size in (8, 32, 128):
        cost = measure_batching_cost(samples=16384, batch_size=batch_size, repeats=5)
        step = train_step_us_per_sample(batch_size)
        print(f"{batch_size:>5} {cost.per_sample_us:>9.2f}us {cost.whole_batch_us:>10.2f}us "
              f"{cost.bare_us:>5.2f}us {cost.ratio:>8.1f}x {cost.per_sample_us / cost.bare_us:>7.1f}x "
              f"{cost.whole_batch_us / cost.bare_us:>9.1f}x {step:>7.2f}us {cost.same_batches!s:>5}")
        rows.append((f"batch {batch_size}, one epoch of 16,384 samples, µs per sample (best of 5)",
                     f"per-sample DataLoader + collate {cost.per_sample_us:.2f} "
                     f"({cost.per_sample_us / cost.bare_us:.1f}x the bare loop), whole-batch "
                     f"{cost.whole_batch_us:.2f} ({cost.whole_batch_us / cost.bare_us:.1f}x), bare "
                     f"`X[perm[i:i+b]]` {cost.bare_us:.2f}; one SGD step of a tiny MLP {step:.2f}; "
                     f"same batches: {cost.same_batches}"))
    print("\nThe page's run (n=20, batch 6, 2 epochs): wall time per run, best of 3")
    loader_ms = []
    for workers in (0, 1, 2):
        run_loader(BatchSettings(num_workers=workers))  # warm the forkserver
        best = min(run_loader(BatchSettings(num_workers=workers)).seconds for _ in range(3))
        print(f"  num_workers={workers}: {best * 1e3:7.1f} ms")
        loader_ms.append(f"{workers} worker{'' if workers == 1 else 's'} {best * 1e3:.1f} ms")
    rows.append(("the batch iterator page's run (n=20, batch 6, 2 epochs), wall time, best of 3",
                 ", ".join(loader_ms)))
    run.save(rows)


if __name__ == "__main__":
    main()
