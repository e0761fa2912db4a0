"""How much the Tensor inspector costs on top of the bare PyTorch ops it describes.

For each case: the bare loop builds x and applies the chain with plain tensor calls (what a
learner's script does); the inspector parses the chain, runs it on `meta`, then on real values
and origin ids, collects the facts and lays out the pictures. Both are timed in this run and the
ratio printed. Run: .venv/bin/python -m bench.tensor_inspector [--save]
"""
from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch

from harness.figures import Run, parser
from workbench.tensor_inspector.layout import layout_picture
from workbench.tensor_inspector.report import inspect
from workbench.tensor_inspector.settings import TensorSettings

torch.set_num_threads(1)

CASES = [
    (TensorSettings(shape=(4, 6), ops="t().reshape(-1)"),
     lambda: torch.arange(24, dtype=torch.float32).reshape(4, 6).t().reshape(-1)),
    (TensorSettings(shape=(2, 3, 4, 5), ops="permute(0, 2, 3, 1).contiguous()"),
     lambda: torch.arange(120, dtype=torch.float32).reshape(2, 3, 4, 5).permute(0, 2, 3, 1)
     .contiguous()),
    (TensorSettings(shape=(16, 3, 64, 64), ops="flatten(start_dim=1)"),
     lambda: torch.arange(196608, dtype=torch.float32).reshape(16, 3, 64, 64).flatten(start_dim=1)),
    (TensorSettings(shape=(10000, 10000, 10000), ops="permute(2, 0, 1)"),
     lambda: torch.empty(10000, 10000, 10000, device="meta").permute(2, 0, 1)),
]


def median_seconds(fn, repeat: int = 30) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def inspector(settings: TensorSettings) -> None:
    report = inspect(settings)
    layout_picture(report.result, colour_max=report.views[0].facts.numel - 1)


def main() -> None:
    run = Run("tensor_inspector", "The Tensor inspector against the bare PyTorch ops it describes")
    parser(__doc__).parse_args()
    rows = []
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    print(f"{'case':48} {'bare ms':>9} {'inspector ms':>13} {'ratio':>7}")
    for settings, bare in CASES:
        bare_s = median_seconds(bare)
        full_s = median_seconds(lambda s=settings: inspector(s))
        label = f"{settings.shape} .{settings.ops}"
        print(f"{label:48} {bare_s * 1e3:9.3f} {full_s * 1e3:13.2f} {full_s / bare_s:7.0f}x")
        rows.append((f"`{label}`: bare ops against the inspector (parse, meta run, facts, pictures), "
                     "median of 30, 1 thread",
                     f"bare {bare_s * 1e3:.3f} ms, inspector {full_s * 1e3:.2f} ms ({full_s / bare_s:.0f}x)"))
    rows += page_runs()
    run.save(rows)


def page_runs() -> list[tuple[str, str]]:
    """Whole page script runs (router, widgets, figures) in AppTest, for scale."""
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from streamlit.testing.v1 import AppTest

    rows = []
    router = str(Path(__file__).resolve().parent.parent / "router.py")   # what streamlit_app.py serves
    for query in ({"shape": "4,6", "ops": "t()"}, {"shape": "16,3,64,64", "ops": "flatten(1)"}):
        at = AppTest.from_file(router, default_timeout=60)
        at.query_params.update(query)
        at.run()
        at.switch_page("app_pages/tensor_inspector/page.py")
        at.run()
        times = []
        for _ in range(5):
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
        print(f"page rerun {query}: median {statistics.median(times) * 1e3:.0f} ms "
              f"(AppTest, includes Streamlit)")
        rows.append((f"the whole page re-run in AppTest (router, widgets, figures), "
                     f"`{'&'.join(f'{k}={v}' for k, v in query.items())}`, median of 5",
                     f"{statistics.median(times) * 1e3:.0f} ms"))
    return rows


if __name__ == "__main__":
    main()
