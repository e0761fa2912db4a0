"""The batch iterator's step pictures drawn as HTML and SVG: the index grid, the dataset with the
current batch marked, the pipeline's cards, and the ticks their axes use."""
from __future__ import annotations

import re

import pytest
import torch

from app_pages.batch_iterator.cards import pipeline_html
from app_pages.batch_iterator.dataset_picture import dataset_picture
from app_pages.batch_iterator.grid import (
    BATCH_COLOURS,
    CLASS_COLOURS,
    MAX_CELL_TEXT,
    MISSING_MARK,
    batch_list_html,
    grid_html,
    grid_rows,
    text_colour,
)
from workbench.batch_iterator.datasets import make_dataset
from workbench.batch_iterator.runs import run_loader
from workbench.batch_iterator.settings import BatchSettings
from workbench.common.theme import contrast
from workbench.common.ticks import format_tick, nice_ticks


def _cells(markup: str) -> list[str]:
    return re.findall(r"<td[^>]*>[^<]*</td>", markup)


def test_every_cell_holds_the_batch_its_index_landed_in():
    run = run_loader(BatchSettings(n=20, batch_size=6, drop_last=True, epochs=2))
    rows = grid_rows(run, run.records[1])
    assert [name for name, _ in rows] == ["class", "epoch 0", "epoch 1"]
    assert [cell.text for cell in rows[0][1]] == [str(label) for label in run.labels]
    for record in run.records:
        for index in record.indices:
            cell = rows[1 + record.epoch][1][index]
            assert cell.text == str(record.number), (record, index)
            assert cell.title.startswith(f"index {index} · epoch {record.epoch} · batch "
                                         f"{record.number}")
    # drop_last threw away the short last batch: its samples are marked, with the reason.
    missing = [cell for _, cells in rows[1:] for cell in cells if cell.missing]
    assert len(missing) == sum(s.dropped for s in run.summaries()) > 0
    assert all(cell.text == MISSING_MARK and "drop_last" in cell.title for cell in missing)


def test_the_current_batch_is_framed_in_the_class_row_and_its_epoch_row_only():
    run = run_loader(BatchSettings(n=20, batch_size=6, epochs=2))
    current = run.records[-1]                               # epoch 1's last batch
    rows = grid_rows(run, current)
    framed = {(name, index) for name, cells in rows for index, cell in enumerate(cells)
              if cell.current}
    assert framed == {(row, i) for row in ("class", "epoch 1") for i in current.indices}
    markup = grid_html(run, current, "caption")
    assert len(re.findall(r'<td class="[^"]*\bnow\b', markup)) == 2 * len(set(current.indices))


def test_a_dense_grid_keeps_colours_and_titles_only_where_they_tell_more():
    run = run_loader(BatchSettings(n=MAX_CELL_TEXT + 40, batch_size=7, drop_last=True, epochs=1))
    current = run.records[0]
    markup = grid_html(run, current, "caption")
    assert 'class="wb-batch-grid dense"' in markup
    cells = _cells(markup)
    assert len(cells) == 2 * run.dataset_size
    assert all(re.search(r">\s*</td>$", cell) for cell in cells)       # no text in 3-px cells
    titled = [cell for cell in cells if "title=" in cell]
    # The current batch (epoch row only: a filled class cell would read as a class) and the
    # samples drop_last threw away.
    assert len(titled) == len(set(current.indices)) + run.summaries()[0].dropped
    # A sparse grid titles every cell.
    sparse = grid_html(run_loader(BatchSettings(n=12, batch_size=5)), None, "caption")
    assert all("title=" in cell for cell in _cells(sparse))


@pytest.mark.parametrize("colour", [*BATCH_COLOURS, *CLASS_COLOURS])
def test_every_cells_number_reads_at_aa_contrast(colour):
    assert contrast(text_colour(colour), colour) >= 4.5


def test_the_caption_and_titles_are_escaped():
    run = run_loader(BatchSettings(n=8, batch_size=4))
    markup = grid_html(run, None, "<script>alert(1)</script>")
    assert "<script>" not in markup and "&lt;script&gt;" in markup


def test_the_dataset_picture_rings_and_numbers_the_batch_and_names_it_as_text():
    settings = BatchSettings(n=30, batch_size=5)
    run = run_loader(settings)
    current = run.records[2]
    markup = dataset_picture(run, make_dataset(settings).features, current)
    chosen = sorted(set(current.indices))
    assert markup.count('class="ring"') == len(chosen)
    labels = re.findall(r'class="label">(\d+)</text>', markup)
    assert sorted(map(int, labels)) == chosen
    assert f"this batch holds indices {', '.join(map(str, chosen))}" in markup
    # Class 0 circles and class 1 squares: one path each, as many shapes as points.
    paths = re.findall(r'<path d="([^"]*)"', markup)
    assert [path.count("M") for path in paths] == [run.labels.count(0), run.labels.count(1)]
    assert paths[0].count("a4 4") == 2 * run.labels.count(0) and "h7v7" in paths[1]


def test_sequences_are_drawn_as_bars_with_the_batch_in_the_text_colour():
    settings = BatchSettings(n=12, batch_size=4, dataset="sequences", collate="pad")
    run = run_loader(settings)
    current = run.records[0]
    markup = dataset_picture(run, None, current)
    paths = re.findall(r'<path d="([^"]*)"[^>]*>', markup)
    bars = [path.count("M") for path in paths]
    assert sum(bars) == run.dataset_size and bars[-1] == len(set(current.indices))
    assert 'class="ring-fill"' in markup


def test_a_picture_without_a_batch_says_what_it_shows():
    settings = BatchSettings(n=10)
    run = run_loader(settings)
    markup = dataset_picture(run, torch.zeros(10, 2), None)     # every point in one place
    assert "holds indices" not in markup and 'class="ring"' not in markup


def test_the_pipeline_is_an_ordered_list_in_the_order_the_data_flows():
    stages = [("dataset", "Dataset", "len = 3"), ("sampler", "Sampler", "<b>x</b>\nseed 0")]
    markup = pipeline_html(stages)
    assert re.findall(r'data-stage="(\w+)"', markup) == ["dataset", "sampler"]
    assert "&lt;b&gt;x&lt;/b&gt;<br>seed 0" in markup and "<b>" not in markup
    assert markup.count("<li") == 2 and "<ol" in markup


@pytest.mark.parametrize(("lo", "hi", "expected"), [
    (0, 10, [0, 2, 4, 6, 8, 10]),
    (-1.3, 2.2, [-1, 0, 1, 2]),
    (0.01, 0.05, [0.01, 0.02, 0.03, 0.04, 0.05]),
])
def test_ticks_fall_on_round_numbers_inside_the_range(lo, hi, expected):
    ticks = nice_ticks(lo, hi, 5)
    assert ticks == pytest.approx(expected)
    assert all(lo - 1e-9 <= t <= hi + 1e-9 for t in ticks)


def test_an_empty_range_has_one_tick_and_labels_use_a_true_minus():
    assert nice_ticks(3.0, 3.0) == [3.0]
    assert format_tick(-0.5, 0.5) == "\u22120.5" and format_tick(2.0, 1.0) == "2"


def test_a_dense_grid_is_read_as_the_list_of_every_batchs_indices():
    run = run_loader(BatchSettings(n=MAX_CELL_TEXT + 10, batch_size=16, epochs=2))
    assert 'aria-hidden="true"' in grid_html(run, run.records[0], "caption")
    listing = batch_list_html(run)
    for record in run.records:
        assert f"batch {record.number} [{', '.join(map(str, record.indices))}]" in listing
    assert listing.count("<li>epoch ") == 2 and "<details" in listing
    # A sparse grid is its own text: every cell holds its batch number.
    sparse = run_loader(BatchSettings(n=12, batch_size=5))
    assert "aria-hidden" not in grid_html(sparse, None, "caption")
