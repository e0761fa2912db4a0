"""Process-wide scheduling: the CPU work learners start (live training, DataLoader worker runs,
pitfall-lab trainings) shared fairly among them, and a bound on page runs at once."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass
class _Job:
    owner: str
    work: Callable[[float], bool]
    expires: float
    stopped: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    slices: int = 0


class FairScheduler:
    """CPU work from every learner at once, in short slices, round robin, one slice per core.

    Nobody is refused: a class of 30 pressing Play on a 2-core server all train, each at about
    2/30 of the machine. Two kinds of work share the queue:

    - a *repeating job* (`start`): live training. Its own thread takes a turn, runs one slice
      of `slice_seconds` (`work(seconds)` returns whether there is more to do), and queues
      again at the back. The page renews its lease (`keep_alive`) on every frame; a job whose
      lease lapses (closed tab, another page) stops before its next slice, within `ttl`.
    - a *one-off* (`turn`): a DataLoader worker run or a pitfall-lab training waits for its turn
      in the same queue and then runs in the caller's thread.

    Turns are handed over first come, first served, so no learner waits behind more than one
    slice of each other learner. This lives in a plain module, not in `st.cache_resource`,
    because any visitor can clear Streamlit's caches.
    """

    def __init__(self, cores: int, slice_seconds: float = 0.025, ttl: float = 1.8,
                 breath: float = 0.0005, clock: Callable[[], float] = time.monotonic,
                 niceness: int = 0) -> None:
        self.cores, self.slice_seconds, self.ttl, self.clock = cores, slice_seconds, ttl, clock
        self.breath, self.niceness = breath, niceness
        self._lock = threading.Lock()
        self._busy = 0
        self._waiting: deque[threading.Event] = deque()
        self._jobs: dict[str, _Job] = {}
        self._errors: dict[str, BaseException] = {}

    # -- turns ---------------------------------------------------------------------------------
    def _acquire(self) -> None:
        with self._lock:
            if self._busy < self.cores and not self._waiting:
                self._busy += 1
                return
            handed_over = threading.Event()
            self._waiting.append(handed_over)
        handed_over.wait()              # the releaser hands its core over: _busy already counts it

    def _release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._busy -= 1

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """Wait for a core (first come, first served), hold it for the block."""
        self._acquire()
        try:
            yield
        finally:
            self._release()

    # -- repeating jobs ------------------------------------------------------------------------
    def start(self, owner: str, work: Callable[[float], bool]) -> None:
        """Run `work(slice_seconds)` again and again, fairly, until it returns False, `stop` is
        called or the lease lapses. Replaces `owner`'s previous job."""
        job = _Job(owner, work, self.clock() + self.ttl)
        with self._lock:
            previous = self._jobs.get(owner)
            self._jobs[owner] = job
        if previous is not None:
            previous.stopped.set()
        threading.Thread(target=self._loop, args=(job,), name=f"train-{owner[:8]}",
                         daemon=True).start()

    def _loop(self, job: _Job) -> None:
        lower_priority(self.niceness)
        try:
            while not job.stopped.is_set():
                with self.turn():
                    if job.stopped.is_set() or self.clock() >= job.expires:
                        break
                    more = job.work(self.slice_seconds)
                    job.slices += 1
                if not more:
                    break
                # A breath between slices: the GIL goes to the page runs and the server's event
                # loop, which would otherwise wait for the interpreter's 5 ms switch interval.
                time.sleep(self.breath)
        except BaseException as exc:      # kept for the page to explain; the thread just ends
            job.error = exc
        finally:
            job.finished.set()
            with self._lock:
                if self._jobs.get(job.owner) is job:
                    del self._jobs[job.owner]
                    if job.error is not None:
                        self._errors[job.owner] = job.error

    def keep_alive(self, owner: str) -> bool:
        """Renew `owner`'s lease; whether its job is still running."""
        with self._lock:
            job = self._jobs.get(owner)
            if job is None:
                return False
            job.expires = self.clock() + self.ttl
            return True

    def running(self, owner: str) -> bool:
        with self._lock:
            return owner in self._jobs

    def job(self, owner: str) -> _Job | None:
        with self._lock:
            return self._jobs.get(owner)

    def last_error(self, owner: str) -> BaseException | None:
        """What ended `owner`'s last job, if it failed (asked once: the answer is forgotten)."""
        with self._lock:
            return self._errors.pop(owner, None)

    def stop(self, owner: str, wait: float = 0.0) -> None:
        """Stop `owner`'s job before its next slice (waiting up to `wait` s for the current one)."""
        with self._lock:
            job = self._jobs.pop(owner, None)
        if job is not None:
            job.stopped.set()
            if wait:
                job.finished.wait(wait)

    def active(self) -> int:
        with self._lock:
            return len(self._jobs)

    def wait_until_idle(self, timeout: float) -> bool:
        """Wait until no repeating job runs (for tests and benchmarks); False on timeout."""
        deadline = self.clock() + timeout
        while True:
            with self._lock:
                jobs = list(self._jobs.values())
            if not jobs:
                return True
            for job in jobs:
                if not job.finished.wait(max(0.0, deadline - self.clock())):
                    return False


def lower_priority(niceness: int) -> None:
    """Lower the calling thread's CPU priority by `niceness` (on Linux, where nice is per
    thread). Raising one's own nice needs no privilege, and a thread cannot lower it again:
    only threads that do nothing else call this."""
    if niceness <= 0 or not sys.platform.startswith("linux"):
        return
    thread = threading.get_native_id()
    with contextlib.suppress(OSError):      # a sandbox that forbids it: the thread keeps its priority
        now = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, now + niceness))


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
# One slice at a time, not one per core: a training slice is Python holding the GIL most of
# the time, so two at once run no faster together and lose about 40% to the handovers
# (measured: three preset runs took 6.8 s one at a time, 9.5 s two at a time). DataLoader worker
# runs take the same turns; their worker processes use the other cores.
#
# The training threads run 10 nice levels below the rest of the server: a page run (Pause, a
# setting), the frame route and the websockets take the CPU as soon as they need it, and
# training gets all that is left, so a class training at once never makes the page slow to
# answer. Among themselves the training threads are equal, and the turns keep them fair.
JOB_NICENESS = 10
SCHEDULER = FairScheduler(cores=1, niceness=JOB_NICENESS)
