"""Save, validate and load checkpoints of the moons MLP, safely.

Saving is easy: `model.state_dict()` through safetensors or `torch.save`. Loading a file someone
uploaded is not: a `.pt` file is a zip holding a pickle, and unpickling can run any code. PyTorch
says so itself. So an upload passes every gate below, in order, before anything is loaded for
real, and any failure leaves the learner's model untouched:

1. a size cap (bytes), and for safetensors caps on its JSON header's size and nesting;
2. for `.pt`: a zip whose entries are all stored, not compressed (a re-compressed 0.19 MB file
   can expand to 190 MB of tensors), with a capped total uncompressed size, holding only the
   entries torch.save writes;
3. its pickle read opcode by opcode without building anything (`pickle_scan`): only what a
   torch.save of tensors, dicts, lists and numbers writes, and within caps, so that no shared-
   reference bomb reaches the unpickler (`weights_only=True` does not guard against one);
4. `torch.load(weights_only=True, map_location="meta")`: only tensors and plain containers are
   unpickled, and no tensor memory is allocated, but keys, shapes and dtypes can be read;
5. exact checks of keys, shapes, dtypes and layout against the current architecture
   (`load_state_dict` would silently cast float64 weights and accept sparse ones), and of a
   resume checkpoint's epoch, best validation loss and optimizer state;
6. the real load (`weights_only=True`, on the CPU) and a check that every value is finite;
7. the caller then loads into a fresh model with `strict=True`.

Every failure on the way, whatever raised it, is a `CheckpointRefused` with a message saying
what is wrong; no message quotes the file's objects except through `describe_value`.

This module never imports streamlit.
"""
from __future__ import annotations

import copy
import io
import itertools
import json
import math
import pickle
import re
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from safetensors.torch import load as safetensors_load
from safetensors.torch import save as safetensors_save

from workbench.common.errors import WEIGHTS_ONLY, ExplainedError
from workbench.moons_trainer.pickle_scan import DAMAGED, FOREIGN, LIMIT, PickleRefused, scan_torch_zip
from workbench.moons_trainer.settings import FEATURE_LABELS, MAX_EPOCHS

# The largest file this page saves is a resume checkpoint of the widest, deepest MLP the settings
# allow with Adam's state: 2,392,363 bytes. 3 MiB fits it with 31% to spare; it equals
# server.maxUploadSize (.streamlit/config.toml), and tests/unit/moons_trainer/test_checkpoints.py
# checks that the largest real file fits both.
MAX_CHECKPOINT_BYTES = 3 * 1024 * 1024
MAX_SAFETENSORS_HEADER = 64 * 1024
# Why a file much larger is refused: said once, for the upload's size and for its unpickling.
CHECKPOINT_SIZE = "A checkpoint of this page's model is a few kilobytes to a few megabytes."
# A safetensors header nests 3 deep ({name: {"shape": [...]}}); json.loads recurses per level
# and raises RecursionError near a thousand, so nesting is measured before it parses anything.
MAX_SAFETENSORS_NESTING = 8
RESUME_FORMAT = "pytorch-workbench/moons-resume/1"
SAFETENSORS_DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16,
                      "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32,
                      "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}
UNCHANGED = " Nothing was loaded; your model is unchanged."


class CheckpointRefused(Exception):
    """An upload that failed a gate: `title` names the gate, the message gives the details."""

    def __init__(self, title: str, message: str, explanation: str, fixes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.title = title
        self.explanation = explanation
        self.fixes = fixes

    @property
    def explained(self) -> ExplainedError:
        """The refusal as the error panel shows it; the model was never touched."""
        said = "unchanged" in self.explanation
        return ExplainedError(self.title, str(self), self.explanation + ("" if said else UNCHANGED),
                              self.fixes, kind="Refused")


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


def safetensors_metadata(architecture: str, features: tuple[str, ...]) -> dict[str, str]:
    """What the page's .safetensors download says about the model beside its tensors: the
    architecture in words and the input features (an upload with other features is refused)."""
    return {"architecture": architecture, "features": ",".join(features)}


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

def describe_value(value: Any, limit: int = 60) -> str:
    """A short description of a value read from an upload, for a message.

    Never `repr` or `str` of a whole object: a structure of shared references can unfold to
    billions of items, and `str` of a large int is quadratic. At most three items of each
    container, two levels deep, are looked at; the text is cut at `limit` characters.
    """
    text = _preview(value, levels=2)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _preview(value: Any, levels: int) -> str:
    if value is None or isinstance(value, bool | float):
        return repr(value)
    if isinstance(value, int):
        return str(value) if abs(value) < 10**15 else f"an integer of {value.bit_length():,} bits"
    if isinstance(value, str | bytes):
        return repr(value[:40]) + ("…" if len(value) > 40 else "")
    if torch.is_tensor(value):
        return f"a {str(value.dtype).removeprefix('torch.')} tensor of shape {tuple(value.shape)}"
    if isinstance(value, list | tuple | dict | set | frozenset):
        head = f"a {type(value).__name__} of {len(value)} item{'' if len(value) == 1 else 's'}"
        if levels == 0 or not value:
            return head
        first = list(itertools.islice(value.items() if isinstance(value, dict) else value, 3))
        if isinstance(value, dict):
            shown = [f"{_preview(key, 0)}: {_preview(item, levels - 1)}" for key, item in first]
        else:
            shown = [_preview(item, levels - 1) for item in first]
        return f"{head} ({', '.join(shown)}{', …' if len(value) > 3 else ''})"
    return f"a {type(value).__name__}"


def _names(names: Iterable[Any], limit: int = 8) -> str:
    """Up to `limit` names from an upload, each described safely, and how many more there are."""
    names = list(names)
    shown = [name if isinstance(name, str) and len(name) <= 80 else describe_value(name)
             for name in names[:limit]]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more:,} more" if more else "")


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
            f"{CHECKPOINT_SIZE} A larger file cannot be one of them, and reading it would cost "
            "memory other learners need.",
            ("download a checkpoint from this page and upload that",))


def _exception_text(exc: BaseException) -> str:
    """`KeyError: 5`: the exception's kind and the first line of its message, cut short."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:300]}" if lines else type(exc).__name__


# The lines torch wraps around the weights_only unpickler's own reason (torch/serialization.py).
_TORCH_ADVICE = ("Weights only load failed", "Please file an issue", "Check the documentation",
                 "(1)", "(2)")


def _weights_only_reason(exc: BaseException) -> str:
    """The line of a weights_only refusal that says what was refused (`Trying to load
    unsupported GLOBAL posix.system...`), not the advice torch wraps around it."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    marked = [line.split("WeightsUnpickler error:", 1)[1].strip() for line in lines
              if "WeightsUnpickler error:" in line]
    reasons = [line for line in marked if line]
    reasons += [line for line in lines if not line.startswith(_TORCH_ADVICE)]
    return f"{type(exc).__name__}: {reasons[0][:300]}" if reasons else _exception_text(exc)


_SCAN_FIXES = {
    LIMIT: ("download a checkpoint from this page and upload that",),
    FOREIGN: ("save only `model.state_dict()`, or use safetensors",),
    DAMAGED: ("save the checkpoint again with `torch.save`, and upload the file unchanged",),
}


def _check_zip(data: bytes, cap: int) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except Exception as exc:  # noqa: BLE001 - zipfile raises many kinds on a crafted archive
        raise CheckpointRefused("Not a readable .pt file", _exception_text(exc),
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
    try:
        scan_torch_zip(archive)
    except PickleRefused as refused:
        raise CheckpointRefused(refused.title, str(refused), refused.explanation,
                                _SCAN_FIXES[refused.title]) from None
    except Exception as exc:  # noqa: BLE001 - reading the entry itself failed (bad CRC, bad header)
        raise CheckpointRefused(DAMAGED, _exception_text(exc),
                                "The archive's pickle could not be read out of it.") from None


def _torch_load(data: bytes, map_location: str) -> Any:
    """torch.load of a file the scan passed; whatever it raises is a refusal, never a crash.

    The scan refuses what torch.save never writes, so an exception here is a file the scan
    did not foresee: the unpickler raises IndexError, KeyError or AssertionError on malformed
    pickles, not only UnpicklingError. Exception, not BaseException: a KeyboardInterrupt or
    SystemExit is not the file's doing.
    """
    buffer = io.BytesIO(data)
    try:
        return torch.load(buffer, weights_only=True, map_location=map_location)
    except pickle.UnpicklingError as exc:       # weights_only refused a global, a call, a type
        raise CheckpointRefused(
            FOREIGN, _weights_only_reason(exc),
            f"{WEIGHTS_ONLY} This file needs something else to unpickle. Nothing from it was "
            "loaded and your model is unchanged.",
            _SCAN_FIXES[FOREIGN]) from None
    except RecursionError:
        raise CheckpointRefused(
            LIMIT, "torch.load ran out of Python's recursion limit on this file",
            "The file's objects nest deeper than Python can follow; a checkpoint nests a few "
            "levels.", _SCAN_FIXES[LIMIT]) from None
    except MemoryError:
        # The half-built objects went with the frames that held them: the server carries on.
        raise CheckpointRefused(
            LIMIT, "torch.load ran out of memory on this file",
            f"Reading the file would take more memory than this page gives one upload. {CHECKPOINT_SIZE}",
            _SCAN_FIXES[LIMIT]) from None
    except Exception as exc:  # noqa: BLE001 - any failure on an untrusted file is a refusal
        raise CheckpointRefused(
            DAMAGED, f"torch.load stopped with {_exception_text(exc)}",
            "`torch.load` could not read the file: its pickle or its tensor data is damaged, "
            "or was not written by `torch.save`.", _SCAN_FIXES[DAMAGED]) from None


def _safetensors_header(data: bytes) -> dict[str, Any]:
    if len(data) < 8:
        raise CheckpointRefused("Not a checkpoint", "the file is shorter than 8 bytes",
                                "Neither a `torch.save` zip nor a safetensors file.")
    header_len = int.from_bytes(data[:8], "little")
    if header_len > MAX_SAFETENSORS_HEADER:
        raise CheckpointRefused(
            "The safetensors header is too large",
            f"the file declares a JSON header of {header_len:,} bytes; this page reads headers of "
            f"up to {MAX_SAFETENSORS_HEADER:,} bytes",
            "A safetensors file starts with the length of its JSON header, which lists each "
            "tensor's name, dtype, shape and offsets. This page's largest model needs about a "
            "kilobyte of it; a larger header is not a checkpoint of it, and parsing it would cost "
            "time other learners need.",
            ("download a checkpoint from this page and upload that",))
    if 8 + header_len > len(data):
        raise CheckpointRefused("Not a readable safetensors file",
                                f"the file declares a JSON header of {header_len:,} bytes but holds "
                                f"only {len(data) - 8:,} bytes after its length",
                                "A safetensors file starts with the length of its JSON header; this "
                                "one is cut short or damaged.")
    text = data[8:8 + header_len]
    nesting = _json_nesting(text)
    if nesting > MAX_SAFETENSORS_NESTING:
        raise CheckpointRefused(
            "Not a readable safetensors file",
            f"the JSON header nests {nesting:,} levels deep; a safetensors header nests 3",
            "A safetensors header maps each tensor's name to its dtype, shape and offsets. "
            "Deeper nesting is not a safetensors header, and parsing it would exhaust Python's "
            "recursion limit, so it was refused before parsing.",
            ("save the weights again with `safetensors.torch.save_file`",))
    try:
        header = json.loads(text)
    except Exception as exc:  # noqa: BLE001 - bad UTF-8, bad JSON, ints too long to convert...
        raise CheckpointRefused("Not a readable safetensors file", _exception_text(exc),
                                "The JSON header of the safetensors file could not be read.") from None
    if not isinstance(header, dict):
        raise CheckpointRefused("Not a readable safetensors file", "the header is not a JSON object",
                                "A safetensors header maps tensor names to dtype, shape and offsets.")
    return header


_JSON_SPECIAL = re.compile(rb'["\\\[\]{}]')


def _json_nesting(text: bytes) -> int:
    """How deep the brackets of a JSON text nest, outside its strings: one linear pass over its
    quotes, backslashes and brackets (a regex for whole strings backtracks quadratically on
    unterminated ones)."""
    depth = deepest = 0
    in_string, escaped = False, -1
    for special in _JSON_SPECIAL.finditer(text):
        position, char = special.start(), text[special.start()]
        if position == escaped:                 # the character after a backslash
            continue
        if in_string:
            if char == ord("\\"):
                escaped = position + 1
            elif char == ord('"'):
                in_string = False
        elif char == ord('"'):
            in_string = True
        elif char in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in b"]}":
            depth -= 1
    return deepest


def _safetensors_spec(name: str, entry: Any) -> TensorSpec:
    """One header entry, checked for form before anything trusts it (it is the uploader's JSON)."""
    dtype = entry.get("dtype") if isinstance(entry, dict) else None
    if not isinstance(dtype, str) or dtype not in SAFETENSORS_DTYPES:
        raise CheckpointRefused("Not a readable safetensors file",
                                f"entry {name[:80]!r} has no known dtype",
                                "Each safetensors entry names a dtype such as F32.")
    shape = entry.get("shape")
    if not isinstance(shape, list) or len(shape) > 8 or not all(
            isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**40 for d in shape):
        raise CheckpointRefused("Not a readable safetensors file",
                                f"entry {name[:80]!r} has no valid shape",
                                "Each safetensors entry gives its shape as a list of sizes, "
                                "such as [32, 64].")
    return TensorSpec(tuple(shape), SAFETENSORS_DTYPES[dtype])


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
        problems.append("missing keys: " + _names(missing, limit=12))
    if unexpected:
        problems.append("unexpected keys: " + _names(unexpected))
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
    fixes = ["set the hidden layers (and activation) the checkpoint was trained with, then upload again"]
    file_inputs, model_inputs = (_first_layer_inputs(specs) for specs in (found, expected))
    if file_inputs is not None and file_inputs != model_inputs:
        fixes.insert(0, f"pick the input features it was trained with: its first layer takes "
                        f"{file_inputs}, the page's model {model_inputs}")
    raise CheckpointRefused(
        "The checkpoint does not fit this model",
        "\n".join(problems[:12]),
        f"The file's parameters describe the network **{file_arch}**; the page's model is "
        f"**{model_arch}** (the first number counts the input features). "
        "`load_state_dict(strict=True)` needs every name, shape and dtype to match exactly, so "
        "nothing was loaded and your model is unchanged.",
        tuple(fixes))


def _model_features(model: torch.nn.Module) -> tuple[str, ...] | None:
    """The input features `model`'s first module computes (the moons MLP's `InputFeatures`)."""
    names = getattr(getattr(model, "features", None), "names", None)
    return tuple(names) if isinstance(names, tuple) else None


def _saved_features(value: Any) -> tuple[str, ...] | None:
    """The input features a file says it was trained with: a list (a resume checkpoint's
    settings) or comma-separated text (safetensors metadata). None when the file says nothing
    this page can read; the names are only ever shown from FEATURE_LABELS, never as written."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names or len(names) > len(FEATURE_LABELS):
        return None
    if not all(isinstance(n, str) and n in FEATURE_LABELS for n in names):
        return None
    return tuple(names)


def _refuse_other_features(saved: Any, model: torch.nn.Module) -> None:
    """Same shapes, other inputs: x₁², x₂² weights loaded into a model that feeds them x₁, x₂
    would load without an error and draw a meaningless boundary. Only a file that names its
    features can be checked (this page's downloads do; a bare `torch.save` does not)."""
    file_features, model_features = _saved_features(saved), _model_features(model)
    if file_features is None or model_features is None or file_features == model_features:
        return
    words = lambda names: ", ".join(FEATURE_LABELS[n] for n in names)  # noqa: E731
    raise CheckpointRefused(
        "The checkpoint was trained on other input features",
        f"trained on {words(file_features)}; the page's model takes {words(model_features)}",
        "Its first layer has the right shape, but each of its weights belongs to one input "
        "feature: fed other features, the same weights compute another function. Nothing was "
        "loaded and your model is unchanged.",
        (f"pick the input features {words(file_features)} (features="
         f"{','.join(file_features)}), then upload again",))


def _first_layer_inputs(specs: Mapping[str, TensorSpec]) -> int | None:
    """How many inputs the first Linear layer takes (the input features), if there is one."""
    weights = [s.shape for name, s in specs.items() if name.endswith("weight") and len(s.shape) == 2]
    return int(weights[0][1]) if weights else None


def _require_finite(tensors: Mapping[str, torch.Tensor], what: str) -> None:
    bad = [k for k, v in tensors.items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise CheckpointRefused("The checkpoint holds NaN or infinite values", f"{what}: " + _names(bad),
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
    params = group.get("params") if isinstance(group, Mapping) else None
    # Compared only once known to be a list of ints: `==` on what a file holds may mean tensors.
    if not (isinstance(params, list) and all(type(p) is int for p in params)
            and params == list(range(len(shapes)))):
        raise CheckpointRefused("The optimizer state does not fit this model",
                                "its parameter group does not list this model's parameters",
                                "The optimizer state was saved for a model with a different number "
                                "of parameters.")
    for index, per_param in opt_state["state"].items():
        if type(index) is not int or not 0 <= index < len(shapes) or not isinstance(per_param, Mapping):
            raise CheckpointRefused("The optimizer state does not fit this model",
                                    f"state entry {describe_value(index)} names no parameter of this "
                                    "model",
                                    "Each optimizer state entry belongs to one parameter by index.")
        for name, value in per_param.items():
            if torch.is_tensor(value) and value.dim() > 0 and tuple(value.shape) != shapes[index]:
                raise CheckpointRefused("The optimizer state does not fit this model",
                                        f"state[{index}][{describe_value(name)}] has shape "
                                        f"{tuple(value.shape)}, "
                                        f"the parameter has {shapes[index]}",
                                        "Optimizer buffers such as Adam's moments have the shape of "
                                        "their parameter.")


def _refuse_optimizer(message: str, explanation: str) -> CheckpointRefused:
    return CheckpointRefused("The optimizer state is not one this page can train with", message,
                             explanation + " Nothing was loaded and your model is unchanged.",
                             ("save a resume checkpoint from this page with the same settings",))


def _throwaway(optimizer: torch.optim.Optimizer) -> torch.optim.Optimizer:
    """A deep copy of the page's optimizer over copies of its weights, with zero gradients."""
    probe = copy.deepcopy(optimizer)
    for group in probe.param_groups:
        for p in group["params"]:
            p.grad = torch.zeros_like(p)
    return probe


def _stepped_reference(optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The state_dict the page's optimizer has after a step: the keys and types to expect."""
    probe = _throwaway(optimizer)
    probe.step()
    return probe.state_dict()


# Hyperparameters a resume file may carry, with the ranges a sound run has. Anything outside is
# refused: a crafted `lr="fast"` would pass `load_state_dict` and break the next step.
HYPERPARAMETER_RANGES: dict[str, tuple[float, float]] = {
    "lr": (0.0, 10.0), "weight_decay": (0.0, 1.0), "momentum": (0.0, 0.999), "dampening": (0.0, 1.0),
    "alpha": (0.0, 1.0), "eps": (0.0, 1.0), "betas": (0.0, 0.99999),
}
NON_NEGATIVE_BUFFERS = frozenset({"exp_avg_sq", "max_exp_avg_sq", "square_avg", "step"})


def _check_hyperparameters(group: Mapping[str, Any], reference: Mapping[str, Any]) -> None:
    keys, expected_keys = set(group) - {"params"}, set(reference) - {"params"}
    if keys != expected_keys:
        odd = sorted(keys ^ expected_keys, key=describe_value)
        raise _refuse_optimizer(f"parameter group keys differ from this optimizer's: {_names(odd, 6)}",
                                "A resume file carries its optimizer's hyperparameters (lr, betas, "
                                "weight_decay, ...); they must be the ones this optimizer has.")
    for key in sorted(expected_keys):
        value, want = group[key], reference[key]
        if isinstance(want, bool) or want is None:
            ok = value is want      # flags such as maximize or fused: exactly the page's own
        elif isinstance(want, int | float):
            ok = _in_range(value, key)
        elif isinstance(want, tuple | list):
            ok = isinstance(value, tuple | list) and len(value) == len(want) and all(
                _in_range(v, key) for v in value)
        else:
            ok = type(value) is type(want) and value == want    # `==` only on the page's own type
        if not ok:
            raise _refuse_optimizer(f"{key} = {describe_value(value)} is not a valid value",
                                    f"`{key}` must be {_expected_words(want, key)}.")


def _in_range(value: Any, key: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    lo, hi = HYPERPARAMETER_RANGES.get(key, (-math.inf, math.inf))
    return lo <= value <= hi


def _expected_words(want: Any, key: str) -> str:
    if isinstance(want, bool) or want is None:
        return f"{want!r}, as this page's optimizer has it"
    lo, hi = HYPERPARAMETER_RANGES.get(key, (-math.inf, math.inf))
    what = "a pair of numbers" if isinstance(want, tuple | list) else "a number"
    return f"{what} from {lo:g} to {hi:g}"


def _check_optimizer_values(opt_state: Mapping[str, Any], reference: Mapping[str, Any]) -> None:
    """Every hyperparameter and buffer of `opt_state` of the type and range a sound run has."""
    _check_hyperparameters(opt_state["param_groups"][0], reference["param_groups"][0])
    for index, per_param in opt_state["state"].items():
        want = reference["state"].get(index, {})
        if set(per_param) != set(want):
            held = _names(sorted(per_param, key=describe_value))
            raise _refuse_optimizer(f"state[{index}] holds {held}; this optimizer keeps "
                                    f"{', '.join(sorted(want))}",
                                    "Each parameter's optimizer state holds the buffers of this "
                                    "kind of optimizer, no more and no fewer.")
        for name, value in per_param.items():
            reference_value = want[name]
            if not torch.is_tensor(value) or value.layout != torch.strided \
                    or value.dtype != reference_value.dtype \
                    or tuple(value.shape) != tuple(reference_value.shape):
                raise _refuse_optimizer(
                    f"state[{index}][{name!r}] is not a dense {reference_value.dtype} tensor of "
                    f"shape {tuple(reference_value.shape)}",
                    "Optimizer buffers are tensors of their parameter's shape (`step` is a "
                    "scalar).")
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                raise _refuse_optimizer(f"state[{index}][{name!r}] holds NaN or infinite values",
                                        "A NaN buffer would make every later step NaN.")
            if name in NON_NEGATIVE_BUFFERS and bool((value < 0).any()):
                raise _refuse_optimizer(f"state[{index}][{name!r}] holds negative values",
                                        f"`{name}` is a count or a running mean of squares: it is "
                                        "never negative.")


def _trial_step(opt_state: dict[str, Any], optimizer: torch.optim.Optimizer) -> None:
    """The last gate: load into a throwaway optimizer and take one step on throwaway weights."""
    probe = _throwaway(optimizer)
    params = [p for group in probe.param_groups for p in group["params"]]
    try:
        probe.load_state_dict(opt_state)
        probe.step()
    except Exception as exc:  # noqa: BLE001 - any failure is a refusal; the message is shown
        raise _refuse_optimizer(f"{type(exc).__name__}: {str(exc)[:300]}",
                                "The optimizer state passed every check but could not take a "
                                "step.") from None
    if not all(bool(torch.isfinite(p).all()) for p in params):
        raise _refuse_optimizer("one trial step made the weights NaN or infinite",
                                "The optimizer state is numerically unsound.")


def read_checkpoint(data: bytes, model: torch.nn.Module, optimizer_name: str | None = None,
                    cap: int = MAX_CHECKPOINT_BYTES,
                    optimizer: torch.optim.Optimizer | None = None) -> LoadedCheckpoint:
    """Validate an uploaded checkpoint against `model`'s architecture; raise CheckpointRefused.

    A resume checkpoint's optimizer state is checked in full against `optimizer` (the page's
    own: its kind and hyperparameter types) and a trial step, before anything is loaded.
    """
    try:
        return _read_checkpoint(data, model, optimizer_name, cap, optimizer)
    except CheckpointRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - an upload must never reach the page's error guard
        # Each gate refuses what it checks with its own message; this net under them catches a
        # check that tripped over the file in a way nobody foresaw. The file is still refused
        # and the model untouched; the check deserves a message of its own.
        raise CheckpointRefused(
            "The checkpoint could not be checked", _exception_text(exc),
            "One of the checks of the uploaded file failed on something in it that this page "
            "did not expect.", ("download a checkpoint from this page and upload that",)) from None


def _read_checkpoint(data: bytes, model: torch.nn.Module, optimizer_name: str | None, cap: int,
                     optimizer: torch.optim.Optimizer | None) -> LoadedCheckpoint:
    _refuse_size(data, cap)
    expected = {k: _spec_of(v) for k, v in model.state_dict().items()}
    kind = detect_format(data)
    if kind == "safetensors":
        header = _safetensors_header(data)
        found: dict[str, TensorSpec] = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            found[name] = _safetensors_spec(name, entry)
        _refuse_mismatch(compare_to_architecture(found, expected), found, expected)
        metadata = header.get("__metadata__")
        _refuse_other_features(metadata.get("features") if isinstance(metadata, dict) else None,
                               model)
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

    _check_zip(data, cap)           # the archive's entries, then its pickle, scanned and bounded
    on_meta = _torch_load(data, "meta")
    form = on_meta.get("format") if isinstance(on_meta, Mapping) else None
    resume = isinstance(form, str) and form == RESUME_FORMAT
    meta_state = _as_state_dict(on_meta.get("model") if resume else on_meta, "the model state")
    found = {k: _spec_of(v) for k, v in meta_state.items()}
    _refuse_mismatch(compare_to_architecture(found, expected), found, expected)
    if resume:
        saved_settings = on_meta.get("settings")
        _refuse_other_features(saved_settings.get("features")
                               if isinstance(saved_settings, Mapping) else None, model)
        saved_name = on_meta.get("optimizer_name")
        if optimizer_name is not None and not (isinstance(saved_name, str) and saved_name == optimizer_name):
            # The name comes from the file: only letters and digits go into the (Markdown) fix.
            plain = isinstance(saved_name, str) and saved_name.isascii() and saved_name.isalnum() \
                and len(saved_name) <= 40
            raise CheckpointRefused(
                "The resume checkpoint is for another optimizer",
                f"saved with {saved_name if plain else describe_value(saved_name)}, the page uses "
                f"{optimizer_name}",
                "An optimizer's state (momentum, Adam's moments) only means something to the same "
                "kind of optimizer.", (f"choose {saved_name if plain else 'that optimizer'} as the "
                                       "optimizer, then upload again",))
        epoch = _resume_epoch(on_meta.get("epoch"))
        best_val_loss = _best_val_loss(on_meta.get("best_val_loss"))
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
    if optimizer is not None:
        _check_optimizer_values(opt_state, _stepped_reference(optimizer))
        _trial_step(opt_state, optimizer)
    settings = real.get("settings")
    return LoadedCheckpoint("resume", "pt", state, opt_state, epoch=epoch, best_val_loss=best_val_loss,
                            settings=dict(settings) if isinstance(settings, Mapping) else {})


def _resume_epoch(epoch: Any) -> int:
    """The epoch a resume checkpoint carries on from: a whole number the page can reach.

    This page's own files hold 0 (saved before the first epoch ended) up to MAX_EPOCHS; the
    number is shown on the page and multiplies into the step count, so anything else is
    refused rather than clamped, and never printed in full.
    """
    if type(epoch) is not int or not 0 <= epoch <= MAX_EPOCHS:
        raise CheckpointRefused(
            "The resume checkpoint's epoch is not valid",
            f"its epoch is {describe_value(epoch, 40)}; this page's resume checkpoints are at "
            f"epoch 0 to {MAX_EPOCHS}",
            f"A resume checkpoint records how many epochs were trained, a whole number from 0 to "
            f"{MAX_EPOCHS} on this page; training carries on from there.",
            ("download a resume checkpoint from this page and upload that",))
    return epoch


def _best_val_loss(loss: Any) -> float:
    """The best validation loss so far: a finite non-negative number, or inf (as this page
    writes it) when no epoch has been validated yet. NaN is refused: the page keeps
    `min(best, loss)`, and every comparison with NaN is False, so a NaN best stays NaN."""
    if isinstance(loss, bool) or not isinstance(loss, int | float) or math.isnan(loss) or loss < 0:
        raise CheckpointRefused(
            "The resume checkpoint's best validation loss is not valid",
            f"its best_val_loss is {describe_value(loss, 40)}",
            "The best validation loss so far is a binary cross-entropy: a number that is zero or "
            "more, or inf when no epoch has been validated yet.",
            ("download a resume checkpoint from this page and upload that",))
    return float(loss)


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
