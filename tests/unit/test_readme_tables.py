"""The README's parameter tables are generated from the settings tables and must match them."""
from workbench.common.readme import README, TABLES, blocks, render


def test_every_tool_has_a_generated_table_in_the_readme():
    assert sorted(blocks(README.read_text())) == sorted(TABLES)


def test_readme_tables_match_the_settings_tables():
    text = README.read_text()
    assert render(text) == text, "README.md is stale: run `python -m workbench.common.readme`"


def test_a_changed_label_makes_the_readme_stale(monkeypatch):
    import importlib

    table = importlib.import_module(TABLES["moons_trainer"]).TABLE
    monkeypatch.setattr(table["lr"], "label", "Step size")
    text = README.read_text()
    assert render(text) != text
