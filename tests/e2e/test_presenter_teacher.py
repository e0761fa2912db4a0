"""Presenter mode for a teacher (issue 42): *Send class CODE here* sits on the stage's title line
of a tool page, inside the first screen of a 1280x720 projector and of a 390x844 phone, not
clipped, reached and pressed with the keyboard alone; the class is sent without `present=`; and
the Class page in presenter mode never draws the private teacher link, even scrolled to its end.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from harness.chromium import open_path, wait_drawn
from harness.stage import PROJECTORS, assert_on_first_screen, clipped_texts, first_screen
from tests.e2e.waiting import WAIT_MS

pytestmark = pytest.mark.e2e

TITLE = "[data-testid=stMainBlockContainer] h1"
PHONE = {"width": 390, "height": 844}


def _start_teaching(page) -> str:
    page.get_by_role("button", name="Start a class").click()
    code_element = page.locator(".class-code")
    expect(code_element).to_have_text(re.compile(r"^[A-Z0-9]{6}$"))
    code = code_element.inner_text().strip()
    # The board survives a new session through the teacher's seat cookie (a new page load).
    page.wait_for_function("() => document.cookie.includes('workbench_class_teacher=')",
                           timeout=WAIT_MS)
    return code


def _tab_to(page, locator, presses: int = 60) -> None:
    """Move the keyboard focus with Tab until `locator` holds it, as a keyboard user does."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if locator.evaluate("el => el === document.activeElement || el.contains(document.activeElement)"):
            return
    raise AssertionError(f"{presses} Tabs never reached {locator}")


def test_the_teacher_sends_the_class_from_the_stage_with_the_keyboard(browser, app_url, servers_store):
    page = first_screen(browser, app_url, "/class", PROJECTORS[0])
    try:
        code = _start_teaching(page)
        open_path(page, app_url, "/tensor_inspector?present=1&ops=t()")
        wait_drawn(page)
        send = page.locator(".st-key-stage_send").get_by_role("button", name=f"Send class {code} here")
        assert_on_first_screen(page, send, "the stage's Send button at 1280x720")
        assert clipped_texts(page.locator(".st-key-stage_send")) == []
        title = page.locator(TITLE).first
        assert_on_first_screen(page, title, "the title beside it")
        assert title.bounding_box()["y"] < 30, "the send pushed the title down"
        assert abs(send.bounding_box()["y"] - title.bounding_box()["y"]) < 40, "not on the title's line"
        expect(page.locator("[data-testid=stSidebar]")).to_have_attribute("data-collapsed", "true")

        _tab_to(page, send)                            # from the top of the document
        page.keyboard.press("Enter")
        expect(page.get_by_text(f"Class {code} sent to")).to_be_visible(timeout=WAIT_MS)
        sent = servers_store.current_send(code)
        assert sent.link.startswith("/tensor_inspector?") and "ops=t%28%29" in sent.link, sent
        assert "present" not in sent.link, sent

        page.set_viewport_size(PHONE)                  # the teacher's phone, still presenting
        wait_drawn(page)
        assert_on_first_screen(page, send, "the stage's Send button at 390x844")
        assert clipped_texts(page.locator(".st-key-stage_send")) == []
    finally:
        page.context.close()


def test_the_projected_class_page_never_shows_the_private_teacher_link(browser, app_url):
    page = first_screen(browser, app_url, "/class", PROJECTORS[0])
    try:
        _start_teaching(page)
        expect(page.get_by_text("Challenge board")).to_be_visible()
        wait_drawn(page)
        page.evaluate("document.querySelector('[data-testid=stMain]')"
                      ".scrollTo({top: 1e6, behavior: 'instant'})")
        assert "teacher=" not in page.locator("[data-testid=stMain]").inner_text()
        assert "teacher=" not in page.content()
        assert not page.get_by_text("Your private teacher link").count()
    finally:
        page.context.close()
