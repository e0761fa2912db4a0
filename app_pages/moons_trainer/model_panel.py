"""The moons trainer's model tab: the module and its parameters, the activation, and PyTorch's
device-mismatch error."""
from __future__ import annotations

import pandas as pd
import streamlit as st
import torch

from app_pages.moons_trainer.figures import activation_figure
from workbench.tools import TENSOR_INSPECTOR
from components.accessible_chart import chart
from components.code_block import code_block
from components.error_panel import error_panel
from workbench.moons_trainer.model import (
    PROBE,
    activation_curve,
    activation_table,
    collapsed_linear,
    device_mismatch,
    linear_map_check,
    parameter_table,
)
from workbench.moons_trainer.training import TrainingSession


def model_summary(session: TrainingSession) -> None:
    rows = parameter_table(session.model)
    code_block(repr(session.model), language="text")
    table = pd.DataFrame([{"parameter": r.name, "shape": str(r.shape), "numel": r.numel,
                           "dtype": r.dtype, "init": r.init} for r in rows])
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(f"{sum(r.numel for r in rows):,} parameters. `nn.Linear(in, out)` stores its weight "
               "as `(out_features, in_features)`, so `x @ weight.T + bias` maps a batch `(N, in)` "
               "to `(N, out)`.")
    collapsed = collapsed_linear(session.model)
    if collapsed is not None and len(session.settings.hidden) > 0:
        linear_map_note(session, *collapsed)
    picked = st.selectbox("Parameter to open in the tensor inspector", [r.name for r in rows],
                          key="mt_inspect_param")
    shape = next(r.shape for r in rows if r.name == picked)
    st.page_link(TENSOR_INSPECTOR.script, label=f"Open `{picked}` in the tensor inspector",
                 icon=TENSOR_INSPECTOR.icon,
                 query_params={"shape": ",".join(map(str, shape)), "dtype": "float32"})


def linear_map_note(session: TrainingSession, weight: torch.Tensor, bias: torch.Tensor) -> None:
    """Identity activations: the layers multiplied out, checked against the model on the test split."""
    check = linear_map_check(session.model, session.x_test, weight, bias)
    layers = check.layers
    w = ", ".join(f"{v:.4g}" for v in check.weights)
    s = session.settings
    plain = s.features == ("x1", "x2")
    inputs = "x" if plain else "model.features(x)"
    shape = ("a straight line" if s.linear_on_the_plane else
             f"a straight line in the input features ({', '.join(s.feature_labels)}), drawn on "
             "the plane as the curve they make")
    output = "output" if s.regression else "logit"
    # Regression has no boundary: the output itself is a linear function of the inputs.
    ending = (f"so the output is a linear function of "
              f"{'x' if s.linear_on_the_plane else 'the input features'}, "
              "however many layers you stack" if s.regression else
              f"and the boundary `logit = 0` is {shape}, however many layers you stack")
    st.info(f"With `Identity` there is no nonlinearity, so these {layers} `Linear` layers multiply "
            f"out to **one**: `{output} = {inputs} @ W.T + b` with `W = [{w}]`, "
            f"`b = {check.bias:.4g}` (`W = W{layers} @ ... @ W1`). On the {check.points} test points "
            f"{check.agreement_words()}, {ending}.", icon=":material/straighten:")


def activation_panel(act: str) -> None:
    x, y, dy = activation_curve(act)
    chart(activation_figure(act, x, y, dy), key="mt_activation",
          label=f"{act}(x) and its derivative from autograd, x from {x[0]:g} to {x[-1]:g}")
    with st.expander("Activations side by side, Softmax included", icon=":material/table_chart:"):
        rows = activation_table()
        probe = ", ".join(f"{v:g}" for v in PROBE)
        st.dataframe(pd.DataFrame([{"activation": r.name, "module": r.module,
                                    f"f([{probe}])": r.values, "sum": round(r.total, 4),
                                    "element-wise": "yes" if r.elementwise else "no",
                                    "where it goes": r.role} for r in rows]),
                     hide_index=True, width="stretch", key="mt_activation_table")
        st.caption("Each module applied by PyTorch to the same vector. Softmax is the odd one out: "
                   "each output depends on every input (its Jacobian is not diagonal), and the "
                   "outputs sum to 1. It belongs at the output of a multi-class model, and not even "
                   "there when the loss is `CrossEntropyLoss` (pitfall 3 in the pitfall lab).")


def device_mismatch_panel(device: torch.device, model: torch.nn.Module) -> None:
    """Show PyTorch's device-mismatch error for real, on a copy of the model."""
    mismatch = device_mismatch(device, model)
    other = mismatch.other
    st.markdown(f"The model lives on `{device}`. Feeding it a batch on `{other}` "
                + ("(the `meta` device: shapes without data, since this server has no GPU) "
                   if other.type == "meta" else "") + "gives PyTorch's own error:")
    code_block(f"model(torch.zeros(4, 2, device='{other}'))", language="python")
    if mismatch.error is None:
        st.info("No error: this combination of devices is allowed here.")
    else:
        error_panel(mismatch.error, key="mt_device_error")
