"""The teacher's pacing of the class's knowledge checks: a check is open (answers taken), closed
(answers refused, and learners' pages say so), or open until a timer runs out.

The store keeps one row per check the teacher paced (workbench/classroom/schema.py's
check_states); a check with no row is open. The timer is a time (`closes_at`), not a countdown
the server runs: the store refuses an answer that arrives after it, and a learner's page counts
down to it in the browser.
"""
from __future__ import annotations

from dataclasses import dataclass, field

TIMER_CHOICES = (30, 60, 120, 300)     # seconds the teacher can give a check
MAX_TIMER_SECONDS = 30 * 60            # a timer is for a question, not a lesson


@dataclass(frozen=True)
class CheckPace:
    closed: bool = False               # the teacher closed it
    closes_at: float | None = None     # the timer's end (None: no timer)
    round: int = 0                     # grows with each reset: answers of an earlier round are gone

    def is_open(self, now: float) -> bool:
        return not self.closed and (self.closes_at is None or now < self.closes_at)

    def seconds_left(self, now: float) -> float | None:
        """Seconds until the timer closes the check (None: no timer, or closed already)."""
        if self.closed or self.closes_at is None:
            return None
        return max(0.0, self.closes_at - now)


OPEN = CheckPace()


@dataclass(frozen=True)
class Pacing:
    """The class's paced checks; `number` grows with every change, so a page knows to redraw."""
    number: int = 0
    checks: dict[str, CheckPace] = field(default_factory=dict)

    def of(self, check_key: str) -> CheckPace:
        return self.checks.get(check_key, OPEN)


def closed_message(pace: CheckPace, now: float) -> str:
    """What a learner reads about a check that takes no answers now ("" while it is open)."""
    if pace.is_open(now):
        return ""
    if pace.closed:
        return "Your teacher closed this question: answers are not taken now."
    return "Time is up for this question: answers are not taken now."
