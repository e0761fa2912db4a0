"""Save, validate and load checkpoints of the moons MLP, safely.

Saving is easy: `model.state_dict()` through safetensors or `torch.save`. Loading a file someone
uploaded is not: a `.pt` file is a zip holding a pickle, and unpickling can run any code. PyTorch
says so itself. So an upload passes every gate below, in order, before anything is loaded for
real, and any failure leaves the learner's model untouched:

1. a size cap (bytes), and for safetensors a cap on its JSON header;
2. for `.pt`: a zip whose entries are all stored, not compressed (a re-compressed 0.19 MB file
   can expand to 190 MB of tensors), with a capped total uncompressed size;
3. `torch.load(weights_only=True, map_location="meta")`: only tensors and plain containers are
   unpickled, and no tensor memory is allocated, but keys, shapes and dtypes can be read;
4. exact checks of keys, shapes, dtypes and layout against the current architecture
   (`load_state_dict` would silently cast float64 weights and accept sparse ones);
5. the real load (`weights_only=True`, on the CPU) and a check that every value is finite;
6. the caller then loads into a fresh model with `strict=True`.

This module never imports streamlit.
"""
from __future__ import annotations

import io
import json
import math
import pickle
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from safetensors.torch import load as safetensors_load
from safetensors.torch import save as safetensors_save

MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024          # the largest allowed MLP with Adam state fits
MAX_SAFETENSORS_HEADER = 64 * 1024
RESUME_FORMAT = "pytorch-workbench/moons-resume/1"
SAFETENSORS_DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16,
                      "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32,
                      "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}


class CheckpointRefused(Exception):
    """An upload that failed a gate: `title` names the gate, the message gives the details."""

    def __init__(self, title: str, message: str, explanation: str, fixes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.title = title
        self.explanation = explanation
        self.fixes = fixes


@dataclass
class LoadedCheckpoint:
    """What a validated upload holds: real CPU tensors, checked against the architecture."""

    kind: str                                   # "state_dict" or "resume"
    file_format: str                            # "safetensors" or "pt"
    state_dict: dict[str, torch.Tensor]
    optimizer_state: dict[str, Any] | None = None
    epoch: int = 0
    best_val_loss: float = math.inf
    settings: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Saving
# ---------------------------------------------------------------------------------------------

def cpu_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}


def state_dict_safetensors(model: torch.nn.Module, metadata: Mapping[str, str] | None = None) -> bytes:
    return safetensors_save(cpu_state_dict(model), metadata=dict(metadata or {}))


def state_dict_pt(model: torch.nn.Module) -> bytes:
    buffer = io.BytesIO()
    torch.save(cpu_state_dict(model), buffer)
    return buffer.getvalue()


def resume_checkpoint(model: torch.nn.Module, optimizer: torch.optim.Optimizer, epoch: int,
                      best_val_loss: float, settings: Mapping[str, Any]) -> bytes:
    """Everything needed to carry on training: epoch, model, optimizer state, best val loss.

    Only tensors, numbers, strings, lists and dicts: a `weights_only=True` load accepts it.
    """
    optimizer_state = optimizer.state_dict()
    optimizer_state = {
        "state": {k: {n: (v.detach().cpu() if torch.is_tensor(v) else v) for n, v in s.items()}
                  for k, s in optimizer_state["state"].items()},
        "param_groups": optimizer_state["param_groups"],
    }
    checkpoint = {
        "format": RESUME_FORMAT,
        "epoch": int(epoch),
        "model": cpu_state_dict(model),
        "optimizer": optimizer_state,
        "optimizer_name": type(optimizer).__name__,
        "best_val_loss": float(best_val_loss),
        "settings": dict(settings),
    }
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# Loading: the gates
# ---------------------------------------------------------------------------------------------

def describe_architecture(shapes: Mapping[str, tuple[int, ...]]) -> str:
    """`2 -> 64 -> 32 -> 1` from the weight shapes of consecutive Linear layers."""
    weights = [shape for name, shape in shapes.items() if name.endswith("weight") and len(shape) == 2]
    if not weights:
        return "no Linear layers"
    return " -> ".join(str(w) for w in (weights[0][1], *(shape[0] for shape in weights)))


def _refuse_size(data: bytes, cap: int) -> None:
    if len(data) > cap:
        raise CheckpointRefused(
            "The file is too large", f"{len(data):,} bytes; the limit is {cap:,} bytes.",
            "A checkpoint of this page's MLP is a few kilobytes to a few megabytes. A larger "
            "file cannot be one of them, and reading it would cost memory other learners need.",
            ("download a checkpoint from this page and upload that",))


def _check_zip(data: bytes, cap: int) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise CheckpointRefused("Not a readable .pt file", str(exc),
                                "`torch.save` writes a zip archive; this file is not a valid one.") from None
    compressed = [e.filename for e in entries if e.compress_type != zipfile.ZIP_STORED]
    if compressed:
        raise CheckpointRefused(
            "Compressed entries are refused", "compressed entries: " + ", ".join(compressed[:5]),
            "`torch.save` stores its entries uncompressed. A compressed entry can expand to far "
            "more memory than the upload itself (a 0.19 MB file held 190 MB of tensors), so such "
            "files are refused before anything is read.",
            ("save the checkpoint again with torch.save, without re-zipping it",))
    total = sum(e.file_size for e in entries)
    if total > cap:
        raise CheckpointRefused("The archive is too large", f"{total:,} bytes uncompressed; limit {cap:,}.",
                                "The archive's entries add up to more than a checkpoint of this page's "
                                "model can hold.")


def _torch_load(data: bytes, map_location: str) -> Any:
    buffer = io.BytesIO(data)
    try:
        return torch.load(buffer, weights_only=True, map_location=map_location)
    except (pickle.UnpicklingError, RuntimeError, ValueError, EOFError, KeyError, AttributeError,
            TypeError, zipfile.BadZipFile) as exc:
        raise CheckpointRefused(
            "The file holds more than plain tensors",
            str(exc).strip().splitlines()[0][:400] if str(exc).strip() else type(exc).__name__,
            "The file was opened with `torch.load(weights_only=True)`, which unpickles only "
            "tensors and plain containers (dict, list, numbers, strings). This file needs "
            "something else to unpickle: possibly code that would run on this server. Nothing "
            "from it was loaded and your model is unchanged.",
            ("save only `model.state_dict()`, or use safetensors",)) from None


def _safetensors_header(data: bytes) -> dict[str, Any]:
    if len(data) < 8:
        raise CheckpointRefused("Not a checkpoint", "the file is shorter than 8 bytes",
                                "Neither a `torch.save` zip nor a safetensors file.")
    header_len = int.from_bytes(data[:8], "little")
    if header_len > MAX_SAFETENSORS_HEADER or 8 + header_len > len(data):
        raise CheckpointRefused("Not a readable safetensors file",
                                f"header length {header_len:,} bytes does not fit the file",
                                "A safetensors file starts with the length of its JSON header.")
    try:
        header = json.loads(data[8:8 + header_len])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointRefused("Not a readable safetensors file", str(exc),
                                "The JSON header of the safetensors file could not be read.") from None
    if not isinstance(header, dict):
        raise CheckpointRefused("Not a readable safetensors file", "the header is not a JSON object",
                                "A safetensors header maps tensor names to dtype, shape and offsets.")
    return header


def detect_format(data: bytes) -> str:
    """'pt' for a torch.save zip, 'safetensors', or 'unknown'."""
    if data[:4] == b"PK\x03\x04":
        return "pt"
    if len(data) >= 9 and data[8:9] == b"{":
        return "safetensors"
    return "unknown"


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: torch.dtype
    strided: bool = True


def _spec_of(t: torch.Tensor) -> TensorSpec:
    return TensorSpec(tuple(t.shape), t.dtype, t.layout == torch.strided)


def compare_to_architecture(found: Mapping[str, TensorSpec], expected: Mapping[str, TensorSpec]) -> list[str]:
    """Every difference between a checkpoint and the model, in words; empty when they match."""
    problems = []
    missing = [k for k in expected if k not in found]
    unexpected = [k for k in found if k not in expected]
    if missing:
        problems.append("missing keys: " + ", ".join(missing))
    if unexpected:
        problems.append("unexpected keys: " + ", ".join(unexpected))
    for name, spec in found.items():
        want = expected.get(name)
        if want is None:
            continue
        if not spec.strided:
            problems.append(f"{name}: not a dense (strided) tensor")
        if spec.shape != want.shape:
            problems.append(f"{name}: shape {spec.shape} in the file, {want.shape} in the model")
        if spec.dtype != want.dtype:
            problems.append(f"{name}: dtype {str(spec.dtype).removeprefix('torch.')} in the file, "
                            f"{str(want.dtype).removeprefix('torch.')} in the model")
    return problems


def _refuse_mismatch(problems: list[str], found: Mapping[str, TensorSpec],
                     expected: Mapping[str, TensorSpec]) -> None:
    if not problems:
        return
    file_arch = describe_architecture({k: s.shape for k, s in found.items()})
    model_arch = describe_architecture({k: s.shape for k, s in expected.items()})
    raise CheckpointRefused(
        "The checkpoint does not fit this model",
        "\n".join(problems[:12]),
        f"The file's parameters describe the network **{file_arch}**; the page's model is "
        f"**{model_arch}**. `load_state_dict(strict=True)` needs every name, shape and dtype to "
        "match exactly, so nothing was loaded and your model is unchanged.",
        ("set the hidden layers (and activation) the checkpoint was trained with, then upload again",))


def _require_finite(tensors: Mapping[str, torch.Tensor], what: str) -> None:
    bad = [k for k, v in tensors.items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise CheckpointRefused("The checkpoint holds NaN or infinite values", f"{what}: " + ", ".join(bad),
                                "A model with a NaN or infinite weight predicts NaN everywhere. "
                                "`load_state_dict` would accept it silently; this page does not.",
                                ("train again from a fresh model and save before the loss diverges",))


def _as_state_dict(obj: Any, what: str) -> dict[str, torch.Tensor]:
    if not isinstance(obj, Mapping) or not all(isinstance(k, str) and torch.is_tensor(v)
                                               for k, v in obj.items()):
        raise CheckpointRefused("Not a state_dict", f"{what} is a {type(obj).__name__}, not a mapping "
                                "of names to tensors",
                                "A state_dict maps each parameter's name (such as `net.0.weight`) to "
                                "a tensor. Save one with `torch.save(model.state_dict(), path)`.")
    return dict(obj)


def _check_optimizer_state(opt_state: Any, expected: Mapping[str, TensorSpec]) -> None:
    """The optimizer's per-parameter tensors must have each parameter's shape (or be scalars)."""
    shapes = [spec.shape for spec in expected.values()]
    if not (isinstance(opt_state, Mapping) and isinstance(opt_state.get("state"), Mapping)
            and isinstance(opt_state.get("param_groups"), list) and len(opt_state["param_groups"]) == 1):
        raise CheckpointRefused("The optimizer state is malformed",
                                "expected {'state': ..., 'param_groups': [...]}",
                                "`optimizer.state_dict()` has a `state` per parameter and a list of "
                                "parameter groups; this page's optimizer has one group.")
    group = opt_state["param_groups"][0]
    if not isinstance(group, Mapping) or list(group.get("params", [])) != list(range(len(shapes))):
        raise CheckpointRefused("The optimizer state does not fit this model",
                                "its parameter group does not list this model's parameters",
                                "The optimizer state was saved for a model with a different number "
                                "of parameters.")
    for index, per_param in opt_state["state"].items():
        if not isinstance(index, int) or not 0 <= index < len(shapes) or not isinstance(per_param, Mapping):
            raise CheckpointRefused("The optimizer state does not fit this model",
                                    f"state entry {index!r} names no parameter of this model",
                                    "Each optimizer state entry belongs to one parameter by index.")
        for name, value in per_param.items():
            if torch.is_tensor(value) and value.dim() > 0 and tuple(value.shape) != shapes[index]:
                raise CheckpointRefused("The optimizer state does not fit this model",
                                        f"state[{index}][{name!r}] has shape {tuple(value.shape)}, "
                                        f"the parameter has {shapes[index]}",
                                        "Optimizer buffers such as Adam's moments have the shape of "
                                        "their parameter.")


def read_checkpoint(data: bytes, model: torch.nn.Module, optimizer_name: str | None = None,
                    cap: int = MAX_CHECKPOINT_BYTES) -> LoadedCheckpoint:
    """Validate an uploaded checkpoint against `model`'s architecture; raise CheckpointRefused."""
    _refuse_size(data, cap)
    expected = {k: _spec_of(v) for k, v in model.state_dict().items()}
    kind = detect_format(data)
    if kind == "safetensors":
        header = _safetensors_header(data)
        found: dict[str, TensorSpec] = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            if not isinstance(entry, dict) or entry.get("dtype") not in SAFETENSORS_DTYPES:
                raise CheckpointRefused("Not a readable safetensors file",
                                        f"entry {name!r} has no known dtype",
                                        "Each safetensors entry names a dtype such as F32.")
            found[name] = TensorSpec(tuple(int(d) for d in entry.get("shape", [])),
                                     SAFETENSORS_DTYPES[entry["dtype"]])
        _refuse_mismatch(compare_to_architecture(found, expected), found, expected)
        try:
            tensors = safetensors_load(data)
        except Exception as exc:  # safetensors raises its own SafetensorError for corrupt files
            raise CheckpointRefused("Not a readable safetensors file", str(exc)[:400],
                                    "The header matched, but the tensor data is damaged.") from None
        _require_finite(tensors, "parameters")
        return LoadedCheckpoint("state_dict", "safetensors", tensors)
    if kind != "pt":
        raise CheckpointRefused(
            "Not a checkpoint this page reads", "neither a torch.save zip archive nor a safetensors file",
            "This page accepts a `state_dict` saved with `torch.save` (the zip format of PyTorch "
            "1.6 and later) or with `safetensors.torch.save_file`, and its own resume checkpoints. "
            "Old-style raw pickles are refused: reading one safely is not possible.",
            ("download a checkpoint from this page to see the expected format",))

    _check_zip(data, cap)
    on_meta = _torch_load(data, "meta")
    resume = isinstance(on_meta, Mapping) and on_meta.get("format") == RESUME_FORMAT
    meta_state = _as_state_dict(on_meta.get("model") if resume else on_meta, "the model state")
    found = {k: _spec_of(v) for k, v in meta_state.items()}
    _refuse_mismatch(compare_to_architecture(found, expected), found, expected)
    if resume:
        saved_name = on_meta.get("optimizer_name")
        if optimizer_name is not None and saved_name != optimizer_name:
            # The name comes from the file: only letters and digits go into the (Markdown) fix.
            plain = isinstance(saved_name, str) and saved_name.isascii() and saved_name.isalnum()
            raise CheckpointRefused(
                "The resume checkpoint is for another optimizer",
                f"saved with {saved_name}, the page uses {optimizer_name}",
                "An optimizer's state (momentum, Adam's moments) only means something to the same "
                "kind of optimizer.", (f"choose {saved_name if plain else 'that optimizer'} as the "
                                       "optimizer, then upload again",))
        _check_optimizer_state(on_meta.get("optimizer"), expected)

    real = _torch_load(data, "cpu")
    state = _as_state_dict(real.get("model") if resume else real, "the model state")
    _require_finite(state, "parameters")
    if not resume:
        return LoadedCheckpoint("state_dict", "pt", state)
    opt_state = real["optimizer"]
    for index, per_param in opt_state["state"].items():
        _require_finite({f"state[{index}][{k}]": v for k, v in per_param.items() if torch.is_tensor(v)},
                        "optimizer state")
    epoch = real.get("epoch")
    best = real.get("best_val_loss")
    settings = real.get("settings")
    return LoadedCheckpoint(
        "resume", "pt", state, opt_state,
        epoch=int(epoch) if isinstance(epoch, int) and epoch >= 0 else 0,
        best_val_loss=float(best) if isinstance(best, int | float) else math.inf,
        settings=dict(settings) if isinstance(settings, Mapping) else {})


def load_into_fresh(fresh: torch.nn.Module, loaded: LoadedCheckpoint) -> torch.nn.Module:
    """The last gate: a strict load into a fresh model (raises if anything still differs)."""
    device = next(fresh.parameters()).device
    fresh.load_state_dict({k: v.to(device) for k, v in loaded.state_dict.items()}, strict=True)
    return fresh


@dataclass(frozen=True)
class ReloadCheck:
    """The lesson's last step: save the state_dict, reload it into a fresh model, compare."""

    identical_predictions: bool
    max_logit_difference: float
    accuracy: float
    f1: float
    file_bytes: int


def save_and_reload(model: torch.nn.Module, fresh: torch.nn.Module, x_test: torch.Tensor,
                    y_test: torch.Tensor) -> ReloadCheck:
    """Round-trip `model` through `torch.save` bytes and the safe loader into `fresh`."""
    data = state_dict_pt(model)
    load_into_fresh(fresh, read_checkpoint(data, model))
    model.eval()
    fresh.eval()
    with torch.no_grad():
        before, after = model(x_test), fresh(x_test)
    predicted = (after > 0).long()
    target = y_test.long()
    tp = int(((predicted == 1) & (target == 1)).sum())
    fp = int(((predicted == 1) & (target == 0)).sum())
    fn = int(((predicted == 0) & (target == 1)).sum())
    return ReloadCheck(
        identical_predictions=bool(torch.equal((before > 0).long(), predicted)),
        max_logit_difference=float((before - after).abs().max()) if len(before) else 0.0,
        accuracy=float((predicted == target).float().mean()),
        f1=2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        file_bytes=len(data))
