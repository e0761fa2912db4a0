"""The served app, timing the server's share of each click: `python -m bench.script_timer run
streamlit_app.py ...` with `BENCH_SCRIPT_RUNS=<file>` in the environment.

A browser's click-to-paint time mixes the server's work with the browser's (drawing the answer),
and a benchmark in another process cannot see inside the server. So this module is Streamlit's
own command line, started after it has wrapped `ScriptRunner._run_script`: the one call in
which the server handles a rerun request, from the widget callbacks through the page (or
fragment) run and any `st.rerun()` it asks for, to the run's end. Each call appends one JSON
line to the file: when it started and ended (`time.monotonic()`, the same clock in every
process on Linux, so the benchmark can tell which runs its click started), its wall time and
the CPU time of the script's thread (the wall time less any wait for the cores or the GIL).

`python -m bench.click_to_paint` starts the server this way (`harness.app.serve(launcher=...)`).
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

RUNS_FILE_VARIABLE = "BENCH_SCRIPT_RUNS"
_write_lock = threading.Lock()


def record_runs(path: Path) -> None:
    """Wrap Streamlit's `ScriptRunner._run_script` so that each call appends its times to `path`."""
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    run_script = ScriptRunner._run_script

    def timed_run_script(self, rerun_data) -> None:
        started, cpu_started = time.monotonic(), time.thread_time()
        try:
            run_script(self, rerun_data)
        finally:
            ended = time.monotonic()
            line = json.dumps({"start": started, "end": ended,
                               "wall_ms": 1000 * (ended - started),
                               "cpu_ms": 1000 * (time.thread_time() - cpu_started),
                               "fragment": bool(rerun_data.fragment_id_queue)})
            with _write_lock, path.open("a") as out:
                out.write(line + "\n")

    ScriptRunner._run_script = timed_run_script


def read_runs(path: Path, since: float, until: float) -> list[dict]:
    """The runs recorded in `path` that started between `since` and `until` (monotonic)."""
    if not path.exists():
        return []
    runs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [run for run in runs if since <= run["start"] <= until]


def main() -> int:
    target = os.environ.get(RUNS_FILE_VARIABLE)
    if not target or len(sys.argv) < 2:
        # `make bench-all` runs every module in bench/ without arguments: say what this is.
        print(__doc__)
        return 0
    record_runs(Path(target))
    from streamlit.web.cli import main as streamlit_main

    return streamlit_main()


if __name__ == "__main__":
    sys.exit(main())
