"""Beside the dtype table: mixed precision with torch.autocast on the CPU, dtypes and rounding."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from components.code_panel import code_panel
from components.error_panel import error_panel
from workbench.common.errors import explain
from workbench.tensor_inspector.autocast import autocast_report
from workbench.tensor_inspector.settings import TensorSettings


def autocast_panel(settings: TensorSettings) -> None:
    report = autocast_report(settings.seed)
    st.markdown("#### Mixed precision: `torch.autocast`")
    st.markdown(
        "`with torch.autocast(\"cpu\", dtype=torch.bfloat16):` does not convert your tensors. It "
        "chooses a dtype **per operation** while the block runs. Below, float32 inputs `a` (4, 8), "
        f"`b` (8, 3), weights `w` (3, 8) and `target` (4, 3) are drawn from your generator (seed "
        f"{report.seed}); each op runs once inside the block and once outside, and is compared "
        "with the same op in float64.")
    st.table(pd.DataFrame([{
        "op": f"`{row.code}`", "dtype inside autocast": row.inside, "dtype outside": row.outside,
        "max error inside": f"{row.max_error:.3g}", "max error outside": f"{row.max_error_outside:.3g}",
        "why": row.why} for row in report.rows]), hide_index=True)
    r = report.rounding
    st.markdown(
        f"- **Rounding.** `a[0, 0]` is `{r.a00!r}` in float32; autocast feeds the product "
        f"`{r.a00_bf16!r}`, its bfloat16 rounding (bfloat16 keeps {r.significant_bits_bf16} "
        f"significant bits: `finfo.eps` = {r.eps_bf16:g}, against {r.eps_float32:.3g} for "
        f"float32). Element `[0, 0]` of `a @ b` is `{r.product_float64!r}` in float64, "
        f"`{r.product_float32!r}` in float32 and "
        f"`{r.product_autocast!r}` under autocast.\n"
        f"- **Your tensors stay as they are.** After a forward pass inside the block "
        f"(`torch.is_autocast_enabled(\"cpu\")` was {report.enabled_inside} there) and "
        f"`backward()` outside it, `w` is {report.w_dtype} and `w.grad` is {report.grad_dtype}.\n"
        f"- **What it is for.** The ops that run in bfloat16 move {report.itemsize_autocast} "
        f"bytes per element instead of {report.itemsize_float32}. Whether that is faster depends "
        "on the hardware; this page measures dtypes and rounding only.")
    if report.mixed_error:
        st.markdown("Without autocast, a matrix product does not promote its operands: "
                    "`a.bfloat16() @ b` (bfloat16 times float32) is refused. Elementwise ops "
                    "still promote, as ever: `a.bfloat16() + b` is float32 (the table's "
                    "`a @ b + target` row).")
        error_panel(explain(RuntimeError(report.mixed_error)), key="ti_autocast_error")
    code_panel(report.code, filename="autocast.py", key="ti_autocast_code",
               caption="Running it prints the dtypes of the table above.")
