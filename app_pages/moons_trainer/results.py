"""The moons trainer's results: test metrics against the best possible, the validation log,
a divergence explained, and the lesson's save-reload-compare check."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.moons_trainer.state import MoonsTrainerState
from workbench.moons_trainer.checkpoints import save_and_reload
from workbench.moons_trainer.training import TestReport, TrainingSession


UNKNOWN_CEILING = ("**Best possible: unknown.** You drew these points yourself, so no known "
                   "process generated them and no Bayes-optimal classifier can be computed: there "
                   "is no ceiling to compare with. Judge the model by its validation and test "
                   "accuracy, and by whether its boundary follows the shape you drew.")


# An R² this close below the best possible predictor's counts as reaching it: on a test split of a
# few hundred points the two R² move by about this much between fresh draws of the data (the
# classification verdict's 1.5 points of accuracy play the same part).
NEAR_CEILING_R2 = 0.02


def regression_verdict(report: TestReport, noise: float) -> str:
    """A regression run's test numbers in words, judged against the best possible predictor's R²
    on the same test points (E[target | x] of the known process, `bayes.regression_ceiling`)."""
    assert report.mse is not None and report.r2 is not None
    assert report.best_mse is not None and report.best_r2 is not None
    r2, best = report.r2, report.best_r2
    reach = ("the noise's share of the targets' variation is out of any model's reach" if noise > 0
             else "without noise the target is a function of the point, so a perfect fit is possible")
    lines = [f"The best possible predictor, the mean target at each point of the process that drew "
             f"the data (it knows the noise, {noise:g}, but not each point's draw), has MSE "
             f"**{report.best_mse:.4f}** and R² **{best:.3f}** on these same {report.n} test "
             f"points: {reach}. On average over fresh draws of the data no model beats it; on one "
             "finite split a lucky one can.",
             f"Your model has MSE **{report.mse:.4f}** and R² **{r2:.3f}**"]
    # Judged on the gap as shown (three decimals), so the words agree with the numbers on screen.
    gap = round(best - r2, 3)
    if r2 <= 0:
        lines[-1] += (": no better than predicting the targets' mean everywhere; there is room to "
                      "improve (more epochs, another learning rate, a wider network).")
    elif gap < 0:
        lines[-1] += (f", {-gap:.3f} above the ceiling on this finite sample: luck on these "
                      "points, not a better predictor.")
    elif gap == 0:
        lines[-1] += ": it is at the ceiling."
    elif gap <= NEAR_CEILING_R2:
        lines[-1] += (f", {gap:.3f} below it: about as good as any model can be on this data.")
    else:
        lines[-1] += (f", {gap:.3f} below it: there is room to improve (more epochs, another "
                      "learning rate, a wider network).")
    return " ".join(lines)


def verdict(report: TestReport, noise: float) -> str:
    """How close the model came to the best possible accuracy, in plain words."""
    gap = report.gap_points
    if gap is None or report.bayes_accuracy is None:
        return UNKNOWN_CEILING
    lines = [f"The Bayes-optimal classifier of the generative process, which knows exactly how "
             f"the points were drawn, scores **{100 * report.bayes_accuracy:.2f}%** on these same "
             f"{report.n} test points. On average over fresh draws of the data no classifier beats "
             "it; on one finite split a lucky one can."]
    if gap == 0:
        lines.append(f"Your model scores **{100 * report.accuracy:.2f}%** too: it is at the ceiling.")
    elif gap < 0:
        lines.append(f"Your model scores **{100 * report.accuracy:.2f}%**, {-gap:.2f} points above "
                     "the ceiling on this finite sample: luck on these points, not a better "
                     "classifier.")
    elif gap <= 1.5:
        lines.append(f"Your model is **{gap:.2f} points** below it: about as good as any classifier "
                     "can be on this data.")
    else:
        lines.append(f"Your model is **{gap:.2f} points** below it: there is room to improve "
                     "(more epochs, another learning rate, a wider network).")
    if report.bayes_accuracy < 0.95:
        lines.append(f"The lesson asks for 95%, but with noise {noise:g} the classes overlap and "
                     "even the Bayes-optimal classifier scores below it on this test split: a model "
                     "that reaches 95% here would be lucky, not better.")
    return " ".join(lines)


def validation_log(session: TrainingSession) -> pd.DataFrame:
    h = session.history
    regression = session.settings.regression
    rows = [{"epoch": e, "train loss": round(tl, 4), "val loss": round(vl, 4),
             **({"val R²": round(va, 4)} if regression else {"val accuracy": f"{100 * va:.2f}%"})}
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
        st.markdown(session.diverged.advice(settings))


def results_panel(session: TrainingSession, state: MoonsTrainerState) -> None:
    with session.lock:          # a slice still under way after Pause ends first
        report = session.test_report()
    st.subheader("Test results", anchor=False)
    if not session.done:
        st.caption(f"Training stopped at epoch {session.epoch} of {session.settings.epochs}: these "
                   "are the test numbers of the model as it is now. The test split is looked at "
                   "only to report, never to choose settings.")
    if report.regression:
        assert report.mse is not None and report.r2 is not None
        cols = st.columns(3)
        cols[0].metric("Test MSE", f"{report.mse:.4f}",
                       help="Mean squared error of the model's output on the test points: the loss "
                            "it trained on (MSELoss).")
        cols[1].metric("Test R²", f"{report.r2:.3f}",
                       help="1 - SSE / SST: 1 is a perfect fit, 0 predicts the targets' mean "
                            "everywhere, below 0 is worse than that.")
        known = report.best_r2 is not None
        cols[2].metric("Best possible", f"R² {report.best_r2:.3f}" if known else "unknown",
                       help="R² of the best possible predictor on the same test points: the mean "
                            "target at each point of the known process (its MSE: "
                            + (f"{report.best_mse:.4f}" if known else "unknown") + "). On "
                            "average over fresh data no model beats it; on one finite split a lucky "
                            "one can.")
        st.markdown(regression_verdict(report, session.settings.noise))
    else:
        _classification_metrics(report, session)
    _results_rest(session, state)


def _classification_metrics(report: TestReport, session: TrainingSession) -> None:
    cols = st.columns(4)
    cols[0].metric("Test accuracy", f"{100 * report.accuracy:.2f}%")
    cols[1].metric("Test F1", f"{report.f1:.3f}", help="F1 of class 1: 2·TP / (2·TP + FP + FN)")
    known = report.bayes_accuracy is not None and report.gap_points is not None
    cols[2].metric("Best possible", f"{100 * report.bayes_accuracy:.2f}%" if known else "unknown",
                   help="Accuracy of the Bayes-optimal classifier on the same test points. On "
                        "average over fresh data no classifier beats it; on one finite split a "
                        "lucky one can." + ("" if known else " Drawn points have none: no known "
                                            "process generated them."))
    cols[3].metric("Gap", f"{abs(report.gap_points):.2f} pts" if known else "unknown",
                   help="Percentage points between your model and the best possible accuracy.")
    st.markdown(verdict(report, session.settings.noise))


def _results_rest(session: TrainingSession, state: MoonsTrainerState) -> None:
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
        if session.settings.regression:
            if check.max_logit_difference == 0:
                st.success("Test outputs are identical (largest difference 0): the reloaded model "
                           "computes the same values.", icon=":material/check_circle:")
            else:
                st.error("The reloaded model computes different outputs: this should never happen.",
                         icon=":material/error:")
        elif check.identical_predictions:
            st.success(f"Test predictions are identical (largest logit difference "
                       f"{check.max_logit_difference:g}); reloaded test accuracy "
                       f"{100 * check.accuracy:.2f}%, F1 {check.f1:.3f}.", icon=":material/check_circle:")
        else:
            st.error("The reloaded model predicts differently: this should never happen.",
                     icon=":material/error:")


def first_run_hint(session: TrainingSession) -> None:
    if session.settings.regression:
        st.info("Press **Play** to train, or **Step** for one epoch at a time. This is regression: "
                "each point has a target value in [-1, 1] (its colour: orange at or above 0, blue "
                "below), the loss is the mean squared error, and the shading is the model's "
                "output value from -1 (blue) to 1 (orange). The noise puts a ceiling on the fit: the best "
                f"possible predictor's test R² is {session.best_test_r2:.3f}.",
                icon=":material/play_circle:")
        return
    if session.bayes_test_accuracy is None:
        st.info("Press **Play** to train, or **Step** for one epoch at a time. The shading is the "
                "model's predicted probability of class 1. You drew these points, so there is no "
                "best possible accuracy to compare with: no known process generated them.",
                icon=":material/play_circle:")
        return
    st.info(f"Press **Play** to train, or **Step** for one epoch at a time. The shading is the "
            f"model's predicted probability of class 1; the dotted green line on the accuracy "
            f"chart is the Bayes-optimal classifier's accuracy on the test split "
            f"({100 * session.bayes_test_accuracy:.2f}%): on average no classifier beats it.",
            icon=":material/play_circle:")


def script_caption(session: TrainingSession) -> str:
    """What the code panel's script reproduces of this run."""
    if session.loaded is not None:
        return ("This run's weights were uploaded, so no script can retrace them: this one trains "
                "the current settings from the seed's initial weights.")
    what = "test MSE and R²" if session.settings.regression else "test accuracy"
    inside = (" Its last lines read hidden units at one point with forward hooks: the values the "
              "network view's maps hold there." if session.settings.hidden else "")
    if session.changes:
        return (f"The whole pipeline, with the {len(session.changes)} setting change(s) you made "
                "while it trained applied at the same optimizer steps. Run as is, it prints the "
                f"same final {what} as this page for the same seed." + inside)
    return ("The whole pipeline for the current settings. Run as is, it prints the same final "
            f"{what} as this page for the same seed." + inside)
