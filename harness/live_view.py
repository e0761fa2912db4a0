"""Reading the moons trainer's live view (a components-v2 element in a shadow root) from tests and
benchmarks."""
from __future__ import annotations

LIVE_VIEW = """() => {
  const box = document.querySelector('.st-key-mt_live');
  if (!box) return null;
  const host = [box, ...box.querySelectorAll('*')].find(
    (e) => e.shadowRoot && e.shadowRoot.querySelector('.moons-live'));
  if (!host) return null;
  const root = host.shadowRoot.querySelector('.moons-live');
  if (!root.dataset.frames) return null;
  return {frames: Number(root.dataset.frames), epoch: Number(root.dataset.epoch),
          mount: Number(root.dataset.mount), mounts: window.__moonsLiveMounts,
          status: root.querySelector('.status').textContent, grid: root.dataset.gridSum,
          theme: root.dataset.theme, drawMs: Number(root.dataset.drawMs),
          transport: root.dataset.transport || null, state: root.dataset.state || null,
          network: Number(root.dataset.networkFrames || 0)};
}"""

# The live view's JavaScript object, for what the DOM does not show (the plane's geometry).
VIEW_OBJECT = """(() => {
  const box = document.querySelector('.st-key-mt_live');
  const host = [box, ...box.querySelectorAll('*')].find(
    (e) => e.shadowRoot && e.shadowRoot.querySelector('.moons-live'));
  return host.shadowRoot.__moonsLive;
})()"""


def live(page) -> dict | None:
    return page.evaluate(LIVE_VIEW)


def wait_live(page, condition: str = "true", arg=None, timeout: float = 60_000) -> dict:
    """Wait until the live view has drawn a frame for which `condition` (a JS expression over
    `v`, the state above, and `arg`) holds; return that state."""
    page.wait_for_function(f"(arg) => {{ const v = ({LIVE_VIEW})(); return v !== null && ({condition}); }}",
                           arg=arg, timeout=timeout)
    return live(page)


def wait_styled(page, timeout: float = 60_000) -> None:
    """Wait until the view's own stylesheet (static/moons_live.css, linked in its shadow root and
    loaded apart from the frames) applies: text sizes read before it are the browser's defaults."""
    page.wait_for_function(f"() => {{ const link = {VIEW_OBJECT}.root.querySelector("
                           "'link[rel=stylesheet]'); return !!(link && link.sheet); }",
                           timeout=timeout)
