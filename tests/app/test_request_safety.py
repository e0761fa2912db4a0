"""Links and uploads that once broke a page: each must now be content, not the guard's panel."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from tests.app.apptest import assert_clean, open_page, settle, shown_text
from workbench.moons_trainer.checkpoints import resume_checkpoint
from workbench.moons_trainer.settings import MoonsSettings
from workbench.moons_trainer.training import TrainingSession

ROOT = Path(__file__).resolve().parents[2]
MOONS = "app_pages/moons_trainer/page.py"
TENSORS = "app_pages/tensor_inspector/page.py"


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
        settle(at.button(key="mt_step").click().run())
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
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    assert at.session_state["learner::moons_trainer"].session.epoch == 1


# Found by bench/fuzz.py against the landed app: four reached the guard (int64 overflow of a
# storage or of strides), ten grew the server past 6 GB (a huge leading size of a rank >= 3
# shape, whose slice indices were materialised).
FUZZ_FINDINGS = [
    "combine=broadcast&shape=1000000000000000000%2C1%2C512%2C1000000000%2C512&value=%E2%80%AEevil"
    "&value=%2B&lhs=0",
    "combine=broadcast&present=&shape=1000000001%2C1000000001%2C1000000000000000000",
    "value=-1&present=0&rhs=&ops=unsqueeze%280%29.unflatten%28-3%2C%20%280%29%29.expand%283%2C%204"
    "%2C%20-3%29.flip%280%2C%204%2C%2024%29&dtype=%20float64%20&dtype=BFLOAT16&fill=RANDINT"
    "&shape=0%2C2147483648%2C1000000001%2C2147483648",
    "value=-1.000e%2B06&dtype=%20int8%20&shape=-1%2C2147483648%2C1000000000000000000%2C1000000001"
    "%2C2147483648&seed=%E2%91%A0&rhs=4%3B6&combine=broadcastx",
    "shape=100000000,2,2",
    "shape=1000000000,1000000000,1000000000",
    "shape=1000000000%2C0%2C0%2C4096&dtype=float32x&hide=%2C%2C%2C&ops=unsqueeze%28%29.permute%28%29",
    "shape=1000000001%2C512%2C-1%2C1&lhs=inf",
    "shape=2147483648%2C1%2C1000000000&ops=permute%286%2C%201%29.view%286%2C%20-3%29.expand%283%2C"
    "%202%2C%20-1%2C%206%29.expand%28-3%29.flatten%28-3%2C%200%2C%202%29&value=999998&fill=full",
    "fill=%20randint%20&shape=1000000000000000000%2C2147483648%2C1&rhs=1%2C4096%2C0%2C4096%2C0%2C"
    "1000000000000000000&dtype=int8&value=-615903&seed=2.147e%2B09",
    "hide=hide&seed=21474836470&value=-254550.7469313686&ops=flatten%281000000000%2C%203%29.contiguous"
    "%281000000000%2C%201000000000%2C%2024%2C%204%29.squeeze%281%2C%209223372036854775808%2C%20-1%29"
    ".contiguous%289223372036854775808%29.transpose%28-2%29&shape=4096%2C0%2C1000000000000000000%2C"
    "1000000000000000000%2C1&dtype=INT16",
]


@pytest.mark.spawns
def test_tensor_inspector_fuzz_findings():
    """Through the real router, in a child capped at 1 GB of extra address space: should a fix
    regress, the child fails on its own memory instead of this machine's."""
    script = textwrap.dedent(f"""
        import json, resource, sys
        from urllib.parse import parse_qsl
        sys.path.insert(0, ".")
        from tests.app.apptest import guard_panels, open_page
        open_page({TENSORS!r})            # imports and warm-up happen before the cap
        vm = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + 2**30, vm + 2**30))
        found = {{}}
        for query in {FUZZ_FINDINGS!r}:
            at = open_page({TENSORS!r}, dict(parse_qsl(query, keep_blank_values=True)))
            found[query] = [e.value for e in at.exception] + guard_panels(at)
        print(json.dumps(found))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {query: [] for query in FUZZ_FINDINGS}
