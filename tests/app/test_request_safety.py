"""Links and uploads that once broke a page: each must now be content, not the guard's panel."""
from __future__ import annotations

import io

import pytest
import torch

from tests.app.apptest import assert_clean, open_page, shown_text
from workbench.checkpoints import resume_checkpoint
from workbench.moons import MoonsSettings, TrainingSession

MOONS = "app_pages/moons_trainer.py"
TENSORS = "app_pages/tensor_inspector.py"


@pytest.mark.parametrize("query", [
    {"shape": "1000000000,1,1"},
    {"ops": "unsqueeze(0).expand(1000000000,-1,-1,-1)"},
    {"ops": "[0:0].unflatten(0,(1000000000,-1))"},
    {"lhs": "4096,4096,4096,4096,4096,4096"},
    {"shape": "1000000000,1000000000,1000000000,1000000000,1000000000", "dtype": "complex128",
     "fill": "load", "value": "1", "rhs": "on", "combine": "matmul"},
], ids=["shape 1e9", "expand 1e9", "unflatten 1e9", "lhs 4096^6", "rank 5 of 1e9"])
def test_tensor_inspector_links_that_once_broke_it(query):
    at = open_page(TENSORS, query)
    assert_clean(at)


def test_rank_5_of_a_billion_is_explained():
    at = open_page(TENSORS, {"shape": "1000000000,1000000000,1000000000,1000000000,1000000000"})
    assert_clean(at)
    assert "PyTorch cannot address a tensor this large" in shown_text(at)


def test_moons_noise_minus_zero():
    at = open_page(MOONS, {"noise": "-0", "n": "200", "epochs": "1"})
    assert_clean(at)
    assert at.session_state["learner::moons_trainer"].session.settings.noise == 0.0


def test_moons_link_of_the_fuzzer():
    at = open_page(MOONS, {"dataset": "undefined", "noise": "-0", "split": "70/15/15",
                           "hidden": "[1,2,3]", "dropout": "TRUE",
                           "opt": "<script>alert(1)</script>", "wd": "4294967296", "batch": "1e2",
                           "hide": "1,,2", "n[]": "2", "q": "no", "model": "t"})
    assert_clean(at)


def test_a_diverging_run_is_explained_and_every_panel_copes():
    at = open_page(MOONS, {"opt": "SGD", "lr": "1", "hidden": "256,256,256,256", "epochs": "5"})
    assert_clean(at)
    for _ in range(5):
        if "The run diverged" in shown_text(at):
            break
        at.button(key="mt_step").click().run()
        assert_clean(at)
    text = shown_text(at)
    assert "The run diverged at step" in text and "lr = 1" in text
    session = at.session_state["learner::moons_trainer"].session
    assert session.diverged is not None and session.done


def test_a_crafted_resume_checkpoint_is_refused_and_training_goes_on():
    settings = MoonsSettings()
    donor = TrainingSession(settings)
    donor.run_for(3, 10.0)
    checkpoint = torch.load(io.BytesIO(resume_checkpoint(donor.model, donor.optimizer, 1, 0.5, {})),
                            weights_only=True)
    checkpoint["optimizer"]["param_groups"][0]["lr"] = "fast"
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    at = open_page(MOONS)
    at.file_uploader(key="mt_upload").set_value(("fast.pt", buffer.getvalue(),
                                                 "application/octet-stream"))
    at.run()
    assert_clean(at)
    assert "lr = 'fast' is not a valid value" in shown_text(at)
    at.button(key="mt_step").click().run()
    assert_clean(at)
    assert at.session_state["learner::moons_trainer"].session.epoch == 1
