"""The class's report: per check, the class's answers and the share that matched what PyTorch
computes, the checks the class got most wrong first; per learner, their answers and posted runs.
Built from the store's `ClassRecord`, written as CSV (a spreadsheet) or as one self-contained HTML
page a teacher can print or file.

PyTorch's answer to a check is computed here, by the check's own function (`Check.answer`), as
the learner's page computes it: a report never holds an answer typed in. A check the workbench no
longer has keeps its counts, with no right answer.

The names: a teacher who hides names from the projected boards gets a report that shows seat
numbers instead (`names=False`) when it is drawn on the page; the downloaded files are the
teacher's own, and name every learner.
"""
from __future__ import annotations

import csv
import datetime as dt
import html
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from workbench.classroom.class_data import spreadsheet_safe
from workbench.classroom.store import ClassRecord, RunEntry
from workbench.common.checks import Check
from workbench.common.palette import (GREY_150, GREY_600, GREY_800, RIGHT_GREEN, TEXT_ON_LIGHT,
                                      WHITE, WRONG_RED)


@dataclass(frozen=True)
class CheckSummary:
    check_key: str
    question: str
    options: tuple[str, ...]
    counts: dict[str, int]
    answered: int
    correct_option: str | None          # what PyTorch computes; None: a check no longer known
    answered_by: tuple[str, ...]        # names (or seats), in seat order

    @property
    def right(self) -> int:
        return self.counts.get(self.correct_option, 0) if self.correct_option is not None else 0

    @property
    def share_right(self) -> float | None:
        if self.correct_option is None or not self.answered:
            return None
        return self.right / self.answered


@dataclass(frozen=True)
class PredictionSummary:
    """A revealed prediction: the class's votes per option, and the option the experiment showed
    (the teacher's mark, or PyTorch's answer for a built-in check; None: an opinion poll)."""
    question: str
    options: tuple[str, ...]
    counts: tuple[int, ...]
    shown: int | None

    @property
    def voted(self) -> int:
        return sum(self.counts)

    @property
    def share_right(self) -> float | None:
        if self.shown is None or not self.voted:
            return None
        return self.counts[self.shown] / self.voted


@dataclass(frozen=True)
class LearnerVote:
    question: str
    option: str
    shown: str | None

    @property
    def right(self) -> bool | None:
        return None if self.shown is None else self.option == self.shown


@dataclass(frozen=True)
class LearnerAnswer:
    check_key: str
    question: str
    option: str
    correct_option: str | None

    @property
    def right(self) -> bool | None:
        return None if self.correct_option is None else self.option == self.correct_option


@dataclass(frozen=True)
class LearnerSummary:
    seat: int
    name: str
    present: bool
    answers: tuple[LearnerAnswer, ...]
    runs: tuple[RunEntry, ...]
    votes: tuple[LearnerVote, ...] = ()

    @property
    def right(self) -> int:
        return sum(1 for answer in self.answers if answer.right)


@dataclass(frozen=True)
class ClassReport:
    code: str
    created_at: float
    ended_at: float | None
    keep_until: float | None
    names_shown: bool
    checks: tuple[CheckSummary, ...]            # the most wrong first
    learners: tuple[LearnerSummary, ...]        # in seat order
    runs: tuple[tuple[str, RunEntry], ...] = field(default=())     # (name, run), oldest first
    predictions: tuple[PredictionSummary, ...] = ()                # revealed, oldest first

    @property
    def answers(self) -> int:
        return sum(check.answered for check in self.checks)


def seat_label(seat: int) -> str:
    return f"Seat {seat}"


def build_report(record: ClassRecord, checks: Mapping[str, Check], *, names: bool = True,
                 truth: Callable[[Check], str] = lambda check: check.answer().correct_option
                 ) -> ClassReport:
    """The report of `record`. `names=False` writes seats instead of names (the teacher hid names
    from the projected boards, and the report is on the page). `truth`: what PyTorch computes for
    a check (the check's own function; tests may count its calls)."""
    name_of = {member.seat: (member.nickname if names else seat_label(member.seat))
               for member in record.members}
    truths: dict[str, str | None] = {}
    for answer in record.answers:
        if answer.check_key not in truths:
            check = checks.get(answer.check_key)
            truths[answer.check_key] = truth(check) if check is not None else None

    per_check: dict[str, dict[str, int]] = {}
    by_whom: dict[str, list[int]] = {}
    for answer in record.answers:
        per_check.setdefault(answer.check_key, {})
        per_check[answer.check_key][answer.option] = per_check[answer.check_key].get(answer.option, 0) + 1
        by_whom.setdefault(answer.check_key, []).append(answer.seat)
    summaries = []
    for key, counts in per_check.items():
        check = checks.get(key)
        options = check.options if check is not None else tuple(sorted(counts))
        summaries.append(CheckSummary(
            key, check.question if check is not None else key, tuple(options), counts,
            sum(counts.values()), truths[key],
            tuple(name_of.get(seat, seat_label(seat)) for seat in sorted(by_whom[key]))))
    # The most wrong first: the lowest share that matched PyTorch, the most answered first among
    # equals; checks with no known answer last.
    summaries.sort(key=lambda s: (s.share_right is None, s.share_right or 0.0, -s.answered,
                                  s.question))

    answers_of: dict[int, list[LearnerAnswer]] = {}
    for answer in record.answers:
        check = checks.get(answer.check_key)
        answers_of.setdefault(answer.seat, []).append(LearnerAnswer(
            answer.check_key, check.question if check is not None else answer.check_key,
            answer.option, truths[answer.check_key]))
    summaries_of_predictions = []
    votes_of: dict[int, list[LearnerVote]] = {}
    for prediction in record.predictions:
        check = checks.get(prediction.check_key) if prediction.check_key else None
        shown = prediction.expected
        if check is not None:
            answer = truth(check)
            shown = prediction.options.index(answer) if answer in prediction.options else None
        counts = [0] * len(prediction.options)
        for seat, index in prediction.votes:
            if 0 <= index < len(counts):
                counts[index] += 1
                votes_of.setdefault(seat, []).append(LearnerVote(
                    prediction.question, prediction.options[index],
                    prediction.options[shown] if shown is not None else None))
        summaries_of_predictions.append(PredictionSummary(prediction.question, prediction.options,
                                                          tuple(counts), shown))
    runs_of: dict[int, list[RunEntry]] = {}
    for seat, run in record.runs:
        runs_of.setdefault(seat, []).append(run)
    learners = tuple(LearnerSummary(member.seat, name_of[member.seat], member.present,
                                    tuple(answers_of.get(member.seat, ())),
                                    tuple(runs_of.get(member.seat, ())),
                                    tuple(votes_of.get(member.seat, ())))
                     for member in record.members)
    runs = tuple((name_of.get(seat, seat_label(seat)), run) for seat, run in record.runs)
    return ClassReport(record.code, record.created_at, record.ended_at, record.keep_until, names,
                       tuple(summaries), learners, runs, tuple(summaries_of_predictions))


# --- times -----------------------------------------------------------------------------------------
def time_text(seconds: float | None, zone: str | None) -> str:
    """A stored time as the teacher's clock shows it (`zone`: the browser's IANA time zone),
    or UTC, said so, when the zone is unknown."""
    if seconds is None:
        return ""
    try:
        tz = ZoneInfo(zone) if zone else dt.UTC
    except (ZoneInfoNotFoundError, ValueError):
        tz = dt.UTC
    shown = dt.datetime.fromtimestamp(seconds, tz)
    return shown.strftime("%Y-%m-%d %H:%M") + (" UTC" if tz is dt.UTC else "")


def share_text(share: float | None) -> str:
    return "" if share is None else f"{share:.0%}"


# --- CSV -------------------------------------------------------------------------------------------
def check_rows(report: ClassReport) -> list[dict[str, object]]:
    """One row per check and option, the most wrong check first."""
    return [{"check": check.check_key, "question": check.question, "option": option,
             "learners": check.counts.get(option, 0), "answered": check.answered,
             "PyTorch computes": option == check.correct_option,
             "share right": share_text(check.share_right)}
            for check in report.checks for option in check.options]


def answer_rows(report: ClassReport) -> list[dict[str, object]]:
    """One row per learner and answer."""
    return [{"seat": learner.seat, "name": learner.name, "check": answer.check_key,
             "question": answer.question, "answer": answer.option,
             "PyTorch computes": answer.correct_option or "",
             "right": "" if answer.right is None else answer.right}
            for learner in report.learners for answer in learner.answers]


def prediction_rows(report: ClassReport) -> list[dict[str, object]]:
    """One row per revealed prediction and option."""
    return [{"question": p.question, "option": option, "votes": p.counts[index], "voted": p.voted,
             "the experiment showed": index == p.shown}
            for p in report.predictions for index, option in enumerate(p.options)]


def vote_rows(report: ClassReport) -> list[dict[str, object]]:
    """One row per learner and vote on a revealed prediction."""
    return [{"seat": learner.seat, "name": learner.name, "question": vote.question,
             "vote": vote.option, "the experiment showed": vote.shown or "",
             "right": "" if vote.right is None else vote.right}
            for learner in report.learners for vote in learner.votes]


def run_rows(report: ClassReport, root: str = "", zone: str | None = None) -> list[dict[str, object]]:
    """One row per posted run; `root`: the app's address, so a run's link opens it."""
    return [{"name": name, "link": root + run.link, "optimizer": run.optimizer,
             "learning rate": run.learning_rate, "test accuracy": round(run.test_accuracy, 4),
             "best possible": round(run.bayes_ceiling, 4), "parameters": run.parameter_count,
             "data": run.data_settings, "posted": time_text(run.posted_at, zone)}
            for name, run in report.runs]


def report_csv(report: ClassReport, root: str = "", zone: str | None = None) -> str:
    """The report as one CSV file: a title line, then each table under its title line and
    header, a blank line between (a spreadsheet opens it as one sheet; pandas reads each table
    with skiprows and nrows). Cells a spreadsheet would run as a formula are made text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([f"Class {report.code}", f"started {time_text(report.created_at, zone)}"]
                    + ([f"ended {time_text(report.ended_at, zone)}"] if report.ended_at else []))
    for title, rows in (
            (f"Checks, the most wrong first ({len(report.checks)} checks, {report.answers} answers)",
             check_rows(report)),
            (f"Answers per learner ({len(report.learners)} learners)", answer_rows(report)),
            (f"Predictions, revealed ({len(report.predictions)})", prediction_rows(report)),
            ("Votes per learner", vote_rows(report)),
            (f"Posted runs ({len(report.runs)})", run_rows(report, root, zone))):
        writer.writerow([])
        writer.writerow([title])
        if rows:
            columns = list(rows[0])
            writer.writerow(columns)
            writer.writerows([spreadsheet_safe(row[column]) for column in columns] for row in rows)
        else:
            writer.writerow(["none"])
    return buffer.getvalue()


# --- HTML ------------------------------------------------------------------------------------------
_STYLE = Template("""
body { font: 16px/1.45 system-ui, sans-serif; color: $ink; background: $paper; margin: 2rem auto;
       max-width: 60rem; padding: 0 1rem; }
h1 { font-size: 1.8rem; margin-bottom: 0.2rem; } h2 { margin-top: 2rem; font-size: 1.35rem; }
h3 { font-size: 1.1rem; margin: 1.2rem 0 0.3rem; }
table { border-collapse: collapse; margin: 0.4rem 0 1rem; width: 100%; }
caption { text-align: left; font-weight: 600; padding: 0.2rem 0; }
th, td { border: 1px solid $rule; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: $header; } td.number { text-align: right; font-variant-numeric: tabular-nums; }
.right { color: $right; font-weight: 600; } .wrong { color: $wrong; font-weight: 600; }
.muted { color: $muted; }
@media print { body { margin: 0; max-width: none; } section.learner { break-inside: avoid; }
               a { color: inherit; } }
""").substitute(ink=TEXT_ON_LIGHT, paper=WHITE, rule=GREY_600, header=GREY_150, right=RIGHT_GREEN,
                wrong=WRONG_RED, muted=GREY_800)


def _cell(value: object, number: bool = False) -> str:
    return f'<td class="number">{html.escape(str(value))}</td>' if number else \
        f"<td>{html.escape(str(value))}</td>"


def report_html(report: ClassReport, root: str = "", zone: str | None = None) -> str:
    """The report as one HTML page with no outside resource (its style inline): every text from
    the class (names, answers, links) escaped, tables with captions and header cells, readable
    printed."""
    e = html.escape
    started = time_text(report.created_at, zone)
    ended = f", ended {e(time_text(report.ended_at, zone))}" if report.ended_at else ""
    parts = [
        "<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Class {e(report.code)}: report</title>", f"<style>{_STYLE}</style>", "</head>",
        "<body>", "<main>",
        f"<h1>Class {e(report.code)}: report</h1>",
        f'<p class="muted">Started {e(started)}{ended}. {len(report.learners)} learner(s), '
        f"{report.answers} answer(s) to {len(report.checks)} check(s), {len(report.runs)} posted "
        "run(s). The right answer to each check is what PyTorch computed when this report was "
        "made, by the check's own function.</p>",
        "<h2>Checks, the most wrong first</h2>",
    ]
    if not report.checks:
        parts.append("<p>No learner answered a check.</p>")
    for check in report.checks:
        share = share_text(check.share_right)
        parts.append(f"<h3>{e(check.question)}</h3>")
        parts.append(f"<p>{check.answered} answered" + (f"; {share} chose what PyTorch computes"
                                                        if share else "; no known answer") + ".</p>")
        parts.append("<table><caption>Answers to this check</caption><thead><tr>"
                     '<th scope="col">Answer</th><th scope="col">Learners</th>'
                     '<th scope="col">Share</th><th scope="col">PyTorch computes</th></tr></thead><tbody>')
        for option in check.options:
            count = check.counts.get(option, 0)
            parts.append("<tr>" + _cell(option) + _cell(count, True)
                         + _cell(f"{count / max(check.answered, 1):.0%}", True)
                         + _cell("yes" if option == check.correct_option else "") + "</tr>")
        parts.append("</tbody></table>")
        if check.answered_by:
            parts.append(f"<p><span class=\"muted\">Answered by:</span> "
                         f"{e(', '.join(check.answered_by))}</p>")
    if report.predictions:
        parts.append("<h2>Predictions, revealed</h2>")
    for prediction in report.predictions:
        share = share_text(prediction.share_right)
        parts.append(f"<h3>{e(prediction.question)}</h3>")
        parts.append(f"<p>{prediction.voted} voted" + (f"; {share} predicted what the experiment "
                                                        "showed" if share else "; an opinion poll")
                     + ".</p>")
        parts.append("<table><caption>Votes on this prediction</caption><thead><tr>"
                     '<th scope="col">Option</th><th scope="col">Votes</th>'
                     '<th scope="col">The experiment showed</th></tr></thead><tbody>')
        for index, option in enumerate(prediction.options):
            parts.append("<tr>" + _cell(option) + _cell(prediction.counts[index], True)
                         + _cell("yes" if index == prediction.shown else "") + "</tr>")
        parts.append("</tbody></table>")
    parts.append("<h2>Learners</h2>")
    if not report.learners:
        parts.append("<p>No learner joined.</p>")
    for learner in report.learners:
        parts.append('<section class="learner">')
        parts.append(f"<h3>{e(learner.name)} <span class=\"muted\">(seat {learner.seat})</span></h3>")
        if learner.answers:
            parts.append(f"<p>{learner.right} of {len(learner.answers)} answer(s) matched what "
                         "PyTorch computes.</p>")
            parts.append('<table><caption>Answers</caption><thead><tr><th scope="col">Check</th>'
                         '<th scope="col">Answer</th><th scope="col">PyTorch computes</th>'
                         '<th scope="col">Right</th></tr></thead><tbody>')
            for answer in learner.answers:
                verdict = {True: '<td class="right">right</td>', False: '<td class="wrong">wrong</td>',
                           None: "<td>unknown</td>"}[answer.right]
                parts.append("<tr>" + _cell(answer.question) + _cell(answer.option)
                             + _cell(answer.correct_option or "") + verdict + "</tr>")
            parts.append("</tbody></table>")
        else:
            parts.append("<p>No answer.</p>")
        if learner.votes:
            parts.append("<p>Predictions: " + "; ".join(
                f"{e(vote.question)}: {e(vote.option)}"
                + ("" if vote.right is None else " (right)" if vote.right else " (wrong)")
                for vote in learner.votes) + ".</p>")
        if learner.runs:
            parts.append("<p>Posted runs: " + "; ".join(
                f'<a href="{e(root + run.link, quote=True)}">{run.test_accuracy:.2%} test accuracy, '
                f"{run.parameter_count:,} parameters</a>" for run in learner.runs) + ".</p>")
        parts.append("</section>")
    parts.append(f"<h2>Posted runs ({len(report.runs)})</h2>")
    rows = run_rows(report, root, zone)
    if rows:
        columns = list(rows[0])
        parts.append("<table><caption>Every run posted to the class, oldest first</caption><thead><tr>"
                     + "".join(f'<th scope="col">{e(c)}</th>' for c in columns) + "</tr></thead><tbody>")
        for row in rows:
            cells = []
            for column in columns:
                value = row[column]
                if column == "link":
                    cells.append(f'<td><a href="{e(str(value), quote=True)}">open the run</a></td>')
                else:
                    cells.append(_cell(value, isinstance(value, (int, float))))
            parts.append("<tr>" + "".join(cells) + "</tr>")
        parts.append("</tbody></table>")
    else:
        parts.append("<p>No run was posted.</p>")
    parts += ["</main>", "</body>", "</html>"]
    return "\n".join(parts)


def most_wrong(report: ClassReport, count: int = 3) -> Sequence[CheckSummary]:
    """The checks the class got most wrong, with a known answer and at least one answer."""
    return [check for check in report.checks if check.share_right is not None][:count]
