"""The moons trainer's model tab: the module and its parameters, the activation, and PyTorch's
device-mismatch error."""
from __future__ import annotations

import copy

import pandas as pd
import streamlit as st
import torch

from app_pages.moons_trainer.figures import activation_figure
from components.error_panel import error_panel
from components.figures import PLOTLY_CONFIG
from app_pages.navigation import TOOLS
from workbench.moons.model import activation_curve, parameter_table
from workbench.moons.training import TrainingSession


def model_summary(session: TrainingSession) -> None:
    rows = parameter_table(session.model)
    st.code(repr(session.model), language="text")
    table = pd.DataFrame([{"parameter": r.name, "shape": str(r.shape), "numel": r.numel,
                           "dtype": r.dtype, "init": r.init} for r in rows])
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(f"{sum(r.numel for r in rows):,} parameters. `nn.Linear(in, out)` stores its weight "
               "as `(out_features, in_features)`, so `x @ weight.T + bias` maps a batch `(N, in)` "
               "to `(N, out)`.")
    inspector = next(t for t in TOOLS if t.url_path == "tensor_inspector")
    picked = st.selectbox("Parameter to open in the tensor inspector", [r.name for r in rows],
                          key="mt_inspect_param")
    shape = next(r.shape for r in rows if r.name == picked)
    st.page_link(inspector.script, label=f"Open `{picked}` in the tensor inspector",
                 icon=":material/grid_on:",
                 query_params={"shape": ",".join(map(str, shape)), "dtype": "float32"})


def activation_panel(act: str) -> None:
    x, y, dy = activation_curve(act)
    st.plotly_chart(activation_figure(act, x, y, dy), key="mt_activation", config=PLOTLY_CONFIG)


def device_mismatch_panel(device: torch.device, model: torch.nn.Module) -> None:
    """Show PyTorch's device-mismatch error for real, on a copy of the model."""
    other = torch.device("cpu") if device.type != "cpu" else torch.device("meta")
    st.markdown(f"The model lives on `{device}`. Feeding it a batch on `{other}` "
                + ("(the `meta` device: shapes without data, since this server has no GPU) "
                   if other.type == "meta" else "") + "gives PyTorch's own error:")
    st.code(f"model(torch.zeros(4, 2, device='{other}'))", language="python")
    try:
        with torch.no_grad():
            copy.deepcopy(model).eval()(torch.zeros(4, 2, device=other))
        st.info("No error: this combination of devices is allowed here.")
    except RuntimeError as exc:
        error_panel(exc, key="mt_device_error")
