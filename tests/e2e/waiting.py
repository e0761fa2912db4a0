"""Waiting on what the page shows, never on the clock.

A test waits with Playwright's `expect(...)` (or `page.wait_for_function`) for the content it is
about to check, so a slow machine makes it slower, not red. The one thing that cannot be waited
for is "nothing changes any more": `assert_unchanged` polls a reading under a deadline, after the
caller has confirmed with `expect` that the page reached the state that should be still, and
fails at the first change. Nor can a silence be waited for when it is what a test puts the
page through (a tab the server hears nothing from, past a lease): `let_pass` lets that time go
by, and the test then waits for the content it checks as always. tests/unit/test_no_fixed_sleeps.py
keeps every other fixed sleep out.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from harness.chromium import WAIT_MS as WAIT_MS  # the tests' waits are the benchmarks' (re-exported)

T = TypeVar("T")


def assert_unchanged(read: Callable[[], T], *, seconds: float, every: float = 0.1) -> T:
    """Read `read()` repeatedly for `seconds`; every reading must equal the first. Returns it."""
    first = read()
    deadline = time.monotonic() + seconds
    readings = 1
    while time.monotonic() < deadline:
        time.sleep(every)
        now = read()
        readings += 1
        assert now == first, f"changed after {readings} readings: {first!r} -> {now!r}"
    return first


def let_pass(seconds: float, every: float = 0.1) -> None:
    """Let `seconds` go by: the length of a silence under test, never a wait for content. The
    sync Playwright API dispatches nothing meanwhile, so what the page sends waits too."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(min(every, max(0.0, deadline - time.monotonic())))


# True once the element has stayed at one place on the screen for ten animation frames.
STILL_JS = """(element) => {
  const box = element.getBoundingClientRect();
  const place = `${box.left},${box.top},${box.width},${box.height}`;
  element.__stillFor = element.__place === place ? (element.__stillFor || 0) + 1 : 0;
  element.__place = place;
  return element.__stillFor >= 10;
}"""


# True once the element has stayed put for ten frames, no finite animation has run on the page
# meanwhile, and nothing is drawn over the element's centre. An opening expander shows its
# content at its final place at once, then animates its height from closed to open (started a
# few frames later, and later still on a loaded machine): what is below it slides over that
# content, so the element alone stays put while a click on it lands on something else.
# Endless animations (a spinner, a skeleton's shimmer) move nothing and are not waited for. An
# element whose centre is out of view (the page above it grew after it was scrolled to) is
# scrolled back to the middle of the screen.
CLICKABLE_JS = """(element) => {
  const box = element.getBoundingClientRect();
  const place = `${box.left},${box.top},${box.width},${box.height}`;
  const animating = document.getAnimations().some(a =>
    (a.playState === 'running' || a.pending) && a.effect
    && a.effect.getComputedTiming().iterations !== Infinity);
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) {
    element.scrollIntoView({block: 'center', inline: 'center'});   // moved out of view: back in
    element.__clickableFor = 0;
    return false;
  }
  const hit = document.elementFromPoint(x, y);
  const onTop = hit !== null && (hit === element || element.contains(hit));
  const ready = onTop && !animating && element.__clickPlace === place;
  element.__clickableFor = ready ? (element.__clickableFor || 0) + 1 : 0;
  element.__clickPlace = place;
  return element.__clickableFor >= 10;
}"""


def wait_still(page, element) -> None:
    """Until `element` (a locator or an element handle) has stayed put for ten frames: a click
    or a hover at coordinates read from it then lands where they were read (on a loaded machine
    a page still drawing what is above it moves it)."""
    handle = element.element_handle() if hasattr(element, "element_handle") else element
    page.wait_for_function(STILL_JS, arg=handle, polling="raf", timeout=WAIT_MS)


def wait_clickable(page, element) -> None:
    """Until `element` has stayed put for ten frames with no finite animation on the page and is
    what a click at its centre hits (scrolled into view if it is not): `wait_still`, and also
    past an expander's opening."""
    handle = element.element_handle() if hasattr(element, "element_handle") else element
    page.wait_for_function(CLICKABLE_JS, arg=handle, polling="raf", timeout=WAIT_MS)
