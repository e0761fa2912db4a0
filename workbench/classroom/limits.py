"""How fast one client address may join classes: a token bucket per address, in bounded memory.

Why these numbers: a real class sits behind one school NAT, so sixty learners join from one
address within a minute or two; a script opening sessions from one address must not take a
class's 300 seats. A bucket of JOIN_BURST = 80 lets a whole class of 60 join at once with room
for twenty retries (a mistyped code costs a token too; bench/class.py joins 60 at once); it
refills one join every JOIN_EVERY_SECONDS = 2 s (30 a minute), so a second class in the same
building soon finds room again, while a script gets 80 seats at once and then one every 2 s:
with seats away after 180 s without a heartbeat (store.PRESENT_SECONDS), a script that closes
its sessions holds at most 80 + 90 = 170 seats at any moment, never the class's 300, and a
script that keeps them open still takes more than 7 minutes to fill a class (the teacher sees
it on the roster and closes joining). One session makes at most JOINS_PER_SESSION attempts.

The address: Streamlit's own peer address; behind a reverse proxy every peer is the proxy, so
only when the app is told it runs behind one (WORKBENCH_BEHIND_PROXY=1, deploy/compose.yaml) and
the direct peer is a loopback or private address does X-Forwarded-For count, and then only its
last hop: the address the proxy itself saw (earlier hops are whatever the client wrote).

Pure Python, no Streamlit: the clock is injectable, so the tests step time instead of waiting.
"""
from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

JOIN_BURST = 80
JOIN_EVERY_SECONDS = 2.0
JOINS_PER_SESSION = 10
MAX_ADDRESSES = 10_000           # about 1 MB at most; the least recently seen address is forgotten
BEHIND_PROXY_SETTING = "WORKBENCH_BEHIND_PROXY"
# A server's own rate, for a site whose classes differ (a lecture of 200 behind one address) and
# for the Chromium scenario, which fills a small bucket instead of 60 seats.
BURST_SETTING = "WORKBENCH_JOIN_BURST"
EVERY_SETTING = "WORKBENCH_JOIN_EVERY_SECONDS"


class TokenBucket:
    """`burst` tokens per key, one more every `every` seconds; at most `max_keys` keys kept (a
    key forgotten comes back with a full bucket, which is also where an idle key would be)."""

    def __init__(self, burst: int, every: float, *, max_keys: int = MAX_ADDRESSES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst, self.every, self.max_keys, self.clock = burst, every, max_keys, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()   # key -> tokens, when
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """Take one token for `key`: 0.0 if there was one, else the seconds until there is."""
        with self._lock:
            now = self.clock()
            tokens, when = self._buckets.pop(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - when) / self.every)
            if tokens >= 1:
                tokens -= 1
                wait = 0.0
            else:
                wait = (1 - tokens) * self.every
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
            return wait

    def __len__(self) -> int:
        return len(self._buckets)


def join_rate(environ: Mapping[str, str]) -> tuple[int, float]:
    """(burst, every) from the settings, the defaults where one is unset or not a positive number."""
    try:
        burst = int(environ.get(BURST_SETTING) or JOIN_BURST)
    except ValueError:
        burst = JOIN_BURST
    try:
        every = float(environ.get(EVERY_SETTING) or JOIN_EVERY_SECONDS)
    except ValueError:
        every = JOIN_EVERY_SECONDS
    return (burst if burst > 0 else JOIN_BURST,
            every if 0 < every < float("inf") else JOIN_EVERY_SECONDS)


def _is_proxy(address: str | None) -> bool:
    if not address:                  # Streamlit gives None for a peer on this machine
        return True
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return parsed.is_loopback or parsed.is_private


def client_address(peer: str | None, forwarded_for: str | None, *, behind_proxy: bool) -> str:
    """The address a join is counted against (see the module's docstring)."""
    if behind_proxy and _is_proxy(peer) and forwarded_for:
        last_hop = forwarded_for.split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(last_hop))
        except ValueError:
            pass                     # not an address: count it against the proxy's own
    return peer or "local"


def wait_message(seconds: float) -> str:
    return (f"Many learners joined from your network just now. Wait {max(1, round(seconds))} "
            "seconds and try again: your place is not lost.")
