"""The NumPy bridge: which ways between NumPy and PyTorch share memory, and which copy.

On the CPU, `torch.from_numpy(arr)` and `tensor.numpy()` wrap the very same bytes (same data
pointer): a write through one is seen through the other. `torch.tensor(arr)` always copies.
NumPy counts strides in *bytes*, PyTorch in *elements*, so `t.numpy().strides` is
`t.stride()` times the item size. bfloat16 has no NumPy dtype, so `.numpy()` refuses it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from workbench.tensor_inspector.settings import DTYPES


@dataclass(frozen=True)
class BridgeRow:
    way: str                    # the code, e.g. "torch.from_numpy(arr)"
    shares_memory: bool         # same data pointer as arr
    data_pointer: str
    after_write: str            # what it holds after arr[0] = written


@dataclass(frozen=True)
class BridgeReport:
    dtype: str
    written: str
    array_pointer: str
    rows: list[BridgeRow]
    numpy_error: str | None     # .numpy() refused this dtype
    torch_strides: tuple[int, ...] | None
    numpy_strides: tuple[int, ...] | None
    code: str


def bridge(dtype_name: str = "float32", written: int = 100) -> BridgeReport:
    """Build an array, connect it to PyTorch three ways, write into the array, look again."""
    dtype = DTYPES[dtype_name]
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    shared = torch.from_numpy(arr)                 # same memory
    copied = torch.tensor(arr)                     # new memory
    as_tensor = torch.as_tensor(arr)               # shares when it can (same dtype, CPU)
    pointers = {"from_numpy": shared.data_ptr(), "tensor": copied.data_ptr(),
                "as_tensor": as_tensor.data_ptr()}
    arr[0, 0] = written
    rows = [
        BridgeRow("torch.from_numpy(arr)", pointers["from_numpy"] == arr.ctypes.data,
                  hex(pointers["from_numpy"]), str(shared[0].tolist())),
        BridgeRow("torch.as_tensor(arr)", pointers["as_tensor"] == arr.ctypes.data,
                  hex(pointers["as_tensor"]), str(as_tensor[0].tolist())),
        BridgeRow("torch.tensor(arr)", pointers["tensor"] == arr.ctypes.data,
                  hex(pointers["tensor"]), str(copied[0].tolist())),
    ]
    # The other way round, in the dtype chosen on the page, through a transposed view.
    t = torch.arange(6).reshape(2, 3).to(dtype).t()
    numpy_error = None
    torch_strides = numpy_strides = None
    try:
        back = t.numpy()
    except TypeError as exc:
        numpy_error = str(exc)
    else:
        t[0, 0] = written              # a write through PyTorch...
        rows.append(BridgeRow(f"back = t.numpy()  (t: {dtype_name})",
                              back.ctypes.data == t.data_ptr(), hex(t.data_ptr()),
                              f"back[0, 0] = {back[0, 0].item()!r} after t[0, 0] = {written}"))
        torch_strides, numpy_strides = tuple(t.stride()), tuple(back.strides)
    return BridgeReport(dtype_name, str(written), hex(arr.ctypes.data), rows, numpy_error,
                        torch_strides, numpy_strides, bridge_code(dtype_name, written))


def bridge_code(dtype_name: str, written: int) -> str:
    return f'''import numpy as np
import torch

arr = np.arange(6, dtype=np.float32).reshape(2, 3)
shared = torch.from_numpy(arr)   # wraps arr's memory
copied = torch.tensor(arr)       # copies it
print(shared.data_ptr() == arr.ctypes.data, copied.data_ptr() == arr.ctypes.data)

arr[0, 0] = {written}
print(shared[0])   # sees the write
print(copied[0])   # does not

t = torch.arange(6).reshape(2, 3).to(torch.{dtype_name}).t()
back = t.numpy()   # shares t's memory (bfloat16 has no NumPy dtype: TypeError)
t[0, 0] = {written}
print(back[0, 0])   # the write through PyTorch is seen by NumPy
print(t.stride(), back.strides)   # PyTorch counts elements, NumPy bytes
'''


# --- tensors that autograd tracks: .detach() before .numpy() ---------------------------------

@dataclass(frozen=True)
class DetachRow:
    way: str                    # the code
    outcome: str                # the array it gave, or PyTorch's error
    error_type: str | None      # the exception's class name when PyTorch refused
    shares_memory: bool | None  # the array's data pointer is w's (None when refused)


@dataclass(frozen=True)
class DetachReport:
    rows: list[DetachRow]
    grad_error: str             # PyTorch's message for w.numpy()
    w_after_write: str          # w after `arr[0] = written` through the detached array
    still_requires_grad: bool   # w.requires_grad after all that
    other_device: str           # the non-CPU device of the last row ("meta" when no GPU answers)
    code: str

    def detached_words(self, written: int) -> str:
        """What writing through `w.detach().numpy()` showed, from what was measured: "shares"
        only if the array's data pointer is w's, "still requires grad" only if w does."""
        detached = next(row for row in self.rows if row.way == DETACHED)
        grad = "still requires grad" if self.still_requires_grad else "no longer requires grad"
        after = (f"after `arr[0] = {written}`, `w` holds `{self.w_after_write}` and {grad} "
                 f"({self.still_requires_grad})")
        if detached.shares_memory:
            return (f"`w.detach()` is the same memory cut from the graph, so its array still "
                    f"**shares** it: {after}. Autograd did not see that write; copy "
                    "(`w.detach().numpy().copy()`) when the array will be changed.")
        return f"Here the array of `w.detach()` is a **copy** (another data pointer): {after}."


DETACHED = "arr = w.detach().numpy()"


def _try_numpy(way: str, make, owner: torch.Tensor) -> tuple[DetachRow, np.ndarray | None]:
    try:
        arr = make()
    except (RuntimeError, TypeError) as exc:
        return DetachRow(way, str(exc).strip(), type(exc).__name__, None), None
    return DetachRow(way, repr(arr.tolist()), None, arr.ctypes.data == owner.data_ptr()), arr


def detach_bridge(written: int = 100, other_device: torch.device | str = "meta") -> DetachReport:
    """`.numpy()` on a tensor that requires grad, on its detached twin, and off the CPU."""
    other = torch.device(other_device)
    if other.type == "cpu":
        other = torch.device("meta")
    w = torch.arange(3.0, requires_grad=True)
    rows = []
    refused, _ = _try_numpy("w.numpy()", lambda: w.numpy(), w)
    rows.append(refused)
    rows.append(_try_numpy("(w * 2).numpy()", lambda: (w * 2).numpy(), w)[0])
    detached_row, arr = _try_numpy(DETACHED, lambda: w.detach().numpy(), w)
    rows.append(detached_row)
    rows.append(_try_numpy("w.numpy(force=True)", lambda: w.numpy(force=True), w)[0])
    away = torch.arange(3.0, device=other)
    rows.append(_try_numpy(f"torch.arange(3.0, device={str(other)!r}).numpy()",
                           lambda: away.numpy(), away)[0])
    assert arr is not None
    arr[0] = written          # NumPy writes into w's memory; autograd records nothing
    return DetachReport(rows, refused.outcome, repr(w.detach().tolist()), w.requires_grad,
                        str(other), detach_code(written, str(other)))


def detach_code(written: int, other_device: str) -> str:
    return f'''import torch

w = torch.arange(3.0, requires_grad=True)
try:
    w.numpy()
except RuntimeError as err:
    print(err)                 # PyTorch refuses: autograd tracks w

arr = w.detach().numpy()       # cut from the graph, same memory
print(arr.ctypes.data == w.data_ptr())
arr[0] = {written}
print(w)                       # the write is in w, and autograd did not see it

try:
    torch.arange(3.0, device={other_device!r}).numpy()
except TypeError as err:
    print(err)                 # NumPy arrays live in CPU memory: .cpu() first
'''
