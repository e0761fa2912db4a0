"""Process-wide limits: heavy jobs (DataLoader worker runs, pitfall-lab trainings) and a fair
share of the cores for live training.

A job holds a *lease*: it renews it on every bounded tick of work and loses it when it stops
renewing (Pause, leaving the page, closing the tab), so a slot frees itself within `ttl`
seconds without anyone having to call `release`. This lives in a plain module, not in
`st.cache_resource`, because any visitor can clear Streamlit's caches.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass
class LeaseLimiter:
    capacity: int
    ttl: float = 1.5
    clock: Callable[[], float] = time.monotonic
    _leases: dict[str, float] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _expire(self, now: float) -> None:
        for owner in [o for o, expires in self._leases.items() if expires <= now]:
            del self._leases[owner]

    def acquire(self, owner: str) -> bool:
        """Take or renew `owner`'s slot; False (at once, never blocking) when all are taken."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            if owner not in self._leases and len(self._leases) >= self.capacity:
                return False
            self._leases[owner] = now + self.ttl
            return True

    def release(self, owner: str) -> None:
        with self._lock:
            self._leases.pop(owner, None)

    def holders(self) -> int:
        with self._lock:
            self._expire(self.clock())
            return len(self._leases)


@dataclass
class FairShare:
    """Live training for every learner at once, each tick's slice sized by how many train.

    A class of 30 pressing Play on a 2-core server must all see their runs progress, so no one
    is refused: each learner holds a lease (renewed every tick, gone `ttl` seconds after Pause
    or a closed tab), and a tick's share of training time is `utilisation` of the cores divided
    among the learners training now, so the queue of runs (`RunSlots`: one per core at a time)
    turns over quickly and pages and health checks keep being answered.
    """

    cores: int
    ttl: float = 1.5
    utilisation: float = 0.6        # the rest is drawing, page runs and the server itself
    # A slice is never shorter than this: with a class training, ticks queue behind each other
    # (RunSlots), so a learner's ticks come seconds apart, not every `tick`; a sliver of
    # training per tick would leave every run crawling while the cores sit drawing.
    minimum: float = 0.05
    clock: Callable[[], float] = time.monotonic
    _leases: dict[str, float] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def slice_seconds(self, owner: str, wanted: float, tick: float) -> float:
        """Renew `owner`'s lease; the training time its tick may use (at most `wanted`)."""
        with self._lock:
            now = self.clock()
            for expired in [o for o, expires in self._leases.items() if expires <= now]:
                del self._leases[expired]
            self._leases[owner] = now + self.ttl
            active = len(self._leases)
        return min(wanted, max(self.minimum, tick * self.cores * self.utilisation / active))

    def active(self) -> int:
        with self._lock:
            now = self.clock()
            return sum(1 for expires in self._leases.values() if expires > now)

    def release(self, owner: str) -> None:
        with self._lock:
            self._leases.pop(owner, None)


class RunSlots:
    """At most `capacity` page or fragment runs execute their Python at once; the rest wait.

    Thirty learners opening one link start thirty script threads, and every one of them wants
    the GIL: run together they all finish late and the server's own event loop (health checks,
    websockets) waits behind them. A run waiting here blocks without holding the GIL, so the
    first learners get their page in a fraction of the time and the server stays responsive.
    Re-entrant per thread: a fragment drawn inside its page's run does not take a second slot.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._slots = threading.BoundedSemaphore(capacity)
        self._held = threading.local()

    @contextlib.contextmanager
    def run(self) -> Iterator[None]:
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            self._slots.acquire()
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth
            if depth == 0:
                self._slots.release()


CORES = max(1, os.cpu_count() or 1)
SCRIPT_RUNS = RunSlots(CORES)
HEAVY_JOBS = LeaseLimiter(capacity=CORES)
TRAINING = FairShare(cores=CORES)

BUSY_MESSAGE = (
    "The server is busy: {capacity} heavy jobs (training runs or DataLoader worker runs) are "
    "running for other learners, one per CPU core. Press the button again in a few seconds."
)


def busy_message(limiter: LeaseLimiter = HEAVY_JOBS) -> str:
    return BUSY_MESSAGE.format(capacity=limiter.capacity)
