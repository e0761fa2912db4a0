"""A process-wide limit on heavy jobs (training runs, DataLoader worker runs).

A job holds a *lease*: it renews it on every bounded tick of work and loses it when it stops
renewing (Pause, leaving the page, closing the tab), so a slot frees itself within `ttl`
seconds without anyone having to call `release`. This lives in a plain module, not in
`st.cache_resource`, because any visitor can clear Streamlit's caches.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
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


HEAVY_JOBS = LeaseLimiter(capacity=max(1, os.cpu_count() or 1))

BUSY_MESSAGE = (
    "The server is busy: {capacity} heavy jobs (training runs or DataLoader worker runs) are "
    "running for other learners, one per CPU core. Press the button again in a few seconds."
)


def busy_message(limiter: LeaseLimiter = HEAVY_JOBS) -> str:
    return BUSY_MESSAGE.format(capacity=limiter.capacity)
