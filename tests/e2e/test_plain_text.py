"""Crafted lesson links, a typed program and an upload's name in Chromium: plain text, no requests.

Each page is opened with links whose every parameter carries a Markdown or HTML payload aimed
at 127.0.0.1:9 (nothing listens there; the request recorder still sees an attempt). The DOM
must hold no link or image to that host and no bold, emphasis or heading made of payload text,
and the browser must ask nothing of any host but the app's server.
"""
from __future__ import annotations

import io
import re
from urllib.parse import quote, urlencode, urlsplit

import pytest
import torch
from playwright.sync_api import expect

from app_pages.navigation import LESSONS_PAGE
from harness.chromium import open_path, wait_settled
from tests.markdown_payloads import HOST, PAYLOADS, SESSION_EXPIRED, TRACKING_PIXEL
from workbench.lessons.settings import TABLE as LESSONS_TABLE
from workbench.tools import TOOLS

pytestmark = pytest.mark.e2e

# Every page's link parameters, from the settings tables: home has none.
PAGES = {"": (), LESSONS_PAGE.url_path: LESSONS_TABLE.names} | {
    tool.url_path: tool.settings.names for tool in TOOLS}
ROTATIONS = (0, 3, 6)        # three links per page; with nine parameters or more, all payloads each


def _link(path: str, names: tuple[str, ...], rotation: int) -> str:
    query = {name: PAYLOADS[(i + rotation) % len(PAYLOADS)]
             for i, name in enumerate((*names, "present", "hide"))}
    return f"/{path}?" + urlencode(query, quote_via=quote)


@pytest.fixture
def requests_seen(page):
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    return seen


def assert_nothing_live(page, app_url: str, requests_seen: list[str]) -> None:
    live = page.evaluate("""host => {
        const out = [];
        for (const a of document.querySelectorAll('a[href]'))
            if (a.href.includes(host)) out.push('a ' + a.href);
        for (const img of document.querySelectorAll('img'))
            if ((img.currentSrc || img.src || '').includes(host)) out.push('img ' + img.src);
        for (const e of document.querySelectorAll('strong, b, em, h1, h2, h3, h4, h5, h6, del, li, th'))
            if (e.textContent.includes('PWN') && !e.closest('pre, code'))
                out.push(e.tagName + ' ' + e.textContent.slice(0, 60));
        for (const e of document.querySelectorAll('.katex, [class*=stMarkdownColored]'))
            if (e.textContent.includes('PWN')) out.push('styled ' + e.textContent.slice(0, 60));
        return out;
    }""", HOST)
    assert not live, live
    server = urlsplit(app_url).netloc
    foreign = [url for url in requests_seen
               if urlsplit(url).scheme in ("http", "https", "ws", "wss") and urlsplit(url).netloc != server]
    assert not foreign, foreign


def _settle_with_text(page, text: str) -> None:
    wait_settled(page)
    expect(page.get_by_text(text).first).to_be_attached()


@pytest.mark.parametrize("path", list(PAGES), ids=[p or "home" for p in PAGES])
def test_crafted_links_stay_plain_text(page, app_url, requests_seen, path):
    for rotation in ROTATIONS:
        open_path(page, app_url, _link(path, PAGES[path], rotation))
        _settle_with_text(page, "was ignored")
        assert_nothing_live(page, app_url, requests_seen)


@pytest.mark.parametrize(("path", "param", "payload", "shown"), [
    ("", "present", SESSION_EXPIRED, "Your session expired."),
    ("tensor_inspector", "seed", TRACKING_PIXEL, "t.png"),
    ("moons_trainer", "n", f"x` [Sign in](http://{HOST}/l) `", "Sign in"),
], ids=["present-session-expired", "seed-tracking-pixel", "n-link"])
def test_the_reported_links_are_plain_text(page, app_url, requests_seen, path, param, payload, shown):
    open_path(page, app_url, f"/{path}?{param}={quote(payload, safe='')}")
    alert = page.locator("[data-testid=stAlert]").filter(has_text=f"{param}=")
    expect(alert.first).to_contain_text(shown)
    assert_nothing_live(page, app_url, requests_seen)


def test_typed_program_prints_plain_text(page, app_url, requests_seen):
    program = ('w = torch.tensor(3.0, requires_grad=True)\n'
               f'print("**PWNbold** [PWNlink](http://{HOST}/)")  # ![PWNimg](http://{HOST}/i.png)\n'
               'L = w ** 2\n'
               'z = torch.zeros("x` **PWNbold** `")\n')
    open_path(page, app_url, "/autograd_graph?code=" + quote(program, safe=""))
    printed = page.locator(".wb-code").filter(has_text="**PWNbold** [PWNlink]")
    expect(printed.first).to_be_visible()
    assert_nothing_live(page, app_url, requests_seen)


def test_uploaded_file_name_is_plain_text(page, app_url, requests_seen):
    from workbench.moons_trainer.settings import MoonsSettings
    from workbench.moons_trainer.training import TrainingSession

    buffer = io.BytesIO()
    torch.save(TrainingSession(MoonsSettings(), "cpu").model.state_dict(), buffer)
    name = "x` [PWNlink](http:__127.0.0.1:9) **PWNbold** `.pt"      # closes a one-backtick span
    open_path(page, app_url, "/moons_trainer")
    page.get_by_role("tab", name="Checkpoints").click()
    page.locator("[data-testid=stFileUploaderDropzoneInput]").set_input_files(
        {"name": name, "mimeType": "application/octet-stream", "buffer": buffer.getvalue()})
    # "Loaded <name>" (case-sensitive), not the results' "reloaded test accuracy" line.
    expect(page.locator("[data-testid=stAlert]").filter(has_text=re.compile("Loaded "))
           .first).to_contain_text(name)
    assert_nothing_live(page, app_url, requests_seen)
