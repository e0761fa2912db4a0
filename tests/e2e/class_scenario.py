"""A class in Chromium, from start to send: a teacher and three learners, each in a browser context
of their own. tests/e2e/test_class.py runs it on one server; tests/e2e/test_proxy.py runs the
same scenario through the two-replica proxy on PostgreSQL, the teacher on one replica and the
learners on the other.

1. The teacher (1280x720, presenter mode) starts a class on /class; three learners join by the
   join link the page shows.
2. Each commits a different option of the home page's knowledge check; the teacher's board, never
   reloaded, counts them exactly (its fragment runs again by itself twice a second).
3. The first learner reloads: the same seat (the browser's cookie), the answer replaced, still
   three learners.
4. The second learner opens a short moons run by its own link (a new session: the seat comes back
   the same way) and trains it to its end: the server posts it, the teacher's challenge board
   lists it without a reload, and its posted link, trained by someone outside the class, shows
   the same test accuracy.
5. The third learner explores on their own; the teacher sends the class to a lesson step: the
   two who follow arrive by themselves, the explorer arrives when they go back to the class.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable

from playwright.sync_api import Page, expect

from harness.chromium import open_path
from harness.live_view import wait_live
from tests.e2e.clean import assert_clean
from workbench.classroom.codes import CODE_ALPHABET, CODE_LENGTH
from workbench.classroom.store import ClassStore
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK
from workbench.lessons.catalog import LESSONS
from workbench.moons_trainer.challenge import data_from_link

# A browser context of its own, with a page in it: (width, height, who) -> page. `who` is
# "teacher", "learner" or "outsider", so a caller can send each to a replica of its choice.
NewPage = Callable[[int, int, str], Page]
RUN_EPOCHS = 3


def answer(page: Page, option: str) -> None:
    check = page.locator(f".st-key-kc_{CHECK.key}")
    check.locator("[role=radiogroup] label").filter(has_text=option).click()
    check.locator(f".st-key-kc_{CHECK.key}_commit button").first.click()
    if option != CHECK.answer().correct_option:     # a wrong answer: Try again first, then this
        check.get_by_role("button", name="Show the answer").click()
    expect(check).to_contain_text("computed it with this function")


def board_counts(board) -> dict[str, int]:
    counts = {}
    for row in board.locator("table tbody tr").all():
        cells = [cell.inner_text().strip() for cell in row.locator("td, th").all()]
        counts[cells[0]] = int(cells[1])
    return counts


def wait_for_counts(board, expected: dict[str, int], timeout: float = 60) -> None:
    """Until the board shows `expected` (it refreshes by itself)."""
    deadline = time.monotonic() + timeout
    while (counts := board_counts(board)) != expected:
        assert time.monotonic() < deadline, f"the board counts {counts}, not {expected}"
        time.sleep(0.1)


def train_to_the_end(page: Page, epochs: int) -> str:
    """Play the run on the page to its last epoch; the page's test accuracy as shown ("97.33")."""
    page.locator(".st-key-mt_play button").first.click()
    wait_live(page, "v.status.startsWith(`Epoch ${arg} / ${arg}`) && !v.status.includes('training')",
              arg=epochs, timeout=120_000)
    metric = page.locator("[data-testid=stMetric]", has_text="Test accuracy")
    expect(metric).to_be_visible()
    return re.search(r"(\d+\.\d+)%", metric.inner_text()).group(1)


def teach_a_class(new_page: NewPage, base_url: str, store: ClassStore) -> list[Page]:
    """The whole scenario (the module's docstring); `store` reads the database the server uses.
    Returns every page it opened, teacher first."""
    teacher = new_page(1280, 720, "teacher")
    open_path(teacher, base_url, "/class?present=1")
    teacher.get_by_role("button", name="Start a class").click()
    code_element = teacher.locator(".class-code")
    expect(code_element).to_have_text(re.compile(f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$"))
    code = code_element.inner_text().strip()
    join_link = teacher.locator("code").filter(has_text=f"?class={code}").first.inner_text()
    assert join_link == f"{base_url}/?class={code}", join_link
    # Presenter mode never draws the private teacher link (issue 42): the key is read from the
    # teacher's seat cookie, "<code>.<key>", which the page writes once the class has started.
    teacher_key = teacher.wait_for_function(
        "code => document.cookie.split('; ').map(c => c.split('='))"
        ".filter(([name, value]) => name === 'workbench_class_teacher'"
        " && value.startsWith(code + '.')).map(([, value]) => value.slice(code.length + 1))[0]",
        arg=code).json_value()
    assert not teacher.locator("code").filter(has_text="teacher=").count(), "the key is projected"
    assert_clean(teacher, "teacher")

    learners = []
    for _ in range(3):
        learner = new_page(1400, 1000, "learner")
        learner.goto(join_link)
        # The sidebar's seat (Home also says "You are in class" on the page, before any send).
        expect(learner.locator(".st-key-class_seat").get_by_text(f"In class {code}")).to_be_visible()
        learners.append(learner)

    # 2. Answers reach the board by themselves.
    board = teacher.locator(f".st-key-class_board_{CHECK.key}")
    answer(learners[0], CHECK.options[0])
    expect(board).to_contain_text("1 answered")
    board.get_by_role("button", name="Reveal the answers").click()
    expect(board.locator("table")).to_be_visible()
    answer(learners[1], CHECK.options[1])
    answer(learners[2], CHECK.options[2])
    expect(board).to_contain_text("3 answered")
    learners_metric = teacher.get_by_test_id("stMetricValue").first
    expect(learners_metric).to_have_text("3")
    assert board_counts(board) == {option: 1 for option in CHECK.options}

    # 3. A reload keeps the seat: answering again replaces the answer; three learners, not four.
    seat_line = learners[0].locator(".st-key-class_seat p").first.inner_text()
    learners[0].reload()
    expect(learners[0].locator(".st-key-class_seat p").first).to_have_text(seat_line)
    answer(learners[0], CHECK.options[1])
    wait_for_counts(board, {CHECK.options[0]: 0, CHECK.options[1]: 2, CHECK.options[2]: 1})
    expect(board).to_contain_text("3 answered")
    expect(learners_metric).to_have_text("3")

    # 4. A finished run reaches the challenge board, and its link reproduces it. A challenge is
    # one problem: the teacher sets its data to the runner's (300 points) first.
    store.set_challenge(code, teacher_key, None, data_from_link("n=300")[0])
    runner = learners[1]
    open_path(runner, base_url, f"/moons_trainer?n=300&epochs={RUN_EPOCHS}&speed=max")
    expect(runner.get_by_text(f"In class {code}")).to_be_visible()
    wait_live(runner)
    shown = train_to_the_end(runner, RUN_EPOCHS)
    expect(runner.get_by_text(f"Posted to class {code}'s challenge board: {shown}% test accuracy",
                              exact=False)).to_be_visible()
    (posted,) = store.challenge_board(code, teacher_key=teacher_key).runs
    assert f"{100 * posted.test_accuracy:.2f}" == shown
    expect(teacher.locator(".st-key-challenge_scatter")).to_be_visible()      # no reload
    teacher.get_by_text("Data table: Posted runs", exact=False).first.click()
    expect(teacher.locator("[data-testid=stTable]").filter(has_text=shown).first).to_be_visible()
    outsider = new_page(1400, 1000, "outsider")
    open_path(outsider, base_url, posted.link)
    wait_live(outsider)
    assert train_to_the_end(outsider, RUN_EPOCHS) == shown

    # 5. Follow the teacher, or explore and come back.
    explorer = learners[2]
    explorer.locator(".st-key-class_seat").get_by_text("Follow the teacher").click()
    expect(explorer.locator(".st-key-class_seat")).to_contain_text("Exploring on your own")
    sent = time.monotonic()
    # The send form offers the first lesson's first step first: sent as it is.
    teacher.get_by_role("button", name="Send the class there").click()
    # The lessons page rewrites its link as it publishes its settings: the page is what counts.
    arrival = re.compile(r"/lessons(\?|$)")
    for follower in learners[:2]:
        expect(follower).to_have_url(arrival)
        expect(follower.get_by_text(LESSONS[0].steps[0].title).first).to_be_visible()
    print(f"both followers arrived {time.monotonic() - sent:.1f} s after the send")
    assert "/lessons" not in explorer.url
    explorer.locator(".st-key-class_seat").get_by_text("Follow the teacher").click()
    expect(explorer).to_have_url(arrival)                    # "back to the class"
    pages = [teacher, *learners, outsider]
    for page in pages:
        assert_clean(page)
    return pages
