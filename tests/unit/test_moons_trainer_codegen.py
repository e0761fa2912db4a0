"""The code panel's script, run as is, reproduces what the page computes."""
from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys

import pytest

from workbench.moons.settings import PRESET
from workbench.moons.training import TrainingSession
from workbench.moons.codegen import moons_script

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
}


@pytest.mark.parametrize("name", CASES)
def test_script_reproduces_the_pages_test_accuracy(name, tmp_path):
    settings = CASES[name]
    session = TrainingSession(settings)
    session.run_to_end()
    report = session.test_report()
    script = moons_script(settings)
    ast.parse(script)
    assert script.count("# %%") >= 5
    (tmp_path / "moons_trainer.py").write_text(script)
    done = subprocess.run([sys.executable, "moons_trainer.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    correct, total = map(int, re.search(r"test accuracy: [\d.]+ \((\d+)/(\d+)\)", done.stdout).groups())
    assert total == report.n
    assert correct == round(report.accuracy * report.n)
    assert f"test F1: {report.f1:.6f}" in done.stdout
    last_val_loss = re.findall(r"val loss (\d+\.\d+)", done.stdout)[-1]
    assert last_val_loss == f"{session.history.val_loss[-1]:.4f}"
    assert "reloaded model gives identical test predictions: True" in done.stdout
