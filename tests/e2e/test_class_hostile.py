"""A class with a hostile learner, in Chromium: the teacher keeps the room.

A server of its own, told it runs behind a proxy (WORKBENCH_BEHIND_PROXY=1: the join limit
counts X-Forwarded-For's last hop) with a small join bucket (6 joins per address, no refill
within the test), so a script fills the bucket with a handful of sessions instead of 60.

1. The teacher (1280x720) starts a class; two learners and a hostile one join by the link, each
   in a browser context of its own.
2. The hostile learner tries the name "Tеacher" with a Cyrillic е: refused, with the reason.
3. The two learners answer the home page's check; the hostile learner commits seven other
   checks in a row (the autograd page's three, the tensor inspector's four): the class's
   question stays first on the board, and the rest are reachable under "Show another check".
4. A script opens ten sessions on the join link from one address: six get a seat, four are
   told to wait.
5. The teacher removes the hostile learner on the roster: their page says they were removed.
6. The teacher hides names: the winner sentence of the challenge board names no one.
7. The teacher closes joining: a new learner (a phone, 390x844) is refused with the message.
8. The private teacher link, opened on a second device, stays a teacher: no seat, and its Send
   moves the class, not itself.
"""
from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from harness.chromium import open_path, wait_settled
from harness.st_client import Session
from tests.e2e.classroom import start_class
from tests.e2e.clean import assert_clean
from tests.e2e.conftest import serve
from tests.e2e.waiting import WAIT_MS
from workbench.autograd_graph.checks import INFERENCE_TENSOR, THREE_BACKWARD, UPDATE_OUTSIDE_NO_GRAD
from workbench.classroom.store import RunEntry
from workbench.common.checks import Check
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK
from workbench.tensor_inspector.checks import PAGE_CHECKS

pytestmark = pytest.mark.e2e

BURST = 6
SCRIPT_SESSIONS = 10
SCRIPT_ADDRESS = "203.0.113.66"


@pytest.fixture(scope="module")
def hostile_url():
    with serve(env={"WORKBENCH_BEHIND_PROXY": "1", "WORKBENCH_JOIN_BURST": str(BURST),
                    "WORKBENCH_JOIN_EVERY_SECONDS": "3600"}) as base:
        yield base


def _set_nickname(page: Page, name: str) -> None:
    """Type a nickname in the class bar's *Nickname* popover (opened if it is closed) and set it."""
    box = page.get_by_role("textbox", name="Nickname (optional)")
    if not box.is_visible():
        page.locator(".st-key-class_seat").get_by_role("button", name=re.compile("Nickname")).click()
    box.fill(name)
    page.get_by_role("button", name="Set nickname").click()


class ScriptSession(Session):
    """A scripted tab whose handshake says it comes, through the proxy, from one address."""

    async def connect(self) -> None:
        host = self.base_url.split("://", 1)[-1]
        self._ws = await connect(f"ws://{host}/_stcore/stream", subprotocols=[Subprotocol("streamlit")],
                                 origin=f"http://{host}", max_size=None, open_timeout=30,
                                 additional_headers={"X-Forwarded-For": SCRIPT_ADDRESS})
        self._reader = asyncio.create_task(self._read())


async def _fill_seats(base_url: str, code: str) -> list[str]:
    """Open SCRIPT_SESSIONS sessions on the join link; what each was told ("seat" or "wait")."""
    sessions = [ScriptSession(base_url, query=f"class={code}") for _ in range(SCRIPT_SESSIONS)]
    told = []
    try:
        for session in sessions:                     # one after another, as fast as it can
            result = await session.open()
            assert result.finished and not result.exceptions, result.error
            told.append("seat" if result.has_text(f"In class {code}")
                        else "wait" if result.has_text("Many learners joined from your network")
                        else "?")
    finally:
        for session in sessions:
            await session.close()
    return told


def _commit(page: Page, check: Check) -> None:
    box = page.locator(f".st-key-kc_{check.key}")
    wait_settled(page)           # a run still under way (a join, a follow) would redraw the pick
    box.locator("[role=radiogroup] label").first.click()
    expect(box.locator("[role=radiogroup] input").first).to_be_checked()
    box.locator(f".st-key-kc_{check.key}_commit button").first.click()
    expect(box.get_by_role("button", name="Try again")).to_be_visible()


def _open_tab(page: Page, name: str, content: str) -> None:
    """Click a tab until its content shows. Once in a run of three class tests at once, the
    Check yourself tab's checks stayed hidden for a minute after the click (the tab reruns the
    page, beside the follow fragment's ticks; not reproduced alone): a learner clicks again,
    and so does the test, at most twice more."""
    for attempt in range(3):
        wait_settled(page)
        page.get_by_role("tab", name=name).click()
        try:
            expect(page.locator(content).locator("[role=radiogroup]").first) \
                .to_be_visible(timeout=WAIT_MS // 3)
            return
        except AssertionError:
            if attempt == 2:
                raise


def test_the_teacher_keeps_a_class_with_a_hostile_learner(new_tab, hostile_url, servers_store):
    store = servers_store
    # 1. A class, two learners and a hostile one.
    teacher = new_tab(1280, 720)
    code = start_class(teacher, hostile_url)
    join_link = f"{hostile_url}/?class={code}"
    hostile, *learners = pages = [new_tab(1400, 1000) for _ in range(3)]
    for page in pages:
        open_path(page, hostile_url, f"/?class={code}")
        expect(page.locator(".st-key-class_seat").get_by_text(f"In class {code}")).to_be_visible()
        assert "class=" not in page.url                   # a reload resumes, never re-joins

    # 2. A name that passes for the teacher's is refused, with the reason.
    seat_panel = hostile.locator(".st-key-class_seat")
    _set_nickname(hostile, "T\u0435acher")
    expect(seat_panel).to_contain_text("looks like the teacher")
    expect(seat_panel).not_to_contain_text("as T\u0435acher")
    _set_nickname(hostile, "Troll")
    expect(seat_panel).to_contain_text("as Troll")

    # 3. Seven checks in a row from one learner leave the class's question on top.
    for learner in learners:
        _commit(learner, CHECK)
    open_path(hostile, hostile_url, "/autograd_graph")
    for check in (THREE_BACKWARD, UPDATE_OUTSIDE_NO_GRAD, INFERENCE_TENSOR):
        _commit(hostile, check)
    open_path(hostile, hostile_url, "/tensor_inspector")
    _open_tab(hostile, "Check yourself", f".st-key-kc_{PAGE_CHECKS[0].key}")
    for check in PAGE_CHECKS:
        _commit(hostile, check)
    other = teacher.locator(".st-key-class_board_other")
    expect(other).to_contain_text("2 more answered")      # 8 answered, 6 on the board
    cards = teacher.locator("[class*='st-key-class_board_']:not(.st-key-class_board_other)")
    expect(cards.first).to_contain_text(CHECK.question[:40])
    expect(cards.first).to_contain_text("2 answered")

    # 4. A script filling seats from one address gets the bucket, not the class.
    present_before = store.find_class(code).members
    # In a thread of its own: Playwright's sync API holds this thread's event loop.
    with ThreadPoolExecutor(1) as script:
        told = script.submit(asyncio.run, _fill_seats(hostile_url, code)).result()
    assert told == ["seat"] * BURST + ["wait"] * (SCRIPT_SESSIONS - BURST), told
    assert store.find_class(code).members == present_before + BURST

    # 5. The teacher removes the hostile learner; their page says so.
    teacher.get_by_text("Roster: who is in the class").click()
    controls = teacher.locator(".st-key-class_roster_controls")
    counted = f"{present_before + BURST} learner(s) to pick from"
    # Clicked once no run is under way. In one fresh-clone run of the whole suite the list
    # still read "as of" a time before the click a minute later (the test passed in the
    # other full runs and alone; the cause is not found): a teacher would click again, and
    # so does the test, at most twice more.
    for attempt in range(3):
        wait_settled(teacher)
        teacher.get_by_role("button", name="Update the list").click()
        try:
            expect(controls).to_contain_text(counted, timeout=WAIT_MS // 3)
            break
        except AssertionError:
            if attempt == 2:
                raise
    roster = teacher.locator(".st-key-class_roster_seat")
    # Typed, then picked: the list draws only the options in view, and nine random names
    # can put Troll's below them. The open list sometimes closes while the boards beside
    # it redraw (seen in 1 run of 4 under load): then it is opened again.
    learner_box = roster.get_by_role("combobox", name="Learner")
    for _attempt in range(5):
        learner_box.click()
        learner_box.fill("Troll")
        try:
            teacher.get_by_role("option", name=re.compile(r"Troll")).click(timeout=5_000)
            break
        except PlaywrightTimeoutError:
            continue
    expect(roster.get_by_role("combobox", name="Learner")).to_have_value(re.compile("Troll"))
    teacher.get_by_text("Yes, remove this learner").click()
    teacher.get_by_role("button", name="Remove from the class").click()
    expect(hostile.get_by_text("Your teacher removed you from class", exact=False).first) \
        .to_be_visible()
    assert store.find_class(code).members == present_before + BURST - 1

    # 6. Hidden names leave the projected boards.
    ada = store.join(code, "Ada")
    store.post_run(code, ada.token, RunEntry("/moons_trainer?hidden=24&opt=SGD&lr=0.1", "SGD", 0.1,
                                             0.93, 0.955, 97))
    expect(teacher.get_by_text("Ada, 93.00%", exact=False)).to_be_visible()
    teacher.get_by_text("Hide names on the boards").click()
    expect(teacher.get_by_text("a learner, 93.00%", exact=False)).to_be_visible()
    expect(teacher.get_by_text("Names are hidden on this board")).to_be_visible()
    expect(teacher.get_by_text("Ada, 93.00%", exact=False)).to_have_count(0)

    # 7. Closed joining refuses a new learner, with the message; the members stay.
    teacher.get_by_text("Close joining").click()
    expect(teacher.get_by_text(f"Joining is closed: class {code} admits no one new")) \
        .to_be_visible()
    members = store.find_class(code).members
    late = new_tab(390, 844)
    late.goto(join_link)
    # On a phone the sidebar is folded: the message is on screen, as a toast.
    expect(late.get_by_text("closed to new learners", exact=False).filter(visible=True)) \
        .to_have_count(1)
    assert store.find_class(code).members == members

    # 8. The private teacher link on a second device stays a teacher: it takes no seat, and
    # its Send moves the class, not itself.
    key = teacher.evaluate("() => document.cookie.split('; ').find((c) => c.startsWith("
                           "'workbench_class_teacher=')).split('=')[1].split('.')[1]")
    second = new_tab(1366, 768)
    open_path(second, hostile_url, f"/class?class={code}&teacher={key}")
    expect(second.locator(".class-code")).to_have_text(code)
    assert "teacher=" not in second.url and "class=" not in second.url
    second.get_by_role("button", name="Send the class there").click()
    expect(learners[0]).to_have_url(re.compile(r"/lessons(\?|$)"))     # a follower arrived
    assert re.search(r"/class(\?|$)", second.url), second.url
    expect(second.locator(".st-key-class_seat")).to_have_count(0)
    assert store.find_class(code).members == members
    for page in (teacher, second, *learners):
        assert_clean(page)
