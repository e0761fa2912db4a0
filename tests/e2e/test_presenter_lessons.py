"""The guided lessons on a classroom projector: with `present=1` the first screen holds the step's
text, its "Open this step" link, its knowledge check (question, options, commit) and Back/Next,
and the step's text is drawn larger than in the normal view."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from harness.chromium import wait_drawn, wait_settled
from harness.stage import (
    SCREENS,
    PROJECTORS,
    assert_on_first_screen,
    clipped_texts,
    first_screen,
    open_sidebar,
    text_px,
)
from tests.e2e.waiting import WAIT_MS
from workbench.lessons.catalog import LESSONS, Step, lesson_by_key

pytestmark = pytest.mark.e2e

SIZES = SCREENS
_STEPS = [(lesson.key, number, step) for lesson in LESSONS
          for number, step in enumerate(lesson.steps, 1)]


def _check_length(step: Step) -> int:
    """About how much room a step's title and check take: their characters, and a line per
    option."""
    if step.check is None:
        return 0
    return len(step.title) + len(step.check.question) + sum(len(o) + 40 for o in step.check.options)


# The first step, the one with the longest check, and the one with the longest text.
STEPS = {
    "first": (LESSONS[0].key, 1),
    "longest-check": max(_STEPS, key=lambda s: _check_length(s[2]))[:2],
    "longest-text": max(_STEPS, key=lambda s: len(s[2].title) + len(s[2].text))[:2],
}


def _open(browser, app_url: str, lesson_key: str, number: int, size, *, present: bool = True,
          theme: str = "light") -> Page:
    page = first_screen(browser, app_url, f"/lessons?lesson={lesson_key}&step={number}", size,
                        present=present, theme=theme)
    expect(page.locator(".st-key-lesson_step_text")).to_be_visible(timeout=WAIT_MS)
    return page


def _resize(page: Page, size: tuple[int, int]) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    wait_drawn(page)


@pytest.mark.parametrize("which", STEPS, ids=list(STEPS))
def test_the_step_its_link_and_its_check_fill_the_first_screen(browser, app_url, which):
    """On each screen: the step opened once per view at the smallest screen, the window then
    resized to the others (a page load is the costly part of a browser test)."""
    lesson_key, number = STEPS[which]
    step = lesson_by_key(lesson_key).steps[number - 1]
    normal = _open(browser, app_url, lesson_key, number, SIZES[0], present=False)
    normal_px = {}
    for size in SIZES:
        _resize(normal, size)
        normal_px[size] = text_px(normal.locator(".st-key-lesson_step_text"))
    normal.context.close()

    page = _open(browser, app_url, lesson_key, number, SIZES[0])
    main = page.locator(".st-key-lessons_main")
    check = main.locator(f".st-key-kc_lesson_{lesson_key}_{number}")
    shown = {
        "the step's title": main.get_by_text(f"{number}. {step.title}", exact=True),
        "the step's text": main.locator(".st-key-lesson_step_text"),
        "Open this step": main.get_by_role("link", name="Open this step"),
        "the knowledge check": check,
        "Back": main.get_by_role("button", name="Back"),
        "Next": main.get_by_role("button", name="Next"),
    }
    # The check's answer control: every option and the commit button.
    assert step.check is not None
    expect(check.get_by_role("radio")).to_have_count(len(step.check.options))
    for size in SIZES:
        _resize(page, size)
        for what, locator in shown.items():
            assert_on_first_screen(page, locator, f"{what} at {size}")
            assert clipped_texts(locator) == [], (what, size)
        assert_on_first_screen(page, check.get_by_role("button", name="Commit and reveal"),
                               f"Commit and reveal at {size}")
        presenting_px = text_px(shown["the step's text"])
        assert presenting_px >= 1.3 * normal_px[size], (size, presenting_px, normal_px[size])
    page.context.close()


@pytest.mark.parametrize("which", ["first", "longest-check"])
def test_with_the_sidebar_opened_the_step_still_fits_uncut(browser, app_url, which):
    lesson_key, number = STEPS[which]
    page = _open(browser, app_url, lesson_key, number, PROJECTORS[0])
    open_sidebar(page)
    main = page.locator(".st-key-lessons_main")
    for what, locator in {"the step's text": main.locator(".st-key-lesson_step_text"),
                          "Open this step": main.get_by_role("link", name="Open this step"),
                          "the knowledge check": main.locator(f".st-key-kc_lesson_{lesson_key}_{number}"),
                          "Back": main.get_by_role("button", name="Back"),
                          "Next": main.get_by_role("button", name="Next")}.items():
        assert clipped_texts(locator) == [], what
        # The sidebar takes 300 px: the longest check then runs past the fold (the teacher
        # scrolls or folds the sidebar again), but nothing in it is cut.
        if which == "first":
            assert_on_first_screen(page, locator, what)
    page.context.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_next_on_the_projected_step_opens_the_next_step_on_the_first_screen(browser, app_url, theme):
    lesson = LESSONS[0]
    page = _open(browser, app_url, lesson.key, 1, PROJECTORS[0], theme=theme)
    main = page.locator(".st-key-lessons_main")
    main.get_by_role("button", name="Next").click()
    wait_settled(page)
    expect(main.get_by_text(f"2. {lesson.steps[1].title}", exact=True)).to_be_visible()
    expect(main).to_contain_text(f"{lesson.title}: step 2 of {len(lesson.steps)}")
    for what, locator in {"the step's text": main.locator(".st-key-lesson_step_text"),
                          "Open this step": main.get_by_role("link", name="Open this step"),
                          "the knowledge check": main.locator(f".st-key-kc_lesson_{lesson.key}_2")
                          }.items():
        assert_on_first_screen(page, locator, what)
        assert clipped_texts(locator) == [], what
    # The lesson picker follows the step, below it.
    picker = page.get_by_role("radio", name=LESSONS[1].title)
    expect(picker).to_be_attached()
    assert picker.bounding_box()["y"] > main.bounding_box()["y"]
    page.context.close()
