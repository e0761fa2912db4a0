"""One vs two intra-op threads for a small MLP training step, as a shared server runs it.

Prints microseconds per step for 1 and 2 threads, with the other cores idle and with one core
kept busy by a second process (another learner's work), and the ratio 2-thread / 1-thread.
Run: .venv/bin/python -m bench.threads [--save]   (--save: docs/figures/threads.json, harness/figures.py)
"""
from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")  # allow 2 so set_num_threads(2) is honoured

import torch  # noqa: E402  (after OMP_NUM_THREADS, which torch reads on import)
from torch import nn  # noqa: E402

from harness.figures import Run, parser  # noqa: E402
from harness.verdicts import threads_verdict  # noqa: E402


def _spin(stop: mp.Event) -> None:
    x = 0
    while not stop.is_set():
        x += 1


def step_time_us(threads: int, steps: int = 400, repeats: int = 5) -> float:
    torch.set_num_threads(threads)
    generator = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    loss_fn = nn.BCEWithLogitsLoss()
    x = torch.randn(64, 2, generator=generator)
    y = (x[:, 0] > 0).float().unsqueeze(1)
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        timings.append((time.perf_counter() - start) / steps * 1e6)
    return statistics.median(timings)


def main() -> None:
    run = Run("threads", "One vs two intra-op threads for a small MLP's training step")
    parser(__doc__).parse_args()
    rows, ratios = [], {}
    print(f"torch {torch.__version__}, {os.cpu_count()} cores; MLP 2-64-32-1, batch 64, AdamW step")
    for label, busy in (("other cores idle", False), ("one core busy", True)):
        stop = mp.Event()
        spinner = mp.Process(target=_spin, args=(stop,)) if busy else None
        if spinner:
            spinner.start()
        try:
            one, two = step_time_us(1), step_time_us(2)
        finally:
            if spinner:
                stop.set()
                spinner.join()
        print(f"{label:17s}: 1 thread {one:7.1f} us/step | 2 threads {two:7.1f} us/step | "
              f"2-thread/1-thread = {two / one:.2f}x")
        rows.append((f"MLP 2-64-32-1 AdamW step (batch 64), {label}, median of 5 x 400 steps",
                     f"1 thread {one:.0f} µs, 2 threads {two:.0f} µs (2 threads take {two / one:.2f}x "
                     "as long)"))
        ratios[busy] = two / one
    rows.append(("what it means for a shared server", threads_verdict(ratios[False], ratios[True])))
    print(rows[-1][1])
    run.save(rows)


if __name__ == "__main__":
    main()
