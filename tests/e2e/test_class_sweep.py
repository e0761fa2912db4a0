"""A 3 x 3 class sweep with nine learners on a real server (bench/class_sweep.py's scenario:
websocket learners through harness/st_client.py): each learner's page opens its own cell, trains
it and the cell keeps the run; the teacher's heatmap shows the nine test accuracies the cells
kept, and each cell's link, trained again through workbench/, gives the same accuracy."""
from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.class_sweep import BASE, GRID, sweep_class
from harness.postgres import database_url
from harness.app import Server
from harness.class_store import observer_store
from workbench.classroom.store import URL_SETTING
from workbench.classroom.sweep import make_grid, settings_of_link
from workbench.moons_trainer.challenge import train_again

pytestmark = pytest.mark.e2e


def test_nine_learners_fill_a_3x3_heatmap_and_every_cell_reproduces(monkeypatch):
    grid = make_grid(BASE, list(GRID))
    assert grid.size == 9
    with database_url("sqlite") as url:
        monkeypatch.setenv(URL_SETTING, url)         # the server's class store, and this one's
        store = observer_store(url)
        with Server() as server, ThreadPoolExecutor(1) as pool:
            outcome = pool.submit(asyncio.run, sweep_class(server.url, server.pid, store,
                                                           "sqlite", 9, grid)).result(timeout=600)
        store.dispose()
    assert os.environ[URL_SETTING] == url
    assert outcome.errors == [] and outcome.kept_runs == 9
    assert all(accuracy is not None for accuracy in outcome.cell_accuracies)
    # The teacher's last heatmap: rows the learning rates, columns the widths, in cell order.
    shown = [value for row in outcome.heatmap for value in row]
    assert shown == [round(100 * accuracy, 2) for accuracy in outcome.cell_accuracies]
    assert len(set(shown)) > 1, "the grid's settings train different runs"
    for link, accuracy in zip(outcome.cell_links, outcome.cell_accuracies, strict=True):
        settings = settings_of_link(link)
        assert settings is not None
        assert train_again(settings).test_accuracy == accuracy, link
