"""A class's data as one CSV file, offered to the teacher before *End the class* deletes it:
the answers per knowledge check and option, and the challenge board's posted runs.

Until the class report exists (issue 45) this is what a teacher keeps. The names are written as
stored, but a cell that a spreadsheet would read as a formula (a nickname starting with `=`, `+`,
`-` or `@`, or a tab or carriage return) starts with an apostrophe, as OWASP's "CSV injection"
advice says: opened in a spreadsheet, the cell shows the text and runs nothing.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence

from workbench.classroom.store import CheckTally
from workbench.common.checks import Check

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """`value`, with a text that a spreadsheet would run as a formula made plain text."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def answer_rows(tallies: Iterable[CheckTally], checks: Mapping[str, Check]) -> list[dict[str, object]]:
    """One row per check the class answered and option: how many learners chose it, and the
    option PyTorch computes. A check the workbench no longer has keeps its counts."""
    rows: list[dict[str, object]] = []
    for tally in tallies:
        check = checks.get(tally.check_key)
        options = list(check.options) if check is not None else sorted(tally.counts)
        truth = check.answer().correct_option if check is not None else ""
        for option in options:
            rows.append({"check": tally.check_key,
                         "question": check.question if check is not None else "",
                         "option": option, "learners": tally.counts.get(option, 0),
                         "answered": tally.answered, "PyTorch computes": option == truth})
    return rows


def class_data_csv(code: str, answers: Sequence[Mapping[str, object]],
                   runs: Sequence[Mapping[str, object]]) -> str:
    """The CSV text: a title line, then each table under its own title line and header, a blank
    line between them (a spreadsheet opens it as one sheet; pandas reads each with skiprows)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([f"Class {code}"])
    for title, rows in ((f"Answers per check and option ({len(answers)} rows)", answers),
                        (f"Posted runs ({len(runs)})", runs)):
        writer.writerow([])
        writer.writerow([title])
        if rows:
            columns = list(rows[0])
            writer.writerow(columns)
            writer.writerows([spreadsheet_safe(row.get(column, "")) for column in columns]
                             for row in rows)
        else:
            writer.writerow(["none"])
    return buffer.getvalue()
