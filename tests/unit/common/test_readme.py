"""The parameter tables of docs/lesson-links.md are generated from the settings tables and must match them."""
from workbench.common.readme import DOC, TABLES, blocks, render


def test_every_tool_has_a_generated_table_in_the_readme():
    assert sorted(blocks(DOC.read_text())) == sorted(TABLES)


def test_readme_tables_match_the_settings_tables():
    text = DOC.read_text()
    assert render(text) == text, "docs/lesson-links.md is stale: run `python -m workbench.common.readme`"


def test_a_changed_label_makes_the_readme_stale(monkeypatch):
    table = TABLES["moons_trainer"]
    monkeypatch.setattr(table["lr"], "label", "Step size")
    text = DOC.read_text()
    assert render(text) != text
