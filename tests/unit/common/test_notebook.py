import nbformat
import pytest

from tests.runs import notebook_errors
from workbench.common.device import DIAGNOSTICS_SCRIPT
from workbench.common.notebook import notebook_bytes, split_cells

SCRIPT = """import torch
# %% Make a tensor
x = torch.arange(6).view(2, 3)
# %% [markdown]
# Transposing swaps the strides.
# %%
print(x.t().stride())
"""


def test_sections_become_cells_in_order():
    cells = split_cells(SCRIPT)
    assert [kind for kind, _ in cells] == ["code", "code", "markdown", "code"]
    assert cells[1][1].startswith("# Make a tensor")
    assert cells[2][1] == "Transposing swaps the strides."


@pytest.mark.spawns
def test_the_notebook_runs_and_prints_what_pytorch_computes(shared_kernel, tmp_path):
    import torch

    notebook = nbformat.reads(notebook_bytes(SCRIPT, "Strides").decode(), as_version=4)
    notebook = shared_kernel.run(notebook, tmp_path)      # the session's kernel, in tmp_path
    assert notebook_errors(notebook) is None, notebook_errors(notebook)
    printed = notebook.cells[-1].outputs[0]["text"].strip()
    assert printed == str(torch.arange(6).view(2, 3).t().stride())


def test_a_script_without_markers_is_one_code_cell():
    cells = split_cells(DIAGNOSTICS_SCRIPT)
    assert len(cells) == 1 and cells[0][0] == "code"
