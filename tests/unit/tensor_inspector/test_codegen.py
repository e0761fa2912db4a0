"""The code panel's script, run for real: it prints the same facts the page shows."""
from __future__ import annotations

import ast
import subprocess
import sys

import pytest
import torch

from workbench.tensor_inspector.codegen import tensor_script
from workbench.tensor_inspector.report import inspect
from workbench.tensor_inspector.settings import TensorSettings

CASES = [
    TensorSettings(shape=(4, 6), ops="t()"),
    TensorSettings(shape=(4, 6), ops="t().view(-1)"),
    TensorSettings(shape=(2, 3, 4, 5), dtype="bfloat16", ops="permute(0, 2, 3, 1).contiguous()"),
    TensorSettings(shape=(3, 1), dtype="int8", fill="randint", seed=3, ops="expand(3, 4)[:, 1:3]"),
    TensorSettings(shape=(), dtype="bool", ops="unsqueeze(0)"),
    TensorSettings(shape=(2, 3), dtype="float64", fill="randn_like", seed=11, ops="[::-1]"),
    TensorSettings(shape=(10000, 10000, 10000), ops="permute(2, 0, 1).reshape(-1)"),
]


def _run(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=True)
    return out.stdout.splitlines()


@pytest.mark.spawns
@pytest.mark.parametrize("settings", CASES, ids=lambda s: f"{s.shape}-{s.ops}")
def test_script_prints_the_facts_the_page_shows(settings):
    report = inspect(settings)
    failing = report.chain_failure.step_number if report.chain_failure else None
    code = tensor_script(settings, materialized=report.materialized, failing_step=failing)
    ast.parse(code)
    assert code.count("# %%") >= 1
    # The script's x must also hold the page's values: print them after it ran.
    check = "\nprint('VALUES', x.tolist() if not x.is_meta else None)\n"
    lines = _run(code + check)
    printed = [line for line in lines if line.split(":")[0].startswith("x")]
    assert printed == [view.facts.line(view.label) for view in report.views]
    values = next(line for line in lines if line.startswith("VALUES"))
    if report.materialized and settings.fill not in ("empty", "empty_like"):
        assert values == "VALUES " + str(report.views[0].tensor.tolist())
    if report.chain_failure is not None:
        assert f"error in step {failing}: {report.chain_failure.error.message}" in lines


def test_a_huge_tensor_is_built_on_meta_in_the_script():
    settings = TensorSettings(shape=(10000, 10000, 10000))
    code = tensor_script(settings, materialized=False, failing_step=None)
    assert 'device="meta"' in code
    assert torch.empty(settings.shape, device="meta").nbytes > 10**12


def test_the_script_builds_x_where_the_page_did(tmp_path):
    """On a server whose device is not the CPU (meta stands in for a GPU), the page's facts say
    that device, and so does its script: it moves x there."""
    import contextlib
    import io
    import runpy

    settings = TensorSettings(shape=(2, 3), ops="t()")
    report = inspect(settings, "meta")
    assert report.views[0].facts.device == "meta"
    code = tensor_script(settings, materialized=report.materialized, failing_step=None, device="meta")
    assert 'x = x.to("meta")' in code
    printed = io.StringIO()
    script = tmp_path / "script.py"       # meta holds no values to print: facts only
    script.write_text(code.replace("print(s1)", "").replace("print(x)", ""))
    with contextlib.redirect_stdout(printed):
        runpy.run_path(str(script))
    lines = [line for line in printed.getvalue().splitlines() if line.split(":")[0].startswith("x")]
    assert lines == [view.facts.line(view.label) for view in report.views]
    assert 'x.to(' not in tensor_script(settings, materialized=True, failing_step=None)
