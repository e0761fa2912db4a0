"""Each page's notebook export runs to completion and prints what the page's script prints.

Every export runs once per session, in its own temporary folder (the moons script saves its
checkpoint where it runs): the notebooks in the session's shared kernel, the scripts together in
one child Python (tests/runs.py), instead of a kernel and a Python per export.
"""
import nbformat
import pytest

from tests.runs import Run, notebook_errors, notebook_stdout, run_scripts
from workbench.common.notebook import notebook_bytes
from workbench.tools import AUTOGRAD_GRAPH, BATCH_ITERATOR, MOONS_TRAINER, TENSOR_INSPECTOR, TOOLS

# Every test here runs the exports in the session's Jupyter kernel and in a child Python.
pytestmark = pytest.mark.spawns


def _tensor_script() -> str:
    from workbench.tensor_inspector.codegen import tensor_script
    from workbench.tensor_inspector.report import inspect
    from workbench.tensor_inspector.settings import TABLE as LINK_SCHEMA

    settings, _ = LINK_SCHEMA.read({"shape": "4,6", "ops": "t().reshape(-1)"})
    report = inspect(settings)
    return tensor_script(settings, materialized=report.materialized, failing_step=None)


def _autograd_script() -> str:
    from workbench.autograd_graph.session import program_script, run_session
    from workbench.autograd_graph.settings import TABLE

    code = ("x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
            "b = torch.tensor(1.0, requires_grad=True)\ny = w * x + b\nL = (y - 10) ** 2")
    settings, _ = TABLE.read({"code": code, "backward": "2", "retain": "1"})
    result = run_session(settings)
    return program_script(settings, result.output_name, page_calls=result.page_calls)


def _batch_script() -> str:
    from workbench.batch_iterator.codegen import loader_script
    from workbench.batch_iterator.settings import TABLE as LINK_SCHEMA

    settings, _ = LINK_SCHEMA.read({"n": "20", "batch": "6", "shuffle": "1", "epochs": "2", "seed": "3"})
    return loader_script(settings, None)


def _moons_script() -> str:
    from workbench.moons_trainer.settings import TABLE
    from workbench.moons_trainer.codegen import moons_script

    settings, _ = TABLE.read({"n": "300", "epochs": "3", "hidden": "16"})
    return moons_script(settings, "cpu")


def _moons_comparison_script() -> str:
    """The code panel's script while two runs are compared (SGD against AdamW)."""
    from workbench.moons_trainer.codegen import comparison_script
    from workbench.moons_trainer.compare import pinned_settings
    from workbench.moons_trainer.settings import TABLE

    settings, _ = TABLE.read({"n": "300", "epochs": "3", "hidden": "16"})
    pinned = pinned_settings(settings, (("opt", "SGD"),))
    return comparison_script([("pinned: SGD", pinned, []), ("now: AdamW", settings, [])], "cpu")


# One example per tool (by its record's name), and the moons trainer's comparison.
SCRIPTS = {TENSOR_INSPECTOR.name: _tensor_script, AUTOGRAD_GRAPH.name: _autograd_script,
           BATCH_ITERATOR.name: _batch_script, MOONS_TRAINER.name: _moons_script,
           "moons_comparison": _moons_comparison_script}


def test_every_tool_has_a_notebook_export_here():
    """A tool added to workbench/tools.py without an example above fails here, not silently."""
    assert {tool.name for tool in TOOLS} <= set(SCRIPTS), sorted({t.name for t in TOOLS} - set(SCRIPTS))


@pytest.fixture(scope="module")
def exports(shared_kernel, tmp_path_factory) -> dict[str, tuple[str, Run, Run]]:
    """tool -> (script, its notebook's run, its script's run), each run once."""
    scripts = {tool: build() for tool, build in sorted(SCRIPTS.items())}
    notebooks = {}
    for tool, script in scripts.items():
        notebook = nbformat.reads(notebook_bytes(script, "export").decode(), as_version=4)
        ran = shared_kernel.run(notebook, tmp_path_factory.mktemp(f"{tool}-notebook"))
        notebooks[tool] = Run(notebook_stdout(ran), notebook_errors(ran))
    folders = {tool: tmp_path_factory.mktemp(f"{tool}-script") for tool in scripts}
    ran_scripts = run_scripts(scripts, folders)
    return {tool: (scripts[tool], notebooks[tool], ran_scripts[tool]) for tool in scripts}


@pytest.mark.parametrize("tool", sorted(SCRIPTS))
def test_notebook_reproduces_the_pages_script(tool, exports):
    script, notebook, ran = exports[tool]
    assert "# %%" in script
    assert notebook.error is None, notebook.error
    assert ran.error is None, ran.error
    assert notebook.stdout.strip()
    assert notebook.stdout == ran.stdout
