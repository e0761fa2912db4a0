"""The moons trainer's checkpoints: downloads, and uploads checked before anything is loaded."""
from __future__ import annotations

import streamlit as st

from app_pages.moons_trainer.state import MoonsTrainerState, publish_shared
from components.error_panel import error_panel
from components.plain_text import code_span
from workbench.common.errors import ExplainedError
from workbench.moons_trainer.checkpoints import (
    CheckpointRefused,
    read_checkpoint,
    resume_checkpoint,
    safetensors_metadata,
    state_dict_pt,
    state_dict_safetensors,
)
from workbench.moons_trainer.training import TrainingSession

UPLOAD_KEY = "mt_upload"


def checkpoint_panel(session: TrainingSession, state: MoonsTrainerState) -> None:
    settings = session.settings
    stem = f"moons_{settings.dataset}_{'x'.join(map(str, settings.hidden)) or 'linear'}_e{session.epoch}"
    st.markdown("**Download** the weights (`state_dict`) or a full resume checkpoint "
                "(epoch, model, optimizer state, best validation loss).")
    cols = st.columns(3)
    # The bytes are made when a button is clicked, not on every rerun of the page.
    cols[0].download_button(
        "state_dict (.safetensors)",
        lambda: state_dict_safetensors(session.model, safetensors_metadata(settings.architecture,
                                                                          settings.features)),
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
                                  {"dataset": settings.dataset, "features": list(settings.features),
                                   "hidden": list(settings.hidden),
                                   "act": settings.act, "opt": settings.opt, "seed": settings.seed}),
        file_name=stem + "_resume.pt", mime="application/octet-stream", key="mt_dl_resume",
        icon=":material/download:", on_click="ignore")
    st.file_uploader(
        "Upload a checkpoint (.pt, .pth or .safetensors)", type=["pt", "pth", "safetensors"],
        key=UPLOAD_KEY,
        help="Checked before anything is loaded: size, no compressed entries, the pickle read "
             "opcode by opcode without building it (only what torch.save of tensors writes, "
             "within limits), torch.load(weights_only=True, map_location='meta') for keys, shapes "
             "and dtypes, finite values; then a strict load into a fresh model.")
    if state.upload_message:
        st.success(state.upload_message, icon=":material/upload_file:")
    if state.upload_error is not None:
        error_panel(state.upload_error, key="mt_upload_error")


def process_upload(session: TrainingSession, state: MoonsTrainerState) -> None:
    """Check and load a newly uploaded checkpoint, before anything that shows the model is drawn.

    The uploader's value is already in session_state at the top of the run, so the results
    further up the page show the loaded model in the same run.
    """
    settings = session.settings
    upload = st.session_state.get(UPLOAD_KEY)
    if upload is not None and upload.file_id != state.upload_seen:
        state.upload_seen = upload.file_id
        state.notice = ""                  # an upload is the learner's next action
        state.upload_error, state.upload_message = None, ""
        try:
            with session.lock:      # a playing run's next slice trains the loaded weights
                loaded = read_checkpoint(upload.getvalue(), session.model, settings.opt,
                                         optimizer=session.optimizer)
                session.replace_weights(loaded.state_dict, loaded.optimizer_state,
                                        loaded.epoch if loaded.kind == "resume" else None,
                                        loaded.best_val_loss if loaded.kind == "resume" else None,
                                        source=upload.name)
                report = session.test_report()
            what = ("resume checkpoint: the model, the optimizer's state and the epoch "
                    f"({loaded.epoch}) are restored; the curves before it are not in the file"
                    if loaded.kind == "resume" else
                    f"state_dict ({loaded.file_format}): the weights only, so the epoch count "
                    "starts at 0 here and the training history is unknown")
            score = (f"MSE: **{report.mse:.4f}**, R² {report.r2:.3f}" if report.regression else
                     f"accuracy: **{100 * report.accuracy:.2f}%**, F1 {report.f1:.3f}")
            state.upload_message = (f"Loaded {code_span(upload.name)}, a {what}. Recomputed test "
                                    f"{score}; the plane and the test results show the loaded "
                                    "model.")
            state.sent.scene_id = ""
            state.reload_check = None
            publish_shared(session)
        except CheckpointRefused as refused:
            state.upload_error = refused.explained
        except (RuntimeError, ValueError, KeyError) as exc:
            state.upload_error = ExplainedError(
                "The checkpoint could not be loaded", str(exc)[:600],
                "The checks passed but `load_state_dict` refused it, so your model is unchanged.",
                kind="Refused")
