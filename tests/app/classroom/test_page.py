"""The Class page and class mode through the router: a teacher starts a class, learners join by
`class=<code>`, their committed knowledge checks reach the teacher's board, hidden until revealed;
forged keys, unknown codes and oversized nicknames get a clear message and change nothing.

Teacher and learners are separate AppTests (separate sessions) on one class store, the temporary
SQLite database tests/conftest.py configures. AppTest does not fire the board's `run_every`
timer: the teacher's page is run again explicitly, as the timer would.
"""
from __future__ import annotations

import json
import re

from urllib.parse import parse_qsl

import pytest

from app_pages.navigation import CLASS_PAGE, HOME
from components import class_session
from components.class_report import DELETE_NOW, KEEP
from components.class_session import class_store
from components.plain_text import md
from tests.app.apptest import code_blocks, assert_clean, open_page, settle, shown_text
from workbench.classroom import codes
from workbench.classroom.store import ClassError, RunEntry, StoreUnavailable
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK
from workbench.moons_trainer.challenge import data_settings
from workbench.moons_trainer.settings import TABLE


def _start_class():
    teacher = open_page(CLASS_PAGE.script)
    assert_clean(teacher)
    teacher.button(key="class_start").click().run()
    assert_clean(teacher)
    code = next(m for m in code_blocks(teacher) if "?class=" in m and "teacher=" not in m)
    return teacher, code.rsplit("=", 1)[1]


def _learner_answers(code: str, option: str, jar: dict[str, str] | None = None):
    learner = open_page(query={"class": code})
    assert_clean(learner)
    if jar is not None:
        _cookies_written(learner, jar)
    assert f"In class {code}" in shown_text(learner)
    learner.radio(key=f"kc_{CHECK.key}_choice").set_value(option).run()
    learner.button(key=f"kc_{CHECK.key}_commit").click().run()
    assert_clean(learner)
    return learner


def _board_rows(teacher) -> dict[str, int]:
    tables = [t.value for t in teacher.get("table")]
    assert len(tables) == 1, tables
    return {row["answer"]: row["learners"] for _, row in tables[0].iterrows()}


def test_a_class_counts_its_learners_answers_hidden_until_revealed():
    teacher, code = _start_class()
    assert codes.normalise_code(code) == code
    assert teacher.get("image"), "no QR code of the join link"
    text = shown_text(teacher)
    assert "private teacher link" in text and "No answers yet" in text

    _learner_answers(code, CHECK.options[0])
    _learner_answers(code, CHECK.options[2])
    teacher.run()                                         # as the board's timer would
    text = shown_text(teacher)
    assert CHECK.question in text and "**2** answered" in text
    assert not teacher.get("table"), "the distribution shows before it is revealed"
    assert next(m for m in teacher.metric if m.label == "Learners in the class").value == "2"

    teacher.button(key=f"class_reveal_{CHECK.key}").click().run()
    assert_clean(teacher)
    rows = _board_rows(teacher)
    # st.table renders Markdown: the options are escaped as text (components/plain_text.md).
    assert rows == {md(CHECK.options[0]): 1, md(CHECK.options[1]): 0, md(CHECK.options[2]): 1}
    truth = CHECK.answer().correct_option                 # PyTorch's answer, marked on the board
    marked = [row["answer"] for _, row in teacher.get("table")[0].value.iterrows()
              if row["PyTorch"]]
    assert marked == [md(truth)]


def test_a_learner_sees_the_class_in_the_sidebar_renames_and_leaves():
    _, code = _start_class()
    learner = open_page(query={"class": code})
    learner.text_input(key="class_nickname_input").set_value("Ada")      # a form: sent on submit
    learner.button(key="FormSubmitter:class_nickname-Set nickname").click().run()
    assert_clean(learner)
    assert f"In class {code}** as Ada" in shown_text(learner)
    assert class_store().find_class(code).members == 1
    learner.button(key="class_leave").click().run()
    assert "In class" not in shown_text(learner)
    assert class_store().find_class(code).members == 0


@pytest.mark.parametrize("code", ["AAAAAA", "nope", "x" * 10_000])
def test_an_unknown_class_code_gets_a_clear_message(code):
    learner = open_page(query={"class": code})
    assert_clean(learner, code)
    text = shown_text(learner)
    assert "is not a class code" in text or "There is no class" in text
    assert "In class" not in text


def test_a_forged_teacher_key_gets_a_clear_message_and_opens_nothing():
    teacher, code = _start_class()
    forged = open_page(CLASS_PAGE.script, query={"class": code, "teacher": codes.new_secret()})
    assert_clean(forged)
    assert "does not open class" in shown_text(forged)
    assert "teacher" not in forged.query_params, "the key stays in the address bar"
    assert not [b for b in forged.button if b.key and b.key.startswith("class_end")]
    assert not forged.metric, "the board shows without the key"
    # The real private link opens the board on another device, and leaves the address bar.
    link = next(m for m in code_blocks(teacher) if "teacher=" in m)
    key = link.rsplit("teacher=", 1)[1]
    other_device = open_page(CLASS_PAGE.script, query={"class": code, "teacher": key})
    assert_clean(other_device)
    assert "Learners in the class" in shown_text(other_device)
    assert "teacher" not in other_device.query_params


def test_a_10000_character_nickname_gets_a_clear_message_and_changes_nothing():
    _, code = _start_class()
    learner = open_page(HOME.script, query={"class": code})
    seat_before = [m.value for m in learner.sidebar.markdown if "In class" in m.value]
    learner.text_input(key="class_nickname_input").set_value("x" * 10_000)
    learner.button(key="FormSubmitter:class_nickname-Set nickname").click().run()
    assert_clean(learner)
    text = shown_text(learner)
    assert f"at most {codes.NICKNAME_MAX} characters" in text
    assert "x" * 30 not in text
    assert [m.value for m in learner.sidebar.markdown if "In class" in m.value] == seat_before
    assert class_store().find_class(code).members == 1


# --- a reload: the browser keeps the seat ---------------------------------------------------------
_COOKIE_WRITE = re.compile(r'document\.cookie = ("[^"]*") \+ \'=\' \+ ("[^"]*") \+ \'; Max-Age=(\d+)')


def _cookies_written(at, jar: dict[str, str]) -> dict[str, str]:
    """The browser's cookies after this run: `jar` with the run's cookie scripts applied (a
    zero Max-Age deletes), as Chromium would keep them."""
    for element in at.get("html"):
        for name, value, max_age in _COOKIE_WRITE.findall(str(element.value)):
            name, value = json.loads(name), json.loads(value)
            if int(max_age) > 0:
                jar[name] = value
            else:
                jar.pop(name, None)
    return jar


def _reload(monkeypatch, jar: dict[str, str], script: str | None = None, query=None):
    """A new session opened with the browser's cookies (st.context.cookies of its request)."""
    monkeypatch.setattr(class_session, "_request_cookies", lambda: dict(jar))
    return open_page(script, query=query)


def test_a_reloaded_learner_keeps_their_seat_and_their_next_answer_counts(monkeypatch):
    teacher, code = _start_class()
    jar: dict[str, str] = {}
    learner = _learner_answers(code, CHECK.options[0], jar)
    assert class_session.SEAT_COOKIE in jar and code in jar[class_session.SEAT_COOKIE]
    seat_text = [m.value for m in learner.sidebar.markdown if "In class" in m.value]

    again = _reload(monkeypatch, jar, query={"class": code})       # the same link, reloaded
    assert_clean(again)
    assert [m.value for m in again.sidebar.markdown if "In class" in m.value] == seat_text
    assert class_store().find_class(code).members == 1              # counted once
    again.radio(key=f"kc_{CHECK.key}_choice").set_value(CHECK.options[2]).run()
    again.button(key=f"kc_{CHECK.key}_commit").click().run()
    assert_clean(again)
    teacher.run()                                         # as the board's timer would
    assert "**1** answered" in shown_text(teacher)
    teacher.button(key=f"class_reveal_{CHECK.key}").click().run()
    assert _board_rows(teacher) == {md(CHECK.options[0]): 0, md(CHECK.options[1]): 0,
                                    md(CHECK.options[2]): 1}        # replaced, not a replay

    again.button(key="class_leave").click().run()                   # leaving forgets the seat
    _cookies_written(again, jar)
    assert class_session.SEAT_COOKIE not in jar
    assert "In class" not in shown_text(_reload(monkeypatch, jar))


def test_a_seat_cookie_the_class_does_not_know_is_deleted_and_joins_nothing(monkeypatch):
    _, code = _start_class()
    jar = {class_session.SEAT_COOKIE: f"{code}.{codes.new_secret()}",
           class_session.TEACHER_COOKIE: f"{code}.{codes.new_secret()}"}
    page = _reload(monkeypatch, jar)
    assert_clean(page)
    assert "In class" not in shown_text(page) and "Send class" not in shown_text(page)
    assert class_store().find_class(code).members == 0
    assert _cookies_written(page, jar) == {}


def test_a_reloaded_teacher_keeps_the_board_and_ending_the_class_forgets_it(monkeypatch):
    teacher, code = _start_class()
    jar = _cookies_written(teacher, {})
    assert jar[class_session.TEACHER_COOKIE].startswith(f"{code}.")
    again = _reload(monkeypatch, jar, CLASS_PAGE.script)
    assert_clean(again)
    text = shown_text(again)
    assert code in text and "Learners in the class" in text
    assert "private teacher link" not in text          # shown once, on the first screen it had
    again.button(key="class_end").click().run()                    # End asks first
    again.radio(key="class_end_keep").set_value(DELETE_NOW).run()
    again.button(key="class_end_confirm").click().run()
    _cookies_written(again, jar)
    assert jar == {}


def test_a_report_kept_after_end_reopens_on_reload_until_deleted_now(monkeypatch):
    teacher, code = _start_class()
    learner = open_page(query={"class": code})
    learner.radio(key=f"kc_{CHECK.key}_choice").set_value(CHECK.options[0]).run()
    learner.button(key=f"kc_{CHECK.key}_commit").click().run()
    jar = _cookies_written(teacher, {})
    teacher.button(key="class_end").click().run()
    assert teacher.radio(key="class_end_keep").value == KEEP      # keeping is the default
    teacher.button(key="class_end_confirm").click().run()
    assert_clean(teacher)
    assert "Its report is kept until" in shown_text(teacher)
    assert "class_report_delete" in {b.key for b in teacher.button}
    learner.run()                                                 # the learner's page: ended
    assert_clean(learner)
    assert "has ended" in shown_text(learner) and "In class" not in shown_text(learner)
    _cookies_written(teacher, jar)
    again = _reload(monkeypatch, jar, CLASS_PAGE.script)          # a reload: the report again
    assert_clean(again)
    text = shown_text(again)
    assert f"Class **{code}** ended" in " ".join(i.value for i in again.info)
    assert "Learners in the class" not in text and "class_end" not in {b.key for b in again.button}
    again.checkbox(key="class_report_delete_sure").check().run()
    again.button(key="class_report_delete").click().run()
    assert_clean(again)
    assert md(f"Class {code}'s report and data are deleted.") in shown_text(again)
    _cookies_written(again, jar)
    assert jar == {}
    with pytest.raises(ClassError, match="no class"):
        class_store().ended(code, "x")


def test_the_teacher_sends_the_class_to_a_lesson_step_and_a_learner_can_explore_on_their_own():
    teacher, code = _start_class()
    teacher.button(key="FormSubmitter:class_send-Send the class there").click().run()
    assert_clean(teacher)
    sent = class_store().current_send(code)
    first = teacher.selectbox(key="class_send_step").value
    assert sent.number == 1 and sent.title == first and sent.link.startswith("/lessons?lesson=")
    learner = open_page(query={"class": code})
    assert learner.toggle(key="class_follow").value is True
    learner.toggle(key="class_follow").set_value(False).run()
    assert_clean(learner)
    assert "Exploring on your own" in shown_text(learner)
    # A learner cannot send: the store refuses a send without the teacher key.
    with pytest.raises(Exception, match="does not open"):
        class_store().send(code, "", "/", "home")
    assert class_store().current_send(code) == sent


def test_a_followers_page_opens_the_sent_link_with_its_blank_values():
    """`hidden=` (no hidden layers: a linear model) is a value, not a missing parameter: the
    follower's page gets it as the teacher's did."""
    teacher, code = _start_class()
    learner = open_page(query={"class": code})
    key = next(m for m in code_blocks(teacher) if "teacher=" in m).rsplit("teacher=", 1)[1]
    class_store().send(code, key, "/moons_trainer?hidden=&epochs=3", "a linear model")
    learner.run()
    assert_clean(learner)
    assert learner.query_params.get("hidden") in ("", [""]), dict(learner.query_params)
    assert learner.text_input(key="mt_hidden").value == ""


def test_an_answer_given_while_the_database_is_away_is_sent_when_it_is_back(monkeypatch):
    teacher, code = _start_class()
    store = class_store()

    def away(*args, **kwargs):
        raise StoreUnavailable("The class database cannot be reached just now.")

    with monkeypatch.context() as patched:
        patched.setattr(store, "record_answer", away)
        learner = _learner_answers(code, CHECK.options[1])     # the page keeps working
        assert "1 answer(s) wait for the class database" in shown_text(learner)
        assert "Your answer waits for the class database" in shown_text(learner)   # by the check
        teacher.run()
        assert "No answers yet" in shown_text(teacher)
    learner.run()                                              # the next page run sends it
    assert "wait for the class database" not in shown_text(learner)
    assert "waits for the class database" not in shown_text(learner)
    teacher.run()
    assert "**1** answered" in shown_text(teacher)


def test_a_learner_only_looking_at_a_page_is_told_the_class_is_out_of_reach(monkeypatch):
    """No answer sent, no click: the seat's poll itself says the database is away, and stops
    saying it when it is back."""
    _, code = _start_class()
    learner = open_page(query={"class": code})
    store = class_store()

    def away(*args, **kwargs):
        raise StoreUnavailable("The class database is out of reach just now.")

    with monkeypatch.context() as patched:
        patched.setattr(store, "heartbeat", away)
        learner.run()
        # Said in the class's bar on the page itself (a phone's sidebar is folded).
        assert [w.value for w in _class_bar(learner).warning] == [md(
            "The class database is out of reach just now.")]
        assert_clean(learner)
    learner.run()
    assert "out of reach" not in shown_text(learner)
    assert f"In class {code}" in shown_text(learner)


# --- the challenge board ----------------------------------------------------------------------------
MOONS = "app_pages/moons_trainer/page.py"


def _post(code: str, nickname: str, accuracy: float, parameters: int, optimizer: str, lr: float,
          hidden: str, features: str = "", data: str = "") -> None:
    """A posted run; `data`: link settings of its data (e.g. `dataset=gaussians`), as its link
    carries them, and its data in the trainer's words (`data_settings`)."""
    learner = class_store().join(code, nickname)
    inputs = f"&features={features}" if features else ""
    settings = TABLE.read(dict(parse_qsl(data)))[0]
    class_store().post_run(code, learner.token, RunEntry(
        f"/moons_trainer?{data + '&' if data else ''}hidden={hidden}&opt={optimizer}&lr={lr:g}{inputs}",
        optimizer, lr, accuracy, 0.955, parameters, data_settings=data_settings(settings)))


def _board_frames(at) -> list:
    return [d.value for d in at.dataframe if "nickname" in d.value.columns]   # not the roster


def _challenge_rows(at) -> list[dict]:
    """The rows of the board's first table: the runs on the challenge's data."""
    frames = _board_frames(at)
    assert frames and all((frames[0]["challenge"] != "other data").tolist()), frames
    return frames[0].to_dict("records")


def test_the_challenge_board_shows_posted_runs_and_names_the_best_within_the_limit():
    teacher, code = _start_class()
    assert md("No runs posted yet.") in shown_text(teacher)
    _post(code, "Ada", 0.93, 97, "SGD", 0.1, "24")
    _post(code, "**Bo_<b>**", 0.97, 4_353, "Adam", 0.003, "64,32")
    _post(code, "Cy", 0.91, 3, "AdamW", 0.03, "", "x1_sq,x2_sq")    # linear, on the squares
    teacher.run()                                         # as the board's timer would
    assert_clean(teacher)
    rows = _challenge_rows(teacher)
    assert [r["nickname"] for r in rows] == ["Bo_b", "Ada", "Cy"]     # the best first
    bo = rows[0]
    assert (bo["test accuracy %"], bo["best possible %"], bo["parameters"]) == (97.0, 95.5, 4_353)
    assert (bo["optimizer"], bo["learning rate"], bo["hidden layers"]) == ("Adam", 0.003, "64, 32")
    assert bo["experiment"] == "/moons_trainer?hidden=64,32&opt=Adam&lr=0.003"
    assert rows[2]["hidden layers"] == "none (linear)"
    assert (bo["inputs"], rows[2]["inputs"]) == ("x₁, x₂", "x₁², x₂²")
    assert teacher.get("plotly_chart"), "no scatter"
    # No limit yet: the most accurate run wins; the name is stored cleaned and shown escaped.
    assert md(f"Best test accuracy with any number of parameters on {PRESET_DATA}: Bo_b, 97.00%") \
        in shown_text(teacher)
    assert {r["data"] for r in rows} == {PRESET_DATA} and len(_board_frames(teacher)) == 1

    teacher.number_input(key="challenge_limit").set_value(100)
    teacher.button(key="FormSubmitter:challenge_form-Set the challenge").click().run()
    assert_clean(teacher)
    assert md(f"with at most 100 parameters on {PRESET_DATA}: Ada, 93.00% with 97 parameters") \
        in shown_text(teacher)
    assert [r["challenge"] for r in _challenge_rows(teacher)] == ["over the limit", "best", "competes"]

    teacher.number_input(key="challenge_limit").set_value(2)
    teacher.button(key="FormSubmitter:challenge_form-Set the challenge").click().run()
    text = shown_text(teacher)
    assert md(f"No posted run on {PRESET_DATA} has at most 2 parameters yet: the smallest has 3") in text
    assert "best" not in {r["challenge"] for r in _challenge_rows(teacher)}
    assert "Best test accuracy" not in text


PRESET_DATA = "moons, 3000 points, noise 0.25, seed 42, split 70/15/15"
GAUSSIANS = "gaussians, 3000 points, noise 0.25, seed 42, split 70/15/15"


def test_runs_on_other_data_are_listed_apart_until_the_teacher_makes_theirs_the_challenge():
    """Issue 44 item 8: a 9-parameter Two Gaussians run at 99.33% does not beat the moons runs;
    it sits in its own table, named by its data, until the teacher's challenge is on its data."""
    teacher, code = _start_class()
    _post(code, "Ada", 0.93, 97, "SGD", 0.1, "24")
    _post(code, "Gus", 0.9933, 9, "SGD", 0.1, "", data="dataset=gaussians")
    teacher.run()
    assert_clean(teacher)
    ranked, apart = (frame.to_dict("records") for frame in _board_frames(teacher))
    assert [(r["nickname"], r["challenge"], r["data"]) for r in ranked] == [("Ada", "best", PRESET_DATA)]
    assert [(r["nickname"], r["challenge"], r["data"]) for r in apart] == [("Gus", "other data", GAUSSIANS)]
    text = shown_text(teacher)
    assert md(f"on {PRESET_DATA}: Ada, 93.00% with 97 parameters") in text
    assert md("1 run(s) on other data are listed apart, not ranked against it.") in text
    assert md("**Runs on other data**") not in text                # bold, not escaped
    assert f"**Runs on other data**, not ranked against the challenge's ({md(PRESET_DATA)})" in text

    # A link the challenge cannot use changes nothing and says why.
    teacher.text_input(key="challenge_data_link").input("/moons_trainer?dataset=plane")
    teacher.button(key="FormSubmitter:challenge_form-Set the challenge").click().run()
    assert_clean(teacher)
    assert "its data could not be read from that link" in shown_text(teacher)
    assert md(f"any number of parameters on {PRESET_DATA}: Ada") in shown_text(teacher)

    teacher.text_input(key="challenge_data_link").input("/moons_trainer?dataset=gaussians&lr=0.3")
    teacher.number_input(key="challenge_limit").set_value(50)
    teacher.button(key="FormSubmitter:challenge_form-Set the challenge").click().run()
    assert_clean(teacher)
    ranked, apart = (frame.to_dict("records") for frame in _board_frames(teacher))
    assert [(r["nickname"], r["challenge"]) for r in ranked] == [("Gus", "best")]
    assert [(r["nickname"], r["challenge"], r["data"]) for r in apart] == [("Ada", "other data", PRESET_DATA)]
    assert md(f"Best test accuracy with at most 50 parameters on {GAUSSIANS}: Gus, 99.33%") \
        in shown_text(teacher)
    assert teacher.text_input(key="challenge_data_link").value == ""


def test_a_learner_sees_their_own_class_board_without_the_challenge_form():
    _, code = _start_class()
    _, other_code = _start_class()
    _post(code, "Ada", 0.93, 97, "SGD", 0.1, "24")
    _post(other_code, "Eve", 0.99, 97, "SGD", 0.1, "24")
    learner = open_page(CLASS_PAGE.script, query={"class": code})
    assert_clean(learner)
    assert [r["nickname"] for r in _challenge_rows(learner)] == ["Ada"]     # not Eve's class
    assert not [w for w in learner.number_input if w.key == "challenge_limit"]
    with pytest.raises(Exception, match="does not open"):
        class_store().set_challenge(code, "", 10)


def test_the_board_says_when_the_database_is_away_and_the_page_keeps_working(monkeypatch):
    teacher, code = _start_class()

    def away(*args, **kwargs):
        raise StoreUnavailable("The class database cannot be reached just now.")

    monkeypatch.setattr(class_store(), "challenge_board", away)
    teacher.run()
    assert_clean(teacher)
    text = shown_text(teacher)
    assert "cannot be reached" in text and "Learners in the class" in text


def test_a_run_finished_in_a_class_is_posted_from_the_servers_own_results():
    _, code = _start_class()
    learner = open_page(MOONS, {"class": code, "n": "300", "epochs": "1", "hidden": "6"})
    settle(learner.button(key="mt_step").click().run())
    assert_clean(learner)
    assert f"Posted to class {code}" in shown_text(learner)
    assert md("on moons, 300 points, noise 0.25, seed 42, split 70/15/15") in shown_text(learner)
    session = learner.session_state["learner::moons_trainer"].session
    token = learner.session_state["learner::class_seat"].membership.token
    posted = class_store().challenge_board(code, token=token).runs
    assert len(posted) == 1
    report = session.test_report()
    assert (posted[0].test_accuracy, posted[0].bayes_ceiling) == (report.accuracy, report.bayes_accuracy)
    assert posted[0].parameter_count == sum(p.numel() for p in session.model.parameters())
    assert posted[0].link == "/moons_trainer?n=300&hidden=6&epochs=1"
    assert posted[0].data_settings == "moons, 300 points, noise 0.25, seed 42, split 70/15/15"
    learner.run()                                         # seen again: not posted twice
    assert len(class_store().challenge_board(code, token=token).runs) == 1
    settle(learner.button(key="mt_reset").click().run())  # a new run: no note until it finishes
    assert_clean(learner)
    assert "Posted to class" not in shown_text(learner)
    settle(learner.button(key="mt_step").click().run())   # the same settings again: one row
    assert "Already on class" in shown_text(learner)
    assert len(class_store().challenge_board(code, token=token).runs) == 1


def _class_bar(at):
    """The class's bar at the top of the page (components/class_session.py, key class_seat)."""
    def find(block):
        if str(getattr(getattr(block, "proto", None), "id", "")).endswith("-class_seat"):
            return block
        for child in getattr(block, "children", {}).values():
            found = find(child)
            if found is not None:
                return found
        return None

    found = find(at.main)
    assert found is not None, "no class bar on the page"
    return found


def test_a_run_finished_while_the_database_is_away_finishes_and_says_it_was_not_posted(monkeypatch):
    _, code = _start_class()

    def away(*args, **kwargs):
        raise StoreUnavailable("The class database cannot be reached just now.")

    monkeypatch.setattr(class_store(), "post_run", away)
    learner = open_page(MOONS, {"class": code, "n": "300", "epochs": "1", "hidden": "6"})
    settle(learner.button(key="mt_step").click().run())
    assert_clean(learner)
    text = shown_text(learner)
    assert "could not be posted" in text and "Test accuracy" in text
    # The class's bar on the page says it too, once, in the first run after the post: the
    # epoch can end inside the click's own run (then the settled run shows it) or after it (then
    # the next one does), depending on the machine's load.
    in_bar = [w.value for w in _class_bar(learner).warning]
    learner.run()
    in_bar += [w.value for w in _class_bar(learner).warning]
    assert sum("could not be posted" in value for value in in_bar) == 1, in_bar
