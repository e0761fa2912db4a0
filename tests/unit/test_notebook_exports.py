"""Each page's notebook export runs to completion and prints what the page's script prints."""
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from workbench.common.notebook import notebook_bytes


def _notebook_output(script: str, folder) -> str:
    notebook = nbformat.reads(notebook_bytes(script, "export").decode(), as_version=4)
    # In a temporary folder: the moons script saves its checkpoint where it runs.
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.get("outputs", []) if output.get("name") == "stdout")


def _script_output(script: str, folder) -> str:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          timeout=300, cwd=folder).stdout


def _tensor_script() -> str:
    from workbench.tensors.codegen import tensor_script
    from workbench.tensors.report import LINK_SCHEMA, inspect

    settings, _ = LINK_SCHEMA.read({"shape": "4,6", "ops": "t().reshape(-1)"})
    report = inspect(settings)
    return tensor_script(settings, materialized=report.materialized, failing_step=None)


def _autograd_script() -> str:
    from workbench.autograd.session import SCHEMA, program_script, run_session

    code = ("x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
            "b = torch.tensor(1.0, requires_grad=True)\ny = w * x + b\nL = (y - 10) ** 2")
    settings, _ = SCHEMA.read({"code": code, "backward": "2", "retain": "1"})
    result = run_session(settings)
    return program_script(settings, result.output_name, page_calls=result.page_calls)


def _batch_script() -> str:
    from workbench.batches.codegen import loader_script
    from workbench.batches.loader import LINK_SCHEMA

    settings, _ = LINK_SCHEMA.read({"n": "20", "batch": "6", "shuffle": "1", "epochs": "2", "seed": "3"})
    return loader_script(settings, None)


def _moons_script() -> str:
    from workbench.moons.settings import TABLE
    from workbench.moons.codegen import moons_script

    settings, _ = TABLE.read({"n": "300", "epochs": "3", "hidden": "16"})
    return moons_script(settings, "cpu")


SCRIPTS = {"tensor_inspector": _tensor_script, "autograd_graph": _autograd_script,
           "batch_iterator": _batch_script, "moons_trainer": _moons_script}


@pytest.mark.parametrize("tool", sorted(SCRIPTS))
def test_notebook_reproduces_the_pages_script(tool, tmp_path):
    script = SCRIPTS[tool]()
    assert "# %%" in script
    (tmp_path / "notebook").mkdir()
    (tmp_path / "script").mkdir()
    printed = _notebook_output(script, tmp_path / "notebook")
    assert printed.strip()
    assert printed == _script_output(script, tmp_path / "script")
