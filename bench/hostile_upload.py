"""Hostile uploads on a live server: issue 24's bombs are refused while the server keeps answering.

For each bomb (the issue's hash bomb at d = 40 as reported and with its memo numbered as pickle
numbers it; the resume checkpoint's repr bomb at depth 30 as torch.save writes it) this prints:

- the refusal's own time: `read_checkpoint` on the file's bytes in this process, median of 5
  (what a server's thread spends on it, with the GIL held);
- on a real server (`streamlit run streamlit_app.py`, the app's one entry), the time from
  Chromium handing the file to the moons trainer's uploader to the refusal drawn on the page
  (the upload, the page's rerun and the drawing included);
- the server's health answers, polled back to back from the upload to the refusal: median and
  slowest, against the same polling for as long with nothing uploaded.

A bomb that froze the server would show as a health answer as slow as the freeze.

Run: .venv/bin/python -m bench.hostile_upload [--save]
"""
from __future__ import annotations

import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from harness.bombs import hash_bomb, repr_bomb, torch_zip
from harness.app import serve
from harness.chromium import launch, open_path
from harness.figures import Run, parser
from workbench.moons_trainer.checkpoints import CheckpointRefused, read_checkpoint
from workbench.moons_trainer.settings import MoonsSettings
from workbench.moons_trainer.training import TrainingSession

REFUSED = "text=/Not a readable .pt file|beyond this page's limits|more than plain tensors/"
QUIET_SECONDS = 5.0


def bombs() -> dict[str, bytes]:
    session = TrainingSession(MoonsSettings(n=300, epochs=1))
    return {
        "the issue's hash bomb, d = 40, as reported": torch_zip(hash_bomb(40)),
        "the hash bomb, d = 40, memo numbered as pickle numbers it":
            torch_zip(hash_bomb(40, memo_in_order=True)),
        "the resume checkpoint's repr bomb, depth 30": repr_bomb(session, 30),
    }


def refusal_ms(data: bytes) -> float:
    """Median wall time of read_checkpoint refusing `data`, in ms."""
    session = TrainingSession(MoonsSettings(n=300, epochs=1))
    times = []
    for _ in range(5):
        started = time.perf_counter()
        try:
            read_checkpoint(data, session.model, "AdamW", optimizer=session.optimizer)
        except CheckpointRefused:
            times.append(1000 * (time.perf_counter() - started))
        else:
            raise SystemExit("a bomb was loaded")
    return statistics.median(times)


class HealthPoller:
    """GET /_stcore/health back to back in a thread; each answer's time in ms."""

    def __init__(self, base: str) -> None:
        self.url = base + "/_stcore/health"
        self.times: list[float] = []
        self.failed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                urllib.request.urlopen(self.url, timeout=30).read()
                self.times.append(1000 * (time.perf_counter() - started))
            except OSError:
                self.failed += 1
            time.sleep(0.005)

    def __enter__(self) -> HealthPoller:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        if not self.times:
            return f"no answer ({self.failed} failed)"
        return (f"health median {statistics.median(self.times):.0f} ms, slowest "
                f"{max(self.times):.0f} ms over {len(self.times)} answers, {self.failed} failed")


def main() -> None:
    run = Run("hostile_upload", "Hostile uploads refused on a live server")
    parser(__doc__).parse_args()
    from playwright.sync_api import sync_playwright

    files = bombs()
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as folder, serve() as base, sync_playwright() as p:
        browser = launch(p)
        with HealthPoller(base) as quiet:
            time.sleep(QUIET_SECONDS)
        rows.append((f"nothing uploaded, {QUIET_SECONDS:.0f} s", quiet.summary()))
        print(rows[-1], flush=True)
        for name, data in files.items():
            path = Path(folder) / "bomb.pt"
            path.write_bytes(data)
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            open_path(page, base, "/moons_trainer")
            with HealthPoller(base) as during:
                started = time.perf_counter()
                page.locator(".st-key-mt_upload input[type=file]").set_input_files(path)
                page.locator(REFUSED).first.wait_for(timeout=120_000)
                shown_s = time.perf_counter() - started
            rows.append((f"{name} ({len(data):,} bytes)",
                         f"refused in {refusal_ms(data):.1f} ms by read_checkpoint; on the server, "
                         f"upload to refusal on the page {shown_s:.2f} s; {during.summary()}"))
            print(rows[-1], flush=True)
            context.close()
        browser.close()
    run.save(rows)


if __name__ == "__main__":
    main()
