"""The moons trainer's settings column: widgets that edit one `MoonsSettings`.

Each widget's session_state key is `mt_<param>`, seeded from the lesson link when it is fresh.
A control hidden by a classroom link (`hide=...`) is not drawn; the link's value is used.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import streamlit as st

from components.classroom import visible
from components.plain_text import code_span, md
from workbench.moons.training import (
    ACTIVATIONS,
    DATASETS,
    LINK_SCHEMA,
    MAX_EPOCHS,
    MAX_SAMPLES,
    OPTIMIZERS,
    PRESET,
    SPLITS,
    MoonsSettings,
)

PREFIX = "mt_"
_HIDDEN_PARAM = next(p for p in LINK_SCHEMA.params if p.name == "hidden")
_DATASET_LABELS = {"moons": "Two moons", "circles": "Circles", "xor": "XOR",
                   "spiral": "Spiral", "gaussians": "Two Gaussians"}


def _widget_value(settings: MoonsSettings, name: str) -> Any:
    value = getattr(settings, name)
    return _HIDDEN_PARAM.format(value) if name == "hidden" else value


def seed_widgets(settings: MoonsSettings) -> None:
    """Put `settings` into the widgets' session_state keys (a fresh link, or the preset)."""
    for f in dataclasses.fields(MoonsSettings):
        st.session_state[PREFIX + f.name] = _widget_value(settings, f.name)
    st.session_state[PREFIX + "hidden_valid"] = settings.hidden


def load_preset() -> None:
    seed_widgets(PRESET)


def _value(name: str, linked: MoonsSettings) -> Any:
    """The widget's value, or the link's when the control is hidden."""
    if not visible(name):
        return getattr(linked, name)
    return st.session_state.get(PREFIX + name, _widget_value(linked, name))


def settings_panel(linked: MoonsSettings) -> MoonsSettings:
    """Draw the controls; return the settings they describe."""
    for f in dataclasses.fields(MoonsSettings):
        st.session_state.setdefault(PREFIX + f.name, _widget_value(linked, f.name))
    st.button("Lesson preset", on_click=load_preset, icon=":material/school:",
              key="mt_preset", width="stretch",
              help="make_moons(3000, noise=0.25, random_state=42), 70/15/15, 2 -> 64 -> 32 -> 1 "
                   "ReLU, batch 64, AdamW(lr=0.003, weight_decay=1e-4), 50 epochs")
    with st.expander("Data", expanded=True, icon=":material/scatter_plot:"):
        if visible("dataset"):
            st.selectbox("Dataset", DATASETS, key=PREFIX + "dataset",
                         format_func=lambda d: _DATASET_LABELS[d])
        if visible("n"):
            st.number_input("Points (n_samples)", 100, MAX_SAMPLES, step=100, key=PREFIX + "n")
        if visible("noise"):
            st.slider("Noise (std)", 0.0, 1.0, step=0.01, key=PREFIX + "noise",
                      help="Standard deviation of the Gaussian noise added to every point. It "
                           "sets the best accuracy any classifier can reach.")
        if visible("split"):
            st.selectbox("Split train/val/test (%)", SPLITS, key=PREFIX + "split",
                         help="Stratified: each split keeps the class balance.")
        if visible("seed"):
            st.number_input("Seed", 0, 2**31 - 1, step=1, key=PREFIX + "seed",
                            help="Seeds the data, the split, the initial weights, the batch order "
                                 "and dropout, through the learner's own torch.Generator objects.")
    with st.expander("Model", expanded=True, icon=":material/hub:"):
        hidden = linked.hidden
        if visible("hidden"):
            raw = st.text_input("Hidden layers", key=PREFIX + "hidden",
                                help="Widths separated by commas, e.g. 64,32 (at most 4 layers of at "
                                     "most 256). Empty: no hidden layer, a linear classifier.")
            try:
                hidden = _HIDDEN_PARAM.parse(raw)
                st.session_state[PREFIX + "hidden_valid"] = hidden
            except ValueError as exc:
                hidden = st.session_state.get(PREFIX + "hidden_valid", linked.hidden)
                st.error(f"{code_span(raw)}: {md(exc)}. Still using "
                         f"{_HIDDEN_PARAM.format(hidden) or 'none'}.", icon=":material/error:")
        if visible("act"):
            st.selectbox("Activation", ACTIVATIONS, key=PREFIX + "act")
        if visible("dropout"):
            st.slider("Dropout", 0.0, 0.8, step=0.05, key=PREFIX + "dropout",
                      help="Probability of zeroing each hidden activation while training.")
    with st.expander("Training", expanded=True, icon=":material/tune:"):
        if visible("opt"):
            st.selectbox("Optimizer", OPTIMIZERS, key=PREFIX + "opt",
                         help="SGD uses momentum 0.9.")
        if visible("lr"):
            st.number_input("Learning rate", 1e-5, 1.0, step=0.001, format="%.5f", key=PREFIX + "lr")
        if visible("wd"):
            st.number_input("Weight decay", 0.0, 0.1, step=1e-4, format="%.5f", key=PREFIX + "wd")
        if visible("batch"):
            st.number_input("Batch size", 1, 2048, step=16, key=PREFIX + "batch")
        if visible("epochs"):
            st.number_input("Epochs", 1, MAX_EPOCHS, step=10, key=PREFIX + "epochs")
    values = {f.name: _value(f.name, linked) for f in dataclasses.fields(MoonsSettings)}
    values["hidden"] = hidden
    values["n"], values["seed"] = int(values["n"]), int(values["seed"])
    values["batch"], values["epochs"] = int(values["batch"]), int(values["epochs"])
    values["noise"] = round(float(values["noise"]), 4)
    values["lr"], values["wd"] = float(values["lr"]), float(values["wd"])
    values["dropout"] = round(float(values["dropout"]), 4)
    return MoonsSettings(**values)
