"""Uploads built to freeze the server or to crash the checks: refused, fast, with a reason.

A shared-reference bomb that regressed would hash or print billions of items, so those are read
in a child process with a memory cap and a wall-clock limit: a regression fails the test instead
of freezing the suite. No assertion is on time (it would flake under load): each bomb must be
refused by the pickle scan, before `torch.load` is ever called, and the scan is linear in the
file's size. The timings are measured by hand (see the issue's report), not here.
"""
from __future__ import annotations

import dataclasses
import io
import json
import math
import pickletools
import struct
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest
import torch

from harness.bombs import hash_bomb, repr_bomb, resume_dict, saved, shared_list, torch_zip
from workbench.moons_trainer import checkpoints
from workbench.moons_trainer.checkpoints import (
    CheckpointRefused,
    read_checkpoint,
    resume_checkpoint,
    state_dict_safetensors,
)
from workbench.moons_trainer.pickle_scan import (
    CAPS,
    DAMAGED,
    FOREIGN,
    LIMIT,
    PAGE_LARGEST,
    PickleFacts,
    PickleRefused,
    scan_torch_file,
)
from workbench.moons_trainer.settings import MAX_EPOCHS, MAX_LAYERS, MAX_WIDTH, OPTIMIZERS, MoonsSettings
from workbench.moons_trainer.training import TrainingSession

QUICK = MoonsSettings(n=300, epochs=2)      # what the shared `trained` fixture trains

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def no_torch_load(monkeypatch):
    """torch.load fails the test: a refusal must come from the scan, before any unpickling."""
    def refuse(*args, **kwargs):
        pytest.fail("torch.load was called on a file the scan should have refused")
    monkeypatch.setattr(torch, "load", refuse)


def unicode(text: str) -> bytes:
    """BINUNICODE: a string as torch.save writes it."""
    encoded = text.encode()
    return b"X" + struct.pack("<I", len(encoded)) + encoded


PLACEHOLDER = "amsgrad-placeholder"


def repr_bomb_by_hand(session: TrainingSession, depth: int) -> bytes:
    """The same resume checkpoint, with the shared list written by hand into its pickle without
    a single MARK (APPEND by APPEND), so that only its unfolded size can give it away.

    `amsgrad` is moved to the end of the file (dicts keep their order) so that nothing after it
    refers to the memo: its placeholder string and that string's memo slot `n` become the lists
    `depth` ... 0 in slots n ... n + depth, then each inner list appended twice to the one
    above it, the second time by reference (LONG_BINGET).
    """
    checkpoint = resume_dict(session)
    optimizer = checkpoint.pop("optimizer")
    group = optimizer["param_groups"][0]
    del group["amsgrad"]
    group["amsgrad"] = PLACEHOLDER
    optimizer["param_groups"] = optimizer.pop("param_groups")
    checkpoint["optimizer"] = optimizer
    archive = zipfile.ZipFile(io.BytesIO(saved(checkpoint)))
    name = next(n for n in archive.namelist() if n.endswith("/data.pkl"))
    pkl = archive.read(name)
    ops = list(pickletools.genops(pkl))
    at = next(i for i, (op, arg, _) in enumerate(ops) if arg == PLACEHOLDER)
    assert ops[at + 1][0].name in ("BINPUT", "LONG_BINPUT")
    slot = ops[at + 1][1]
    assert not any(op.name.endswith("PUT") or op.name.endswith("GET") for op, _, _ in ops[at + 2:])
    opening = b"".join(b"]r" + struct.pack("<I", slot + level) for level in range(depth + 1))
    closing = b"".join(b"aj" + struct.pack("<I", slot + level) + b"a" for level in range(depth, 0, -1))
    crafted = pkl[:ops[at][2]] + opening + closing + pkl[ops[at + 2][2]:]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as rewritten:
        for info in archive.infolist():
            rewritten.writestr(info.filename, crafted if info.filename == name else archive.read(info))
    return out.getvalue()


CHILD = """
import json, resource, sys
import torch
from workbench.moons_trainer.checkpoints import CheckpointRefused, read_checkpoint
from workbench.moons_trainer.model import MLP, build_optimizer

calls = []
real_load = torch.load
def watched(*args, **kwargs):
    calls.append(1)
    return real_load(*args, **kwargs)
torch.load = watched
model = MLP()
optimizer = build_optimizer("AdamW", model.parameters(), 0.003, 1e-4)
# 2 GiB more address space than the interpreter and torch already hold.
with open("/proc/self/statm") as statm:
    held = int(statm.read().split()[0]) * resource.getpagesize()
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (held + (2 << 30), hard))
for path in sys.argv[1:]:
    calls.clear()
    print(json.dumps({"file": path, "started": True}), flush=True)
    try:
        read_checkpoint(open(path, "rb").read(), model, "AdamW", optimizer=optimizer)
        out = {"outcome": "loaded"}
    except CheckpointRefused as refused:
        out = {"outcome": "refused", "title": refused.title, "message": str(refused)}
    except BaseException as exc:
        out = {"outcome": type(exc).__name__, "message": str(exc)[:300]}
    out.update(file=path, torch_load_calls=len(calls))
    print(json.dumps(out), flush=True)
"""


def read_in_child(files: dict[str, bytes], tmp_path: Path, limit_s: float = 60) -> dict[str, dict]:
    """read_checkpoint of each file in a fresh interpreter, capped at 2 GiB more memory and
    `limit_s` seconds in all: {name: what happened}. A file that froze fails the test by name."""
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / f"{name}.pt"
        paths[name].write_bytes(data)
    names = {str(path): name for name, path in paths.items()}
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, *names], cwd=ROOT, capture_output=True,
                              text=True, timeout=limit_s, check=False)
        stdout = done.stdout
    except subprocess.TimeoutExpired as expired:
        # TimeoutExpired holds bytes even with text=True; what the child printed until then.
        stdout = (expired.stdout or b"").decode() if isinstance(expired.stdout, bytes) \
            else expired.stdout or ""
    results: dict[str, dict] = {}
    for line in stdout.splitlines():
        record = json.loads(line)
        results[names[record["file"]]] = record
    stuck = [name for name, record in results.items() if record.get("started") and "outcome" not in record]
    assert not stuck, f"{stuck} froze the reader for {limit_s} s"
    assert set(results) == set(files), f"the child stopped early: {stdout[-2000:]}"
    return results


# ---------------------------------------------------------------------------------------------
# The bombs: refused by the scan, in a child that cannot freeze the suite.
# ---------------------------------------------------------------------------------------------

@pytest.mark.spawns
def test_shared_reference_bombs_are_refused_by_the_scan_before_torch_load(trained, tmp_path):
    bombs = {
        "hash_bomb_as_reported_d40": torch_zip(hash_bomb(40)),
        "hash_bomb_memo_in_order_d40": torch_zip(hash_bomb(40, memo_in_order=True)),
        "repr_bomb_resume_d30": repr_bomb(trained, 30),
        "repr_bomb_resume_by_hand_d30": repr_bomb_by_hand(trained, 30),
    }
    assert all(len(data) < 64 * 1024 for data in bombs.values())      # small files, huge objects
    results = read_in_child(bombs, tmp_path)
    for name, result in results.items():
        assert result["outcome"] == "refused", (name, result)
        assert result["torch_load_calls"] == 0, (name, result)
    # As reported, each level rewrites memo slot 0: pickle never does.
    assert results["hash_bomb_as_reported_d40"]["title"] == DAMAGED
    assert "memo slot 0" in results["hash_bomb_as_reported_d40"]["message"]
    # As torch.save writes it, each of the 30 lists opens a MARK, past the cap on open MARKs.
    assert results["repr_bomb_resume_d30"]["title"] == LIMIT
    assert f"more than {CAPS.mark_depth} MARKs" in results["repr_bomb_resume_d30"]["message"]
    # Numbered as pickle numbers them, and without MARKs, they give themselves away by their
    # unfolded size: the scan counts every shared reference again, without building anything.
    for name in ("hash_bomb_memo_in_order_d40", "repr_bomb_resume_by_hand_d30"):
        assert results[name]["title"] == LIMIT, results[name]
        assert f"unfolds to more than {CAPS.unfolded:,}" in results[name]["message"]


@pytest.mark.parametrize("depth", [40, 3])
def test_a_tuple_is_never_a_dict_key_however_small(depth, no_torch_load):
    data = torch_zip(hash_bomb(depth, memo_in_order=True))
    with pytest.raises(PickleRefused) as refused:
        scan_torch_file(data)
    expected = "unfolds" if 2 ** depth > CAPS.unfolded else "uses a tuple as a dict key"
    assert expected in str(refused.value)


def test_the_scan_counts_every_shared_reference_again():
    """The root dict, its key and a shared list `depth` deep: 2**(depth+1) + 1 nodes a walk
    visits, though the pickle holds only `depth` + 1 lists."""
    for depth in (8, 12):
        assert scan_torch_file(repr_bomb_bytes(depth)).unfolded == 2 ** (depth + 1) + 1
    with pytest.raises(PickleRefused, match="unfolds"):
        scan_torch_file(repr_bomb_bytes(13))


def repr_bomb_bytes(depth: int) -> bytes:
    buffer = io.BytesIO()
    torch.save({"amsgrad": shared_list(depth)}, buffer)
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# Every cap, one crafted pickle each (the dict around them keeps the root a dict).
# ---------------------------------------------------------------------------------------------

def _in_dict(value: bytes) -> bytes:
    return b"\x80\x02}" + unicode("key") + value + b"s."


CAP_BREAKERS = {
    "pickle_bytes": (b"\x80\x02}" + unicode("k") + unicode("x" * 1000) * 70 + b"s.", "bytes; the limit"),
    "opcodes": (_in_dict(b"](" + b"K\x01" * (CAPS.opcodes + 1) + b"e"), "opcodes"),
    "memo_slots": (_in_dict(b"](" + b"".join(b"K\x01r" + struct.pack("<I", slot + 1)
                                            for slot in range(CAPS.memo_slots + 1)) + b"e"),
                   "objects in its memo"),
    "memo_reads": (_in_dict(b"]" + unicode("s") + b"r\x01\x00\x00\x00a(" + b"j\x01\x00\x00\x00"
                            * (CAPS.memo_reads + 1) + b"e"), "refers back to earlier objects"),
    "nesting": (_in_dict(b"]" * 40 + b"a" * 39), f"nest more than {CAPS.nesting} deep"),
    "mark_depth": (_in_dict(b"(" * 40), "MARKs open at once"),
    "longest_string": (_in_dict(unicode("x" * (CAPS.longest_string + 1))), "a string of"),
    "int_bits": (_in_dict(b"\x8a\x09" + b"\x01" * 9), "an integer of 65 bits"),
}


@pytest.mark.parametrize("cap", list(CAP_BREAKERS))
def test_each_cap_refuses_on_its_own(cap, no_torch_load, trained):
    pkl, reason = CAP_BREAKERS[cap]
    # memo slot 0 is the dict in every pickle above that reads the memo, as pickle would number it
    pkl = pkl.replace(b"\x80\x02}", b"\x80\x02}q\x00", 1)
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(torch_zip(pkl), trained.model)
    assert refused.value.title == LIMIT, str(refused.value)
    assert reason in str(refused.value)


FOREIGN_PICKLES = {
    "a GLOBAL that runs code": (b"\x80\x02}" + b"cos\nsystem\n" + b".", "'os.system'"),
    "a set (hashes its items)": (_in_dict(b"\x8f"), "EMPTY_SET"),
    "a small tuple as a key": (b"\x80\x02}K\x01K\x02\x86K\x03s.", "tuple as a dict key"),
    "a storage called directly": (_in_dict(b"ctorch\nFloatStorage\n)R"), "REDUCE calls 'torch.FloatStorage'"),
    "BUILD on a plain dict": (b"\x80\x02}}b.", "BUILD cannot add items to a dict"),
    "a list at the root": (b"\x80\x02]."," not a dict of tensors"),
}


@pytest.mark.parametrize("case", list(FOREIGN_PICKLES))
def test_what_torch_save_of_a_state_dict_never_writes_is_refused(case, no_torch_load, trained):
    pkl, reason = FOREIGN_PICKLES[case]
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(torch_zip(pkl), trained.model)
    assert refused.value.title in (FOREIGN, DAMAGED), str(refused.value)
    assert reason in str(refused.value)


# ---------------------------------------------------------------------------------------------
# Malformed pickles: the unpickler's IndexError, KeyError and AssertionError became refusals.
# ---------------------------------------------------------------------------------------------

MALFORMED = {
    # torch's persistent_load asserts its id is a tuple (AssertionError)
    "a persistent id that is an int": (_in_dict(b"K\x00Q"), "persistent id"),
    # the unpickler pops an empty stack (IndexError)
    "STOP on an empty stack": (b"\x80\x02.", "stops with 0 item(s)"),
    # TUPLE without MARK pops an empty meta stack (IndexError)
    "a MARK never opened": (_in_dict(b"K\x01t"), "MARK that was never opened"),
    # BININT1 with its byte cut off: read(1)[0] of b"" (IndexError)
    "a truncated opcode": (b"\x80\x02}K", "cannot be read"),
    # BINGET of a slot never written (KeyError: 5, shown as "5")
    "a missing memo index": (_in_dict(b"h\x05"), "reads memo slot 5, which it never wrote"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_pickles_are_refused_by_the_scan_with_a_reason(case, no_torch_load, trained):
    pkl, reason = MALFORMED[case]
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(torch_zip(pkl), trained.model)
    assert refused.value.title == DAMAGED
    assert reason in str(refused.value)


@pytest.mark.parametrize("case", list(MALFORMED))
def test_whatever_torch_load_raises_on_a_file_is_a_refusal(case, monkeypatch, trained):
    """Even with the scan out of the way, torch.load's IndexError, KeyError or AssertionError
    never reaches the page's error guard: it is a refusal that names what went wrong."""
    monkeypatch.setattr(checkpoints, "scan_torch_zip", lambda archive: None, raising=False)
    pkl, _ = MALFORMED[case]
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(torch_zip(pkl), trained.model)
    message = str(refused.value)
    assert message.strip() not in ("", "5")
    assert refused.value.title and refused.value.explanation
    if case == "a missing memo index":
        assert "KeyError" in message


@pytest.mark.parametrize("entries, reason", [
    ({"archive/data.pkl": None, "other/data.pkl": None}, "2 data.pkl"),
    ({"archive/data.pkl": None, "archive/evil.py": b"import os"}, "torch.save never writes"),
    ({"archive/data.pkl": None, "archive/version": b"3\n" * 1000}, "torch.save writes a few"),
    ({"archive/data.pkl": None}, None),
])
def test_the_archive_holds_only_what_torch_save_writes(entries, reason, trained):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in entries.items():
            archive.writestr(name, b"\x80\x02}." if data is None else data)
    if reason is None:      # two entries of one name: the scan and torch might read different ones
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with zipfile.ZipFile(out, "a") as archive:
                archive.writestr("archive/data.pkl", b"\x80\x02}.")
        reason = "two entries of the same name"
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(out.getvalue(), trained.model)
    assert reason in str(refused.value)


# ---------------------------------------------------------------------------------------------
# The page's own files pass, far below every cap.
# ---------------------------------------------------------------------------------------------

def _largest(opt: str) -> MoonsSettings:
    return MoonsSettings(n=200, hidden=(MAX_WIDTH,) * MAX_LAYERS, opt=opt, epochs=1, dropout=0.1)


@pytest.fixture(scope="module")
def largest_files() -> dict[str, bytes]:
    """The largest checkpoints the page writes: MAX_LAYERS hidden layers of MAX_WIDTH, a resume
    file per optimizer, and torch.save of `model.state_dict()` (an OrderedDict with metadata)."""
    files = {}
    for opt in OPTIMIZERS:
        session = TrainingSession(_largest(opt))
        session.run_for(3, 30.0)
        files[opt] = resume_checkpoint(session.model, session.optimizer, 1, math.inf, {
            "dataset": "moons", "hidden": list(session.settings.hidden), "act": "ReLU", "opt": opt,
            "seed": 2**31 - 1})
    buffer = io.BytesIO()
    torch.save(session.model.state_dict(), buffer)
    files["state_dict()"] = buffer.getvalue()
    return files


def test_the_pages_largest_files_load_and_stay_far_below_every_cap(largest_files):
    measured = [scan_torch_file(data) for data in largest_files.values()]
    for field in dataclasses.fields(PickleFacts):
        largest = max(getattr(facts, field.name) for facts in measured)
        # pickle_scan documents these figures next to the caps: they must stay true.
        assert largest <= getattr(PAGE_LARGEST, field.name), field.name
        margin = 5 if field.name in ("nesting", "mark_depth") else 10
        assert getattr(CAPS, field.name) >= margin * getattr(PAGE_LARGEST, field.name), field.name
    for opt in OPTIMIZERS:
        session = TrainingSession(_largest(opt))
        loaded = read_checkpoint(largest_files[opt], session.model, opt, optimizer=session.optimizer)
        assert loaded.kind == "resume" and loaded.best_val_loss == math.inf
    assert read_checkpoint(largest_files["state_dict()"], session.model).kind == "state_dict"


# ---------------------------------------------------------------------------------------------
# Resume checkpoints: the epoch and the best validation loss.
# ---------------------------------------------------------------------------------------------

def _resume_with(session: TrainingSession, **changes) -> bytes:
    checkpoint = torch.load(io.BytesIO(resume_checkpoint(session.model, session.optimizer, 1, 0.5,
                                                         {"opt": "AdamW"})), weights_only=True)
    checkpoint.update(changes)
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    return buffer.getvalue()


def test_a_huge_epoch_is_refused_and_never_printed(trained):
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(_resume_with(trained, epoch=2**2000), trained.model, "AdamW",
                        optimizer=trained.optimizer)
    shown = " ".join([refused.value.title, str(refused.value), refused.value.explanation])
    assert str(2**2000)[:12] not in shown and len(shown) < 2000
    assert "2,001 bits" in shown


@pytest.mark.parametrize("epoch", [10**6, MAX_EPOCHS + 1, -1, True, 2.0, "3", None])
def test_a_resume_epoch_outside_the_pages_range_is_refused(trained, epoch):
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(_resume_with(trained, epoch=epoch), trained.model, "AdamW",
                        optimizer=trained.optimizer)
    assert refused.value.title == "The resume checkpoint's epoch is not valid"
    assert f"epoch 0 to {MAX_EPOCHS}" in str(refused.value)


@pytest.mark.parametrize("loss", [math.nan, -1.0, -math.inf, "0.5", None, True])
def test_a_best_validation_loss_that_is_not_a_loss_is_refused(trained, loss):
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(_resume_with(trained, best_val_loss=loss), trained.model, "AdamW",
                        optimizer=trained.optimizer)
    assert refused.value.title == "The resume checkpoint's best validation loss is not valid"


@pytest.mark.parametrize("epoch, loss", [(0, math.inf), (MAX_EPOCHS, 0.0), (3, 0.25)])
def test_the_pages_own_epochs_and_losses_load(trained, epoch, loss):
    """inf is what this page writes when no epoch has been validated yet."""
    data = resume_checkpoint(trained.model, trained.optimizer, epoch, loss, {"opt": "AdamW"})
    loaded = read_checkpoint(data, trained.model, "AdamW", optimizer=trained.optimizer)
    assert (loaded.epoch, loaded.best_val_loss) == (epoch, loss)


def test_an_optimizer_name_from_the_file_is_described_not_printed(trained):
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(_resume_with(trained, optimizer_name=shared_list(8)), trained.model, "AdamW")
    assert "saved with a list of 2 items" in str(refused.value)
    assert "choose that optimizer" in refused.value.fixes[0]


# ---------------------------------------------------------------------------------------------
# Safetensors headers.
# ---------------------------------------------------------------------------------------------

def _safetensors(header: bytes, tail: bytes = b"") -> bytes:
    return len(header).to_bytes(8, "little") + header + tail


def test_a_deeply_nested_safetensors_header_is_refused_before_parsing(trained):
    header = b'{"a": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(_safetensors(header), trained.model)
    assert refused.value.title == "Not a readable safetensors file"
    assert "nests 30,001 levels deep" in str(refused.value)


def test_a_header_over_the_cap_says_the_cap_refused_it(trained):
    data = state_dict_safetensors(trained.model)
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    header["__metadata__"] = {"padding": "x" * 103_000}
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(_safetensors(json.dumps(header).encode(), data[8 + length:]), trained.model)
    assert refused.value.title == "The safetensors header is too large"
    assert f"up to {checkpoints.MAX_SAFETENSORS_HEADER:,} bytes" in str(refused.value)


def test_a_header_longer_than_the_file_says_so(trained):
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint((1000).to_bytes(8, "little") + b"{}", trained.model)
    assert "holds only 2 bytes" in str(refused.value)


# ---------------------------------------------------------------------------------------------
# Messages never print an uploaded object whole.
# ---------------------------------------------------------------------------------------------

def test_describe_value_is_short_whatever_it_is_given():
    describe_value = checkpoints.describe_value
    assert describe_value(shared_list(60)).startswith("a list of 2 items")
    assert describe_value(2**2000) == "an integer of 2,001 bits"
    assert len(describe_value({"k" * 10_000: "v" * 10_000})) <= 60
    assert describe_value(torch.zeros(3, 2)) == "a float32 tensor of shape (3, 2)"
    assert describe_value("AdamW") == "'AdamW'"


# ---------------------------------------------------------------------------------------------
# Uploaded weights that overflow float32 are blamed for the divergence, not the learning rate.
# ---------------------------------------------------------------------------------------------

def test_a_divergence_from_huge_uploaded_weights_does_not_blame_the_learning_rate(trained):
    state = {k: v.clone() for k, v in trained.model.state_dict().items()}
    state["net.0.weight"].fill_(3e38)           # finite: the upload is accepted
    buffer = io.BytesIO()
    torch.save(state, buffer)
    session = TrainingSession(QUICK)
    loaded = read_checkpoint(buffer.getvalue(), session.model, "AdamW", optimizer=session.optimizer)
    session.replace_weights(loaded.state_dict, source="huge.pt")
    session.step_epoch()
    divergence = session.diverged
    assert divergence is not None and divergence.step == 1
    assert divergence.caused_by_uploaded_weights
    text = divergence.explanation(session.settings)
    assert "lr =" not in text and "learning rate played no part" in text and "3e+38" in text
    advice = divergence.advice(session.settings)
    assert "Reset" in advice and "lower the learning rate" not in advice
