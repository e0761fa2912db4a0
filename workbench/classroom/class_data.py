"""Cells of a class's CSV that a spreadsheet must not run (workbench/classroom/report.py writes
the class's report as CSV).

The names are written as stored, but a cell that a spreadsheet would read as a formula (a
nickname starting with `=`, `+`, `-` or `@`, or a tab or carriage return) starts with an
apostrophe, as OWASP's "CSV injection" advice says: opened in a spreadsheet, the cell shows the
text and runs nothing.
"""
from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """`value`, with a text that a spreadsheet would run as a formula made plain text."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
