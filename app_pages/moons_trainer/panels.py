"""The moons trainer's panels below the live view: results, checkpoints, model summary."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st
import torch

from components.error_panel import error_panel
from components.figures import PLOTLY_CONFIG
from app_pages.moons_trainer.figures import activation_figure
from app_pages.navigation import TOOLS
from components.plain_text import code_span
from components.state import shared_model
from workbench.moons.checkpoints import (
    CheckpointRefused,
    ReloadCheck,
    read_checkpoint,
    resume_checkpoint,
    save_and_reload,
    state_dict_pt,
    state_dict_safetensors,
)
from workbench.common.errors import ExplainedError
from workbench.moons.training import TestReport, TrainingSession, activation_curve, parameter_table


UPLOAD_KEY = "mt_upload"


@dataclass
class MoonsTrainerState:
    """One learner's moons trainer: the run, whether it plays, and what was last shown."""

    session: TrainingSession | None = None
    running: bool = False
    step_requested: bool = False
    reset_requested: bool = False
    upload_seen: str | None = None
    upload_message: str = ""
    upload_error: ExplainedError | None = None
    reload_for: tuple[int, int] | None = None
    reload_check: ReloadCheck | None = None
    pitfalls: dict[str, Any] = field(default_factory=dict)


def publish_shared(session: TrainingSession) -> None:
    """Hand a snapshot of the model and the scaled training split to the other tools."""
    shared = shared_model()
    snapshot = copy.deepcopy(session.model).eval()
    shared.model = snapshot
    shared.features = session.x_train.detach().cpu().clone()
    shared.labels = session.y_train.detach().cpu().clone()
    shared.description = session.describe()


def verdict(report: TestReport, noise: float) -> str:
    """How close the model came to the best possible accuracy, in plain words."""
    gap = report.gap_points
    lines = [f"The Bayes-optimal classifier of the generative process, which knows exactly how "
             f"the points were drawn, scores **{100 * report.bayes_accuracy:.1f}%** on these same "
             f"{report.n} test points."]
    if gap == 0:
        lines.append(f"Your model scores **{100 * report.accuracy:.1f}%** too: it is at the ceiling.")
    elif gap < 0:
        lines.append(f"Your model scores **{100 * report.accuracy:.1f}%**: at the ceiling "
                     f"({-gap:.1f} points above it on this finite sample, which is luck, not skill).")
    elif gap <= 1.5:
        lines.append(f"Your model is **{gap:.1f} points** below it: about as good as any classifier "
                     "can be on this data.")
    else:
        lines.append(f"Your model is **{gap:.1f} points** below it: there is room to improve "
                     "(more epochs, another learning rate, a wider network).")
    if report.bayes_accuracy < 0.95:
        lines.append(f"The lesson asks for 95%, but with noise {noise:g} no classifier can reach it "
                     "on this test split: the classes overlap.")
    return " ".join(lines)


def validation_log(session: TrainingSession) -> pd.DataFrame:
    h = session.history
    rows = [{"epoch": e, "train loss": round(tl, 4), "val loss": round(vl, 4),
             "val accuracy": f"{100 * va:.2f}%"}
            for e, tl, vl, va in zip(h.epoch, h.train_loss, h.val_loss, h.val_acc, strict=True)
            if e % 10 == 0 or e == session.settings.epochs]
    return pd.DataFrame(rows)


def divergence_panel(session: TrainingSession) -> None:
    """A run whose loss became NaN or infinite: where, why, and what to change."""
    assert session.diverged is not None
    settings = session.settings
    with st.container(border=True, key="mt_diverged"):
        st.error(f"**The run diverged at step {session.diverged.step:,}** (epoch "
                 f"{session.diverged.epoch}): the loss is no longer a number.",
                 icon=":material/trending_up:")
        st.markdown(session.diverged.explanation(settings))
        st.markdown(f"**What to do**: lower the learning rate (try {settings.lr / 10:g}), then the "
                    "run starts again from the same initial weights; or press **Reset** to watch "
                    "the divergence again.")


def results_panel(session: TrainingSession, state: MoonsTrainerState) -> None:
    report = session.test_report()
    st.subheader("Test results", anchor=False)
    if not session.done:
        st.caption(f"Training stopped at epoch {session.epoch} of {session.settings.epochs}: these "
                   "are the test numbers of the model as it is now. The test split is looked at "
                   "only to report, never to choose settings.")
    cols = st.columns(4)
    cols[0].metric("Test accuracy", f"{100 * report.accuracy:.2f}%")
    cols[1].metric("Test F1", f"{report.f1:.3f}", help="F1 of class 1: 2·TP / (2·TP + FP + FN)")
    cols[2].metric("Best possible", f"{100 * report.bayes_accuracy:.2f}%",
                   help="Accuracy of the Bayes-optimal classifier on the same test points.")
    cols[3].metric("Gap", f"{abs(report.gap_points):.2f} pts",
                   help="Percentage points between your model and the best possible accuracy.")
    st.markdown(verdict(report, session.settings.noise))
    log = validation_log(session)
    if not log.empty:
        with st.expander("Validation loss, logged every 10 epochs (as the lesson's loop prints it)",
                         icon=":material/list_alt:"):
            st.dataframe(log, hide_index=True, width="stretch")

    if session.diverged is not None:
        st.caption("With NaN weights the model predicts NaN everywhere (counted as class 0 above), "
                   "and a checkpoint of them would be refused on upload: there is nothing worth "
                   "saving and reloading.")
        return
    key = (session.epoch, session.steps)
    if state.reload_for != key or state.reload_check is None:
        state.reload_check = save_and_reload(session.model, session.fresh_model(), session.x_test,
                                             session.y_test)
        state.reload_for = key
    check = state.reload_check
    with st.container(border=True):
        st.markdown("**Save, reload into a fresh model, compare.** "
                    f"`torch.save(model.state_dict())` wrote {check.file_bytes:,} bytes; a fresh "
                    "`MLP` took them with `load_state_dict(..., strict=True)`.")
        if check.identical_predictions:
            st.success(f"Test predictions are identical (largest logit difference "
                       f"{check.max_logit_difference:g}); reloaded test accuracy "
                       f"{100 * check.accuracy:.2f}%, F1 {check.f1:.3f}.", icon=":material/check_circle:")
        else:
            st.error("The reloaded model predicts differently: this should never happen.",
                     icon=":material/error:")


def checkpoint_panel(session: TrainingSession, state: MoonsTrainerState) -> None:
    settings = session.settings
    stem = f"moons_{settings.dataset}_{'x'.join(map(str, settings.hidden)) or 'linear'}_e{session.epoch}"
    st.markdown("**Download** the weights (`state_dict`) or a full resume checkpoint "
                "(epoch, model, optimizer state, best validation loss).")
    cols = st.columns(3)
    # The bytes are made when a button is clicked, not on every rerun of the page.
    cols[0].download_button(
        "state_dict (.safetensors)",
        lambda: state_dict_safetensors(session.model, {"architecture": settings.architecture}),
        file_name=stem + ".safetensors", mime="application/octet-stream", key="mt_dl_safetensors",
        icon=":material/download:", on_click="ignore")
    cols[1].download_button("state_dict (.pt)", lambda: state_dict_pt(session.model),
                            file_name=stem + ".pt",
                            mime="application/octet-stream", key="mt_dl_pt",
                            icon=":material/download:", on_click="ignore")
    cols[2].download_button(
        "resume checkpoint (.pt)",
        lambda: resume_checkpoint(session.model, session.optimizer, session.epoch,
                                  session.best_val_loss,
                                  {"dataset": settings.dataset, "hidden": list(settings.hidden),
                                   "act": settings.act, "opt": settings.opt, "seed": settings.seed}),
        file_name=stem + "_resume.pt", mime="application/octet-stream", key="mt_dl_resume",
        icon=":material/download:", on_click="ignore")
    st.file_uploader(
        "Upload a checkpoint (.pt, .pth or .safetensors)", type=["pt", "pth", "safetensors"],
        key=UPLOAD_KEY,
        help="Checked before anything is loaded: size, no compressed entries, "
             "torch.load(weights_only=True, map_location='meta') for keys, shapes and dtypes, "
             "finite values; then a strict load into a fresh model.")
    if state.upload_message:
        st.success(state.upload_message, icon=":material/upload_file:")
    if state.upload_error is not None:
        refusal_panel(state.upload_error)


def refusal_panel(refused: ExplainedError) -> None:
    """A refused upload: which check failed, its details, and what to do. The model is unchanged."""
    with st.container(border=True, key="mt_upload_error"):
        st.error(f"**{refused.title}**. Nothing was loaded; your model is unchanged.",
                 icon=":material/gpp_bad:")
        st.code(refused.message, language="text", wrap_lines=True)
        st.markdown(refused.explanation)
        if refused.fixes:
            st.markdown("**What to do**\n" + "\n".join(f"- {fix}" for fix in refused.fixes))


def process_upload(session: TrainingSession, state: MoonsTrainerState) -> None:
    """Check and load a newly uploaded checkpoint, before anything that shows the model is drawn.

    The uploader's value is already in session_state at the top of the run, so the results
    further up the page show the loaded model in the same run.
    """
    settings = session.settings
    upload = st.session_state.get(UPLOAD_KEY)
    if upload is not None and upload.file_id != state.upload_seen:
        state.upload_seen = upload.file_id
        state.upload_error, state.upload_message = None, ""
        try:
            loaded = read_checkpoint(upload.getvalue(), session.model, settings.opt,
                                     optimizer=session.optimizer)
            session.replace_weights(loaded.state_dict, loaded.optimizer_state,
                                    loaded.epoch if loaded.kind == "resume" else None,
                                    loaded.best_val_loss if loaded.kind == "resume" else None)
            report = session.test_report()
            what = ("resume checkpoint (model, optimizer state, epoch "
                    f"{loaded.epoch})" if loaded.kind == "resume" else f"state_dict ({loaded.file_format})")
            state.upload_message = (f"Loaded {code_span(upload.name)}: a {what}. Recomputed test accuracy: "
                                    f"**{100 * report.accuracy:.2f}%**, F1 {report.f1:.3f}.")
            state.reload_check = None
            publish_shared(session)
        except CheckpointRefused as refused:
            state.upload_error = ExplainedError(refused.title, str(refused), refused.explanation,
                                                refused.fixes, "Refused upload")
        except (RuntimeError, ValueError, KeyError) as exc:
            state.upload_error = ExplainedError(
                "The checkpoint could not be loaded", str(exc)[:600],
                "The checks passed but `load_state_dict` refused it, so your model is unchanged.")


def _inspector_link(name: str, shape: tuple[int, ...]) -> None:
    inspector = next((t for t in TOOLS if t.url_path == "tensor_inspector"), None)
    if inspector is not None and inspector.built:
        st.page_link(inspector.script, label=f"Open `{name}` in the tensor inspector",
                     icon=":material/grid_on:",
                     query_params={"shape": ",".join(map(str, shape)), "dtype": "float32"})


def model_summary(session: TrainingSession) -> None:
    rows = parameter_table(session.model)
    st.code(repr(session.model), language="text")
    table = pd.DataFrame([{"parameter": r.name, "shape": str(r.shape), "numel": r.numel,
                           "dtype": r.dtype, "init": r.init} for r in rows])
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(f"{sum(r.numel for r in rows):,} parameters. `nn.Linear(in, out)` stores its weight "
               "as `(out_features, in_features)`, so `x @ weight.T + bias` maps a batch `(N, in)` "
               "to `(N, out)`.")
    inspector = next((t for t in TOOLS if t.url_path == "tensor_inspector"), None)
    if inspector is not None and inspector.built:
        picked = st.selectbox("Parameter to open in the tensor inspector", [r.name for r in rows],
                              key="mt_inspect_param")
        shape = next(r.shape for r in rows if r.name == picked)
        _inspector_link(picked, shape)


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
