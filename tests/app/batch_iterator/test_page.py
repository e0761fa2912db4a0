"""The batch iterator page through the real router: controls, lesson links, stepping, errors."""
from __future__ import annotations

import re

import pytest
import torch

from app_pages.batch_iterator.figures import CLASS_COUNTS_CLASS
from app_pages.batch_iterator.grid import GRID_CLASS
from tests.app.apptest import code_blocks, assert_clean, open_page, shown_text
from workbench.batch_iterator.codegen import record_line
from workbench.batch_iterator.runs import run_loader
from workbench.batch_iterator.settings import TABLE, BatchSettings

PAGE = "app_pages/batch_iterator/page.py"


def _batch_line(at) -> str:
    lines = [c for c in code_blocks(at) if c.startswith("epoch ")]
    assert len(lines) == 1
    return lines[0]


def _expected(settings: BatchSettings, position: int) -> str:
    record = run_loader(settings).records[position]
    return record_line(record.epoch, record.number, record.indices, record.worker)


def test_default_page_shows_the_first_batch_dataloader_yields():
    at = open_page(PAGE)
    assert_clean(at)
    assert _batch_line(at) == _expected(BatchSettings(), 0)
    text = shown_text(at)
    assert "Epoch 0, batch 0" in text and "main process" in text
    # The index grid is a table (grid.py): one row for the classes, one per epoch, and the
    # first batch's cells framed in both the class row and epoch 0's.
    grid = next(e.proto.body for e in at.get("html") if GRID_CLASS in e.proto.body)
    first = run_loader(BatchSettings()).records[0]
    assert grid.count("<tr>") == 1 + 1 + BatchSettings().epochs
    assert len(re.findall(r'<td class="[^"]*\bnow\b', grid)) == 2 * len(set(first.indices))
    # The class counts, drawn once per run: a bar per batch, as HTML (no Plotly on this page).
    counts = next(e.proto.body for e in at.get("html") if CLASS_COUNTS_CLASS in e.proto.body)
    assert counts.count('<div class="bar"') == len(run_loader(BatchSettings()).records)
    assert not at.get("plotly_chart") and not at.dataframe


def test_lesson_link_sets_the_controls_and_the_batches():
    query = {"n": "40", "batch": "8", "shuffle": "0", "drop_last": "true", "sampler": "weighted",
             "seed": "3", "workers": "0", "epochs": "3"}
    at = open_page(PAGE, query=query)
    assert_clean(at)
    expected = TABLE.read(query)[0]
    assert at.slider(key="bi_n").value == 40
    assert at.number_input(key="bi_batch").value == 8
    assert at.toggle(key="bi_shuffle").value is False
    assert at.toggle(key="bi_drop_last").value is True
    assert at.selectbox(key="bi_sampler").value == "weighted"
    assert at.number_input(key="bi_seed").value == 3
    assert at.slider(key="bi_epochs").value == 3
    assert _batch_line(at) == _expected(expected, 0)
    assert "balance" in shown_text(at) or "WeightedRandomSampler" in shown_text(at)


def test_stepping_through_batches_follows_the_records():
    at = open_page(PAGE, query={"n": "10", "batch": "4"})
    settings = TABLE.read({"n": "10", "batch": "4"})[0]
    for position in range(1, 5):
        at.button(key="bi_next").click().run()
        assert _batch_line(at) == _expected(settings, position)
    assert "Epoch 1, batch 1" in shown_text(at)
    at.button(key="bi_prev").click().run()
    assert _batch_line(at) == _expected(settings, 3)


def test_changing_a_control_updates_the_url_and_restarts_the_stepper():
    at = open_page(PAGE)
    at.button(key="bi_next").click().run()
    at.number_input(key="bi_batch").set_value(5).run()
    assert at.query_params["batch"] == ["5"] or at.query_params["batch"] == "5"
    assert _batch_line(at) == _expected(BatchSettings(batch_size=5), 0)


def test_bad_link_values_are_named_and_fall_back():
    at = open_page(PAGE, query={"n": "many", "sampler": "magic", "shuffle": "maybe"})
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "`n=many` was ignored" in warnings and "`sampler=magic`" in warnings
    assert _batch_line(at) == _expected(BatchSettings(), 0)


def test_sampler_with_shuffle_shows_pytorchs_error_and_a_fix():
    at = open_page(PAGE, query={"sampler": "sequential", "shuffle": "1"})
    assert_clean(at)
    text = shown_text(at)
    assert "sampler option is mutually exclusive with shuffle" in text
    assert "Traceback" not in text
    at.button(key="bi_fix_0").click().run()
    assert at.toggle(key="bi_shuffle").value is False
    assert _batch_line(at) == _expected(BatchSettings(sampler="sequential", shuffle=False), 0)


def test_default_collate_on_sequences_is_explained():
    at = open_page(PAGE, query={"dataset": "sequences", "batch": "8"})
    text = shown_text(at)
    assert "stack expects each tensor to be equal size" in text
    at.button(key="bi_fix_0").click().run()
    assert at.selectbox(key="bi_collate").value == "pad"
    assert "lengths" in "".join(c for c in code_blocks(at))


@pytest.mark.spawns
def test_worker_processes_build_the_batches():
    at = open_page(PAGE, query={"workers": "2", "n": "12", "batch": "3"})
    assert_clean(at)
    assert "worker process 0" in shown_text(at)
    at.button(key="bi_next").click().run()
    assert "worker process 1" in shown_text(at)
    settings = BatchSettings(n=12, batch_size=3, num_workers=2)
    assert _batch_line(at) == _expected(settings, 1)


def test_hide_removes_the_named_controls_and_keeps_their_values():
    at = open_page(PAGE, query={"batch": "4", "shuffle": "0", "hide": "batch,shuffle"})
    assert_clean(at)
    keys = {w.key for w in at.number_input} | {w.key for w in at.toggle}
    assert "bi_batch" not in keys and "bi_shuffle" not in keys
    assert _batch_line(at) == _expected(BatchSettings(batch_size=4, shuffle=False), 0)


def test_knowledge_check_reveals_what_pytorch_computes():
    at = open_page(PAGE)
    at.radio(key="kc_batch_iterator_count_choice").set_value("3 with drop_last, 4 without").run()
    at.button(key="kc_batch_iterator_count_commit").click().run()
    assert any("Right" in s.value for s in at.success)


@pytest.mark.spawns
def test_pitfall_button_runs_both_worker_runs():
    at = open_page(PAGE)
    at.session_state["bi_tabs"] = "Pitfalls"
    at.run()
    at.button(key="bi_pitfall_run").click().run()
    assert_clean(at)
    text = shown_text(at)
    assert "**Without worker_init_fn**: repeated streams: **yes**" in text
    assert "**With worker_init_fn=seed_worker**: repeated streams: **no**" in text


def test_moons_training_split_is_offered_once_the_trainer_published_it():
    from streamlit.testing.v1 import AppTest
    from torch import nn

    from components.state import SharedModel
    from tests.app.apptest import APP

    generator = torch.Generator().manual_seed(1)
    features = torch.randn(50, 2, generator=generator)
    labels = (features[:, 0] > 0.8).long()
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["learner::shared_model"] = SharedModel(model, features, labels, "a test split")
    at.query_params["dataset"] = "moons"
    at.query_params["sampler"] = "weighted"
    at.query_params["shuffle"] = "0"
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert_clean(at)
    assert at.selectbox(key="bi_dataset").value == "moons"
    settings = BatchSettings(dataset="moons", sampler="weighted", shuffle=False)
    record = run_loader(settings, (features, labels)).records[0]
    assert _batch_line(at) == record_line(record.epoch, record.number, record.indices,
                                          record.worker)
    assert "a test split" in shown_text(at)
    at.session_state["bi_tabs"] = "Gradient accumulation"
    at.run()
    assert "your trained moons model (Sequential)" in shown_text(at)
    at.session_state["bi_tabs"] = "Code"
    at.run()
    code = "".join(c for c in code_blocks(at))
    assert "labels = torch.tensor([" in code


# What each of the page's lazy tabs shows, in words only it draws.
TAB_TEXT = {
    "Epoch by epoch": "Classes in each batch",
    "Pitfalls": "Workers that draw the same random numbers",
    "Exclusive options": "raises a `ValueError` for",
    "What batching costs": "Identical batches from both loaders",
    "Gradient accumulation": "`torch.allclose` on every gradient",
    "pin_memory": "page-locked",
    "Code": "The DataLoader from the PyTorch Workbench",
}


def test_only_the_open_tab_runs_and_each_tab_draws_its_section():
    at = open_page(PAGE)
    page_text = lambda: shown_text(at) + "".join(code_blocks(at))  # noqa: E731
    assert at.tabs[0].label == "Epoch by epoch" and [t.label for t in at.tabs] == list(TAB_TEXT)
    for name, words in TAB_TEXT.items():
        at.session_state["bi_tabs"] = name
        at.run()
        assert_clean(at)
        text = page_text()
        assert words in text, name
        others = [other for other, w in TAB_TEXT.items() if other != name and w in text]
        assert not others, f"{name} open, yet these closed tabs were drawn: {others}"


def test_moons_link_without_a_trained_model_falls_back_to_points():
    at = open_page(PAGE, query={"dataset": "moons"})
    assert_clean(at)
    assert "train one on the Moons trainer page" in shown_text(at)
    assert _batch_line(at) == _expected(BatchSettings(), 0)


@pytest.mark.spawns
def test_worker_runs_wait_for_their_turn_and_are_never_refused():
    """While the scheduler's turn is held (another learner's slice), a worker run waits for it
    instead of saying the server is busy, and runs once it is free."""
    import threading

    from workbench.common.jobs import SCHEDULER

    held, release = threading.Event(), threading.Event()

    def other_learner():
        with SCHEDULER.turn():
            held.set()
            release.wait(10)

    other = threading.Thread(target=other_learner)
    other.start()
    assert held.wait(5)
    threading.Timer(1.0, release.set).start()      # the other learner's turn ends a second later
    at = open_page(PAGE, query={"workers": "1"})
    other.join()
    assert_clean(at)
    assert "busy" not in shown_text(at)
    assert "worker process 0" in shown_text(at)


def test_a_loader_that_yields_no_batch_says_why():
    at = open_page(PAGE, query={"n": "4", "batch": "6", "drop_last": "1"})
    assert_clean(at)
    assert "no batches" in shown_text(at)
    at.button(key="bi_fix_0").click().run()
    assert _batch_line(at) == _expected(BatchSettings(n=4, batch_size=6), 0)


def test_jumping_to_a_batch_with_the_slider():
    at = open_page(PAGE, query={"n": "10", "batch": "4"})
    at.slider(key="bi_jump").set_value(5).run()
    settings = BatchSettings(n=10, batch_size=4)
    assert _batch_line(at) == _expected(settings, 4)
    at.button(key="bi_prev").click().run()
    assert _batch_line(at) == _expected(settings, 3)
    assert at.slider(key="bi_jump").value == 4


def test_presenter_mode_draws_the_same_batches():
    at = open_page(PAGE, query={"present": "1", "n": "16", "batch": "5", "drop_last": "1"})
    assert_clean(at)
    assert _batch_line(at) == _expected(BatchSettings(n=16, batch_size=5, drop_last=True), 0)
    assert "drop_last=True" in shown_text(at)


def test_the_loader_runs_once_per_settings_change_not_per_step(monkeypatch):
    import workbench.batch_iterator.runs as runs

    calls = []
    real = runs.run_loader

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(runs, "run_loader", counting)
    at = open_page(PAGE)
    for _ in range(3):
        at.button(key="bi_next").click().run()
    main_runs = [s for s in calls if s == BatchSettings()]
    assert len(main_runs) == 1
    at.toggle(key="bi_drop_last").set_value(True).run()
    assert [s for s in calls if s.drop_last] == [BatchSettings(drop_last=True)]


WIDGETS = {"slider": "slider", "number": "number_input", "select": "selectbox",
           "toggle": "toggle"}


def test_the_widgets_follow_the_settings_table():
    # A sampler with num_samples, so that every control is drawn.
    at = open_page(PAGE, query={"sampler": "random", "shuffle": "0"})
    assert_clean(at)
    for p in TABLE.params:
        widget = getattr(at, WIDGETS[p.kind])(key=f"bi_{p.name}")
        assert widget.label == p.label and widget.help == p.help, p.name
        if p.kind in ("slider", "number"):
            assert (widget.min, widget.max) == (p.lo, p.hi), p.name
        if p.kind == "select":
            shown = [p.choice_label(c) for c in p.choices if c != "moons"]
            assert list(widget.options) == shown, p.name


def _leave_by_the_sidebar_and_come_back(at):
    """The sidebar's links carry no query string: open another page, then this one, bare."""
    at.query_params.clear()
    at.switch_page("app_pages/home/page.py")
    at.run()
    at.query_params.clear()
    at.switch_page(PAGE)
    return at.run()


def test_settings_and_the_batch_survive_the_sidebar():
    at = open_page(PAGE)
    at.number_input(key="bi_batch").set_value(4).run()
    at.toggle(key="bi_shuffle").set_value(False).run()
    for _ in range(3):
        at.button(key="bi_next").click().run()
    settings = BatchSettings(batch_size=4, shuffle=False)
    assert _batch_line(at) == _expected(settings, 3)
    _leave_by_the_sidebar_and_come_back(at)
    assert_clean(at)
    assert at.number_input(key="bi_batch").value == 4
    assert at.toggle(key="bi_shuffle").value is False
    assert _batch_line(at) == _expected(settings, 3)
    assert "Back to" not in shown_text(at)
    assert dict(at.query_params) in ({"batch": "4", "shuffle": "0"},
                                     {"batch": ["4"], "shuffle": ["0"]})
    at.button(key="bi_next").click().run()
    assert _batch_line(at) == _expected(settings, 4)


def test_a_settings_change_says_the_position_was_reset():
    at = open_page(PAGE)
    at.button(key="bi_next").click().run()
    at.button(key="bi_next").click().run()
    at.number_input(key="bi_batch").set_value(5).run()
    assert_clean(at)
    notices = " ".join(i.value for i in at.info)
    assert "Back to the first batch (epoch 0, batch 0): batch_size changed." in notices
    assert "You were at epoch 0, batch 2" in notices
    assert _batch_line(at) == _expected(BatchSettings(batch_size=5), 0)
    at.button(key="bi_next").click().run()
    assert "Back to" not in " ".join(i.value for i in at.info)


def test_a_change_at_the_first_batch_discards_nothing_and_says_nothing():
    at = open_page(PAGE)
    at.toggle(key="bi_drop_last").set_value(True).run()
    assert "Back to" not in " ".join(i.value for i in at.info)


@pytest.mark.spawns
def test_a_run_cut_before_its_first_batch_says_so_and_can_run_again(monkeypatch):
    """A worker run stopped by its time bound before any batch is not 'a loader without
    batches': the page names the bound and offers to run it again."""
    from workbench.batch_iterator import runs

    real = runs.run_loader
    monkeypatch.setattr(runs, "run_loader", lambda s, moons=None: real(s, moons, time_limit_s=0.0))
    at = open_page(PAGE, query={"workers": "1"})
    assert_clean(at)
    text = shown_text(at)
    assert "stopped before its first batch because it ran for 0 s" in text
    assert "no batches" not in text
    monkeypatch.setattr(runs, "run_loader", real)
    at.button(key="bi_run_again").click().run()
    assert_clean(at)
    assert "worker process 0" in shown_text(at)


def test_presenter_mode_folds_every_setting_below_the_stage_with_the_same_keys():
    # A sampler with num_samples, so that every control is drawn.
    query = {"present": "1", "sampler": "random", "shuffle": "0"}
    at = open_page(PAGE, query=query)
    assert_clean(at)
    panel = next(e for e in at.expander if e.label.startswith("Settings"))
    in_panel = {getattr(w, "key", None) for kind in set(WIDGETS.values())
                for w in getattr(panel, kind)}
    assert {f"bi_{p.name}" for p in TABLE.params} <= in_panel
    # The panel drives the stage: a change there redraws the batches and says what was reset.
    at.button(key="bi_next").click().run()
    at.number_input(key="bi_batch").set_value(4).run()
    assert_clean(at)
    settings = BatchSettings(sampler="random", shuffle=False, batch_size=4)
    assert _batch_line(at) == _expected(settings, 0)
    assert any("Back to the first batch" in t.value for t in at.toast)
    assert not at.info or all("Back to" not in i.value for i in at.info)
    stage_text = " ".join(m.value for m in at.markdown if m.value.startswith("**Epoch"))
    assert "Sample indices (4)" in stage_text


def test_the_presenter_stage_shortens_a_long_batch_and_the_panel_keeps_it_whole():
    at = open_page(PAGE, query={"present": "1", "n": "100", "batch": "32", "shuffle": "0"})
    assert_clean(at)
    stage = next(m.value for m in at.markdown if m.value.startswith("**Epoch 0, batch 0**"))
    assert "Sample indices (32): `[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …]`" in stage
    assert f"Sample indices: `{list(range(32))}`" in shown_text(at)


def test_the_weighted_sampler_is_promised_balance_on_average_not_in_every_batch():
    """WeightedRandomSampler balances the classes in expectation; single batches vary."""
    labels = torch.tensor([1] * 10 + [0] * 30)
    weights = 1.0 / torch.bincount(labels).float()[labels]
    sampler = torch.utils.data.WeightedRandomSampler(weights, num_samples=400, replacement=True,
                                                     generator=torch.Generator().manual_seed(0))
    drawn = labels[list(sampler)].float().reshape(-1, 8).mean(dim=1)
    assert abs(float(drawn.mean()) - 0.5) < 0.1 and float(drawn.max() - drawn.min()) >= 0.5
    at = open_page(PAGE)
    assert_clean(at)
    text = shown_text(at)
    assert "to balance the classes on average" in text and "in every batch" not in text


@pytest.mark.parametrize("button", ["bi_next", "bi_prev"])
def test_a_press_faster_than_the_sliders_redraw_steps_from_the_batch_on_screen(button,
                                                                             presses_sent_last):
    """N, N on the keyboard faster than the jump slider redraws: the browser sends the second
    press with the slider still at the batch before (what it last drew). Both presses count, and
    the slider then shows the batch on screen."""
    at = open_page(PAGE, query={"n": "12", "batch": "2"})
    settings = BatchSettings(n=12, batch_size=2)
    at.slider(key="bi_jump").set_value(3).run()          # batch 3 of 6 (position 2)
    at.button(key=button).click().run()
    step = 1 if button == "bi_next" else -1
    at.slider(key="bi_jump").set_value(3)                # stale: it had not drawn the press yet
    at.button(key=button).click().run()
    assert_clean(at)
    assert _batch_line(at) == _expected(settings, 2 + 2 * step)
    assert at.slider(key="bi_jump").value == 3 + 2 * step
