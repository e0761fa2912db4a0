"""The complete, runnable PyTorch script behind the moons trainer's current settings.

Run as is, it reproduces the page's final test accuracy for the same seed: it draws the same
data, makes the same split, fits the same scaler, initialises the same weights from the same
generators, sees the same batches and takes the same optimizer steps. `# %%` lines separate
the sections, so a notebook export can split on them.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from workbench.moons.settings import MoonsSettings
from workbench.moons.training import SettingChange

_DATA = {
    "moons": "X, y = make_moons(n_samples={n}, noise={noise!r}, random_state=SEED)",
    "circles": "X, y = make_circles(n_samples={n}, noise={noise!r}, random_state=SEED, factor=0.5)",
    "xor": """rng = np.random.default_rng(SEED)
X = rng.uniform(-1.0, 1.0, size=({n}, 2))          # uniform on the square
y = (X[:, 0] * X[:, 1] > 0).astype(np.int64)        # class 1 where x and y share a sign
X = X + rng.normal(scale={noise!r}, size=({n}, 2))""",
    "spiral": """rng = np.random.default_rng(SEED)
y = np.arange({n}) % 2
rng.shuffle(y)
t = rng.uniform(0.0, 1.0, size={n})                 # position along the arm
radius = 0.2 + 1.8 * t
angle = 3.0 * np.pi * t + np.pi * y                 # the two arms are half a turn apart
X = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
X = X + rng.normal(scale={noise!r}, size=({n}, 2))""",
    "gaussians": """rng = np.random.default_rng(SEED)
y = np.arange({n}) % 2
rng.shuffle(y)
X = np.array([[-0.5, -0.5], [0.5, 0.5]])[y]         # each class is one Gaussian blob
X = X + rng.normal(scale={noise!r}, size=({n}, 2))""",
}

_ACTIVATIONS = {"ReLU": "nn.ReLU()", "LeakyReLU": "nn.LeakyReLU(0.01)", "GELU": "nn.GELU()",
                "Tanh": "nn.Tanh()", "Sigmoid": "nn.Sigmoid()", "Identity": "nn.Identity()"}

_OPTIMIZERS = {
    "AdamW": "torch.optim.AdamW(model.parameters(), lr={lr!r}, weight_decay={wd!r})",
    "Adam": "torch.optim.Adam(model.parameters(), lr={lr!r}, weight_decay={wd!r})",
    "SGD": "torch.optim.SGD(model.parameters(), lr={lr!r}, momentum=0.9, weight_decay={wd!r})",
    "RMSprop": "torch.optim.RMSprop(model.parameters(), lr={lr!r}, weight_decay={wd!r})",
}

_DROPOUT_CLASS = '''

class SeededDropout(nn.Module):
    """nn.Dropout with masks from its own generator (the server never uses the global RNG)."""

    def __init__(self, p, generator):
        super().__init__()
        self.p, self.generator = p, generator

    def forward(self, x):
        if not self.training:
            return x                                    # model.eval() turns dropout off
        keep = torch.rand(x.shape, generator=self.generator, device=x.device) >= self.p
        return x * keep / (1.0 - self.p)
'''


_CHANGE_KEYS = {"lr": "lr", "wd": "weight_decay", "opt": "optimizer"}

_OPTIMIZER_MAKERS = {
    "AdamW": "torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)",
    "Adam": "torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)",
    "SGD": "torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)",
    "RMSprop": "torch.optim.RMSprop(model.parameters(), lr=lr, weight_decay=weight_decay)",
}

_APPLY_CHANGES = '''

def make_optimizer(name, lr, weight_decay):
    return {{
        {makers},
    }}[name]()


def apply_changes(optimizer, change):
    """What the page did when a setting changed mid-run: the same weights go on training; a new
    optimizer starts with fresh state (no momentum or running averages yet)."""
    lr = change.get("lr", optimizer.param_groups[0]["lr"])
    weight_decay = change.get("weight_decay", optimizer.param_groups[0]["weight_decay"])
    if "optimizer" in change:
        optimizer = make_optimizer(change["optimizer"], lr, weight_decay)
    for group in optimizer.param_groups:
        group["lr"], group["weight_decay"] = lr, weight_decay
    return optimizer
'''


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


def moons_script(settings: MoonsSettings, device: str = "cpu",
                 changes: Sequence[SettingChange] = ()) -> str:
    """A standalone script for `settings` that prints the final test accuracy; with `changes`
    (settings changed while the page trained), it makes them at the same optimizer steps."""
    s = _start_settings(settings, changes)
    change_block = apply_block = ""
    if changes:
        at_step, batch_from = _schedule(changes)
        names = dict.fromkeys([s.opt, *(c.new for c in changes if c.field == "opt")])
        makers = ",\n        ".join(f'"{name}": lambda: {_OPTIMIZER_MAKERS[name]}' for name in names)
        change_block = (
            "\n# Settings changed on the page while the run trained, made here at the same points:\n"
            "# {optimizer steps taken before the change: {setting: new value}}\n"
            f"STEP_CHANGES = {at_step!r}\n"
            f"BATCH_CHANGES = {batch_from!r}      # {{epoch: the batch size from that epoch on}}\n")
        apply_block = _APPLY_CHANGES.format(makers=makers)
    loop_start = "step = 0                         # optimizer steps taken so far\n" if changes else ""
    epoch_start = ("""    if epoch in BATCH_CHANGES:   # a loader's batch size is fixed while it is iterated
        train_loader = DataLoader(train_loader.dataset, batch_size=BATCH_CHANGES[epoch],
                                  shuffle=True, generator=shuffle_gen)
""" if changes else "")
    step_start = ("""        if step in STEP_CHANGES:
            optimizer = apply_changes(optimizer, STEP_CHANGES[step])
""" if changes else "")
    step_end = "        step += 1\n" if changes else ""
    train_pct, val_pct, test_pct = (int(p) for p in s.split.split("/"))
    data_import = {"moons": "from sklearn.datasets import make_moons\n",
                   "circles": "from sklearn.datasets import make_circles\n"}.get(s.dataset, "")
    dropout = s.dropout > 0
    layers = []
    width = 2
    for out in s.hidden:
        layers.append(f"            nn.Linear({width}, {out}),")
        layers.append(f"            {_ACTIVATIONS[s.act]},")
        if dropout:
            layers.append(f"            SeededDropout({s.dropout!r}, dropout_gen),")
        width = out
    layers.append(f"            nn.Linear({width}, 1),")
    dropout_gen = ("dropout_gen = torch.Generator(device=DEVICE).manual_seed(SEED + 2)  # dropout masks\n"
                   if dropout else "")
    mlp_args = "dropout_gen" if dropout else ""
    return f'''"""Train an MLP on {s.dataset}: {s.architecture}, {s.act}, {s.opt}, like the PyTorch Workbench.

Run it as is: it prints the same final test accuracy as the page for seed {s.seed}.
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
EPOCHS = {settings.epochs}
BATCH_SIZE = {s.batch}{change_block}

# %% Data: draw the points, split them (stratified {train_pct}/{val_pct}/{test_pct}), scale them
{_DATA[s.dataset].format(n=s.n, noise=s.noise)}
X_rest, X_test, y_rest, y_test = train_test_split(
    X, y, test_size={test_pct} / 100, stratify=y, random_state=SEED)
X_train, X_val, y_train, y_val = train_test_split(
    X_rest, y_rest, test_size=({val_pct} / 100) / (1 - {test_pct} / 100), stratify=y_rest, random_state=SEED)

scaler = StandardScaler().fit(X_train)      # fit on the training split ONLY: no leakage


def to_tensors(features, labels):
    """Scaled float32 features (N, 2); float32 targets (N,), as BCEWithLogitsLoss wants."""
    return (torch.tensor(scaler.transform(features), dtype=torch.float32),
            torch.tensor(labels, dtype=torch.float32))


x_train, t_train = to_tensors(X_train, y_train)
x_val, t_val = to_tensors(X_val, y_val)
x_test, t_test = to_tensors(X_test, y_test)

# Three generators, so nothing depends on (or disturbs) torch's global random state.
init_gen = torch.Generator().manual_seed(SEED)              # initial weights
shuffle_gen = torch.Generator().manual_seed(SEED + 1)       # batch order
{dropout_gen}train_loader = DataLoader(TensorDataset(x_train, t_train), batch_size=BATCH_SIZE,
                          shuffle=True, generator=shuffle_gen)
{_DROPOUT_CLASS if dropout else ""}

# %% Model: {s.architecture}, returning raw logits (no sigmoid: the loss applies it)
class MLP(nn.Module):
    def __init__(self{", dropout_gen" if dropout else ""}):
        super().__init__()
        self.net = nn.Sequential(
{chr(10).join(layers)}
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)        # (N, 1) -> (N,), the shape of the targets

    def reset_parameters(self, generator):
        """nn.Linear's default init (Kaiming-uniform), drawn from our own generator."""
        with torch.no_grad():
            for layer in self.net:
                if isinstance(layer, nn.Linear):
                    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
                    bound = 1 / math.sqrt(layer.in_features)
                    nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


model = MLP({mlp_args})
model.reset_parameters(init_gen)
model.to(DEVICE)
loss_fn = nn.BCEWithLogitsLoss()
optimizer = {_OPTIMIZERS[s.opt].format(lr=s.lr, wd=s.wd)}{apply_block}


def evaluate(x, t):
    """Loss and accuracy in eval mode (dropout off), without building a graph."""
    model.eval()
    with torch.no_grad():
        logits = model(x.to(DEVICE))
        loss = loss_fn(logits, t.to(DEVICE)).item()
        accuracy = ((logits > 0).float() == t.to(DEVICE)).float().mean().item()
    return loss, accuracy


# %% Training
{loop_start}for epoch in range(1, EPOCHS + 1):
{epoch_start}    model.train()
    running_loss, seen = 0.0, 0
    for xb, yb in train_loader:
{step_start}        xb, yb = xb.to(DEVICE), yb.to(DEVICE)
        optimizer.zero_grad()                 # forget the previous batch's gradients
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
{step_end}        running_loss += loss.item() * len(yb)  # .item(): a float, so the graph can be freed
        seen += len(yb)
    if epoch % 10 == 0 or epoch == EPOCHS:
        val_loss, val_acc = evaluate(x_val, t_val)
        print(f"epoch {{epoch:4d}}  train loss {{running_loss / seen:.4f}}  "
              f"val loss {{val_loss:.4f}}  val accuracy {{val_acc:.2%}}")

# %% Test: accuracy and F1, looked at once, at the end
model.eval()
with torch.no_grad():
    predicted = (model(x_test.to(DEVICE)) > 0).long().cpu()
target = t_test.long()
correct = int((predicted == target).sum())
tp = int(((predicted == 1) & (target == 1)).sum())
fp = int(((predicted == 1) & (target == 0)).sum())
fn = int(((predicted == 0) & (target == 1)).sum())
print(f"test accuracy: {{correct / len(target):.6f}} ({{correct}}/{{len(target)}})")
print(f"test F1: {{2 * tp / max(2 * tp + fp + fn, 1):.6f}}")

# %% Save the state_dict, reload it into a fresh model, compare predictions
torch.save(model.state_dict(), "moons_mlp.pt")
fresh = MLP({mlp_args})
fresh.load_state_dict(torch.load("moons_mlp.pt", weights_only=True, map_location=DEVICE), strict=True)
fresh.to(DEVICE).eval()
with torch.no_grad():
    same = torch.equal((fresh(x_test.to(DEVICE)) > 0).long().cpu(), predicted)
print("reloaded model gives identical test predictions:", same)
'''
