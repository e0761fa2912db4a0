"""The class's send read once per class per short interval (workbench/classroom/send_cache.py),
with an injected clock: no test waits for time to pass."""
from __future__ import annotations

import threading

import pytest

from workbench.classroom.send_cache import SendCache
from workbench.classroom.store import ClassError, Send


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Reads:
    """A store's read, counted: the send it returns is numbered by the read."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> Send:
        self.count += 1
        return Send(self.count, f"/lessons?step={self.count}", f"step {self.count}")


def test_one_read_serves_every_asker_until_it_is_max_age_old():
    clock, reads = Clock(), Reads()
    cache: SendCache[Send] = SendCache(0.3, clock=clock)
    assert [cache.get("AK37WA", reads).number for _ in range(60)] == [1] * 60
    clock.now += 0.29
    assert cache.get("AK37WA", reads).number == 1
    clock.now += 0.01                                      # 0.3 s old: read again
    assert cache.get("AK37WA", reads).number == 2
    assert reads.count == 2


def test_each_class_is_read_for_itself():
    clock, reads = Clock(), Reads()
    cache: SendCache[Send] = SendCache(0.3, clock=clock)
    assert cache.get("AK37WA", reads).number == 1
    assert cache.get("BQ42XZ", reads).number == 2
    assert cache.get("AK37WA", reads).number == 1


def test_a_failed_read_is_raised_and_not_kept():
    clock, reads = Clock(), Reads()
    cache: SendCache[Send] = SendCache(0.3, clock=clock)

    def ended() -> Send:
        raise ClassError("There is no class AK37WA")

    with pytest.raises(ClassError):
        cache.get("AK37WA", ended)
    assert cache.get("AK37WA", reads).number == 1          # the next asker reads, at once


def test_forget_makes_the_next_asker_read():
    clock, reads = Clock(), Reads()
    cache: SendCache[Send] = SendCache(0.3, clock=clock)
    cache.get("AK37WA", reads)
    cache.forget("AK37WA")
    assert cache.get("AK37WA", reads).number == 2


def test_while_one_thread_refreshes_the_others_keep_the_last_value():
    clock, reads = Clock(), Reads()
    cache: SendCache[Send] = SendCache(0.3, clock=clock)
    cache.get("AK37WA", reads)
    clock.now += 1
    reading, release = threading.Event(), threading.Event()

    def slow_read() -> Send:
        reading.set()
        release.wait(10)
        return reads()

    refreshed: list[Send] = []
    refresher = threading.Thread(target=lambda: refreshed.append(cache.get("AK37WA", slow_read)))
    refresher.start()
    assert reading.wait(10)
    others = [cache.get("AK37WA", reads).number for _ in range(5)]   # not blocked, no read
    release.set()
    refresher.join(10)
    assert others == [1] * 5
    assert [s.number for s in refreshed] == [2] and reads.count == 2
    assert cache.get("AK37WA", reads).number == 2


def test_askers_of_a_class_never_read_wait_for_the_one_read():
    clock, reads = Clock(), Reads()
    cache: SendCache[Send] = SendCache(0.3, clock=clock)
    reading, release = threading.Event(), threading.Event()

    def slow_read() -> Send:
        reading.set()
        release.wait(10)
        return reads()

    got: list[int] = []
    first = threading.Thread(target=lambda: got.append(cache.get("AK37WA", slow_read).number))
    first.start()
    assert reading.wait(10)
    second = threading.Thread(target=lambda: got.append(cache.get("AK37WA", reads).number))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert got == [1, 1] and reads.count == 1


def test_past_max_keys_the_old_classes_are_dropped():
    clock, reads = Clock(), Reads()
    cache: SendCache[Send] = SendCache(0.3, clock=clock, max_keys=3)
    for code in ("A", "B", "C"):
        cache.get(code, reads)
    cache.get("D", reads)                                  # full: the others are dropped
    assert cache.get("D", reads).number == 4
    assert cache.get("A", reads).number == 5
