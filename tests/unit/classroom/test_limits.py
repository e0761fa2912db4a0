"""The join rate limit (workbench/classroom/limits.py): a class of 60 behind one NAT joins at
once, a script does not take 300 seats, memory stays bounded, and the address is the one the
proxy saw only when the app is told it runs behind one."""
from __future__ import annotations

import pytest

from workbench.classroom.limits import (BURST_SETTING, EVERY_SETTING, JOIN_BURST,
                                        JOIN_EVERY_SECONDS, TokenBucket, client_address, join_rate)
from workbench.classroom.store import PRESENT_SECONDS


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _joins_within(bucket: TokenBucket, key: str, seconds: float, clock: Clock, every: float) -> int:
    """How many joins one address gets in `seconds`, trying every `every` seconds."""
    end, admitted = clock.now + seconds, 0
    while clock.now < end:
        admitted += bucket.take(key) == 0.0
        clock.now += every
    return admitted


def test_a_class_of_60_behind_one_nat_joins_within_a_minute():
    clock = Clock()
    bucket = TokenBucket(JOIN_BURST, JOIN_EVERY_SECONDS, clock=clock)
    waits = [bucket.take("203.0.113.7") for _ in range(60)]            # all at once
    assert waits == [0.0] * 60
    retries = [bucket.take("203.0.113.7") for _ in range(JOIN_BURST - 60)]   # mistyped codes
    assert retries == [0.0] * (JOIN_BURST - 60) and JOIN_BURST - 60 >= 10
    assert bucket.take("203.0.113.7") == pytest.approx(JOIN_EVERY_SECONDS)   # then one per 2 s
    assert bucket.take("198.51.100.1") == 0.0                          # another school: its own


def test_a_script_holds_fewer_than_300_seats_while_seats_expire():
    clock = Clock()
    bucket = TokenBucket(JOIN_BURST, JOIN_EVERY_SECONDS, clock=clock)
    # A script joining ten times a second: the seats it holds at once are those taken within
    # the last PRESENT_SECONDS (older ones are away, freed).
    held = _joins_within(bucket, "203.0.113.7", PRESENT_SECONDS, clock, every=0.1)
    assert 160 <= held <= 175, held
    assert held < 300


def test_a_bucket_refills_after_a_pause():
    clock = Clock()
    bucket = TokenBucket(3, 10.0, clock=clock)
    assert [bucket.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take("a") == pytest.approx(10.0)
    clock.now += 9.9
    assert bucket.take("a") > 0
    clock.now += 30
    assert bucket.take("a") == 0.0


def test_memory_is_bounded_by_the_addresses_kept():
    clock = Clock()
    bucket = TokenBucket(2, 1.0, max_keys=100, clock=clock)
    for number in range(10_000):
        bucket.take(f"10.0.{number // 256}.{number % 256}")
    assert len(bucket) == 100


@pytest.mark.parametrize("peer, forwarded, behind, expected", [
    ("203.0.113.7", None, False, "203.0.113.7"),
    ("203.0.113.7", "1.2.3.4", False, "203.0.113.7"),          # not behind a proxy: ignored
    ("93.184.216.34", "1.2.3.4", True, "93.184.216.34"),       # a public peer is no proxy
    ("127.0.0.1", "9.9.9.9, 198.51.100.4", True, "198.51.100.4"),  # the last hop only
    ("172.18.0.3", "198.51.100.4", True, "198.51.100.4"),       # a compose network's proxy
    (None, "198.51.100.4", True, "198.51.100.4"),               # Streamlit's None: this machine
    ("127.0.0.1", "not an address", True, "127.0.0.1"),
    ("127.0.0.1", "198.51.100.4", False, "127.0.0.1"),
    (None, None, False, "local"),
])
def test_the_client_address(peer, forwarded, behind, expected):
    assert client_address(peer, forwarded, behind_proxy=behind) == expected


@pytest.mark.parametrize("environ, expected", [
    ({}, (JOIN_BURST, JOIN_EVERY_SECONDS)),
    ({BURST_SETTING: "200", EVERY_SETTING: "0.5"}, (200, 0.5)),
    ({BURST_SETTING: "lots", EVERY_SETTING: "-1"}, (JOIN_BURST, JOIN_EVERY_SECONDS)),
    ({BURST_SETTING: "0", EVERY_SETTING: "inf"}, (JOIN_BURST, JOIN_EVERY_SECONDS)),
])
def test_a_site_sets_its_own_rate_and_a_bad_setting_keeps_the_default(environ, expected):
    assert join_rate(environ) == expected
