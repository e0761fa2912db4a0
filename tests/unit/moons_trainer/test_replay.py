"""The replay: the weights recorded at each epoch's end give back the run's pictures exactly as
they were at that epoch."""
from __future__ import annotations

import dataclasses

import numpy as np
import torch

from workbench.moons_trainer.replay import WeightRecord
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

SETTINGS = dataclasses.replace(PRESET, n=400, epochs=3, hidden=(8, 4), net=True)


def _trained(epochs: int) -> TrainingSession:
    session = TrainingSession(dataclasses.replace(SETTINGS, epochs=epochs))
    session.run_to_end()
    return session


def test_an_epoch_replayed_is_the_picture_a_run_stopped_there_shows():
    run = _trained(3)
    assert run.weight_record.epochs == [0, 1, 2, 3]
    for epoch in (0, 1, 3):
        snapshot, network = run.replay(epoch, 24, 6)
        stopped = _trained(epoch) if epoch else TrainingSession(SETTINGS)
        live = stopped.snapshot(24)
        assert np.array_equal(snapshot.grid, live.grid) and np.array_equal(snapshot.points, live.points)
        assert (snapshot.epoch, snapshot.steps) == (epoch, stopped.steps)
        picture = stopped.network_snapshot(6).picture
        for replayed, original in zip(network.picture.maps, picture.maps, strict=True):
            assert np.array_equal(replayed, original)
    # Replaying reads copies: the run's own model and its picture of now are untouched.
    assert np.array_equal(run.snapshot(24).grid, run.replay(3, 24, None)[0].grid)


def test_a_later_batch_size_is_counted_in_the_steps_of_each_epoch():
    session = TrainingSession(SETTINGS)
    session.step_epoch()
    session.continue_with(dataclasses.replace(SETTINGS, batch=100))
    session.run_to_end()
    per_epoch = [session.weight_record.steps(e) for e in session.weight_record.epochs]
    assert per_epoch == [0, 5, 8, 11]        # 280 training points: 5 batches of 64, then 3 of 100


def test_the_record_stays_within_its_bytes_keeping_epochs_evenly_spaced():
    model = torch.nn.Linear(100, 100)                # 40,400 bytes of float32
    record = WeightRecord(max_bytes=10 * 40_400)
    for epoch in range(0, 40):
        record.record(epoch, model, epoch * 7)
    assert record.bytes <= 10 * 40_400
    epochs = record.epochs
    assert epochs[0] == 0 and len(set(np.diff(epochs))) == 1, epochs      # evenly spaced
    assert record.steps(epochs[-1]) == epochs[-1] * 7
    kept = record.weights(epochs[1])
    assert torch.equal(kept["weight"], model.weight) and kept["weight"] is not model.weight


def test_training_again_from_the_same_initial_weights_is_the_same_run():
    """What Reset starts: the same data, initial weights and batches, so every recorded epoch's
    weights and every curve point come out the same."""
    first, again = _trained(2), _trained(2)
    for epoch in (0, 1, 2):
        for name, value in first.weight_record.weights(epoch).items():
            assert torch.equal(value, again.weight_record.weights(epoch)[name]), (epoch, name)
    assert first.history.train_loss == again.history.train_loss


def test_the_replay_words_say_every_epoch_only_while_the_record_holds_every_epoch():
    """Issue 44: "Every epoch's weights are kept" was false past the 2 MiB bound. The words come
    from the record: a small network keeps every epoch; four layers of 256 (775 KiB an epoch)
    keep epochs 0 and 16 after 30."""
    from workbench.moons_trainer.replay import MAX_BYTES, kept_words

    small = _trained(3)
    assert small.weight_record.stride == 1 and small.weight_record.epochs == [0, 1, 2, 3]
    said = kept_words(small.weight_record, small.epoch)
    assert said.startswith("Every finished epoch's weights are kept (epochs 0 to 3: ")
    assert f"of the run's {MAX_BYTES // 2**20} MiB bound" in said

    wide = TrainingSession(dataclasses.replace(SETTINGS, n=300, epochs=30, hidden=(256,) * 4, net=False))
    wide.run_to_end()
    record = wide.weight_record
    assert record.bytes <= MAX_BYTES < 31 * record.bytes // len(record.epochs)
    assert record.epochs == [0, 16] and record.stride == 16
    said = kept_words(record, wide.epoch)
    assert "Every" not in said and "at most 2 MiB" in said
    assert f"{record.bytes / 2 / 2**10:.1f} KiB an epoch" in said
    assert said.endswith("only every 16th epoch is kept: epochs 0 and 16")
