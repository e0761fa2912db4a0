"""The dtypes tab: the chosen dtype's range, resolution and bytes, and the table of all dtypes."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from app_pages.tensor_inspector.figures import bits_figure, bits_table
from components.accessible_chart import chart
from workbench.common.formatting import human_bytes
from workbench.common.palette import PALE_PEACH
from workbench.tensor_inspector.dtypes import dtype_info, dtype_table, nbytes_of
from workbench.tensor_inspector.factory import shape_text
from workbench.tensor_inspector.settings import TensorSettings


def _bytes_text(nbytes: int | None) -> str:
    return "too large for PyTorch" if nbytes is None else human_bytes(nbytes)


def dtype_panel(settings: TensorSettings) -> None:
    chosen = dtype_info(settings.dtype)
    st.markdown(f"**{chosen.name}**: {chosen.kind}, {chosen.bits} bits ({chosen.itemsize} "
                f"byte{'s' if chosen.itemsize > 1 else ''} per element). Used for "
                f"{chosen.used_for}.")
    shape_bytes = nbytes_of(settings.shape, settings.dtype)
    bytes_col, facts_col = st.columns([1, 2.2], vertical_alignment="center")
    bytes_col.metric(f"x {shape_text(settings.shape)} takes", _bytes_text(shape_bytes),
                     help="nbytes = numel x itemsize, from a meta tensor of this shape")
    facts_col.markdown(
        f"- **range**: {chosen.smallest} .. {chosen.largest}\n"
        f"- **resolution near 1** (`finfo.eps`; 1 for integers): {chosen.resolution}\n"
        f"- **0.1 is stored as**: `{chosen.one_tenth}`\n"
        f"- **bytes**: {math.prod(settings.shape):,} elements x {chosen.itemsize} = "
        + (f"{shape_bytes:,} bytes" if shape_bytes is not None else "more than PyTorch can count"))
    if chosen.exponent_bits is not None and chosen.mantissa_bits is not None:
        sign = chosen.sign_bits or 0
        chart(bits_figure(sign, chosen.exponent_bits, chosen.mantissa_bits, key="ti_bits"),
              key="ti_bits", label=f"The bits of {chosen.name}: {sign} sign, "
                                   f"{chosen.exponent_bits} exponent, {chosen.mantissa_bits} mantissa",
              table=lambda: bits_table(sign, chosen.exponent_bits, chosen.mantissa_bits))
    table = pd.DataFrame([{
        "dtype": d.name, "bits": d.bits, "sign + exponent + mantissa": d.split,
        "min": d.smallest, "max": d.largest, "resolution": d.resolution, "0.1 stored as": d.one_tenth,
        f"x {shape_text(settings.shape)}": _bytes_text(nbytes_of(settings.shape, d.name)),
        "used for": d.used_for.replace("`", "")} for d in dtype_table()])
    chosen_row = table["dtype"] == settings.dtype
    st.dataframe(table.style.apply(lambda row: [f"background-color: {PALE_PEACH}"
                                                if chosen_row[row.name] else "" for _ in row],
                                   axis=1),
                 hide_index=True, key="ti_dtype_table")
