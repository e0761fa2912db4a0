"""The NumPy bridge tab: which conversions share memory with the other side, and which copy."""
from __future__ import annotations

import pandas as pd
import streamlit as st
import torch

from components.code_panel import code_panel
from components.error_panel import error_panel
from components.plain_text import code_span, md
from workbench.common.errors import ExplainedError, explain
from workbench.tensor_inspector.numpy_bridge import bridge, detach_bridge
from workbench.tensor_inspector.settings import TensorSettings


def numpy_panel(settings: TensorSettings, device: torch.device) -> None:
    st.markdown("On the CPU, `torch.from_numpy(arr)` and `t.numpy()` **share memory** with the "
                "other side (same data pointer, so a write through one is seen by the other); "
                "`torch.tensor(arr)` **copies**. Below, `arr[0, 0]` is overwritten after the "
                "three tensors were made.")
    written = st.number_input("Write this into arr[0, 0]", min_value=-1000, max_value=1000,
                              value=100, step=1, key="ti_bridge_write")
    result = bridge(settings.dtype, written)
    st.caption(f"`arr = np.arange(6, dtype=np.float32).reshape(2, 3)` lives at data pointer "
               f"`{result.array_pointer}`.")
    st.table(pd.DataFrame([{"way": r.way, "same data pointer as its source": "yes" if
                            r.shares_memory else "no (a copy)", "data pointer": r.data_pointer,
                            "after the write": r.after_write} for r in result.rows]),
             hide_index=True)
    if result.numpy_error:
        error_panel(ExplainedError(
            f"{settings.dtype} has no NumPy dtype", result.numpy_error,
            "NumPy has no bfloat16, so `t.numpy()` cannot share this memory. Convert first: "
            "`t.float().numpy()` makes a float32 copy that NumPy understands.",
            ("`t.float().numpy()`",), "TypeError"), key="ti_numpy_error")
    elif result.torch_strides is not None:
        st.markdown(f"Strides of the transposed `t` ({settings.dtype}): PyTorch says "
                    f"`{result.torch_strides}` (elements), NumPy says `{result.numpy_strides}` "
                    f"(bytes): the same layout, counted in different units.")
    code_panel(result.code, filename="numpy_bridge.py", key="ti_numpy_code")
    detach_panel(written, device)


def detach_panel(written: int, device: torch.device) -> None:
    """`.numpy()` on a tensor autograd tracks: PyTorch's refusal, and `.detach()` first."""
    result = detach_bridge(written, device)
    st.markdown("#### A tensor that requires grad: `.detach()` before `.numpy()`")
    st.markdown("`w = torch.arange(3.0, requires_grad=True)` is a leaf that autograd tracks. "
                "NumPy knows nothing of autograd, so PyTorch refuses to hand it `w`'s memory:")
    error_panel(explain(RuntimeError(result.grad_error)), key="ti_detach_error")
    simulated = result.other_device == "meta"
    st.table(pd.DataFrame([{
        "code": code_span(row.way),
        "result": md(f"{row.error_type}: {row.outcome}" if row.error_type else
                     f"array {row.outcome}"),
        "same memory as the tensor": "-" if row.shares_memory is None else
        "yes" if row.shares_memory else "no (a copy)"} for row in result.rows]), hide_index=True)
    st.markdown(
        f"{result.detached_words(written)} NumPy arrays live in CPU "
        f"memory, so a tensor on `{result.other_device}` is refused until `.cpu()` copies it "
        "there" + (": this server has no GPU, so a `meta` tensor (a shape with no memory) stands "
                   "in for a GPU one. PyTorch refuses every tensor outside CPU memory this way, "
                   "naming its device." if simulated else "."))
    code_panel(result.code, filename="detach_numpy.py", key="ti_detach_code")
