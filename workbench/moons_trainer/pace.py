"""A watchable pace for live training: at most so many epochs per second.

At full speed the lesson's preset (50 epochs of 33 steps) is over in about two seconds on a
laptop, before the boundary can be seen forming. `Pace` hands out optimizer steps as a clock
allows them: `epochs_per_second * steps_per_epoch` a second, smoothly (a slice trains the steps
due so far, not a whole epoch at a time), so the live view's ten frames a second each show a
little more of the same run. The run trained is the same at every pace: only when its steps
happen changes.

A machine too busy to keep up does not bank the missed time: the run continues at the pace from
where it is, rather than racing to catch up.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

CATCH_UP_SECONDS = 0.25     # at most this much missed time is made up in one burst
LONGEST_WAIT = 0.1          # a paced job looks again at least this often (Pause, a new pace)


@dataclass
class Pace:
    """Steps allowed by a clock at `epochs_per_second` (None: no limit)."""

    epochs_per_second: float | None
    clock: Callable[[], float] = time.monotonic
    _since: float | None = field(default=None, init=False)
    _steps_at_start: int = field(default=0, init=False)

    def allowed(self, steps_done: int, steps_per_epoch: int) -> int | None:
        """How many more optimizer steps may run now (None: any number); 0 means wait."""
        if self.epochs_per_second is None:
            return None
        now = self.clock()
        rate = self.epochs_per_second * steps_per_epoch
        if self._since is None:
            self._since, self._steps_at_start = now, steps_done
        due = (now - self._since) * rate - (steps_done - self._steps_at_start)
        if due > CATCH_UP_SECONDS * rate:       # fell behind: carry on from here at the pace
            self._since = now - CATCH_UP_SECONDS
            self._steps_at_start = steps_done
            due = CATCH_UP_SECONDS * rate
        return max(0, int(due + 1e-9))     # 0.1 s of clock is 0.0999... in binary

    def wait(self, steps_per_epoch: int) -> float:
        """Seconds until the next step is due (after `allowed` said 0), at most LONGEST_WAIT."""
        if self.epochs_per_second is None:
            return 0.0
        return min(LONGEST_WAIT, 1.0 / (self.epochs_per_second * steps_per_epoch))

    def restart(self, epochs_per_second: float | None) -> None:
        """A new pace from now (a speed change mid-run, or Play again after a pause)."""
        self.epochs_per_second = epochs_per_second
        self._since = None
