"""The class's report on the teacher's Class page, live during class and after it; and End, which
offers the report first, then keeps it for KEEP_REPORT_DAYS or deletes everything now.

The report (workbench/classroom/report.py) is built from the store when the teacher opens its
panel or presses a download, never on the board's timer. Drawn on the page, it follows the
teacher's *Hide names on the boards* (seats instead of names: the page may be projected); the
downloaded files are the teacher's own and name every learner.
"""
from __future__ import annotations

import os
import time

import pandas as pd
import streamlit as st

from components.class_session import (class_store, keep_report, read_class, seat, stop_teaching,
                                      forget_report)
from components.classroom import app_root
from components.plain_text import md
from workbench.classroom.catalog import all_checks
from workbench.classroom.report import (ClassReport, build_report, report_csv, report_html,
                                        share_text, time_text)
from workbench.classroom.store import (KEEP_REPORT_DAYS, URL_SETTING, ClassError, StartedClass,
                                       StoreUnavailable)

END_ASKED = "class_end_asked"           # the class code whose End waits for a yes
ENDED = "class_ended_message"           # the teacher's message after End, shown once
KEEP_CHOICE = "class_end_keep"
KEEP = f"Keep the report for {KEEP_REPORT_DAYS} days, then delete it"
DELETE_NOW = "Delete everything now"


def on_server_disk() -> bool:
    """Whether the class lives in a SQLite file on this server's own disk (the default, also on
    Community Cloud, whose disk does not promise to outlive a restart)."""
    return (os.environ.get(URL_SETTING) or "sqlite").startswith("sqlite")


def _zone() -> str | None:
    try:
        return st.context.timezone
    except Exception:               # no browser context (a script run outside a session)
        return None


def _report(started: StartedClass, names: bool) -> ClassReport:
    record = class_store().record(started.code, started.teacher_key)
    return build_report(record, all_checks(), names=names and not record.hide_names)


def downloads(started: StartedClass, key: str) -> None:
    """The report as one HTML page (to print or file) and as CSV (a spreadsheet), each built
    when its button is pressed. The files name every learner."""
    root, zone = app_root(), _zone()

    def build(kind: str):
        def make() -> str:
            try:
                report = _report(started, names=True)
            except ClassError as exc:
                return f"{exc}\n"
            return report_html(report, root, zone) if kind == "html" else report_csv(report, root, zone)
        return make

    with st.container(horizontal=True, key=f"{key}_downloads"):
        st.download_button("Download the report (HTML, to print)", data=build("html"),
                           file_name=f"class-{started.code}-report.html", mime="text/html",
                           key=f"{key}_html", icon=":material/download:", on_click="ignore",
                           help="One page with every check, every learner's answers and runs; it "
                           "opens in any browser, without this app, and prints.")
        st.download_button("Download the report (CSV)", data=build("csv"),
                           file_name=f"class-{started.code}-report.csv", mime="text/csv",
                           key=f"{key}_csv", icon=":material/table_view:", on_click="ignore",
                           help="The checks, the answers per learner and the posted runs, as a "
                           "spreadsheet opens them. Names a spreadsheet would run as a formula "
                           "start with '.")
    if on_server_disk():
        st.caption(":material/save: This class lives in a file on this server's own disk (the "
                   "default SQLite store). A server restart or a redeploy can lose it (on "
                   "Community Cloud it does): download the report to keep it.")


def report_panel(started: StartedClass, *, expanded: bool = False) -> None:
    """The report, live: closed by default, since it shows names (unless hidden)."""
    with st.expander("The class's report", icon=":material/summarize:", expanded=expanded):
        _report_body(started)


@st.fragment
def _report_body(started: StartedClass) -> None:
    report = read_class(lambda: _report(started, names=True))
    if report is None:
        return
    st.button("Update the report", key="class_report_update", icon=":material/refresh:",
              help="Read the class again: answers and runs given since show up.")
    st.caption(f"As of {time.strftime('%H:%M:%S')}: {len(report.learners)} learner(s), "
               f"{report.answers} answer(s) to {len(report.checks)} check(s), {len(report.runs)} "
               "posted run(s)." + ("" if report.names_shown else " Names are hidden: seats "
                                   "are shown instead (the downloads name every learner)."))
    if report.checks:
        st.markdown("**Checks, the most wrong first**")
        st.dataframe(pd.DataFrame([{
            "question": check.question, "answered": check.answered,
            "chose what PyTorch computes": share_text(check.share_right) or "unknown",
            "PyTorch computes": check.correct_option or "", "answered by": ", ".join(check.answered_by)}
            for check in report.checks]), hide_index=True, key="class_report_checks")
    else:
        st.caption("No learner has answered a check yet.")
    if report.predictions:
        st.markdown("**Predictions, revealed**")
        st.dataframe(pd.DataFrame([{
            "question": p.question, "voted": p.voted,
            "predicted what the experiment showed": share_text(p.share_right) or "opinion poll",
            "the experiment showed": p.options[p.shown] if p.shown is not None else ""}
            for p in report.predictions]), hide_index=True, key="class_report_predictions")
    if report.learners:
        st.markdown("**Learners**")
        st.dataframe(pd.DataFrame([{
            "seat": learner.seat, "name": learner.name, "answers": len(learner.answers),
            "right": learner.right, "runs posted": len(learner.runs),
            "best test accuracy": max((f"{run.test_accuracy:.2%}" for run in learner.runs),
                                      default="")}
            for learner in report.learners]), hide_index=True, key="class_report_learners")
    downloads(started, "class_report")


def end_class_panel(started: StartedClass) -> None:
    """End the class, in two steps: *End the class…* says what ending does (counted in the
    store), offers the report, and asks whether to keep it for KEEP_REPORT_DAYS or delete
    everything now; only *Yes, end …* ends. The teacher then reads a teacher's message."""
    asked = st.session_state.get(END_ASKED) == started.code
    with st.expander("End the class", icon=":material/stop_circle:", expanded=asked):
        if not asked:
            st.markdown(f"Ending the class closes it: its code stops working and learners can "
                        f"answer no more. You choose whether its report is kept for "
                        f"{KEEP_REPORT_DAYS} days or everything is deleted at once. (A class "
                        "also ends by itself after a day without activity, and is deleted.)")
            if st.button("End the class…", key="class_end", icon=":material/stop_circle:"):
                st.session_state[END_ASKED] = started.code
                st.rerun()
            return
        counts = read_class(lambda: _class_counts(started))
        if counts is None:
            return
        members, answered, runs = counts
        st.warning(f"Ending class **{started.code}** closes it to its **{members}** member(s); "
                   f"its **{answered}** answer(s) and **{runs}** posted run(s) are kept in its "
                   f"report for {KEEP_REPORT_DAYS} days, or deleted now, as you choose below. "
                   "Download the report first if you want a copy of your own.",
                   icon=":material/warning:")
        downloads(started, "class_end")
        keep = st.radio("After ending", (KEEP, DELETE_NOW), key=KEEP_CHOICE,
                        help="Kept: only your teacher link (or this browser) opens the report, "
                        "and it is deleted when the days are over. Deleted now: no one can read "
                        "the class's data again.") == KEEP
        yes, no = st.columns(2)
        label = (f"Yes, end class {started.code} and keep its report" if keep else
                 f"Yes, end class {started.code} and delete its data")
        if yes.button(label, key="class_end_confirm", type="primary",
                      icon=":material/archive:" if keep else ":material/delete_forever:"):
            _end(started, KEEP_REPORT_DAYS if keep else 0)
        if no.button("Keep the class running", key="class_end_cancel", icon=":material/undo:"):
            st.session_state.pop(END_ASKED, None)
            st.rerun()


def _class_counts(started: StartedClass) -> tuple[int, int, int]:
    store = class_store()
    view = store.find_class(started.code)
    answered = sum(t.answered for t in store.tallies(started.code, started.teacher_key))
    runs = len(store.challenge_board(started.code, teacher_key=started.teacher_key).runs)
    return view.members, answered, runs


def _end(started: StartedClass, keep_days: int) -> None:
    """End the class; a class that ended already (on the teacher's other device, or by expiry)
    is ended as far as this teacher is concerned, and said so as such, never as a learner's
    "check the code with your teacher"."""
    try:
        ended = class_store().end_class(started.code, started.teacher_key, keep_days=keep_days)
    except StoreUnavailable as exc:
        st.warning(md(str(exc)), icon=":material/cloud_off:")
        return
    except ClassError:
        ended = None
        message = f"Class {started.code} had ended already; its data is deleted."
    else:
        message = (f"Class {started.code} ended; its data is deleted." if ended is None else
                   f"Class {started.code} ended; learners can no longer answer.")
    st.session_state.pop(END_ASKED, None)
    st.session_state[ENDED] = message
    if ended is None:
        stop_teaching()
    else:
        keep_report(started)
    st.rerun()


def ended_message() -> None:
    """The teacher's message after End, once, on the Class page."""
    message = st.session_state.pop(ENDED, "")
    if message:
        st.success(md(message), icon=":material/check_circle:")


def kept_report_view(started: StartedClass) -> None:
    """An ended class's report, kept: read it, download it, or delete it now."""
    ended = read_class(lambda: class_store().ended(started.code, started.teacher_key))
    if ended is None:
        # Deleted (the days are over, or Delete now on another device), or still running.
        forget_report()
        return
    st.info(f"Class **{started.code}** ended at {time_text(ended.ended_at, _zone())}. Its report "
            f"is kept until **{time_text(ended.keep_until, _zone())}**, then deleted; your teacher "
            "link opens it until then.", icon=":material/archive:")
    report_panel(started, expanded=True)
    with st.expander("Delete the report now", icon=":material/delete_forever:"):
        st.checkbox(f"Yes, delete class {started.code}'s report and data now",
                    key="class_report_delete_sure")
        if st.button("Delete now", key="class_report_delete", icon=":material/delete_forever:",
                     disabled=not st.session_state.get("class_report_delete_sure")):
            try:
                class_store().end_class(started.code, started.teacher_key, keep_days=0)
            except StoreUnavailable as exc:
                st.warning(md(str(exc)), icon=":material/cloud_off:")
                return
            except ClassError:
                pass                                     # gone already
            forget_report()
            st.session_state[ENDED] = f"Class {started.code}'s report and data are deleted."
            st.rerun()
    if st.button("Close the report", key="class_report_close", icon=":material/close:",
                 help="Back to starting or joining a class; your teacher link still opens the "
                 "report until it is deleted."):
        seat().kept_report = None
        st.rerun()
