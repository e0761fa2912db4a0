"""Class: a teacher starts a class and watches its answers arrive; a learner joins one.

A teacher's session holds the class's key (StartedClass); the private teacher link
(`/class?class=<code>&teacher=<key>`) hands that key to another device, and is taken out of the
address bar at once (both parameters), so a projected screen never shows it and the device
stays a teacher, never a learner of its own class.
"""
import streamlit as st

from app_pages.classroom.challenge_board import challenge_board
from app_pages.navigation import CLASS_PAGE, LESSONS_PAGE
from components.class_board import (CLASS_CSS, class_still_taught, join_panel, live_board,
                                    teacher_link_panel)
from components.class_pacing import pacing_panel
from components.class_report import end_class_panel, ended_message, kept_report_view, report_panel
from components.class_prediction import pose_panel, question_from_address
from components.class_roster import roster_panel
from components.class_session import (CLASS_PARAM, NICKNAME_HELP, TEACHER_PARAM, begin_teaching,
                                      class_store, join, open_teacher_link, seat, send_class,
                                      write_cookies)
from components.classroom import lesson_url
from components.plain_text import md
from app_pages.classroom.sweep_panel import sweep_panel
from components.stage import page_header
from workbench.classroom.store import ClassError
from workbench.lessons.catalog import LESSONS

# Every lesson step, as the teacher picks one to send the class to.
STEPS = {f"{lesson.title}, step {number}: {step.title}":
         lesson_url(LESSONS_PAGE.url_path, {"lesson": lesson.key, "step": str(number)})
         for lesson in LESSONS for number, step in enumerate(lesson.steps, 1)}

page_header("Class", "Teach with the workbench: start a class, show its code, and every "
            "knowledge check your learners commit shows up on your board, counted per answer, "
            "hidden until you reveal it. Learners join by the link, the QR code or the code.")
st.html(CLASS_CSS)
mine = seat()

# The private teacher link: check the key, then take it out of the address bar, its `class=`
# too: left there, the next run would read it as a learner's join link (the sidebar joins the
# class of any `class=`), and the teacher would count as a learner and follow their own sends.
key_in_link = st.query_params.get(TEACHER_PARAM)
if key_in_link is not None:
    code_in_link = st.query_params.get(CLASS_PARAM, "")
    del st.query_params[TEACHER_PARAM]
    if CLASS_PARAM in st.query_params:
        del st.query_params[CLASS_PARAM]
    refused = open_teacher_link(code_in_link, key_in_link)
    write_cookies()                      # now: a reload before any click keeps the board
    if refused:
        st.error(md(refused), icon=":material/key_off:")

# A class ended on the teacher's other device (or after a day idle): this device says so as a
# teacher's message, rather than showing a board that answers "there is no class".
if mine.teaching is not None:
    class_still_taught(mine.teaching)      # ended: the teacher's message, and its kept report
question_from_address()         # a question link from an earlier class (predict, then run)

with st.container(key=CLASS_PAGE.main_key):
    if mine.teaching is not None:
        started = mine.teaching
        code_column, board_column = st.columns([2, 3], gap="large")
        with code_column:
            join_panel(started.code)
        with board_column:
            live_board(started)
            pacing_panel(started)
            roster_panel(started)
        pose_panel(started)
        with st.form("class_send", border=True):
            st.markdown("**:material/near_me: Send the class** to a lesson step: every learner "
                        "who follows you opens it within a few seconds, their own work kept. "
                        "On any other page, the sidebar's *Send class here* sends the page on "
                        "your screen, with its settings.")
            step = st.selectbox("Lesson step", list(STEPS), key="class_send_step")
            if st.form_submit_button("Send the class there", icon=":material/near_me:"):
                send_class(STEPS[step], step)
        sweep_panel(started)             # the class as one experiment (sweep_panel.py)
        challenge_board(started.code, teacher_key=started.teacher_key)
        # The teacher's own panels, closed, at the end: a projector scrolled to the board shows
        # neither (and presenter mode never draws the private link).
        teacher_link_panel(started)
        report_panel(started)
        end_class_panel(started)
    else:
        ended_message()
        if mine.kept_report is not None:
            kept_report_view(mine.kept_report)
        if mine.membership is not None:
            st.success(f"You are in class **{mine.membership.code}** as "
                       f"**{md(mine.membership.nickname)}**. Your answers to knowledge checks "
                       "reach your teacher's board, and every moons trainer run you finish "
                       "is posted to the class's challenge board below.", icon=":material/groups:")
            challenge_board(mine.membership.code, token=mine.membership.token)
        learn_column, teach_column = st.columns(2, gap="large")
        with learn_column, st.form("class_join"):
            st.subheader("Join a class", anchor=False)
            typed_code = st.text_input("Class code", max_chars=12, key="class_join_code",
                                       placeholder="e.g. AK37WA")
            nickname = st.text_input("Nickname (optional)", key="class_join_nickname",
                                     help=NICKNAME_HELP)
            if st.form_submit_button("Join", icon=":material/login:"):
                if join(typed_code or "", nickname or ""):
                    st.rerun()
                st.error(md(mine.notice), icon=":material/error:")
                mine.notice = ""
        with teach_column, st.container(border=True):
            st.subheader("Teach", anchor=False)
            st.markdown("Start a class: you get a code, a join link and its QR code for the "
                        "projector, and a board of your learners' answers.")
            if st.button("Start a class", key="class_start", icon=":material/co_present:"):
                try:
                    begin_teaching(class_store().start_class(), link_seen=False)
                    st.rerun()
                except ClassError as exc:
                    st.error(md(str(exc)), icon=":material/error:")
