"""The complete, runnable PyTorch script behind the moons trainer's current settings.

Run as is, it reproduces the page's final test accuracy for the same seed: it draws the same
data, makes the same split, fits the same scaler, initialises the same weights from the same
generators, sees the same batches and takes the same optimizer steps. `# %%` lines separate
the sections, so a notebook export can split on them.

What the page runs is not typed again here: the data generator, `SeededDropout`,
`InputFeatures`, `MLP` (with its init), `build_model`, `build_optimizer` and `apply_changes` go
into the script as their own source (`inspect.getsource`), so the learner reads the code that
ran. Only the script's glue (its settings, the split, the loop, the test and the schedule of
mid-run changes) is written here.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from workbench.common.source import source_of
from workbench.moons_trainer.data import (
    DRAW_BOUND,
    BUMP_RADIUS,
    GAUSSIAN_CENTRES,
    GENERATORS,
    MULTI_GAUSSIANS,
    drawn_points,
    extent_of,
    grid_points,
)
from workbench.moons_trainer.model import (
    MLP,
    InputFeatures,
    SeededDropout,
    apply_changes,
    build_model,
    build_optimizer,
    weight_penalty,
)
from workbench.moons_trainer.network import MAP_RESOLUTION, activation_modules
from workbench.moons_trainer.settings import MoonsSettings
from workbench.moons_trainer.training import SettingChange

# Written once, in the modules the page runs; the script pastes their source (see `shown`).
SHARED = (SeededDropout, InputFeatures, MLP, build_model, build_optimizer)
CHANGES = apply_changes         # pasted where settings changed mid-run
PENALTY = weight_penalty        # pasted where the run is regularised at some point
# Pasted where the model has a hidden layer: the network view's grid and the modules it hooks.
NETWORK_VIEW = (extent_of, grid_points, activation_modules)
# The script reads each hidden layer's first three units at one point of the network view's grid,
# (row, column) counted from the bottom left.
VIEW_POINT = (6, 4)


def shown(obj: object) -> str:
    """The source of `obj` exactly as the page runs it, for pasting into the script."""
    return source_of(obj)


_CHANGE_KEYS = {"lr": "lr", "wd": "weight_decay", "opt": "optimizer", "reg": "regularization",
                "reg_rate": "regularization_rate"}

def _schedule(changes: Sequence[SettingChange]) -> tuple[dict[int, dict], dict[int, int]]:
    """The page's changes as {steps taken before it: {setting: value}} and {epoch: batch size}."""
    at_step: dict[int, dict] = {}
    batch_from: dict[int, int] = {}
    for change in changes:
        if change.field == "batch":
            assert change.from_epoch is not None
            batch_from[change.from_epoch] = int(change.new)
        else:
            at_step.setdefault(change.step, {})[_CHANGE_KEYS[change.field]] = change.new
    return at_step, batch_from


def _start_settings(settings: MoonsSettings, changes: Sequence[SettingChange]) -> MoonsSettings:
    """The settings the run started with: each changed setting's value before its first change."""
    first: dict[str, object] = {}
    for change in changes:
        first.setdefault(change.field, change.old)
    return dataclasses.replace(settings, **first)


def points_literal(points: Sequence[tuple[float, float, int]], per_line: int = 5) -> str:
    """The drawn points as a Python literal the script pastes: a list of (x1, x2, class)."""
    items = [f"({x!r}, {y!r}, {c})" for x, y, c in points]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[\n" + "".join(f"    {line},\n" for line in lines) + "]"


def _split_and_load(test_pct: str, val_pct: str, regression: bool = False) -> str:
    """From the drawn points X, y to the seeded loader: the split, the scaler, the tensors and
    the three generators (`test_pct`, `val_pct`: the percentages, or the names that hold them;
    `regression`: float targets, split without stratifying)."""
    stratify, stratify_rest = ("None", "None") if regression else ("y", "y_rest")
    loss = "MSELoss" if regression else "BCEWithLogitsLoss"
    why = "  # continuous targets: nothing to stratify" if regression else ""
    return f'''X_rest, X_test, y_rest, y_test = train_test_split(
    X, y, test_size={test_pct} / 100, stratify={stratify}, random_state=SEED){why}
X_train, X_val, y_train, y_val = train_test_split(
    X_rest, y_rest, test_size=({val_pct} / 100) / (1 - {test_pct} / 100),
    stratify={stratify_rest}, random_state=SEED)

scaler = StandardScaler().fit(X_train)      # fit on the training split ONLY: no leakage


def to_tensors(features, labels):
    """Scaled float32 features (N, 2); float32 targets (N,), as {loss} wants."""
    return (torch.tensor(scaler.transform(features), dtype=torch.float32),
            torch.tensor(labels, dtype=torch.float32))


x_train, t_train = to_tensors(X_train, y_train)
x_val, t_val = to_tensors(X_val, y_val)
x_test, t_test = to_tensors(X_test, y_test)

# Three generators, so nothing depends on (or disturbs) torch's global random state.
init_gen = torch.Generator().manual_seed(SEED)              # initial weights
shuffle_gen = torch.Generator().manual_seed(SEED + 1)       # batch order
dropout_gen = torch.Generator(device=DEVICE).manual_seed(SEED + 2)  # dropout masks
train_loader = DataLoader(TensorDataset(x_train, t_train), batch_size=BATCH_SIZE,
                          shuffle=True, generator=shuffle_gen)
'''


def _model_block(apply_block: str = "", regression: bool = False) -> str:
    """The model, its loss and optimizer from the settings' names, and the evaluation helper
    (`apply_block`: pasted after the optimizer where settings change mid-run; `regression`:
    MSELoss, and R² in the accuracy's place)."""
    if regression:
        return f'''model = build_model(HIDDEN, ACTIVATION, DROPOUT, DEVICE, init_gen, FEATURES)
model.set_dropout_generator(dropout_gen)
print(model)
loss_fn = nn.MSELoss()          # regression: the mean squared error of the raw output
optimizer = build_optimizer(OPTIMIZER, model.parameters(), LR, WEIGHT_DECAY){apply_block}


def r_squared(output, t):
    """1 - SSE / SST: 1 is a perfect fit, 0 predicts the targets' mean everywhere."""
    output, t = output.double(), t.double()
    return (1 - ((t - output) ** 2).sum() / ((t - t.mean()) ** 2).sum()).item()


def evaluate(x, t):
    """MSE and R² in eval mode (dropout off), without building a graph."""
    model.eval()
    with torch.no_grad():
        output = model(x.to(DEVICE))
        loss = loss_fn(output, t.to(DEVICE)).item()
    return loss, r_squared(output, t.to(DEVICE))
'''
    return f'''model = build_model(HIDDEN, ACTIVATION, DROPOUT, DEVICE, init_gen, FEATURES)
model.set_dropout_generator(dropout_gen)
print(model)
loss_fn = nn.BCEWithLogitsLoss()
optimizer = build_optimizer(OPTIMIZER, model.parameters(), LR, WEIGHT_DECAY){apply_block}


def evaluate(x, t):
    """Loss and accuracy in eval mode (dropout off), without building a graph."""
    model.eval()
    with torch.no_grad():
        logits = model(x.to(DEVICE))
        loss = loss_fn(logits, t.to(DEVICE)).item()
        accuracy = ((logits > 0).float() == t.to(DEVICE)).float().mean().item()
    return loss, accuracy
'''


def _training(changes: bool, regularised: bool, regression: bool = False) -> str:
    """The script's loop and test, over the names its settings define (EPOCHS, OPTIMIZER, ...):
    the same text in the one-run script and in the comparison's `train` function. `changes`:
    settings change at steps STEP_CHANGES and epochs BATCH_CHANGES; `regularised`: the loss
    takes the weights' penalty."""
    loop_start = "step = 0                         # optimizer steps taken so far\n" if changes else ""
    epoch_start = ("""    if epoch in BATCH_CHANGES:   # a loader's batch size is fixed while it is iterated
        train_loader = DataLoader(train_loader.dataset, batch_size=BATCH_CHANGES[epoch],
                                  shuffle=True, generator=shuffle_gen)
""" if changes else "")
    backward = ("""        penalty = weight_penalty(model, REGULARIZATION, REGULARIZATION_RATE)
        (loss if penalty is None else loss + penalty).backward()   # the data's loss and the penalty
""" if regularised else "        loss.backward()\n")
    step_start = ("""        if step in STEP_CHANGES:
            optimizer = apply_changes(optimizer, model.parameters(), STEP_CHANGES[step])
""" if changes else "")
    if changes and regularised:
        step_start += """            REGULARIZATION = STEP_CHANGES[step].get("regularization", REGULARIZATION)
            REGULARIZATION_RATE = STEP_CHANGES[step].get("regularization_rate", REGULARIZATION_RATE)
"""
    step_end = "        step += 1\n" if changes else ""
    score = ('val R² {val_acc:.4f}' if regression else 'val accuracy {val_acc:.2%}')
    first_score = score.replace("val_acc", "first_val_acc")
    test = _REGRESSION_TEST if regression else _CLASSIFICATION_TEST
    return f'''# %% Training
first_val_loss, first_val_acc = evaluate(x_val, t_val)    # the initial weights, before any step
print(f"epoch    0  val loss {{first_val_loss:.6f}}  {first_score}  (before any step)")
{loop_start}for epoch in range(1, EPOCHS + 1):
{epoch_start}    model.train()
    running_loss, seen = 0.0, 0
    for xb, yb in train_loader:
{step_start}        xb, yb = xb.to(DEVICE), yb.to(DEVICE)
        optimizer.zero_grad()                 # forget the previous batch's gradients
        loss = loss_fn(model(xb), yb)
{backward}        optimizer.step()
{step_end}        running_loss += loss.item() * len(yb)  # .item(): a float, so the graph can be freed
        seen += len(yb)
    if epoch % 10 == 0 or epoch == EPOCHS:
        val_loss, val_acc = evaluate(x_val, t_val)
        print(f"epoch {{epoch:4d}}  train loss {{running_loss / seen:.4f}}  "
              f"val loss {{val_loss:.4f}}  {score}")

{test}'''


_CLASSIFICATION_TEST = '''# %% Test: accuracy and F1, looked at once, at the end
model.eval()
with torch.no_grad():
    predicted = (model(x_test.to(DEVICE)) > 0).long().cpu()
target = t_test.long()
correct = int((predicted == target).sum())
tp = int(((predicted == 1) & (target == 1)).sum())
fp = int(((predicted == 1) & (target == 0)).sum())
fn = int(((predicted == 0) & (target == 1)).sum())
print(f"test accuracy: {correct / len(target):.6f} ({correct}/{len(target)})")
print(f"test F1: {2 * tp / max(2 * tp + fp + fn, 1):.6f}")
'''
_REGRESSION_TEST = '''# %% Test: mean squared error and R², looked at once, at the end
model.eval()
with torch.no_grad():
    predicted = model(x_test.to(DEVICE)).cpu()
test_mse = nn.functional.mse_loss(predicted, t_test).item()
print(f"test MSE: {test_mse:.6f} ({len(t_test)} points)")
print(f"test R²: {r_squared(predicted, t_test):.6f}")
'''


def moons_script(settings: MoonsSettings, device: str = "cpu",
                 changes: Sequence[SettingChange] = ()) -> str:
    """A standalone script for `settings` that prints the final test accuracy; with `changes`
    (settings changed while the page trained), it makes them at the same optimizer steps."""
    s = _start_settings(settings, changes)
    change_block = apply_block = ""
    regularised = s.reg != "none" or any(c.field == "reg" for c in changes)
    regression = s.regression
    training = _training(bool(changes), regularised, regression)
    if changes:
        at_step, batch_from = _schedule(changes)
        change_block = (
            "\n# Settings changed on the page while the run trained, made here at the same points:\n"
            "# {optimizer steps taken before the change: {setting: new value}}\n"
            f"STEP_CHANGES = {at_step!r}\n"
            f"BATCH_CHANGES = {batch_from!r}      # {{epoch: the batch size from that epoch on}}\n")
        apply_block = f"\n\n\n{shown(CHANGES)}"
    # The penalty's lines only where the run is regularised at some point: the lesson's script
    # stays the five lines of a training step.
    penalty_settings = (f'\nREGULARIZATION = "{s.reg}"         # a penalty on the weights: none, L1 or L2'
                        f"\nREGULARIZATION_RATE = {s.reg_rate!r}" if regularised else "")
    penalty_block = f"\n\n\n{shown(PENALTY)}" if regularised else ""
    train_pct, val_pct, test_pct = (int(p) for p in s.split.split("/"))
    data_import = {"moons": "from sklearn.datasets import make_moons\n",
                   "circles": "from sklearn.datasets import make_circles\n"}.get(s.dataset, "")
    if s.drawn:
        data_name = f"your {len(s.points)} drawn points"
        data_source = (f"# The points you drew on the page: (x1, x2, class)\n"
                       f"POINTS = {points_literal(s.points)}\n\n\n{shown(drawn_points)}\n\n\n"
                       "X, y = drawn_points(POINTS)")
    else:
        draw = GENERATORS[s.dataset]
        centres = _constants(s.dataset)
        data_name = s.dataset
        data_source = (f"{centres}{shown(draw)}\n\n\n"
                       f"X, y = {draw.__name__}(n={s.n}, noise={s.noise!r}, seed=SEED)")
    seeded_dropout, input_features, mlp, builder, optimizer_map = (shown(obj) for obj in SHARED)
    network_block = _network_view_block(s.drawn) if s.hidden else ""
    split_and_load = _split_and_load(str(test_pct), str(val_pct), regression)
    model_block = _model_block(apply_block, regression)
    how = "at random" if regression else "stratified"
    what = "final test MSE and R²" if regression else "final test accuracy"
    returning = ("the output value (regression: MSELoss compares it with the target)" if regression
                 else "raw logits (no sigmoid: the loss applies it)")
    reloaded = ("    same = torch.equal(fresh(x_test.to(DEVICE)).cpu(), predicted)\n"
                'print("reloaded model gives identical test outputs:", same)' if regression else
                "    same = torch.equal((fresh(x_test.to(DEVICE)) > 0).long().cpu(), predicted)\n"
                'print("reloaded model gives identical test predictions:", same)')
    return f'''"""Train an MLP on {data_name}: {s.architecture}, {s.act}, {s.opt}, like the PyTorch Workbench.

Run it as is: it prints the same {what} as the page for seed {s.seed}.
"""
# %% Settings
import math

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
{data_import}from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

torch.set_num_threads(1)        # the workbench's setting; keeps float sums in the same order
DEVICE = torch.device("{device}")
SEED = {s.seed}
FEATURES = {s.features!r}         # the first layer's inputs, computed from (x1, x2)
HIDDEN = {s.hidden!r}             # the hidden layers' widths
ACTIVATION = "{s.act}"
DROPOUT = {s.dropout!r}
OPTIMIZER = "{s.opt}"
LR = {s.lr!r}
WEIGHT_DECAY = {s.wd!r}{penalty_settings}
EPOCHS = {settings.epochs}
BATCH_SIZE = {s.batch}{change_block}

# %% Data: draw the points, split them ({how} {train_pct}/{val_pct}/{test_pct}), scale them
{data_source}
{split_and_load}

# %% Model: {s.architecture}, returning {returning}
{seeded_dropout}


{input_features}


{mlp}


{builder}


{optimizer_map}{penalty_block}


{model_block}

{training}
# %% Save the state_dict, reload it into a fresh model, compare predictions
torch.save(model.state_dict(), "moons_mlp.pt")
fresh = MLP(HIDDEN, ACTIVATION, DROPOUT, features=FEATURES)
fresh.load_state_dict(torch.load("moons_mlp.pt", weights_only=True, map_location=DEVICE), strict=True)
fresh.to(DEVICE).eval()
with torch.no_grad():
{reloaded}{network_block}
'''


def _constants(dataset: str) -> str:
    """The module constants a pasted generator reads, as the script defines them."""
    if dataset == "gaussians":
        return f"GAUSSIAN_CENTRES = {GAUSSIAN_CENTRES!r}      # each class's mean\n\n\n"
    if dataset == "multigauss":
        return (f"MULTI_GAUSSIANS = {MULTI_GAUSSIANS!r}     # (x, y, sign) of each bump\n"
                f"BUMP_RADIUS = {BUMP_RADIUS!r}\n\n\n")
    return ""


def _network_view_block(drawn: bool) -> str:
    """The script's last section: one point of the network view's grid, and each hidden layer's
    first three units there, read with forward hooks as the page's maps are (`drawn`: the plane
    is the drawing's board, not the data's bounding box)."""
    extent, grid, hooked = (shown(obj) for obj in NETWORK_VIEW)
    plane = (f"PLANE = {(-DRAW_BOUND, DRAW_BOUND, -DRAW_BOUND, DRAW_BOUND)!r}    # the board the points "
             "were drawn on" if drawn else "PLANE = extent_of(X)         # the data's box and a margin")
    row, column = VIEW_POINT
    return f'''


# %% Inside the network: what the page's network view draws, read with forward hooks
# Each map in the network view is one hidden unit's output (after its activation) at every
# point of a {MAP_RESOLUTION} x {MAP_RESOLUTION} grid over the plane. A forward hook sees a module's output
# without changing the model; here hooks read each hidden layer's first units at one point.
{extent}


{grid}


{hooked}


VIEW_RESOLUTION = {MAP_RESOLUTION}
ROW, COLUMN = {row}, {column}            # the grid point, counted from the bottom left
{plane}
point = grid_points(PLANE, VIEW_RESOLUTION)[ROW * VIEW_RESOLUTION + COLUMN]
outputs = {{}}
hooks = [module.register_forward_hook(
             lambda module, inputs, output, layer=layer: outputs.__setitem__(layer, output))
         for layer, module in enumerate(activation_modules(model), start=1)]
model.eval()
with torch.no_grad():
    model(torch.tensor(scaler.transform(point[None]), dtype=torch.float32, device=DEVICE))
for hook in hooks:
    hook.remove()                        # hooks stay until removed
for layer, output in outputs.items():
    for unit, value in enumerate(output[0, :3].tolist(), start=1):
        print(f"hidden layer {{layer}}, unit {{unit}} at ({{point[0]:.4f}}, {{point[1]:.4f}}): {{value:.6f}}")
'''


def comparison_script(runs: Sequence[tuple[str, MoonsSettings, Sequence[SettingChange]]],
                      device: str = "cpu") -> str:
    """Both runs of a comparison in one script, each `(name, settings, changes made mid-run)`:
    the pasted definitions once, then `train(...)`, the one-run script's data, model, loop and
    test for one run's settings, called for each run. It prints each run's validation loss before
    any step, its final validation loss and its test accuracy, which the page shows too."""
    if any(settings.regression for _, settings, _ in runs):
        raise ValueError("a comparison's script is for classification runs; regression runs "
                         "(plane, multigauss) each have their own script")
    starts = [(name, _start_settings(settings, changes), settings, changes)
              for name, settings, changes in runs]
    changed = any(changes for *_, changes in starts)
    regularised = any(s.reg != "none" or any(c.field == "reg" for c in changes)
                      for _, s, _, changes in starts)
    datasets = list(dict.fromkeys(s.dataset for _, s, _, _ in starts))
    data_import = "".join({"moons": "from sklearn.datasets import make_moons\n",
                           "circles": "from sklearn.datasets import make_circles\n"}.get(d, "")
                          for d in datasets)
    centres = (f"GAUSSIAN_CENTRES = {GAUSSIAN_CENTRES!r}      # each class's mean\n\n\n"
               if "gaussians" in datasets else "")
    draws = "\n\n\n".join(shown(drawn_points if d == "drawn" else GENERATORS[d]) for d in datasets)
    # A run on drawn points draws them from its own literal (the pinned run's drawing may differ).
    drawings = "".join(
        f"# Run {name!r}'s drawn points: (x1, x2, class)\nPOINTS_{index} = {points_literal(s.points)}\n\n\n"
        for index, (name, s, _, _) in enumerate(starts) if s.drawn)
    pasted = "\n\n\n".join(shown(obj) for obj in SHARED)
    if regularised:
        pasted += f"\n\n\n{shown(PENALTY)}"
    if changed:
        pasted += f"\n\n\n{shown(CHANGES)}"
    optional = (["REGULARIZATION", "REGULARIZATION_RATE"] if regularised else []) + \
               (["STEP_CHANGES", "BATCH_CHANGES"] if changed else [])
    body = ("X, y = DRAW(n=N, noise=NOISE, seed=SEED)\n" + _split_and_load("TEST_PCT", "VAL_PCT")
            + "\n\n" + _model_block(), _training(changed, regularised).replace("# %% ", "# "))
    body_text = "\n".join(body) + """
return {"val loss before training": first_val_loss, "final val loss": val_loss,
        "test accuracy": correct / len(target), "correct": correct, "total": len(target)}
"""
    indented = "".join(f"    {line}" if line.strip() else line for line in body_text.splitlines(True))
    run_dicts = []
    for index, (name, s, settings, changes) in enumerate(starts):
        _, val_pct, test_pct = (int(p) for p in s.split.split("/"))
        draw = (f"lambda n, noise, seed: drawn_points(POINTS_{index})" if s.drawn
                else GENERATORS[s.dataset].__name__)
        values = [("SEED", s.seed), ("DRAW", draw), ("N", s.n),
                  ("NOISE", s.noise), ("VAL_PCT", val_pct), ("TEST_PCT", test_pct),
                  ("FEATURES", s.features), ("HIDDEN", s.hidden), ("ACTIVATION", s.act),
                  ("DROPOUT", s.dropout), ("OPTIMIZER", s.opt), ("LR", s.lr), ("WEIGHT_DECAY", s.wd),
                  ("EPOCHS", settings.epochs), ("BATCH_SIZE", s.batch)]
        if regularised:
            values += [("REGULARIZATION", s.reg), ("REGULARIZATION_RATE", s.reg_rate)]
        if changed:
            at_step, batch_from = _schedule(changes)
            values += [("STEP_CHANGES", at_step), ("BATCH_CHANGES", batch_from)]
        lines = [", ".join(f"{key}={value if key == 'DRAW' else repr(value)}"
                           for key, value in values[start:stop])
                 for start, stop in ((0, 6), (6, 10), (10, 15), (15, None))]
        shown_values = ",\n        ".join(line for line in lines if line)
        run_dicts.append(f"    {name!r}: dict(\n        {shown_values}),")
    names = " and ".join(name for name, *_ in starts)
    parameters = ",\n          ".join(", ".join(group) for group in (
        ("SEED", "DRAW", "N", "NOISE", "VAL_PCT", "TEST_PCT"),
        ("FEATURES", "HIDDEN", "ACTIVATION", "DROPOUT"),
        ("OPTIMIZER", "LR", "WEIGHT_DECAY", "EPOCHS", "BATCH_SIZE"), optional) if group)
    return f'''"""Two runs side by side, like the PyTorch Workbench's comparison: {names}.

Run it as is: it trains both runs and prints, for each, the validation loss before any step, the
final validation loss and the test accuracy the page shows. Runs with the same seed draw the same
data, and with the same layers the same initial weights: their losses before any step are equal.
"""
# %% Imports and the definitions both runs use
import math

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
{data_import}from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

torch.set_num_threads(1)        # the workbench's setting; keeps float sums in the same order
DEVICE = torch.device("{device}")


{centres}{draws}


{drawings}{pasted}


# %% One run: the one-run script's data, model, loop and test, its settings as parameters
def train({parameters}):
{indented}

# %% Both runs' settings (STEP_CHANGES: settings changed on the page while a run trained)
RUNS = {{
{chr(10).join(run_dicts)}
}}

# %% Train both, then compare
results = {{}}
for name, run in RUNS.items():
    print(f"=== {{name}} ===")
    results[name] = train(**run)
print()
for name, result in results.items():
    print(f"{{name}}: val loss before training {{result['val loss before training']:.6f}}, "
          f"final val loss {{result['final val loss']:.4f}}, "
          f"test accuracy {{result['test accuracy']:.6f}} ({{result['correct']}}/{{result['total']}})")
'''
