"""The moons trainer in a real browser: the live view drawn in place, Pause, runs that carry on
through a learning-rate change (and the code panel that reproduces them), a data change that
starts a new run, an upload that shows what it loaded, themes and presenter scaling."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest
import torch
from playwright.sync_api import expect

from tests.e2e.clean import assert_clean
from harness.chromium import open_path, wait_drawn, wait_settled
from harness.live_view import LIVE_VIEW, VIEW_OBJECT, live, wait_live, wait_styled
from tests.e2e.waiting import WAIT_MS, assert_unchanged, let_pass, wait_still
from workbench.moons_trainer.checkpoints import state_dict_safetensors
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

pytestmark = pytest.mark.e2e

# Long enough that training is still running when the test acts on it.
LONG_RUN = "/moons_trainer?n=5000&epochs=500&batch=16"


def click(page, key: str) -> None:
    wait_settled(page)              # while a run redraws, stale copies of a button remain
    page.locator(f".st-key-{key} button").first.click()


def test_the_live_view_is_mounted_once_and_updated_in_place_while_it_trains(page, app_url):
    """The server is `streamlit run streamlit_app.py` (what `make run`, Docker and Community
    Cloud start): the playing run's frames come by the frame route, not by page reruns."""
    open_path(page, app_url, LONG_RUN)
    first = wait_live(page)
    assert first["status"].startswith("Epoch 0 / 500") and first["mounts"] == 1
    click(page, "mt_play")
    later = wait_live(page, "v.frames >= arg + 20", arg=first["frames"], timeout=120_000)
    assert later["mounts"] == 1 and later["mount"] == 1, "one component, never re-created"
    assert later["transport"] == "socket", "frames come over the frame route's WebSocket"
    assert page.locator("text=did not answer this browser").count() == 0
    assert later["grid"] != first["grid"], "the picture follows the weights"
    assert "training…" in later["status"]
    click(page, "mt_pause")
    expect(page.locator(".st-key-mt_play").get_by_role("button")).to_be_enabled(timeout=WAIT_MS)
    expect(page.locator(".st-key-mt_pause").get_by_role("button")).to_be_disabled(timeout=WAIT_MS)
    paused = wait_live(page, "!v.status.includes('training')")
    expect(page.get_by_text("Test accuracy", exact=True)).to_be_visible(timeout=WAIT_MS)
    wait_settled(page)
    # Paused over many would-be frames: the epoch, the counter and the picture stay.
    assert_unchanged(lambda: {k: live(page)[k] for k in ("epoch", "status", "grid")}, seconds=2.5)
    assert live(page)["mounts"] == 1 and paused["epoch"] >= later["epoch"]
    assert_clean(page)


def test_the_view_pauses_the_run_itself_before_the_pages_rerun(page, app_url):
    """Pause acts in the view: the run stops on the server through the frame route and the view
    shows it paused, even when Streamlit never hears of the click (its rerun is what a busy
    browser is slow to draw)."""
    open_path(page, app_url, LONG_RUN)
    first = wait_live(page)
    click(page, "mt_play")
    wait_live(page, "v.frames >= arg + 10 && v.epoch > 0 && v.state === 'playing'", arg=first["frames"],
              timeout=120_000)
    wait_settled(page)
    # The click reaches the document's capture listeners (the view's), not Streamlit's handler.
    page.locator(".st-key-mt_pause").get_by_role("button").evaluate(
        "(pause) => pause.addEventListener('click', (event) => event.stopPropagation())")
    page.locator(".st-key-mt_pause").get_by_role("button").click()
    # At once the view stops following and says so; then it shows the frame of where the run
    # stopped, which the server answers the Pause with.
    wait_live(page, "v.state !== 'playing' && !v.status.includes('training')")
    paused = wait_live(page, "v.state === 'paused'")
    # The page has not rerun: Pause is still enabled.
    expect(page.locator(".st-key-mt_pause").get_by_role("button")).to_be_enabled()
    assert_unchanged(lambda: {k: live(page)[k] for k in ("frames", "epoch", "grid")}, seconds=1.5)
    # The next rerun (a view toggle) draws the page as the server has it: the same model.
    page.locator(".st-key-mt_show_test label").click()
    expect(page.locator(".st-key-mt_play").get_by_role("button")).to_be_enabled(timeout=WAIT_MS)
    expect(page.locator(".st-key-mt_pause").get_by_role("button")).to_be_disabled(timeout=WAIT_MS)
    after = wait_live(page, "v.frames > arg", arg=paused["frames"])
    assert after["epoch"] == paused["epoch"] and after["status"] == paused["status"], (paused, after)
    wait_settled(page)
    assert_unchanged(lambda: {k: live(page)[k] for k in ("epoch", "grid")}, seconds=2.5)
    assert_clean(page)


def test_hovering_a_point_reads_out_its_coordinates_class_and_probability(page, app_url):
    settings = dataclasses.replace(PRESET, n=300, epochs=3)
    open_path(page, app_url, "/moons_trainer?n=300&epochs=3")
    wait_live(page)
    wait_drawn(page)        # what sits above the plane is drawn: the plane is where it stays
    fresh = TrainingSession(settings)       # the page's untrained run: same seed, same weights
    x, label = fresh.split.x_train[0], int(fresh.split.y_train[0])
    with torch.no_grad():
        p = torch.sigmoid(fresh.model.eval()(fresh.x_train[:1])).item()
    shown_p = round(100 * round(255 * p) / 255)
    # Where the page draws that point: the plane's own mapping, plus the canvas's place, read
    # once the plane has stopped moving (under load, a hover read where it had been before the
    # page above it finished drawing landed on another point).
    wait_still(page, page.evaluate_handle(f"() => {VIEW_OBJECT}.plane"))
    where = page.evaluate(f"""(xy) => {{ const v = {VIEW_OBJECT}, t = v.toPlane;
                                        const r = v.plane.getBoundingClientRect();
                                        return [r.x + t.px(xy[0]), r.y + t.py(xy[1])]; }}""",
                          [float(x[0]), float(x[1])])
    page.mouse.move(*where)
    tooltip = page.locator(".st-key-mt_live .plane-tooltip")
    expect(tooltip).to_be_visible(timeout=WAIT_MS)
    text = tooltip.inner_text()
    assert f"train point, class {label}" in text
    assert f"x₁ = {x[0]:.2f}".replace("-", "−") in text and f"x₂ = {x[1]:.2f}".replace("-", "−") in text
    assert f"P(class 1) ≈ {shown_p}%" in text


def test_theme_and_presenter_mode_reach_the_live_view(page, app_url):
    open_path(page, app_url, "/moons_trainer?n=300&epochs=3")
    assert wait_live(page)["theme"] == "light"
    wait_styled(page)
    normal = page.evaluate(f"() => parseFloat(getComputedStyle({VIEW_OBJECT}.status).fontSize)")
    page.emulate_media(color_scheme="dark")     # the app follows the system's theme
    assert wait_live(page, "v.theme === 'dark'")["theme"] == "dark"
    background = page.evaluate(f"""() => {{
        const c = {VIEW_OBJECT}.plane, ctx = c.getContext('2d');
        return Array.from(ctx.getImageData(2, 2, 1, 1).data); }}""")
    assert background[3] == 0 or sum(background[:3]) < 3 * 128, "nothing light drawn off the plot"
    open_path(page, app_url, "/moons_trainer?n=300&epochs=3&present=1")
    wait_live(page)
    wait_styled(page)
    presented = page.evaluate(f"() => parseFloat(getComputedStyle({VIEW_OBJECT}.status).fontSize)")
    assert presented >= 1.3 * normal
    assert page.evaluate(f"() => {VIEW_OBJECT}.scene.scale") >= 1.3


def _code_panel_script(page, tmp_path) -> str:
    page.get_by_role("tab", name="Code").click()
    with page.expect_download(timeout=60_000) as download:
        click(page, "mt_code_download")
    path = tmp_path / "moons_trainer.py"
    download.value.save_as(path)
    return path.read_text()


def test_a_learning_rate_change_mid_run_keeps_the_weights_and_the_script_reproduces_it(page, app_url,
                                                                                         tmp_path):
    open_path(page, app_url, "/moons_trainer?n=3000&epochs=25")
    wait_live(page)
    click(page, "mt_play")
    before = wait_live(page, "v.epoch >= 2", timeout=120_000)
    rate = page.locator(".st-key-mt_lr input")
    rate.fill("0.01")
    rate.press("Enter")
    expect(page.get_by_text("The run carries on from", exact=False).first).to_be_visible(timeout=WAIT_MS)
    after = wait_live(page, "v.epoch >= arg", arg=before["epoch"])
    assert after["epoch"] >= before["epoch"], "the run went on: nothing was reset"
    wait_live(page, "v.status.includes('Epoch 25 / 25') && !v.status.includes('training')",
              timeout=240_000)
    expect(page.get_by_text("Test accuracy", exact=True)).to_be_visible(timeout=WAIT_MS)
    shown = page.locator("[data-testid=stMetric]", has_text="Test accuracy").inner_text()
    page_accuracy = re.search(r"(\d+\.\d+)%", shown).group(1)
    script = _code_panel_script(page, tmp_path)
    assert "STEP_CHANGES = {" in script and "'lr': 0.01" in script
    done = subprocess.run([sys.executable, "moons_trainer.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    accuracy = float(re.search(r"test accuracy: ([\d.]+)", done.stdout).group(1))
    assert f"{100 * accuracy:.2f}" == page_accuracy


def test_a_data_change_starts_a_new_run_says_so_and_offers_the_old_one_back(page, app_url):
    open_path(page, app_url, "/moons_trainer?n=300&epochs=5")
    wait_live(page)
    click(page, "mt_step")
    trained = wait_live(page, "v.epoch === 1 && !v.status.includes('training')")
    points = page.locator(".st-key-mt_n input")
    points.fill("400")
    points.press("Enter")
    notice = page.locator(".st-key-mt_new_run_notice")
    expect(notice).to_contain_text("A new run started from fresh weights", timeout=WAIT_MS)
    expect(notice).to_contain_text("The run at epoch 1 was set aside, not lost")
    assert wait_live(page, "v.epoch === 0")["status"].startswith("Epoch 0 / 5")
    click(page, "mt_back_to_previous")
    back = wait_live(page, "v.epoch === 1")
    assert back["grid"] == trained["grid"], "the same run, the same boundary"
    expect(page.locator(".st-key-mt_n input")).to_have_value("300", timeout=WAIT_MS)


def test_an_upload_into_a_fresh_model_shows_the_loaded_models_results(page, app_url, tmp_path):
    settings = dataclasses.replace(PRESET, n=300, epochs=3)
    donor = TrainingSession(settings)
    donor.run_to_end()
    accuracy = f"{100 * donor.test_report().accuracy:.2f}%"
    checkpoint = tmp_path / "trained.safetensors"
    checkpoint.write_bytes(state_dict_safetensors(donor.model))
    open_path(page, app_url, "/moons_trainer?n=300&epochs=3")
    wait_live(page)
    page.locator(".st-key-mt_upload input[type=file]").set_input_files(checkpoint)
    expect(page.get_by_text("Loaded trained.safetensors", exact=False)).to_be_visible(timeout=WAIT_MS)
    metric = page.locator("[data-testid=stMetric]", has_text="Test accuracy")
    expect(metric).to_contain_text(accuracy, timeout=WAIT_MS)
    state = wait_live(page, "v.status.includes('uploaded weights')")
    assert "training history unknown" in state["status"]
    with torch.no_grad():
        grid, _ = donor.live_probabilities(48, with_test=False)
    assert state["grid"] == str(int(grid.astype("int64").sum())), "the boundary is the loaded model's"
    expect(page.locator(".st-key-mt_live .history-note")).to_contain_text("no training history")


def test_a_learner_can_replace_the_uploaded_checkpoint_again_and_again(page, app_url, tmp_path):
    """The app keeps at most two uploads per session (components/upload_guard.py): the file the
    uploader shows and the one replacing it. Three files in a row, each replacing the last, all
    load."""
    from workbench.moons_trainer.model import build_model

    open_path(page, app_url, "/moons_trainer?n=300&epochs=3")
    wait_live(page)
    for seed in (1, 2, 3):
        checkpoint = tmp_path / f"seed{seed}.safetensors"
        model = build_model(PRESET.hidden, PRESET.act, PRESET.dropout,
                            torch.device("cpu"), torch.Generator().manual_seed(seed))
        checkpoint.write_bytes(state_dict_safetensors(model))
        page.locator(".st-key-mt_upload input[type=file]").set_input_files(checkpoint)
        expect(page.get_by_text(f"Loaded {checkpoint.name}", exact=False)).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("[data-testid=stAlert]", has_text="Refused")).to_have_count(0)
    assert_clean(page, "three uploads in a row")
    chips = page.locator(".st-key-mt_upload [data-testid=stFileChipName]")
    expect(chips).to_have_count(1)
    expect(chips).to_have_text("seed3.safetensors")


def test_where_the_frames_websocket_is_refused_the_view_fetches_them_instead(page, app_url):
    """A proxy that passes plain HTTP only: the socket closes before its first frame, and the
    same frames come by fetch, one request at a time."""
    refused = []
    page.route_web_socket(re.compile(r"/api/frames/[^/]+/stream$"),
                          lambda socket: refused.append(socket.url) or socket.close())
    open_path(page, app_url, LONG_RUN)
    first = wait_live(page)
    click(page, "mt_play")
    later = wait_live(page, "v.frames >= arg + 10 && v.epoch > 0", arg=first["frames"], timeout=120_000)
    assert refused and later["transport"] == "http" and later["mounts"] == 1
    # (The resource-timing buffer holds 250 entries, most of them the page's own files.)
    assert page.evaluate("() => performance.getEntriesByType('resource')"
                         ".some(r => r.name.includes('/api/frames/') && !r.name.endsWith('/stream'))")
    click(page, "mt_pause")
    expect(page.locator(".st-key-mt_play").get_by_role("button")).to_be_enabled(timeout=WAIT_MS)
    wait_live(page, "!v.status.includes('training')")
    posted = page.evaluate("() => performance.getEntriesByType('resource')"
                           ".some(r => r.name.includes('/pause?since='))")
    assert posted, "the view's Pause is a POST to the route"


def test_where_a_proxy_blocks_the_frame_route_the_view_trains_by_reruns_and_says_so(page, app_url):
    """A proxy in front of the server that passes neither the route's socket nor its fetch (a
    403 of its own): the same view, fed by fragment reruns, still trains, updates in place and
    pauses, and the page says why it is slower."""
    page.route_web_socket(re.compile(r"/api/frames/[^/]+/stream$"), lambda socket: socket.close())
    page.route(re.compile(r"/api/frames/"), lambda route: route.fulfill(status=403, body="blocked"))
    open_path(page, app_url, LONG_RUN)
    first = wait_live(page)
    click(page, "mt_play")
    expect(page.locator("text=did not answer this browser")).to_be_visible(timeout=120_000)
    later = wait_live(page, "v.frames >= arg + 5 && v.epoch > 0 && v.status.includes('training')",
                      arg=first["frames"], timeout=120_000)
    assert later["mounts"] == 1 and later["grid"] != first["grid"]
    click(page, "mt_pause")
    expect(page.locator(".st-key-mt_play").get_by_role("button")).to_be_enabled(timeout=WAIT_MS)


class HeldUplink:
    """Everything the page sends the server (WebSocket messages, frame fetches) passes through
    here and is held while `held` is set, then delivered: the server hears nothing from the tab
    for a while, as from a background tab or a browser the server is slow to answer."""

    def __init__(self, page) -> None:
        self.held, self.queue = False, []
        page.route_web_socket(re.compile(".*"), self._socket)
        page.route("**/api/frames/**", lambda route: self._deliver(route.continue_))

    def _socket(self, browser_side) -> None:
        server_side = browser_side.connect_to_server()
        browser_side.on_message(lambda message: self._deliver(lambda: server_side.send(message)))
        server_side.on_message(browser_side.send)
        browser_side.on_close(lambda code, reason: server_side.close(code=code, reason=reason))
        server_side.on_close(lambda code, reason: browser_side.close(code=code, reason=reason))

    def _deliver(self, send) -> None:
        if self.held:
            self.queue.append(send)
        else:
            send()

    def release(self) -> None:
        self.held, queue, self.queue = False, self.queue, []
        for send in queue:
            send()


def test_a_run_the_server_heard_nothing_from_past_its_lease_plays_on_when_the_tab_speaks(browser):
    """A tab that asks for nothing for longer than the run's lease (1.8 s) has its run's work
    stopped, so a closed tab costs nothing; when it asks again the learner is evidently there,
    and the run plays on by itself instead of standing paused with nobody having pressed Pause."""
    from tests.e2e.conftest import serve
    from workbench.common.jobs import SCHEDULER

    with serve() as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        uplink = HeldUplink(page)
        try:
            open_path(page, url, LONG_RUN)
            click(page, "mt_play")
            wait_live(page, "v.epoch >= 1 && v.status.includes('training')", timeout=120_000)
            uplink.held = True
            let_pass(SCHEDULER.ttl + 1.5)      # the silence under test, past the lease
            before = live(page)
            uplink.release()
            woken = wait_live(page, "v.epoch >= arg + 2 && v.status.includes('training')",
                              arg=before["epoch"], timeout=120_000)
            assert woken["mounts"] == 1
            expect(page.locator(".st-key-mt_pause").get_by_role("button")).to_be_enabled(timeout=WAIT_MS)
            click(page, "mt_pause")
            expect(page.locator(".st-key-mt_play").get_by_role("button")).to_be_enabled(timeout=WAIT_MS)
        finally:
            page.close()


def test_a_closed_tabs_run_stops_even_while_a_script_asks_for_its_frames(browser, app_url):
    """A ghost run: the tab that played it is closed, and a script goes on asking for its
    frames by the token. The run must stop once Streamlit has dropped the tab's connection, not
    live on for as long as something asks (the session's state outlives the tab by the
    disconnected-session TTL, 45 s)."""
    import time
    import urllib.error
    import urllib.request

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    sockets = []
    page.on("websocket", lambda socket: sockets.append(socket.url))
    open_path(page, app_url, LONG_RUN)
    click(page, "mt_play")
    wait_live(page, "v.epoch >= 1 && v.status.includes('training')", timeout=120_000)
    stream = next(url for url in sockets if "/api/frames/" in url)
    frames = app_url + "/api/frames/" + stream.split("/api/frames/", 1)[1].removesuffix("/stream")

    def status() -> int:
        try:
            with urllib.request.urlopen(frames + "?since=0", timeout=10) as answer:
                return answer.status
        except urllib.error.HTTPError as refused:
            return refused.code

    assert status() == 200, "the script reads the playing run's frames by its token"
    context.close()                 # the tab goes; the script keeps asking, ten times a second
    answers = []
    deadline = time.monotonic() + 20    # far less than the 45 s the old ghost lived
    while time.monotonic() < deadline and (not answers or answers[-1] != 404):
        answers.append(status())
        time.sleep(0.1)
    assert answers[-1] == 404, f"the closed tab's run still answered: {answers[-5:]}"


def test_a_finished_run_says_so_refuses_fewer_epochs_and_the_preset_starts_fresh(page, app_url):
    """Issue 27's states in the browser: "Finished" next to the greyed buttons; Epochs below the
    trained epochs refused (never "3 / 2"), with the link still saying 3; the lesson preset a
    fresh run at epoch 0 that can be played, with the finished run one click away."""
    open_path(page, app_url, "/moons_trainer?n=300&epochs=3&speed=max")
    click(page, "mt_play")
    wait_live(page, "v.status.startsWith('Epoch 3 / 3') && !v.status.includes('training')",
              timeout=120_000)
    note = page.locator(".st-key-mt_end_note")
    expect(note).to_contain_text("Finished: 3 of 3 epochs")
    expect(page.locator(".st-key-mt_play").get_by_role("button")).to_be_disabled()
    expect(page.locator(".st-key-mt_step").get_by_role("button")).to_be_disabled()

    epochs = page.locator(".st-key-mt_epochs input")
    epochs.fill("2")
    epochs.press("Enter")
    expect(page.locator("[data-testid=stAlert]").filter(
        has_text="Epochs cannot go below the 3 epochs this run has trained")).to_be_visible()
    expect(epochs).to_have_value("3")
    page.wait_for_function("() => new URLSearchParams(location.search).get('epochs') === '3'")
    assert live(page)["status"].startswith("Epoch 3 / 3")

    click(page, "mt_preset")
    wait_live(page, "v.status.startsWith(`Epoch 0 / ${arg} `)", arg=PRESET.epochs)
    expect(page.locator(".st-key-mt_play").get_by_role("button")).to_be_enabled()
    expect(page.locator(".st-key-mt_end_note")).to_have_count(0)
    expect(page.locator(".st-key-mt_back_to_previous button").first).to_be_visible()
    assert_clean(page, "the preset after a finished run")


# Records (time, epoch) each time the live view's counter moves: the pace a learner watches.
_RECORD_EPOCHS_JS = """
() => {
  window.__wbEpochs = [];
  const look = () => {
    const v = (VIEW)();
    const m = v && /^Epoch (\\d+) \\//.exec(v.status || '');
    const seen = window.__wbEpochs;
    if (m && (!seen.length || seen[seen.length - 1][1] !== Number(m[1]))) {
      seen.push([performance.now(), Number(m[1])]);
    }
    requestAnimationFrame(look);
  };
  look();
}
""".replace("VIEW", LIVE_VIEW)


def test_the_speed_paces_play_and_a_change_mid_run_takes_effect_at_once(page, app_url):
    """At 1 epoch per second the boundary forms slowly enough to watch; switching to `max` in the
    middle of the run carries the same run on, as fast as it can. 200 epochs would take 200 s at
    the first speed: the run can only finish within the wait below at the second."""
    open_path(page, app_url, "/moons_trainer?epochs=200&speed=1")
    page.evaluate(_RECORD_EPOCHS_JS)
    click(page, "mt_play")
    wait_live(page, "/^Epoch [4-9] \\//.test(v.status)", timeout=120_000)
    seen = page.evaluate("window.__wbEpochs.filter(([, epoch]) => epoch >= 1)")
    (start, first), (end, last) = seen[0], seen[-1]
    # An upper bound on the pace, which a busy machine can only make slower: never faster than
    # 1 epoch a second (a whole epoch of slack for the moment the counter is read).
    assert last - first <= (end - start) / 1000 + 1, seen

    page.locator(".st-key-mt_speed").get_by_role("radio", name="max").click()
    wait_live(page, "v.status.startsWith('Epoch 200 / 200') && !v.status.includes('training')",
              timeout=90_000)
    expect(page.locator(".st-key-mt_end_note")).to_contain_text("Finished: 200 of 200 epochs")
    page.wait_for_function("() => new URLSearchParams(location.search).get('speed') === 'max'")
    assert_clean(page, "a speed change mid-run")
