"""The batch iterator's workbench: runs equal what DataLoader yields, and what the code prints."""
from __future__ import annotations

import dataclasses
import multiprocessing
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.utils.data import (
    DataLoader,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

import workbench.batch_iterator.runs as runs
from workbench.batch_iterator.codegen import loader_script, record_line
from workbench.batch_iterator.collate import PAD_VALUE, TaggingCollate
from workbench.batch_iterator.datasets import make_dataset
from workbench.batch_iterator.exclusive import EXCLUSIVE_COMBINATIONS, try_exclusive
from workbench.batch_iterator.runs import explain_loader_error, identical_streams, run_loader
from workbench.batch_iterator.samplers import BucketBatchSampler
from workbench.batch_iterator.settings import SAMPLERS, TABLE, BatchSettings

ROOT = Path(__file__).resolve().parents[3]


def reference_batches(s: BatchSettings) -> list[list[list[int]]]:
    """The indices a DataLoader built here, independently of the page's code, yields per epoch."""
    dataset = make_dataset(s)
    g = torch.Generator().manual_seed(s.seed)
    k = s.num_samples or None
    sampler = {
        "default": lambda: None,
        "sequential": lambda: SequentialSampler(dataset),
        "random": lambda: RandomSampler(dataset, num_samples=k, generator=g),
        "replacement": lambda: RandomSampler(dataset, replacement=True, num_samples=k, generator=g),
        "subset": lambda: SubsetRandomSampler([i for i in range(len(dataset)) if i % 4 != 3],
                                              generator=g),
        "weighted": lambda: WeightedRandomSampler(
            1.0 / torch.bincount(dataset.labels)[dataset.labels].double(),
            num_samples=k or len(dataset), replacement=True, generator=g),
    }[s.sampler]()
    if s.batch_sampler == "bucket":
        loader = DataLoader(dataset, batch_sampler=BucketBatchSampler(
            [len(x) for x in dataset.features], s.batch_size, s.drop_last, g),
            collate_fn=TaggingCollate(s.collate == "pad"), generator=g)
    else:
        loader = DataLoader(dataset, batch_size=s.batch_size, shuffle=s.shuffle, sampler=sampler,
                            drop_last=s.drop_last, collate_fn=TaggingCollate(s.collate == "pad"),
                            generator=g)
    return [[batch["index"].tolist() for batch in loader] for _ in range(s.epochs)]


def page_batches(run) -> list[list[list[int]]]:
    return [[list(r.indices) for r in run.epoch_records(e)] for e in range(run.settings.epochs)]


settings_strategy = st.builds(
    BatchSettings,
    n=st.integers(4, 60), batch_size=st.integers(1, 25), shuffle=st.booleans(),
    drop_last=st.booleans(),
    sampler=st.sampled_from(SAMPLERS), seed=st.integers(0, 2**31 - 1),
    epochs=st.integers(1, 3), dataset=st.sampled_from(["points", "sequences"]),
    minority_percent=st.integers(5, 50), num_samples=st.sampled_from([0, 0, 7, 33]),
    batch_sampler=st.sampled_from(["none", "none", "bucket"]), collate=st.just("pad"),
)


def _valid(s: BatchSettings) -> BatchSettings:
    """Settings DataLoader accepts: no sampler with shuffle, nothing extra with a batch_sampler."""
    if s.batch_sampler == "bucket":
        return dataclasses.replace(s, shuffle=False, sampler="default")
    if s.sampler != "default":
        return dataclasses.replace(s, shuffle=False)
    return s


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(settings_strategy)
def test_page_batches_equal_what_dataloader_yields(s):
    s = _valid(s)
    run = run_loader(s)
    assert page_batches(run) == reference_batches(s)
    assert all(r.labels == tuple(run.labels[i] for i in r.indices) for r in run.records)


@settings(max_examples=30, deadline=None)
@given(settings_strategy)
def test_exclusive_options_raise_pytorchs_own_message(s):
    s = dataclasses.replace(s, shuffle=True, sampler="sequential")
    with pytest.raises(ValueError) as raised:
        run_loader(s)
    with pytest.raises(ValueError) as pytorch:
        DataLoader(range(4), sampler=SequentialSampler(range(4)), shuffle=True)
    explained = explain_loader_error(raised.value)
    assert explained.message == str(pytorch.value)
    assert "Traceback" not in explained.message


def _run_script(code: str, tmp_path: Path) -> list[str]:
    script = tmp_path / "batch_iterator.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def _page_lines(run) -> list[str]:
    return [record_line(r.epoch, r.number, r.indices, r.worker) for r in run.records]


@pytest.mark.spawns
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s=settings_strategy)
def test_code_panel_prints_the_same_batches_as_the_page(tmp_path, s):
    s = _valid(s)
    assert _run_script(loader_script(s), tmp_path) == _page_lines(run_loader(s))


@pytest.mark.spawns
@pytest.mark.parametrize("changes", [
    {},
    {"num_workers": 2, "augment": True, "worker_init": True, "epochs": 3},
    {"num_workers": 1, "persistent_workers": True, "prefetch_factor": 3, "shuffle": False,
     "sampler": "weighted", "minority_percent": 10, "n": 50},
    {"dataset": "sequences", "collate": "pad", "batch_sampler": "bucket", "shuffle": False,
     "drop_last": True, "n": 37, "batch_size": 5},
    {"sampler": "replacement", "shuffle": False, "num_samples": 13, "pin_memory": True},
], ids=["defaults", "two-workers", "persistent-weighted", "bucket-pad", "replacement"])
def test_code_panel_matches_page_for_worker_and_custom_settings(changes, tmp_path):
    s = dataclasses.replace(BatchSettings(), **changes)
    assert _run_script(loader_script(s), tmp_path) == _page_lines(run_loader(s))


@pytest.mark.spawns
def test_moons_code_embeds_the_labels_and_prints_the_same_batches(tmp_path):
    generator = torch.Generator().manual_seed(5)
    features = torch.randn(30, 2, generator=generator)
    labels = (torch.rand(30, generator=generator) < 0.3).long()
    s = BatchSettings(dataset="moons", sampler="weighted", shuffle=False, batch_size=4)
    run = run_loader(s, (features, labels))
    assert run.labels == tuple(labels.tolist())
    assert _run_script(loader_script(s, run.labels), tmp_path) == _page_lines(run)


def _no_worker_left() -> bool:
    return multiprocessing.active_children() == []


@pytest.mark.spawns
@pytest.mark.timeout(120)
def test_worker_runs_use_real_processes_and_leave_none_behind():
    s = BatchSettings(n=24, batch_size=4, num_workers=2, epochs=2)
    run = run_loader(s)
    assert {r.worker for r in run.records} == {0, 1}
    assert page_batches(run) == reference_batches(dataclasses.replace(s, num_workers=0))
    assert _no_worker_left()
    persistent = run_loader(dataclasses.replace(s, persistent_workers=True, epochs=3))
    assert len(persistent.records) == 18
    assert _no_worker_left()


@pytest.mark.spawns
@pytest.mark.timeout(120)
def test_a_run_stops_at_its_bound_and_cleans_up():
    from workbench.batch_iterator.runs import MAX_RUN_BATCHES

    s = BatchSettings(n=1000, batch_size=1, num_workers=2, epochs=5)     # 5,000 batches
    stopped = run_loader(s, time_limit_s=600)
    assert stopped.truncated and len(stopped.records) == MAX_RUN_BATCHES
    assert str(MAX_RUN_BATCHES) in stopped.stopped
    timed_out = run_loader(s, time_limit_s=0.0)
    assert timed_out.truncated and timed_out.records == ()
    assert _no_worker_left()


class StallingDataset(torch.utils.data.Dataset):
    """A worker that never answers: DataLoader's timeout must end the wait."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int):
        time.sleep(3600)


@pytest.mark.spawns
@pytest.mark.timeout(120)
def test_a_stalled_worker_raises_instead_of_hanging(monkeypatch):
    monkeypatch.setattr(runs, "WORKER_TIMEOUT_S", 2.0)
    monkeypatch.setattr(runs, "make_dataset", lambda s, moons=None: StallingDataset())
    with pytest.raises(RuntimeError) as raised:
        run_loader(BatchSettings(num_workers=1))
    assert "timed out" in str(raised.value)
    assert "stopped answering" in explain_loader_error(raised.value).title
    deadline = time.monotonic() + 30
    while not _no_worker_left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _no_worker_left()


@pytest.mark.spawns
@pytest.mark.timeout(120)
def test_worker_errors_arrive_without_a_traceback():
    s = BatchSettings(dataset="sequences", collate="default", num_workers=1, batch_size=8)
    with pytest.raises(RuntimeError) as raised:
        run_loader(s)
    explained = explain_loader_error(raised.value)
    assert "Traceback" not in explained.message and 'File "' not in explained.message
    assert "stack expects each tensor to be equal size" in explained.message
    assert "pad" in " ".join(explained.fixes)
    assert _no_worker_left()


@pytest.mark.spawns
@pytest.mark.timeout(120)
def test_numpy_generator_pitfall_and_its_fix():
    s = BatchSettings(n=12, batch_size=3, shuffle=False, num_workers=2, epochs=2, augment=True)
    assert identical_streams(run_loader(s))
    assert not identical_streams(run_loader(dataclasses.replace(s, worker_init=True)))
    assert not identical_streams(run_loader(dataclasses.replace(s, num_workers=0)))


@pytest.mark.parametrize("name", list(EXCLUSIVE_COMBINATIONS))
def test_each_forbidden_combination_shows_pytorchs_message(name):
    code, explained = try_exclusive(name)
    assert explained is not None and code.startswith("DataLoader(dataset")
    assert "mutually exclusive" in explained.message or "disables auto-batching" in explained.message


def test_drop_last_and_summaries():
    s = BatchSettings(n=20, batch_size=6, drop_last=True, epochs=3)
    run = run_loader(s)
    for summary in run.summaries():
        assert summary.batches == len(DataLoader(range(20), batch_size=6, drop_last=True))
        assert summary.dropped == 20 % 6 == len(summary.never_drawn)
        assert summary.repeats == 0
    # every epoch drops different samples: that is where drop_last's samples went
    assert len({s.never_drawn for s in run.summaries()}) > 1


def test_weighted_sampler_balances_the_classes():
    common = BatchSettings(n=200, minority_percent=10, shuffle=False, num_samples=2000, epochs=1)
    plain = run_loader(dataclasses.replace(common, sampler="random", num_samples=0)).summaries()[0]
    weighted = run_loader(dataclasses.replace(common, sampler="weighted")).summaries()[0]
    assert plain.class_counts[1] / plain.samples_seen == pytest.approx(0.1, abs=0.01)
    assert 0.4 < weighted.class_counts[1] / weighted.samples_seen < 0.6
    assert weighted.repeats > 0


def test_bucket_batch_sampler_covers_every_index_and_pads_less():
    s = BatchSettings(n=120, batch_size=8, dataset="sequences", collate="pad", shuffle=False)
    bucket = run_loader(dataclasses.replace(s, batch_sampler="bucket"))
    plain = run_loader(dataclasses.replace(s, shuffle=True))
    for epoch in range(s.epochs):
        seen = sorted(i for r in bucket.epoch_records(epoch) for i in r.indices)
        assert seen == list(range(120))

    def padding(run) -> int:
        return sum(int((r.tensors["x"] == PAD_VALUE).sum()) for r in run.records)

    assert padding(bucket) < padding(plain)


def test_padding_collate_pads_and_reports_lengths():
    s = BatchSettings(n=10, batch_size=4, dataset="sequences", collate="pad", shuffle=False)
    record = run_loader(s).records[0]
    dataset = make_dataset(s)
    x, lengths = record.tensors["x"], record.tensors["lengths"]
    assert x.shape == (4, max(len(dataset.features[i]) for i in range(4)))
    for row, index in enumerate(record.indices):
        assert torch.equal(x[row, :lengths[row]], dataset.features[index])


def test_pin_memory_on_cpu_is_reported_in_pytorchs_words():
    run = run_loader(BatchSettings(pin_memory=True))
    if not torch.accelerator.is_available():
        assert any("pin_memory" in note for note in run.notes)
        assert not run.records[0].tensors["x"].is_pinned()


def test_lesson_link_reads_booleans_both_ways_and_clamps():
    query = {"n": "9999", "batch": "8", "shuffle": "false", "drop_last": "1",
             "sampler": "Weighted", "seed": "7", "workers": "5", "epochs": "3"}
    s, problems = TABLE.read(query)
    assert problems == []
    assert (s.n, s.batch_size, s.shuffle, s.drop_last, s.sampler, s.seed, s.num_workers,
            s.epochs) == (500, 8, False, True, "weighted", 7, 2, 3)
    s2, _ = TABLE.read({"shuffle": "0", "drop_last": "true"})
    assert (s2.shuffle, s2.drop_last) == (False, True)
    bad, problems = TABLE.read({"sampler": "magic", "n": "ten"})
    assert bad == BatchSettings() and {p.param for p in problems} == {"sampler", "n"}
    assert TABLE.read(TABLE.write(s))[0] == s


def test_script_has_notebook_sections_and_no_page_internals():
    code = loader_script(BatchSettings(num_workers=2, worker_init=True, augment=True))
    assert code.count("# %%") >= 6
    assert "workbench" not in code.replace("PyTorch Workbench", "")
    assert re.search(r'multiprocessing_context="forkserver"', code)
    compile(code, "batch_iterator.py", "exec")


def test_short_list_keeps_the_first_items_and_marks_the_cut():
    from workbench.batch_iterator.story import short_list

    assert short_list((3, 1, 2)) == "[3, 1, 2]"
    assert short_list(tuple(range(12)), 12) == str(list(range(12)))
    assert short_list(tuple(range(13)), 12) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, …]"
    assert short_list((), 4) == "[]"
