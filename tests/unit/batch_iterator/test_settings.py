"""The batch iterator's one settings table and its knowledge checks."""
from __future__ import annotations

import dataclasses

import pytest

from workbench.batch_iterator import checks
from workbench.batch_iterator.settings import TABLE, BatchSettings
from workbench.common.checks import Check
from workbench.common.links import ChoiceParam

# Public: teachers type these into slides. Never rename one.
LINK_NAMES = ("n", "batch", "shuffle", "drop_last", "sampler", "seed", "workers", "epochs",
              "dataset", "minority", "num_samples", "batch_sampler", "collate", "worker_init",
              "augment", "pin_memory", "prefetch", "persistent")


def test_the_link_names_stay_exactly_as_published():
    assert TABLE.names == LINK_NAMES


def test_every_field_has_one_parameter():
    assert sorted(p.field for p in TABLE.params) == \
        sorted(f.name for f in dataclasses.fields(BatchSettings))


@pytest.mark.parametrize("name", LINK_NAMES)
def test_every_parameter_has_a_label_and_help(name):
    p = TABLE[name]
    assert p.label.strip() and p.help.strip() and p.meaning.strip()


def test_every_choice_has_a_label_in_words():
    for p in TABLE.params:
        if isinstance(p, ChoiceParam):
            assert set(p.widget.choice_labels or {}) == set(p.choices), p.name


def test_defaults_write_an_empty_link_and_choices_match_any_case():
    assert TABLE.write(BatchSettings()) == {}
    settings, problems = TABLE.read({"sampler": "WEIGHTED", "collate": "Pad"})
    assert problems == [] and (settings.sampler, settings.collate) == ("weighted", "pad")
    assert TABLE.write(settings) == {"sampler": "weighted", "collate": "pad"}


def test_the_readme_table_names_every_parameter():
    table = TABLE.markdown_table()
    for name in LINK_NAMES:
        assert f"| `{name}` |" in table


CHECKS = [checks.BATCH_ITERATOR_COUNT, checks.BATCHES_PER_EPOCH, checks.BATCHES_WITH_DROP_LAST,
          checks.RESHUFFLE]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.key)
def test_each_check_is_answered_by_pytorch_with_one_of_its_options(check: Check):
    answer = check.answer()
    assert answer.correct_option in check.options and answer.shown_value
    assert check.code.startswith(f"def {check.compute.__name__}()")
    assert "DataLoader(" in check.code


def test_the_checks_agree_with_len_dataloader():
    from torch.utils.data import DataLoader

    assert checks.BATCHES_PER_EPOCH.answer().correct_option == \
        str(len(DataLoader(range(20), batch_size=6)))
    assert checks.BATCHES_WITH_DROP_LAST.answer().correct_option == \
        str(len(DataLoader(range(20), batch_size=6, drop_last=True)))
    assert len({c.key for c in CHECKS}) == len(CHECKS)
