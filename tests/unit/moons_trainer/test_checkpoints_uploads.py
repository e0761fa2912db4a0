"""Uploads validated in full, and runs that diverge, as content rather than crashes."""
from __future__ import annotations

import io
import json
import math

import pytest
import torch

from workbench.moons_trainer.checkpoints import (
    CheckpointRefused,
    read_checkpoint,
    resume_checkpoint,
    state_dict_safetensors,
)
from workbench.moons_trainer.settings import MoonsSettings
from workbench.moons_trainer.training import TrainingSession

QUICK = MoonsSettings(n=300, epochs=2)      # what the shared `trained` fixture trains



def _resume_bytes(session: TrainingSession) -> bytes:
    return resume_checkpoint(session.model, session.optimizer, 1, 0.5, {"opt": "AdamW"})


def _mutated(session: TrainingSession, mutate) -> bytes:
    checkpoint = torch.load(io.BytesIO(_resume_bytes(session)), weights_only=True)
    mutate(checkpoint["optimizer"])
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    return buffer.getvalue()


def test_an_unchanged_resume_checkpoint_loads(trained):
    loaded = read_checkpoint(_resume_bytes(trained), trained.model, "AdamW", optimizer=trained.optimizer)
    assert loaded.kind == "resume"
    fresh = TrainingSession(QUICK)
    fresh.replace_weights(loaded.state_dict, loaded.optimizer_state, loaded.epoch)
    fresh.run_for(3, 10.0)            # and it trains on
    assert fresh.diverged is None


def _set(path, value):
    def mutate(optimizer_state):
        target = optimizer_state
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


CRAFTED = {
    "a learning rate that is a word": _set(("param_groups", 0, "lr"), "fast"),
    "a NaN learning rate": _set(("param_groups", 0, "lr"), math.nan),
    "a negative learning rate": _set(("param_groups", 0, "lr"), -1.0),
    "betas outside [0, 1)": _set(("param_groups", 0, "betas"), (0.9, 2.0)),
    "betas that are not a pair": _set(("param_groups", 0, "betas"), 0.9),
    "maximize switched on": _set(("param_groups", 0, "maximize"), True),
    "a flag that is a string": _set(("param_groups", 0, "amsgrad"), "no"),
    "an extra hyperparameter": _set(("param_groups", 0, "rocket"), 1.0),
    "a negative step count": _set(("state", 0, "step"), torch.tensor(-5.0)),
    "a step count that is a list": _set(("state", 0, "step"), [1]),
    "negative second moments": _set(("state", 1, "exp_avg_sq"), -torch.ones(64)),
    "moments in float64": _set(("state", 1, "exp_avg"), torch.zeros(64, dtype=torch.float64)),
    "an unknown buffer": _set(("state", 0, "momentum_buffer"), torch.zeros(64, 2)),
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_a_crafted_optimizer_state_is_refused_before_loading(trained, case):
    data = _mutated(trained, CRAFTED[case])
    with pytest.raises(CheckpointRefused):
        read_checkpoint(data, trained.model, "AdamW", optimizer=trained.optimizer)


def _safetensors_with_header(session: TrainingSession, edit) -> bytes:
    data = state_dict_safetensors(session.model)
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    edit(header)
    encoded = json.dumps(header).encode()
    return len(encoded).to_bytes(8, "little") + encoded + data[8 + length:]


@pytest.mark.parametrize("edit", [
    lambda h: h["net.0.weight"].update(dtype=["F32"]),
    lambda h: h["net.0.weight"].update(dtype={"F32": 1}),
    lambda h: h["net.0.weight"].update(shape=64),
    lambda h: h["net.0.weight"].update(shape="64,2"),
    lambda h: h["net.0.weight"].update(shape=[64, "2"]),
    lambda h: h["net.0.weight"].update(shape=[64, True]),
    lambda h: h.update({"net.0.weight": [1, 2]}),
], ids=["list dtype", "dict dtype", "int shape", "string shape", "string size", "bool size",
        "entry is a list"])
def test_malformed_safetensors_headers_are_refused(trained, edit):
    assert "net.0.weight" in trained.model.state_dict()
    data = _safetensors_with_header(trained, edit)
    with pytest.raises(CheckpointRefused):
        read_checkpoint(data, trained.model)


def test_a_diverging_run_stops_where_the_loss_stops_being_a_number():
    session = TrainingSession(MoonsSettings(opt="SGD", lr=1.0, hidden=(256, 256, 256, 256),
                                            epochs=5))
    while not session.done:
        session.run_for(500, 5.0)
    divergence = session.diverged
    assert divergence is not None and not math.isfinite(divergence.loss)
    assert divergence.step == session.steps and session.epoch < 5
    assert all(math.isfinite(loss) for loss in session.history.train_loss)
    text = divergence.explanation(session.settings)
    assert f"step {divergence.step:,}" in text and "lr = 1" in text and "momentum" in text
    report = session.test_report()          # NaN logits predict class 0; nothing raises
    assert 0.0 <= report.accuracy <= 1.0
