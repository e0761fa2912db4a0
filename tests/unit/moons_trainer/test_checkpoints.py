"""Checkpoints: round trips, and every gate of the upload path (tests ask PyTorch, never hard-code)."""
from __future__ import annotations

import dataclasses
import io
import math
import os
import zipfile

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.moons_trainer import checkpoints
from workbench.moons_trainer.checkpoints import (
    MAX_CHECKPOINT_BYTES,
    CheckpointRefused,
    load_into_fresh,
    read_checkpoint,
    resume_checkpoint,
    safetensors_metadata,
    state_dict_pt,
    state_dict_safetensors,
)
from workbench.common.links import MAX_SEED
from workbench.moons_trainer.settings import MAX_LAYERS, MAX_WIDTH, OPTIMIZERS, PRESET
from workbench.moons_trainer.training import TrainingSession, predict_labels

SMALL = dataclasses.replace(PRESET, n=400, epochs=3)


@pytest.fixture(scope="module")
def trained_small_model() -> torch.nn.Module:
    return TrainingSession(dataclasses.replace(SMALL, hidden=(4,), epochs=1)).model


@pytest.fixture(scope="module")
def trained() -> TrainingSession:
    session = TrainingSession(SMALL)
    session.run_to_end()
    return session


@pytest.mark.parametrize("save", [state_dict_pt, state_dict_safetensors], ids=["pt", "safetensors"])
def test_round_trip_gives_identical_predictions(trained, save):
    loaded = read_checkpoint(save(trained.model), trained.model)
    fresh = load_into_fresh(trained.fresh_model(), loaded)
    assert torch.equal(predict_labels(fresh, trained.x_test), predict_labels(trained.model, trained.x_test))
    fresh.eval()
    trained.model.eval()
    with torch.no_grad():
        assert torch.equal(fresh(trained.x_test), trained.model(trained.x_test))


def test_resume_checkpoint_carries_on_exactly_like_the_original():
    original = TrainingSession(SMALL)
    original.step_epoch()
    data = resume_checkpoint(original.model, original.optimizer, original.epoch, original.best_val_loss,
                             {"opt": SMALL.opt})
    loaded = read_checkpoint(data, original.model, "AdamW")
    assert loaded.kind == "resume" and loaded.epoch == original.epoch
    assert loaded.best_val_loss == original.best_val_loss
    resumed = TrainingSession(SMALL)
    load_into_fresh(resumed.model, loaded)
    resumed.optimizer.load_state_dict(loaded.optimizer_state)
    # Same batches from here on: replay the shuffling generator's first epoch.
    resumed.shuffle_generator.set_state(original.shuffle_generator.get_state())
    resumed.epoch = original.epoch
    original.step_epoch()
    resumed.step_epoch()
    for a, b in zip(original.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(a, b)


def test_resume_checkpoint_for_another_optimizer_is_refused(trained):
    data = resume_checkpoint(trained.model, trained.optimizer, 1, 0.5, {})
    with pytest.raises(CheckpointRefused, match="saved with AdamW") as refused:
        read_checkpoint(data, trained.model, "SGD")
    assert "another optimizer" in refused.value.title


@pytest.mark.parametrize("gate", ["pickle scan", "weights_only"])
def test_malicious_pickle_never_runs(tmp_path, trained, monkeypatch, gate):
    """The scan refuses the GLOBAL before torch.load is called; without the scan, torch's
    weights_only unpickler still refuses it: two gates, each enough on its own."""
    canary = tmp_path / "canary"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {canary}",))

    buffer = io.BytesIO()
    torch.save({"net.0.weight": Payload()}, buffer)
    assert not canary.exists()
    if gate == "pickle scan":
        monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load was called"))
    else:
        monkeypatch.setattr(checkpoints, "scan_torch_zip", lambda archive: None)
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(buffer.getvalue(), trained.model)
    assert refused.value.title == "The file holds more than plain tensors"
    assert "system" in str(refused.value)
    assert not canary.exists()


def test_other_architecture_is_refused_with_both_architectures_named(trained):
    other = TrainingSession(dataclasses.replace(SMALL, hidden=(16,)))
    for data in (state_dict_pt(other.model), state_dict_safetensors(other.model)):
        with pytest.raises(CheckpointRefused) as refused:
            read_checkpoint(data, trained.model)
        assert "2 -> 16 -> 1" in refused.value.explanation
        assert "2 -> 64 -> 32 -> 1" in refused.value.explanation
        assert "shape" in str(refused.value) or "missing" in str(refused.value)


SQUARES = ("x1_sq", "x2_sq")      # two inputs, as x1, x2: the same shapes, other features


def _squares_model() -> torch.nn.Module:
    return TrainingSession(dataclasses.replace(SMALL, features=SQUARES)).model


def test_weights_for_other_input_features_are_refused_when_the_file_names_them(trained):
    """The same shapes fed other features compute another function: a file that says which
    features it was trained on (this page's safetensors and resume downloads) is refused
    before anything loads, naming both; one that says the same features loads."""
    squares = _squares_model()
    files = {
        "safetensors": state_dict_safetensors(squares, safetensors_metadata("2 -> 4 -> 1", SQUARES)),
        "resume": resume_checkpoint(squares, torch.optim.AdamW(squares.parameters()), 1, 0.5,
                                    {"features": list(SQUARES)}),
    }
    for kind, data in files.items():
        with pytest.raises(CheckpointRefused) as refused:
            read_checkpoint(data, trained.model, "AdamW")
        error = refused.value.explained
        assert error.title == "The checkpoint was trained on other input features", kind
        assert "trained on x₁², x₂²; the page's model takes x₁, x₂" in error.message, kind
        assert any("features=x1_sq,x2_sq" in fix for fix in error.fixes), kind
        assert read_checkpoint(data, squares, "AdamW").state_dict.keys() == squares.state_dict().keys()
    # A bare state_dict names nothing: its shapes fit, so it loads (the page cannot tell).
    assert read_checkpoint(state_dict_pt(squares), trained.model).kind == "state_dict"


@pytest.mark.parametrize("said", ["x1,evil<b>", "", "x1," * 20, "<script>", "x1,x1,x1,x1,x1,x1,x1,x1"])
def test_features_a_file_says_that_the_page_cannot_read_are_not_echoed_nor_trusted(trained, said):
    data = state_dict_safetensors(trained.model, {"features": said})
    assert read_checkpoint(data, trained.model).kind == "state_dict"


def test_float64_weights_are_refused_not_silently_cast(trained):
    doubled = {k: v.double() for k, v in trained.model.state_dict().items()}
    buffer = io.BytesIO()
    torch.save(doubled, buffer)
    with pytest.raises(CheckpointRefused, match="float64"):
        read_checkpoint(buffer.getvalue(), trained.model)


def test_nan_weights_are_refused(trained):
    state = {k: v.clone() for k, v in trained.model.state_dict().items()}
    state["net.0.weight"][0, 0] = math.nan
    buffer = io.BytesIO()
    torch.save(state, buffer)
    with pytest.raises(CheckpointRefused, match="net.0.weight") as refused:
        read_checkpoint(buffer.getvalue(), trained.model)
    assert "NaN" in refused.value.title


def test_compressed_zip_entries_are_refused(trained):
    original = zipfile.ZipFile(io.BytesIO(state_dict_pt(trained.model)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as recompressed:
        for info in original.infolist():
            recompressed.writestr(info.filename, original.read(info.filename))
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(out.getvalue(), trained.model)
    assert refused.value.title == "Compressed entries are refused"


def _upload_limit_bytes() -> int:
    """server.maxUploadSize (.streamlit/config.toml), in bytes as Streamlit counts them (MiB)."""
    import tomllib
    from pathlib import Path

    config = Path(__file__).resolve().parents[3] / ".streamlit" / "config.toml"
    return tomllib.loads(config.read_text())["server"]["maxUploadSize"] * 1024 * 1024


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_the_largest_checkpoint_the_page_saves_fits_the_upload_limits(optimizer):
    """A resume checkpoint of the widest, deepest MLP the settings allow, with the optimizer's
    state after a step, as the page's download button writes it: under both the checkpoint cap
    and server.maxUploadSize, and loaded back. (Adam and AdamW hold the most: 2,392,363 bytes.)"""
    settings = dataclasses.replace(SMALL, n=100, hidden=(MAX_WIDTH,) * MAX_LAYERS, opt=optimizer,
                                   act="LeakyReLU", dataset="gaussians", seed=MAX_SEED, epochs=1)
    session = TrainingSession(settings)
    session.step_epoch()
    data = resume_checkpoint(session.model, session.optimizer, session.epoch, session.best_val_loss,
                             {"dataset": settings.dataset, "hidden": list(settings.hidden),
                              "act": settings.act, "opt": settings.opt, "seed": settings.seed})
    assert len(data) <= MAX_CHECKPOINT_BYTES <= _upload_limit_bytes(), len(data)
    loaded = read_checkpoint(data, session.model, optimizer, optimizer=session.optimizer)
    assert loaded.kind == "resume" and loaded.epoch == 1


def test_size_cap_and_garbage_are_refused(trained):
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(b"PK\x03\x04" + b"\0" * (MAX_CHECKPOINT_BYTES + 1), trained.model)
    assert refused.value.title == "The file is too large"
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(b"hello, world: not a model", trained.model)
    assert refused.value.title == "Not a checkpoint this page reads"


def test_a_refused_upload_leaves_the_model_unchanged(trained):
    before = {k: v.clone() for k, v in trained.model.state_dict().items()}
    with pytest.raises(CheckpointRefused):
        read_checkpoint(b"garbage" * 10, trained.model)
    after = trained.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_damaged_files_are_refused_cleanly_never_crash(trained_small_model, data):
    """Any corruption of a real checkpoint loads (if harmless) or is refused with a reason."""
    save = data.draw(st.sampled_from([state_dict_pt, state_dict_safetensors]))
    original = bytearray(save(trained_small_model))
    for _ in range(data.draw(st.integers(1, 8))):
        position = data.draw(st.integers(0, len(original) - 1))
        original[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(original)))
    try:
        read_checkpoint(bytes(original[:cut]), trained_small_model)
    except CheckpointRefused as refused:
        assert refused.title and refused.explanation
