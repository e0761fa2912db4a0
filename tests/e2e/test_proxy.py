"""Two replicas behind deploy/nginx/nginx.conf, driven through the proxy in Chromium.

Two `streamlit run` servers on free loopback ports, and Debian's nginx in front of them with
the repository's own nginx.conf (harness/nginx.py starts and stops it). The checks: pages draw
through the proxy, a checkpoint upload is accepted and a training run streams its progress over
the proxied websocket, each learner's requests all reach one replica (the route cookie), two
learners with different cookies use both replicas, static files arrive gzipped by nginx, and a
burst of frame requests or uploads past nginx's limits is refused by nginx with 429, and so is a
script opening sessions (websockets) past the per-address limit, which a class of 60 opening
their pages together stays under.
"""
from __future__ import annotations

import concurrent.futures
import gzip
import re
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
import torch
from playwright.sync_api import expect

from app_pages.navigation import HOME, TOOLS
from tests.e2e.clean import assert_clean
from harness.chromium import open_path
from tests.e2e.class_scenario import teach_a_class
from tests.e2e.conftest import serve
from harness.nginx import MISSING, NGINX, Proxy, nginx
from harness.postgres import throwaway_postgres
from harness.class_store import observer_store
from workbench.classroom.store import URL_SETTING
from harness.live_view import LIVE_VIEW
from workbench.moons_trainer.checkpoints import state_dict_safetensors
from workbench.moons_trainer.model import build_model
from workbench.moons_trainer.settings import PRESET

pytestmark = pytest.mark.e2e

COOKIE = "wb_route"
EPOCHS = 500                         # long enough that the run is still going when we look


def _get(url: str, cookie: str | None = None, **headers: str):
    if cookie is not None:
        headers["Cookie"] = f"{COOKIE}={cookie}"
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30)


@pytest.fixture(scope="module")
def class_database() -> Iterator[str]:
    """The replicas' class database: a throwaway PostgreSQL server both of them use, as a
    deployment with several replicas must (docs/class.md)."""
    with throwaway_postgres() as url:
        yield url


@pytest.fixture(scope="module")
def proxy(tmp_path_factory, class_database) -> Iterator[Proxy]:
    if not Path(NGINX).exists():
        pytest.fail(MISSING)
    database = {URL_SETTING: class_database}
    with serve(env=database) as first, serve(env=database) as second:
        replicas = [urlparse(base).netloc for base in (first, second)]
        with nginx(tmp_path_factory.mktemp("nginx"), replicas) as running:
            yield running


def first_choice(entry: dict) -> str:
    """The replica the route hash chose for a request.

    nginx writes "A, B" in $upstream_addr when A failed before answering (for example a
    keepalive connection the replica had just closed) and it passed the request on to B
    (`proxy_next_upstream`, on for idempotent requests). The hash chose A.
    """
    return entry["upstream"].split(", ")[0]


def route_keys(proxy: Proxy) -> dict[str, str]:
    """A route cookie value for each replica, found by asking nginx where it sends them."""
    keys: dict[str, str] = {}
    for i in range(1, 500):
        key = f"{i:032x}"
        _get(proxy.url + "/_stcore/host-config", cookie=key).read()
        entries = proxy.wait_for(lambda es, key=key: any(e["route"] == key for e in es), key)
        upstream = next(first_choice(e) for e in entries if e["route"] == key)
        keys.setdefault(upstream, key)
        if len(keys) == len(proxy.replicas):
            return keys
    raise AssertionError(f"500 route keys all went to {sorted(keys)}")


def test_health_passes_through(proxy):
    assert _get(proxy.url + "/_stcore/health").read() == b"ok"
    assert _get(proxy.url + "/nginx-health").read() == b"ok\n"


def test_the_first_response_sets_the_route_cookie_and_later_ones_do_not(proxy):
    first = _get(proxy.url + "/")
    match = re.fullmatch(rf"{COOKIE}=([0-9a-f]{{32}}); Path=/; HttpOnly; SameSite=Lax",
                         first.headers["Set-Cookie"] or "")
    assert match, first.headers["Set-Cookie"]
    assert _get(proxy.url + "/", cookie=match[1]).headers["Set-Cookie"] is None
    # A forged or malformed cookie is not trusted: it is replaced by a fresh one.
    assert _get(proxy.url + "/", cookie="../x").headers["Set-Cookie"].startswith(f"{COOKIE}=")


def test_static_files_arrive_gzipped_by_nginx(proxy):
    html = _get(proxy.url + "/").read().decode()
    asset = re.search(r'src="\./(static/js/[^"]+\.js)"', html)[1]
    response = _get(f"{proxy.url}/{asset}", **{"Accept-Encoding": "gzip"})
    assert response.headers["Content-Encoding"] == "gzip"
    assert b"import" in gzip.decompress(response.read())
    # nginx compressed it (Streamlit leaves its static bundles to the proxy): $gzip_ratio is set.
    entries = proxy.wait_for(lambda es: any(e["uri"] == f"/{asset}" for e in es), asset)
    assert any(e["uri"] == f"/{asset}" and e["gzip_ratio"] for e in entries)


def _learner(browser, proxy: Proxy, key: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_cookies([{"name": COOKIE, "value": key, "url": proxy.url}])
    page = context.new_page()
    page.set_default_timeout(60_000)
    return context, page


EPOCH_AT_LEAST = "(least) => { const v = (" + LIVE_VIEW + ")(); return v !== null && v.epoch >= least; }"


def test_each_learner_sticks_to_one_replica_through_upload_and_training(browser, proxy, tmp_path):
    keys = route_keys(proxy)
    (replica_a, key_a), (replica_b, key_b) = sorted(keys.items())
    inspector = next(t for t in TOOLS if t.url_path == "tensor_inspector")
    checkpoint = tmp_path / "fresh_default.safetensors"
    model = build_model(PRESET.hidden, PRESET.act, PRESET.dropout,
                        torch.device("cpu"), torch.Generator().manual_seed(0))
    checkpoint.write_bytes(state_dict_safetensors(model))

    context_a, page_a = _learner(browser, proxy, key_a)
    context_b, page_b = _learner(browser, proxy, key_b)
    try:
        # Learner A: home, a tool page, then the moons trainer: upload, Play, progress.
        open_path(page_a, proxy.url, "/")
        expect(page_a.locator(f".st-key-{HOME.main_key}")).to_be_visible(timeout=60_000)
        open_path(page_a, proxy.url, "/" + inspector.url_path)
        expect(page_a.locator(f".st-key-{inspector.main_key}")).to_be_visible(timeout=60_000)
        open_path(page_a, proxy.url, f"/moons_trainer?epochs={EPOCHS}")
        expect(page_a.locator(".st-key-moons_trainer_main")).to_be_visible(timeout=60_000)

        page_a.locator(".st-key-mt_upload input[type=file]").set_input_files(checkpoint)
        expect(page_a.get_by_text(f"Loaded {checkpoint.name}", exact=False)).to_be_visible(timeout=60_000)
        expect(page_a.locator("[data-testid=stAlert]", has_text="Refused")).to_have_count(0)

        expect(page_a.get_by_text(f"Epoch 0 / {EPOCHS}")).to_be_visible()
        page_a.locator(".st-key-mt_play").get_by_role("button").click()
        page_a.wait_for_function(EPOCH_AT_LEAST, arg=2, timeout=90_000)
        page_a.locator(".st-key-mt_pause").get_by_role("button").click()
        expect(page_a.locator(".st-key-mt_play").get_by_role("button")).to_be_enabled(timeout=60_000)
        assert_clean(page_a, "learner A after upload and training")

        # Learner B, meanwhile, on the other replica.
        open_path(page_b, proxy.url, "/")
        expect(page_b.locator(f".st-key-{HOME.main_key}")).to_be_visible(timeout=60_000)
        open_path(page_b, proxy.url, "/" + inspector.url_path)
        expect(page_b.locator(f".st-key-{inspector.main_key}")).to_be_visible(timeout=60_000)
    finally:
        context_a.close()
        context_b.close()

    def streams_closed(entries, key):
        return [e for e in entries if e["route"] == key and e["uri"] == "/_stcore/stream"]

    # nginx logs a websocket when it closes: both learners' sockets closed with their contexts.
    # A opened three pages, B two: one websocket each.
    entries = proxy.wait_for(
        lambda es: len(streams_closed(es, key_a)) >= 3 and len(streams_closed(es, key_b)) >= 2,
        "the learners' websockets")
    mine = {key: [e for e in entries if e["route"] == key] for key in (key_a, key_b)}
    for key, replica in ((key_a, replica_a), (key_b, replica_b)):
        # Every request was routed to the learner's replica. A static file may have been
        # retried on the other one when the first connection failed (the same file there);
        # what holds the learner's session (its websocket, the upload, the live view's frames)
        # never left it.
        strays = [e for e in mine[key] if first_choice(e) != replica]
        assert not strays, f"requests of {key} were routed away from {replica}: {strays}"
        retried = [e for e in mine[key] if e["upstream"] != replica]
        assert all(e["uri"].startswith("/static/") for e in retried), (
            f"a request holding the session of {key} left {replica}: {retried}")
    assert {e["status"] for e in streams_closed(entries, key_a)} == {"101"}
    uploads = [e for e in mine[key_a] if e["uri"].startswith("/_stcore/upload_file/")]
    assert [e["method"] for e in uploads] == ["PUT"]
    assert uploads[0]["status"] in {"200", "204"} and uploads[0]["upstream"] == replica_a
    assert replica_a != replica_b


def _statuses(requests: list[urllib.request.Request]) -> list[int]:
    """The status of each request, sent 20 at a time."""
    def status(request):
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        return list(pool.map(status, requests))


def _until_refused(make: Callable[[], urllib.request.Request], most: int) -> list[int]:
    """Send requests from `make` in rounds of 50 until nginx refuses one (or `most` went)."""
    statuses: list[int] = []
    while 429 not in statuses and len(statuses) < most:
        statuses += _statuses([make() for _ in range(50)])
    return statuses


def test_a_burst_of_frame_requests_or_uploads_past_the_limits_gets_429_from_nginx(proxy):
    """One browser (one route cookie): first as much as nginx lets through at once, one request
    at a time (a view's 30 frames, 10 uploads); then far faster than a learner asks. Whatever
    reached a replica was answered there (an unknown frame token: 404; an upload for no session
    without its XSRF token: 403); nginx refused the rest itself, without asking a replica."""
    frames_key, uploads_key = "f" * 32, "e" * 32

    def frame():
        return urllib.request.Request(f"{proxy.url}/api/frames/{uuid.uuid4().hex}?since=0",
                                      headers={"Cookie": f"{COOKIE}={frames_key}"})

    def upload():
        return urllib.request.Request(
            f"{proxy.url}/_stcore/upload_file/{uuid.uuid4()}/{uuid.uuid4()}", data=b"x" * 100,
            method="PUT", headers={"Cookie": f"{COOKIE}={uploads_key}"})

    assert [_statuses([frame()])[0] for _ in range(30)] == [404] * 30
    assert [_statuses([upload()])[0] for _ in range(10)] == [403] * 10
    frames = _until_refused(frame, most=2000)
    uploads = _until_refused(upload, most=1000)
    assert 429 in frames and set(frames) <= {404, 429}, f"no 429 in {len(frames)} frame requests"
    assert 429 in uploads and set(uploads) <= {403, 429}, f"no 429 in {len(uploads)} uploads"
    refusals = frames.count(429) + uploads.count(429)

    def refused(entries):
        return [e for e in entries if e["status"] == "429" and e["route"] in (frames_key, uploads_key)]

    entries = proxy.wait_for(lambda es: len(refused(es)) >= refusals, "the refusals")
    assert all(e["upstream"] == "" for e in refused(entries)), "refused by nginx, not a replica"


def test_opening_sessions_past_the_limits_gets_429_and_a_class_of_60_does_not(proxy, tmp_path_factory):
    """/_stcore/stream, where every Streamlit session opens. A nginx of its own in front of the
    same replicas, so its counters start from zero and the other tests' sessions are not slowed.
    A plain GET there counts as a handshake for nginx's limits and a replica answers it at once
    (no websocket is kept open); nginx's own refusals are its 429s, which reach no replica."""
    def handshake(cookie: str | None = None) -> urllib.request.Request:
        # A new browser each time, as 60 learners would be (or a script making up cookies).
        return urllib.request.Request(f"{fresh.url}/_stcore/stream",
                                      headers={"Cookie": f"{COOKIE}={cookie or uuid.uuid4().hex}"})

    with nginx(tmp_path_factory.mktemp("nginx-sessions"), proxy.replicas) as fresh:
        # One browser reconnecting over and over: 20 at once (and one), then refused.
        one_browser = [_statuses([handshake("b" * 32)])[0] for _ in range(30)]
        assert 429 not in one_browser[:21] and 429 in one_browser[21:], one_browser
        # A class of 60 behind the same address, opening the teacher's link together.
        a_class = _statuses([handshake() for _ in range(60)])
        assert a_class.count(429) == 0, f"{a_class.count(429)} of a class of 60 refused"
        # A script opening sessions with a new made-up cookie each: refused past the address's
        # burst of 90 (the browser's and the class's 81 already count toward it).
        script = _until_refused(handshake, most=500)
        assert 429 in script
        assert script.index(429) <= 90 - 81 + 20, f"{script.index(429)} sessions before a refusal"

        def refused(entries):
            return [e for e in entries if e["status"] == "429" and e["uri"] == "/_stcore/stream"]

        refusals = one_browser.count(429) + script.count(429)
        sent = len(one_browser) + len(a_class) + len(script)

        def all_logged(entries):
            return len([e for e in entries if e["uri"] == "/_stcore/stream"]) >= sent

        entries = fresh.wait_for(all_logged, "every handshake")
        assert len(refused(entries)) == refusals
        assert all(e["upstream"] == "" for e in refused(entries)), "refused by nginx, not a replica"
        reached = [e for e in entries if e["uri"] == "/_stcore/stream" and e["status"] != "429"]
        assert len(reached) == sent - refusals
        assert all(e["upstream"] in proxy.replicas for e in reached), "the rest reached a replica"


def test_a_class_spans_the_replicas_on_postgresql(browser, proxy, class_database):
    """tests/e2e/class_scenario.py through the proxy: the teacher's board on one replica counts
    the answers of learners served by the other, both reading the one PostgreSQL database; the
    reloaded learner's seat, the posted run and the teacher's send cross the replicas too."""
    keys = route_keys(proxy)
    (replica_a, key_a), (replica_b, key_b) = sorted(keys.items())
    route = {"teacher": key_a, "learner": key_b, "outsider": key_a}
    contexts = []

    def new_page(width: int, height: int, who: str):
        context = browser.new_context(viewport={"width": width, "height": height})
        context.add_cookies([{"name": COOKIE, "value": route[who], "url": proxy.url}])
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(60_000)
        return page

    try:
        teach_a_class(new_page, proxy.url, observer_store(class_database))
        # Each page was served by its own replica throughout: the route cookie held.
        entries = proxy.entries()
        served = {key: {first_choice(e) for e in entries if e["route"] == key}
                  for key in (key_a, key_b)}
        assert served[key_a] == {replica_a} and served[key_b] == {replica_b}, served
    finally:
        for context in contexts:
            context.close()
