"""A class in Chromium: a teacher and three learners, each in a browser context of their own.

The teacher starts a class on /class; the learners join by the join link (`/?class=<code>`), each
commits a different option of the home page's knowledge check, and the teacher's board, never
reloaded, counts them exactly: the board's fragment runs again by itself twice a second. Then the
first learner reloads the page and answers again: the same seat, the answer replaced. Then the
teacher sends the class to a lesson step: the two learners who follow arrive by themselves, the
one exploring on their own stays, and arrives when they go back to the class.
"""
from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from bench.browser import open_path
from bench.live_view import wait_live
from tests.e2e.clean import assert_clean
from workbench.classroom.codes import CODE_ALPHABET, CODE_LENGTH
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK
from workbench.lessons.catalog import LESSONS

pytestmark = pytest.mark.e2e


def _context_page(browser, width=1400, height=1000):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(60_000)
    return context, page


def _answer(page, option: str) -> None:
    check = page.locator(f".st-key-kc_{CHECK.key}")
    check.locator("[role=radiogroup] label").filter(has_text=option).click()
    check.locator(f".st-key-kc_{CHECK.key}_commit button").first.click()
    expect(check).to_contain_text("computed it with this function")


def _board_counts(board) -> dict[str, int]:
    counts = {}
    for row in board.locator("table tbody tr").all():
        cells = [cell.inner_text().strip() for cell in row.locator("td, th").all()]
        counts[cells[0]] = int(cells[1])
    return counts


def _wait_for_counts(board, expected: dict[str, int], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while (counts := _board_counts(board)) != expected:
        assert time.monotonic() < deadline, f"the board counts {counts}, not {expected}"
        board.page.wait_for_timeout(100)


def test_three_learners_answers_reach_the_teachers_board_without_a_reload(browser, app_url):
    contexts = []
    try:
        context, teacher = _context_page(browser, 1280, 720)
        contexts.append(context)
        open_path(teacher, app_url, "/class?present=1")
        teacher.get_by_role("button", name="Start a class").click()
        code_element = teacher.locator(".class-code")
        expect(code_element).to_have_text(re.compile(f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$"))
        code = code_element.inner_text().strip()
        join_link = teacher.locator("code").filter(has_text=f"?class={code}").first.inner_text()
        assert join_link.endswith(f"/?class={code}") and "teacher=" not in join_link
        assert_clean(teacher, "teacher")

        learners = []
        for _ in range(3):
            context, learner = _context_page(browser)
            contexts.append(context)
            learner.goto(join_link)
            expect(learner.get_by_text(f"In class {code}")).to_be_visible()
            learners.append(learner)

        board = teacher.locator(f".st-key-class_board_{CHECK.key}")
        _answer(learners[0], CHECK.options[0])
        expect(board).to_contain_text("1 answered")          # arrives by itself: no reload
        board.get_by_role("button", name="Reveal the answers").click()
        expect(board.locator("table")).to_be_visible()
        _answer(learners[1], CHECK.options[1])
        _answer(learners[2], CHECK.options[2])
        expect(board).to_contain_text("3 answered")
        expect(teacher.get_by_test_id("stMetricValue").first).to_have_text("3")
        assert _board_counts(board) == {option: 1 for option in CHECK.options}

        # A reload keeps the learner's seat (the browser's cookie): answering again replaces
        # their answer, and the board still counts three learners, not four.
        seat_line = learners[0].locator(".st-key-class_seat p").first.inner_text()
        learners[0].reload()
        expect(learners[0].locator(".st-key-class_seat p").first).to_have_text(seat_line)
        _answer(learners[0], CHECK.options[1])
        _wait_for_counts(board, {CHECK.options[0]: 0, CHECK.options[1]: 2, CHECK.options[2]: 1})
        expect(board).to_contain_text("3 answered")
        expect(teacher.get_by_test_id("stMetricValue").first).to_have_text("3")

        explorer = learners[2]
        explorer.locator(".st-key-class_seat").get_by_text("Follow the teacher").click()
        expect(explorer.locator(".st-key-class_seat")).to_contain_text("Exploring on your own")
        # The send form offers the first lesson's first step first: sent as it is.
        sent = time.monotonic()
        teacher.get_by_role("button", name="Send the class there").click()
        # The lessons page rewrites its link as it publishes its settings: the page is what counts.
        arrival = re.compile(r"/lessons(\?|$)")
        for follower in learners[:2]:
            expect(follower).to_have_url(arrival)
            expect(follower.get_by_text(LESSONS[0].steps[0].title).first).to_be_visible()
        print(f"both followers arrived {time.monotonic() - sent:.1f} s after the send")
        assert explorer.url.rstrip("/").endswith(f"?class={code}") or "/lessons" not in explorer.url
        explorer.locator(".st-key-class_seat").get_by_text("Follow the teacher").click()
        expect(explorer).to_have_url(arrival)                # "back to the class"
        for page in [teacher, *learners]:
            assert_clean(page)
    finally:
        for context in contexts:
            context.close()


def _train_to_the_end(page, epochs: int) -> str:
    """Play the run on the page to its last epoch; the page's test accuracy as shown ("97.33")."""
    page.locator(".st-key-mt_play button").first.click()
    wait_live(page, "v.status.startsWith(`Epoch ${arg} / ${arg}`) && !v.status.includes('training')",
              arg=epochs, timeout=120_000)
    metric = page.locator("[data-testid=stMetric]", has_text="Test accuracy")
    expect(metric).to_be_visible()
    return re.search(r"(\d+\.\d+)%", metric.inner_text()).group(1)


def test_a_finished_run_reaches_the_teachers_board_and_its_link_reproduces_it(browser, app_url):
    """A learner in the class trains a short run to its end: the server posts it (the learner is
    told), the teacher's board, never reloaded, lists it, and the link it posted, opened by
    someone else and trained, shows the same test accuracy."""
    from components.class_session import class_store

    store = class_store()                  # the store the server uses (tests/conftest.py)
    started = store.start_class()
    contexts = []
    try:
        context, teacher = _context_page(browser, 1280, 720)
        contexts.append(context)
        open_path(teacher, app_url, f"/class?class={started.code}&teacher={started.teacher_key}")
        expect(teacher.get_by_text("Every moons trainer run a learner in the class finishes",
                                   exact=False)).to_be_visible()

        context, learner = _context_page(browser)
        contexts.append(context)
        open_path(learner, app_url, f"/moons_trainer?n=300&epochs=3&speed=max&class={started.code}")
        expect(learner.get_by_text(f"In class {started.code}")).to_be_visible()
        wait_live(learner)
        shown = _train_to_the_end(learner, 3)
        expect(learner.get_by_text(f"Posted to class {started.code}'s challenge board: {shown}% "
                                   "test accuracy", exact=False)).to_be_visible()

        (posted,) = store.challenge_board(started.code, teacher_key=started.teacher_key).runs
        assert f"{100 * posted.test_accuracy:.2f}" == shown
        scatter = teacher.locator(".st-key-challenge_scatter")
        expect(scatter).to_be_visible()                        # arrives by itself: no reload
        teacher.get_by_text("Data table: Posted runs", exact=False).first.click()
        expect(teacher.locator("[data-testid=stTable]").filter(has_text=f"{shown}")
               .first).to_be_visible()

        context, other = _context_page(browser)
        contexts.append(context)
        open_path(other, app_url, posted.link)
        wait_live(other)
        assert _train_to_the_end(other, 3) == shown
        for page in (teacher, learner, other):
            assert_clean(page)
    finally:
        for context in contexts:
            context.close()
