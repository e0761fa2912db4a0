"""Where each class was last sent, read from the class store at most once per short interval per
process, however many followers ask.

Every learner who follows the teacher asks every FOLLOW_SECONDS where the class is
(components/class_session.py). Sixty learners asking the database each time are sixty queries a
second, all landing in the same moment after a send (their pages' timers tick together), and
on a 2-core server those reads were half a second of every follower's arrival
(bench/class.py). The send changes a few times a lesson, so one read per class per `max_age`
serves them all; a follower then moves at most `max_age` later than a fresh read would have.

Hand-written rather than a caching library's TTL cache (a mapping whose entries expire, such as
cachetools' TTLCache): what matters here is that the sixty askers of an expired entry make ONE
read between them (the others keep the value they have while it is refreshed), and a mapping
leaves every asker of an expired entry to read it.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class _Entry(Generic[T]):
    value: T
    read_at: float


class SendCache(Generic[T]):
    """`get(key, read)`: the value `read()` returned for `key` within the last `max_age` seconds,
    or a fresh one. One caller reads an expired entry; the others, meanwhile, get the value it
    replaces (or, for a key never read, wait for the read). What `read` raises is raised to
    its caller and not kept: the next caller reads again (a class that ended, a database away)."""

    def __init__(self, max_age: float, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 10_000) -> None:
        self.max_age, self.clock, self.max_keys = max_age, clock, max_keys
        self._lock = threading.Lock()
        self._entries: dict[Hashable, _Entry[T]] = {}
        self._reading: dict[Hashable, threading.Lock] = {}    # one read at a time per key

    def get(self, key: Hashable, read: Callable[[], T]) -> T:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and self.clock() - entry.read_at < self.max_age:
                return entry.value
            reading = self._reading.setdefault(key, threading.Lock())
        if not reading.acquire(blocking=entry is None):
            assert entry is not None
            return entry.value            # another thread refreshes it: the last value meanwhile
        try:
            with self._lock:              # a read that finished while this thread waited
                newer = self._entries.get(key)
                if newer is not None and self.clock() - newer.read_at < self.max_age:
                    return newer.value
            asked_at = self.clock()
            value = read()
            with self._lock:
                if len(self._entries) >= self.max_keys and key not in self._entries:
                    # Ended classes' entries, dropped all at once, rarely. A reader holding a
                    # dropped lock still releases it; at worst two threads read once each.
                    self._entries.clear()
                    self._reading = {key: reading}
                self._entries[key] = _Entry(value, asked_at)
            return value
        finally:
            reading.release()

    def forget(self, key: Hashable) -> None:
        """Drop `key`'s value (this process sent the class somewhere: read it fresh)."""
        with self._lock:
            self._entries.pop(key, None)
