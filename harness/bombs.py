"""The uploads that froze the server (issue 24's reproduction), built the way the probe built
them: shared by the hostile-upload benchmark and the tests that prove the scan refuses them
(tests/unit/moons_trainer/test_checkpoints_bombs.py). Small files, huge objects: each level of
nesting holds the level below twice, so anything that walks the result (hashing, repr, ==)
visits 2**depth leaves.
"""
from __future__ import annotations

import io
import zipfile

import torch

from workbench.moons_trainer.checkpoints import resume_checkpoint
from workbench.moons_trainer.training import TrainingSession


def torch_zip(pkl: bytes) -> bytes:
    """A torch.save archive of `{}` whose data.pkl is replaced by `pkl` (the issue's helper)."""
    base = io.BytesIO()
    torch.save({}, base)
    source = zipfile.ZipFile(io.BytesIO(base.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for info in source.infolist():
            archive.writestr(info.filename, pkl if info.filename.endswith("/data.pkl")
                             else source.read(info.filename))
    return out.getvalue()


def hash_bomb(depth: int, memo_in_order: bool = False) -> bytes:
    """The issue's reproduction: a dict keyed by a tuple nested `depth` deep, each level holding
    the one below twice, so hashing the key visits 2**depth leaves. As reported it overwrites
    memo slot 0 at every level; `memo_in_order` numbers the slots as pickle does instead, so
    nothing but the tuple's size and its use as a key gives it away."""
    if not memo_in_order:
        return b"\x80\x02}" + b"K\x00" + b"q\x00h\x00\x86" * depth + b"K\x01s."
    levels = b"".join(b"q" + bytes([slot]) + b"h" + bytes([slot]) + b"\x86" for slot in range(1, depth + 1))
    return b"\x80\x02}q\x00" + b"K\x00" + levels + b"K\x01s."


def shared_list(depth: int) -> list:
    """A list nested `depth` deep, each level holding the one below twice: `depth` lists in
    memory, 2**depth leaves for anything that walks it (repr, ==, str)."""
    node: list = []
    for _ in range(depth):
        node = [node, node]
    return node


def resume_dict(session: TrainingSession) -> dict:
    """The moons trainer's resume checkpoint of `session`, as a dict to tamper with."""
    saved_file = io.BytesIO(resume_checkpoint(session.model, session.optimizer, 1, 0.5, {"opt": "AdamW"}))
    return torch.load(saved_file, weights_only=True)


def saved(checkpoint: dict) -> bytes:
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    return buffer.getvalue()


def repr_bomb(session: TrainingSession, depth: int) -> bytes:
    """This page's resume checkpoint with the shared list as `param_groups[0]["amsgrad"]`, as
    torch.save writes it: pickle's memo stores each of the `depth` lists once and refers back to
    it (BINGET) the second time, so the file stays small. Each list opens a MARK."""
    checkpoint = resume_dict(session)
    checkpoint["optimizer"]["param_groups"][0]["amsgrad"] = shared_list(depth)
    return saved(checkpoint)
