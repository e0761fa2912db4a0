"""The code panel's script, run as is, reproduces what the page computes."""
from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import subprocess
import sys
import textwrap

import pytest

from tests.unit.moons_trainer.test_data_drawn import DRAWING
from workbench.moons_trainer.codegen import (
    CHANGES,
    NETWORK_VIEW,
    PENALTY,
    SHARED,
    VIEW_POINT,
    comparison_script,
    moons_script,
)
from workbench.moons_trainer.data import GENERATORS, drawn_points, grid_points, plot_extent
from workbench.moons_trainer.network import MAP_RESOLUTION
from workbench.moons_trainer.settings import DATASETS, PRESET, TABLE
from workbench.moons_trainer.training import SettingChange, TrainingSession

DRAWN = TABLE["points"].parse(DRAWING)

CASES = {
    "preset": PRESET,
    "spiral-sgd-dropout": dataclasses.replace(PRESET, dataset="spiral", n=600, epochs=12, dropout=0.2,
                                              opt="SGD", lr=0.05, hidden=(16, 8), act="Tanh"),
    "xor-linear-rmsprop": dataclasses.replace(PRESET, dataset="xor", n=500, epochs=10, opt="RMSprop",
                                              hidden=(), split="60/20/20"),
    "circles-adam-gelu": dataclasses.replace(PRESET, dataset="circles", n=500, epochs=10, opt="Adam",
                                             act="GELU", batch=50, split="80/10/10"),
    "gaussians-leaky": dataclasses.replace(PRESET, dataset="gaussians", n=300, epochs=10,
                                           act="LeakyReLU", batch=7, noise=0.6),
    # TensorFlow Playground's features, every one of them, into a linear model and an MLP.
    "circles-squares-linear": dataclasses.replace(PRESET, dataset="circles", n=400, epochs=10,
                                                  features=("x1_sq", "x2_sq"), hidden=()),
    "moons-l2": dataclasses.replace(PRESET, n=400, epochs=8, hidden=(16, 8), reg="L2", reg_rate=0.03),
    "spiral-all-features": dataclasses.replace(PRESET, dataset="spiral", n=400, epochs=8, hidden=(8,),
                                               features=("x1", "x2", "x1_sq", "x2_sq", "x1_x2",
                                                         "sin_x1", "sin_x2")),
    # The learner's own points (dataset `drawn`): the script pastes them as a literal.
    "drawn-tanh-small-batches": dataclasses.replace(PRESET, dataset="drawn", points=DRAWN, epochs=12,
                                                    hidden=(8, 8), act="Tanh", batch=4, lr=0.01),
    # Regression (TensorFlow Playground's Plane and Multi Gaussian): MSELoss, R², no stratify.
    "plane-regression": dataclasses.replace(PRESET, dataset="plane", n=400, epochs=6, hidden=(8,),
                                            noise=0.1),
    "multigauss-regression-l1": dataclasses.replace(PRESET, dataset="multigauss", n=500, epochs=5,
                                                    hidden=(16, 8), act="Tanh", reg="L1",
                                                    reg_rate=0.001, split="60/20/20"),
}


# Each case's script runs as `python moons_trainer.py` would (as __main__, in a folder of its
# own, which it writes its checkpoint to), all of them in one child Python: torch and
# scikit-learn imported once, not once per case, which took a loaded 2-core machine's suite
# 7-11 s a case. Every script seeds what it draws, so one run cannot lead another's.
_RUN_EACH_SCRIPT = """
import contextlib, io, os, runpy, sys, traceback
for folder in sys.argv[1:]:
    os.chdir(folder)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path("moons_trainer.py", run_name="__main__")
        except BaseException:
            traceback.print_exc()
            print("SCRIPT FAILED", file=sys.stderr)
    for name, text in (("stdout.txt", out), ("stderr.txt", err)):
        with open(name, "w", encoding="utf-8") as f:
            f.write(text.getvalue())
"""


@dataclasses.dataclass(frozen=True)
class ScriptRun:
    script: str
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def case_runs(tmp_path_factory) -> dict[str, ScriptRun]:
    folders = {}
    for name, settings in CASES.items():
        folders[name] = tmp_path_factory.mktemp(name)
        (folders[name] / "moons_trainer.py").write_text(moons_script(settings), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", _RUN_EACH_SCRIPT, *map(str, folders.values())],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return {name: ScriptRun((folder / "moons_trainer.py").read_text(encoding="utf-8"),
                            (folder / "stdout.txt").read_text(encoding="utf-8"),
                            (folder / "stderr.txt").read_text(encoding="utf-8"))
            for name, folder in folders.items()}


@pytest.mark.spawns
@pytest.mark.parametrize("name", CASES)
def test_script_reproduces_the_pages_test_accuracy(name, case_runs):
    settings = CASES[name]
    session = TrainingSession(settings)
    session.run_to_end()
    report = session.test_report()
    done = case_runs[name]
    script = done.script
    ast.parse(script)
    assert script.count("# %%") >= 5
    assert "SCRIPT FAILED" not in done.stderr, done.stderr[-2000:]
    last_val_loss = re.findall(r"val loss (\d+\.\d+)", done.stdout)[-1]
    assert last_val_loss == f"{session.history.val_loss[-1]:.4f}"
    assert_prints_the_network_views_maps(done.stdout, session)
    if settings.regression:
        assert "stratify=y" not in script and "nn.MSELoss()" in script
        assert "BCEWithLogitsLoss()" not in script and "test accuracy" not in done.stdout
        assert f"test MSE: {report.mse:.6f} ({report.n} points)" in done.stdout
        assert f"test R²: {report.r2:.6f}" in done.stdout
        val_r2 = re.findall(r"val R² (-?\d+\.\d+)", done.stdout)[-1]
        assert val_r2 == f"{session.history.val_acc[-1]:.4f}"
        assert "reloaded model gives identical test outputs: True" in done.stdout
        return
    correct, total = map(int, re.search(r"test accuracy: [\d.]+ \((\d+)/(\d+)\)", done.stdout).groups())
    assert total == report.n
    assert correct == round(report.accuracy * report.n)
    assert f"test F1: {report.f1:.6f}" in done.stdout
    assert "reloaded model gives identical test predictions: True" in done.stdout


def assert_prints_the_network_views_maps(out: str, session: TrainingSession) -> None:
    """The script's forward hooks, at one point of the network view's grid, read what the page's
    maps hold there (the same hooks, on the whole grid at once: within float32 rounding)."""
    printed = re.findall(r"hidden layer (\d), unit (\d) at \((\S+), (\S+)\): (\S+)", out)
    if not session.settings.hidden:
        assert not printed, "a linear model has no hidden unit to read"
        return
    picture = session.network_snapshot(MAP_RESOLUTION).picture
    row, column = VIEW_POINT
    point = grid_points(plot_extent(session.data), MAP_RESOLUTION)[row * MAP_RESOLUTION + column]
    expected = [(layer, unit) for layer, width in enumerate(session.settings.hidden, start=1)
                for unit in range(1, min(width, 3) + 1)]
    assert [(int(layer), int(unit)) for layer, unit, *_ in printed] == expected
    for layer, unit, x, y, value in printed:
        assert (float(x), float(y)) == pytest.approx(tuple(point), abs=5e-5)
        on_the_map = picture.maps[int(layer) - 1][int(unit) - 1, row * MAP_RESOLUTION + column]
        assert float(value) == pytest.approx(float(on_the_map), abs=2e-6), (layer, unit)


def _run_script(script: str, folder) -> str:
    (folder / "moons_trainer.py").write_text(script)
    done = subprocess.run([sys.executable, "moons_trainer.py"], cwd=folder, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.spawns
def test_a_run_changed_mid_way_is_reproduced_change_for_change(tmp_path):
    """Learning rate, optimizer, weight decay and batch size changed while the run trained (one
    batch change mid-epoch, one at an epoch's end): the script makes each change where the page
    made it and ends on the same weights."""
    start = dataclasses.replace(PRESET, n=600, epochs=6, batch=32)
    session = TrainingSession(start)
    steps = session.steps_per_epoch
    plan = [(steps // 2, {"lr": 0.01}),                  # mid-epoch 1
            (steps + 3, {"batch": 50}),                  # mid-epoch 2: applies from epoch 3
            (2 * steps + 5, {"opt": "SGD", "lr": 0.02}),  # mid-epoch 3, in batches of 50
            (None, {"wd": 0.001, "batch": 64})]          # at the end of epoch 4
    settings = start
    for at_step, change in plan:
        if at_step is None:
            while session.epoch < 4:
                session.run_for(10**9, 1e9, stop_at_epoch_end=True)
        else:
            session.run_for(at_step - session.steps, 1e9)
            assert session.steps == at_step
        settings = dataclasses.replace(settings, **change)
        session.continue_with(settings)
    session.run_to_end()
    report = session.test_report()
    fields = [c.field for c in session.changes]
    assert fields == ["lr", "batch", "lr", "opt", "wd", "batch"]
    assert [c.from_epoch for c in session.changes if c.field == "batch"] == [3, 5]
    script = moons_script(settings, "cpu", session.changes)
    assert "STEP_CHANGES = {" in script and "BATCH_CHANGES = {3: 50, 5: 64}" in script
    out = _run_script(script, tmp_path)
    correct = int(re.search(r"test accuracy: [\d.]+ \((\d+)/\d+\)", out).group(1))
    assert correct == round(report.accuracy * report.n)
    assert re.findall(r"val loss (\d+\.\d+)", out)[-1] == f"{session.history.val_loss[-1]:.4f}"
    # Without the changes the same settings give another run: the schedule is what matches.
    plain = TrainingSession(settings)
    plain.run_to_end()
    assert plain.history.val_loss[-1] != session.history.val_loss[-1]


def test_a_script_without_changes_has_no_schedule():
    assert "STEP_CHANGES" not in moons_script(PRESET) and "apply_changes" not in moons_script(PRESET)
    assert "weight_penalty" not in moons_script(PRESET), "an unregularised run: no penalty lines"


@pytest.mark.spawns
def test_regularization_turned_on_and_changed_mid_run_is_reproduced(tmp_path):
    """L1 from the middle of epoch 2, its rate raised in epoch 4: the script adds the same
    penalty from the same optimizer steps and ends on the same weights."""
    start = dataclasses.replace(PRESET, n=500, epochs=5, hidden=(16,))
    session = TrainingSession(start)
    steps = session.steps_per_epoch
    settings = start
    plan = ((steps + 2, {"reg": "L1", "reg_rate": 0.003}), (3 * steps + 1, {"reg_rate": 0.03}))
    for at_step, change in plan:
        session.run_for(at_step - session.steps, 1e9)
        settings = dataclasses.replace(settings, **change)
        session.continue_with(settings)
    session.run_to_end()
    assert [c.field for c in session.changes] == ["reg", "reg_rate", "reg_rate"]
    script = moons_script(settings, "cpu", session.changes)
    assert 'REGULARIZATION = "none"' in script and "def weight_penalty(" in script
    out = _run_script(script, tmp_path)
    assert re.findall(r"val loss (\d+\.\d+)", out)[-1] == f"{session.history.val_loss[-1]:.4f}"
    report = session.test_report()
    correct = int(re.search(r"test accuracy: [\d.]+ \((\d+)/\d+\)", out).group(1))
    assert correct == round(report.accuracy * report.n)
    # The penalty changed the run: the same steps without it end elsewhere.
    plain = TrainingSession(start)
    plain.run_to_end()
    assert plain.history.val_loss[-1] != session.history.val_loss[-1]


# What the script defines itself: glue that only the script needs (the page keeps its tensors
# and its evaluation in a TrainingSession).
SCRIPT_ONLY = {"to_tensors", "evaluate", "r_squared"}


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_script_pastes_the_source_the_page_runs_not_a_copy(dataset):
    """Generator, dropout, model, builder, optimizer map and mid-run changes are written once, in
    workbench; the script shows their source verbatim, so what the learner reads is what ran."""
    settings = dataclasses.replace(PRESET, dataset=dataset, dropout=0.1, points=DRAWN)
    generator = GENERATORS.get(dataset, drawn_points)       # drawn data: the points' reader
    changed = [SettingChange(5, 0.1, "opt", "AdamW", "SGD")]
    with_changes = moons_script(dataclasses.replace(settings, opt="SGD"), "cpu", changed)
    regularised = moons_script(dataclasses.replace(settings, reg="L2"))
    for script in (moons_script(settings), with_changes, regularised):
        pasted = (generator, *SHARED, *NETWORK_VIEW, *([CHANGES] if script is with_changes else []),
                  *([PENALTY] if script is regularised else []))
        for obj in pasted:
            assert textwrap.dedent(inspect.getsource(obj)) in script, obj.__name__
        for other in set(GENERATORS) - {dataset}:
            assert f"def {GENERATORS[other].__name__}(" not in script
        assert ("POINTS = [" in script) == (dataset == "drawn")
        # Every function or class the script defines is either pasted source or script-only glue.
        tree = ast.parse(script)
        defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        names = {obj.__name__ for obj in pasted}
        assert defined - names <= SCRIPT_ONLY, defined - names


# ---- a comparison: both runs in one script ----------------------------------------------------

def _compared(out: str, name: str) -> tuple[float, str, int]:
    """(val loss before training, final val loss, correct) the script printed for run `name`."""
    found = re.search(re.escape(name) + r": val loss before training (\d+\.\d+), final val loss "
                      r"(\d+\.\d+), test accuracy [\d.]+ \((\d+)/\d+\)", out)
    assert found, out[-2000:]
    return float(found.group(1)), found.group(2), int(found.group(3))


@pytest.mark.spawns
def test_a_comparison_script_reproduces_both_runs_from_the_same_start(tmp_path):
    """SGD against AdamW, as a comparison link opens them: the script trains both and prints
    what the page shows, the same loss before any step for both, and each run's own end."""
    pinned = dataclasses.replace(PRESET, n=400, epochs=4, opt="SGD", lr=0.05)
    now = dataclasses.replace(PRESET, n=400, epochs=4)
    script = comparison_script([("pinned: SGD, lr 0.05", pinned, []), ("now: AdamW, lr 0.003", now, [])])
    ast.parse(script)
    out = _run_script(script, tmp_path)
    firsts = []
    for name, settings in (("pinned: SGD, lr 0.05", pinned), ("now: AdamW, lr 0.003", now)):
        session = TrainingSession(settings)
        session.run_to_end()
        first, last, correct = _compared(out, name)
        assert last == f"{session.history.val_loss[-1]:.4f}"
        assert correct == round(session.test_report().accuracy * session.test_report().n)
        firsts.append(first)
    assert firsts[0] == firsts[1], "the same data and initial weights: the same loss before any step"


@pytest.mark.spawns
def test_a_comparison_of_other_data_a_penalty_and_a_mid_run_change_is_reproduced(tmp_path):
    """The optional parts of one run (a penalty, a change made mid-run, another dataset) go into
    the shared `train` and leave the other run as it was."""
    pinned = dataclasses.replace(PRESET, dataset="circles", n=300, epochs=3, hidden=(8,), reg="L2",
                                 reg_rate=0.01)
    start = dataclasses.replace(PRESET, n=300, epochs=3, hidden=(8,))
    session = TrainingSession(start)
    session.run_for(session.steps_per_epoch + 2, 1e9)
    changed = dataclasses.replace(start, lr=0.02)
    session.continue_with(changed)
    session.run_to_end()
    first = TrainingSession(pinned)
    first.run_to_end()
    script = comparison_script([("pinned", pinned, []), ("now", changed, session.changes)])
    assert "def weight_penalty(" in script and "def apply_changes(" in script
    assert "def draw_circles(" in script and "def draw_moons(" in script
    out = _run_script(script, tmp_path)
    for name, run in (("pinned", first), ("now", session)):
        _, last, correct = _compared(out, name)
        assert last == f"{run.history.val_loss[-1]:.4f}"
        assert correct == round(run.test_report().accuracy * run.test_report().n)
    # Without the change the second run ends elsewhere: the schedule is what matches.
    plain = TrainingSession(changed)
    plain.run_to_end()
    assert f"{plain.history.val_loss[-1]:.4f}" != _compared(out, "now")[1]


def test_a_comparison_script_pastes_the_source_once_and_keeps_notebook_cells_whole():
    pinned = dataclasses.replace(PRESET, opt="SGD")
    script = comparison_script([("pinned: SGD", pinned, []), ("now: AdamW", PRESET, [])])
    for obj in (GENERATORS["moons"], *SHARED):
        assert script.count(textwrap.dedent(inspect.getsource(obj))) == 1, obj.__name__
    assert "weight_penalty" not in script and "apply_changes" not in script
    tree = ast.parse(script)
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert defined - {obj.__name__ for obj in (GENERATORS["moons"], *SHARED)} == {"train"}
    # Every `# %%` cell starts at the top level, so a notebook split on them runs.
    assert all(line.startswith("# %%") for line in script.splitlines() if "# %%" in line)


def test_the_drawn_points_are_pasted_as_they_are_in_the_settings():
    script = moons_script(CASES["drawn-tanh-small-batches"])
    tree = ast.parse(script)
    literal = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                   and [t.id for t in node.targets] == ["POINTS"])
    assert tuple(ast.literal_eval(literal)) == DRAWN
    assert "your 20 drawn points" in script and "make_moons" not in script
