"""The class as one experiment on one server: a sweep of N learners (issue 45, item 4).

A server (harness/app.py), the teacher's Class page and N learners, each a browser tab of its
own (harness/st_client.py: Streamlit's websocket protocol, every run_every fragment ticked at its
interval as the browser's timer does):

1. The teacher's board is open (the private teacher link); N learners open the join link.
2. The teacher starts a sweep (the store call the sweep panel's form makes, and its send): a
   3 x 3 grid of learning rate x hidden width over a small base run (GRID, BASE).
3. Each learner's follow fragment opens their own cell's link; the learner presses Play; the
   run trains at full speed and, finished, is posted and kept for the cell.
4. Measured, for every kept run: the time from the moment the server kept it (its row's
   `posted_at`) until the teacher's board (its 1 s watch, then the page's run) says that many
   runs are kept: the heatmap cell and its loss curve are drawn in that same run. And the
   server's CPU over the sweep (send to the last run on the board), its memory before, at peak
   and after.

The goal (issue 45): p95 at most 3 s with 30 learners.

Run: .venv/bin/python -m bench.class_sweep [--learners 30] [--databases sqlite]
     [--save]   (docs/figures/class_sweep.json; `python -m bench.class --sweep-learners 30`
     runs it after the class's other figures)
"""
from __future__ import annotations

import argparse
import asyncio
import os


from harness.class_sweep import BASE, GRID, SweepOutcome, sweep_class
from harness.postgres import database_url
from harness.app import Server
from harness.figures import Run
from harness.st_client import (mib, percentile)
from harness.class_store import observer_store
from workbench.classroom.store import URL_SETTING
from workbench.classroom.sweep import make_grid

def report(outcome: SweepOutcome) -> tuple[str, str]:
    values = outcome.latencies or [float("inf")]
    before, peak, after = outcome.memory
    print(f"\n== a sweep of {outcome.learners} learners, {outcome.database}")
    print(f"runs kept: {outcome.kept_runs}; kept -> on the teacher's heatmap: p50 "
          f"{percentile(values, 50):.2f} s, p95 {percentile(values, 95):.2f} s, max "
          f"{max(values):.2f} s")
    print(f"server CPU over the sweep: {100 * outcome.cpu_share:.0f}% of a core")
    print(f"server memory: before {mib(before)}, peak {mib(peak)}, after {mib(after)}")
    print(f"load average: start {outcome.load[0]}, end {outcome.load[1]}")
    print(f"errors: {len(outcome.errors)}")
    for error in outcome.errors[:20]:
        print(f"  {error}")
    return (f"a sweep of {outcome.learners} learners on one server, {outcome.database}",
            f"{outcome.kept_runs} runs kept; kept -> heatmap p50 {percentile(values, 50):.2f} s, "
            f"p95 {percentile(values, 95):.2f} s, max {max(values):.2f} s; server CPU "
            f"{100 * outcome.cpu_share:.0f}% of a core; memory {mib(before)} -> {mib(peak)} "
            f"(peak) -> {mib(after)}; {len(outcome.errors)} errors")


def sweep_rows(databases: list[str], sizes: list[int]) -> list[tuple[str, str]]:
    """bench/class.py's `--sweep-learners`: one fresh server per database and size."""
    grid = make_grid(BASE, list(GRID))
    rows = []
    for database in databases:
        for size in sizes:
            with database_url(database) as url:
                os.environ[URL_SETTING] = url
                store = observer_store(url)
                with Server(log_path=f"/tmp/class_sweep_server_{database}_{size}.log") as server:
                    outcome = asyncio.run(sweep_class(server.url, server.pid, store, database,
                                                      size, grid))
                rows.append(report(outcome))
                store.dispose()
    return rows


def main() -> None:
    run = Run("class_sweep", "The class as one experiment: a sweep's heatmap on one server")
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, nargs="+", default=[30])
    parser.add_argument("--databases", nargs="+", default=["sqlite"],
                        choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    run.save(sweep_rows(args.databases, args.learners))


if __name__ == "__main__":
    main()
