"""What the autograd page costs over bare PyTorch, measured in one run.

    .venv/bin/python -m bench.autograd_graph_bench [--save]

For each program: the bare PyTorch program (forward + backward), the same program through the
page's interpreter with every backward() recorded, and that plus the graph walk and DOT text the
page draws. Prints medians and the ratios against bare PyTorch.
"""
from __future__ import annotations

import statistics
import time

import torch

import workbench  # noqa: F401, E402  (one intra-op thread, as in the app)
from app_pages.autograd_graph.drawing import to_dot
from harness.figures import Run, parser
from workbench.autograd_graph.presets import PRESETS_BY_KEY
from workbench.autograd_graph.session import run_session
from workbench.autograd_graph.settings import preset_settings


def lesson_bare() -> None:
    x = torch.tensor(2.0)
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    loss = (w * x + b - 10) ** 2
    loss.backward()


def linear_model_bare() -> None:
    g = torch.Generator().manual_seed(0)
    X = torch.randn(16, 2, generator=g)
    y = X @ torch.tensor([3.0, -2.0]) + 5
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for _ in range(15):
        loss = ((X @ w + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.2 * w.grad
            b -= 0.2 * b.grad
        w.grad.zero_()
        b.grad.zero_()
    ((X @ w + b - y) ** 2).mean()


def page_run(key: str, draw: bool) -> None:
    result = run_session(preset_settings(PRESETS_BY_KEY[key]))
    if draw:
        for trace in result.traces[-1:]:
            for upto in range(len(trace.steps) + 1):
                to_dot(trace.graph, trace.overlay(upto))


def median_ms(fn, repeats: int = 30) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    run = Run("autograd_graph_bench", "The autograd page against bare PyTorch")
    parser(__doc__).parse_args()
    rows = []
    for key, bare in (("linear", lesson_bare), ("linear_model", linear_model_bare)):
        base = median_ms(bare)
        interpreted = median_ms(lambda key=key: page_run(key, draw=False))
        drawn = median_ms(lambda key=key: page_run(key, draw=True))
        print(f"{key:13s} bare PyTorch {base:7.3f} ms | page run {interpreted:7.2f} ms "
              f"({interpreted / base:5.0f}x) | + graph and DOT for every step {drawn:7.2f} ms "
              f"({drawn / base:5.0f}x)")
        rows.append((f"preset `{key}`: bare PyTorch (forward + backward) against the page's interpreter, "
                     "then with the graph and DOT text for every step, median of 30",
                     f"bare {base:.3f} ms, page run {interpreted:.2f} ms ({interpreted / base:.0f}x), "
                     f"with the drawing {drawn:.2f} ms ({drawn / base:.0f}x)"))
    run.save(rows)


if __name__ == "__main__":
    main()
