"""No request can take the server down: every input-driven allocation is bounded first.

Each case below once grew the server by gigabytes (or ran on after its tab closed). The cases
run in a child process whose address space is capped at what it had after importing torch plus
REQUEST_BUDGET: an allocation past the budget fails there, not on this machine.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.capped import address_space_cap

ROOT = Path(__file__).resolve().parents[2]
REQUEST_BUDGET = 256 * 2**20          # the per-request budget docs/safety.md documents

CAPPED = """
import json, sys
{imports}
{cap}results = {{}}
{body}
print(json.dumps(results))
"""


def run_capped(imports: str, body: str) -> dict:
    """Run `body` after `imports` in a child capped at REQUEST_BUDGET more address space."""
    source = CAPPED.format(imports=textwrap.dedent(imports), cap=address_space_cap(REQUEST_BUDGET),
                           body=textwrap.dedent(body))
    done = subprocess.run([sys.executable, "-c", source], cwd=ROOT, capture_output=True, text=True,
                          timeout=240, env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


TENSOR_CASES = {
    "a documented shape of 10^9": ((10**9, 1, 1), ""),
    "expand to 10^9": ((4, 6), "unsqueeze(0).expand(1000000000,-1,-1,-1)"),
    "unflatten an empty slice to 10^9": ((4, 6), "[0:0].unflatten(0,(1000000000,-1))"),
    "rank 5 of 10^9: more bytes than int64 counts": ((10**9,) * 5, ""),
    "expand past int64": ((4, 6), "expand(1000000000,1000000000,1000000000,4,6)"),
}


@pytest.mark.spawns
def test_tensor_inspector_draws_any_shape_within_the_budget():
    results = run_capped(
        """
        from workbench.tensor_inspector.report import inspect
        from workbench.tensor_inspector.settings import TensorSettings
        from workbench.tensor_inspector.layout import layout_picture
        from workbench.tensor_inspector.broadcast import combine_shapes
        """,
        f"""
        for name, (shape, ops) in {TENSOR_CASES!r}.items():
            report = inspect(TensorSettings(shape=shape, ops=ops))
            for view in report.views:
                picture = layout_picture(view, colour_max=report.views[0].facts.numel - 1)
                assert len(picture.panels) <= 12 and len(picture.walk) <= 384
            results[name] = [len(report.views), report.build_failure is not None,
                             report.chain_failure is not None]
        for combine in ("broadcast", "matmul"):
            combination = combine_shapes((4096,) * 6, (4096,) * 6, combine)
            results[combine] = combination.error
        """)
    assert results["a documented shape of 10^9"] == [1, False, False]
    assert results["expand to 10^9"] == [3, False, False]
    assert results["unflatten an empty slice to 10^9"] == [3, False, False]
    views, build_failed, _ = results["rank 5 of 10^9: more bytes than int64 counts"]
    assert views == 0 and build_failed, "explained as content, not an exception"
    assert results["expand past int64"][2], "PyTorch's refusal is shown as the step's failure"
    assert "overflow" in results["broadcast"] and "overflow" in results["matmul"]


AUTOGRAD_CASES = {
    "reduce an empty tensor": "x = torch.ones(0, 250000000)\ny = x.sum(0)",
    "matmul with an empty inner size": "a = torch.ones(5000, 0)\nb = torch.ones(0, 5000)\nc = a @ b",
    "product over an empty eye": "e = torch.eye(100000000, 0)\np = e.prod(1)",
    "in-place ops in a loop": ("w = torch.ones(10000, requires_grad=True)\nx = w * 1\n"
                               "for i in range(100):\n    for j in range(100):\n        x *= w"),
    "in-place methods in a loop": ("w = torch.ones(10000, requires_grad=True)\nx = w * 1\n"
                                   "for i in range(100):\n    for j in range(100):\n"
                                   "        x.mul_(w)"),
}


@pytest.mark.spawns
def test_autograd_programs_are_refused_before_they_allocate():
    results = run_capped(
        "from workbench.autograd_graph.interpreter import run_program",
        f"""
        for name, source in {AUTOGRAD_CASES!r}.items():
            outcome = run_program(source)
            results[name] = str(outcome.refused) if outcome.refused else repr(outcome.failed)
        """)
    for name in ("reduce an empty tensor", "matmul with an empty inner size",
                 "product over an empty eye"):
        assert "the result would have" in results[name], (name, results[name])
    for name in ("in-place ops in a loop", "in-place methods in a loop"):
        assert "tensor elements in all" in results[name], (name, results[name])


@pytest.mark.spawns
def test_model_calls_count_their_activations():
    results = run_capped(
        """
        import torch
        from workbench.autograd_graph.interpreter import run_program
        from workbench.moons_trainer.model import MLP
        """,
        """
        model = MLP(hidden=(256, 256, 256, 256))
        X = torch.randn(1900, 2)
        outcome = run_program("for i in range(100):\\n    y = model(X)",
                              bindings={"model": model, "X": X})
        results["loop"] = str(outcome.refused)
        outcome = run_program("y = model(X)", bindings={"model": model, "X": X[:200]})
        results["one call"] = outcome.ok
        """)
    assert "tensor elements in all" in results["loop"]
    assert results["one call"] is True


def test_print_formats_only_what_it_shows(monkeypatch):
    from workbench.autograd_graph import printing
    from workbench.autograd_graph.interpreter import run_program

    shown = []
    real_show = printing.show_value
    monkeypatch.setattr(printing, "show_value", lambda value: shown.append(1) or real_show(value))
    source = ("x = torch.ones(100)\na = [x, x, x, x, x, x, x, x, x, x]\nb = [a, a, a, a, a, a, a, "
              "a, a, a]\nc = [b, b, b, b, b, b, b, b, b, b]\nd = [c, c, c, c, c, c, c, c, c, c]\n"
              + "print(d)\n" * 8)
    outcome = run_program(source)
    assert outcome.ok
    printed = outcome.interpreter.printed
    assert len(printed) == 8 and all(len(p.text) <= printing.MAX_PRINTED_CHARS for p in printed)
    assert printed[0].text.startswith("[[[[tensor([1., 1.")
    # Each print stops once its 2,000 characters are written: a few tensors, not 10,000.
    assert 0 < len(shown) <= 8 * 10


def test_print_honours_the_time_limit():
    from workbench.autograd_graph.interpreter import Limits, run_program

    source = "x = torch.ones(3)\nl = [x, x, x]\nprint(l)"
    outcome = run_program(source, limits=Limits(max_seconds=0.0))
    assert outcome.refused is not None and "ran longer than" in str(outcome.refused)


@pytest.mark.parametrize("raw", ["-0", "-0.0", "-0e5"])
def test_negative_zero_reads_as_zero(raw):
    from workbench.common.links import FloatParam

    value = FloatParam("noise", 0.0, 1.0).parse(raw)
    assert value == 0.0 and str(value) == "0.0"
