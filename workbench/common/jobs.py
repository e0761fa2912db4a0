"""Process-wide scheduling: the CPU work learners start (live training, DataLoader worker runs,
pitfall-lab trainings, long typed programs) shared fairly among them, and a bound on page runs
at once."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field


@dataclass
class _Job:
    owner: str
    work: Callable[[float], bool | float]
    expires: float
    stopped: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    slices: int = 0


@dataclass
class _Held:
    """What `breathe()` needs of the turn (or the would-be turn) the calling thread is in."""

    scheduler: FairScheduler
    since: float            # when the thread last got the core (or began sharing without it)
    holding: bool           # False while `sharing` work has not needed a turn yet
    back_at: float = 0.0    # when it last took the core back after lending it


_thread = threading.local()


@dataclass
class Lent:
    waited: float = 0.0     # seconds spent taking the core back after the block


def lending() -> AbstractContextManager[Lent]:
    """`FairScheduler.lending` of the scheduler whose turn the calling thread holds (a no-op
    outside one): for a one-off's waits on other processes."""
    held: _Held | None = getattr(_thread, "held", None)
    return contextlib.nullcontext(Lent()) if held is None else held.scheduler.lending()


def breathe() -> float:
    """A point in long work done for one learner (a typed program's statements, a DataLoader
    run's batches, a pitfall-lab step) where the others get their share: once the calling
    thread has held the core for a one-off's slice and someone is waiting, it queues again at
    the back. Outside `turn`/`sharing` it does nothing. Returns the seconds spent waiting, so a
    deadline can count only the work's own time."""
    held: _Held | None = getattr(_thread, "held", None)
    return 0.0 if held is None else held.scheduler._breathe(held)


class FairScheduler:
    """CPU work from every learner at once, in short slices, round robin, one slice per core.

    Nobody is refused: a class of 30 pressing Play on a 2-core server all train, each at about
    2/30 of the machine. Two kinds of work share the queue:

    - a *repeating job* (`start`): live training. Its own thread takes a turn, runs one slice
      of `slice_seconds` (`work(seconds)` returns whether there is more to do), and queues
      again at the back. The page renews its lease (`keep_alive`) on every frame; a job whose
      lease lapses (closed tab, another page) stops before its next slice, within `ttl`.
    - a *one-off* (`turn`, or `sharing` for work that is usually short): a DataLoader worker
      run, a pitfall-lab training or a long typed program runs in the caller's thread. The
      one-offs under way hold the core for `one_off_slices` training slices per round between
      them (`one_off_hold`: each holds that over how many there are), and at each `breathe()`
      past its hold one queues again at the back: neighbours' heavy pages, however many, slow
      every trainer by at most that weight, never stop them.

    Turns are handed over first come, first served, so no learner waits behind more than one
    slice of each other learner. A thread waiting for a turn steps out of its page-run slot
    (`while_waiting`), so queued one-offs never keep other pages from running. This lives in a
    plain module, not in `st.cache_resource`, because any visitor can clear Streamlit's caches.
    """

    def __init__(self, cores: int, slice_seconds: float = 0.025, ttl: float = 1.8,
                 breath: float = 0.0005, clock: Callable[[], float] = time.monotonic,
                 niceness: int = 0, one_off_slices: int = 4,
                 while_waiting: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext
                 ) -> None:
        self.cores, self.slice_seconds, self.ttl, self.clock = cores, slice_seconds, ttl, clock
        self.breath, self.niceness = breath, niceness
        self.one_off_seconds = slice_seconds * one_off_slices
        self.while_waiting = while_waiting
        self._lock = threading.Lock()
        self._busy = 0
        self._waiting: deque[threading.Event] = deque()
        self._jobs: dict[str, _Job] = {}
        self._errors: dict[str, BaseException] = {}
        self._one_offs = 0          # threads inside a one-off (turn or sharing) now

    # -- turns ---------------------------------------------------------------------------------
    def _acquire(self, first: bool = False) -> float:
        """Wait for a core (`first`: ahead of everyone queued); the seconds waited."""
        with self._lock:
            if self._busy < self.cores and not self._waiting:
                self._busy += 1
                return 0.0
            handed_over = threading.Event()
            if first:
                self._waiting.appendleft(handed_over)
            else:
                self._waiting.append(handed_over)
        started = time.monotonic()
        with self.while_waiting():
            handed_over.wait()          # the releaser hands its core over: _busy already counts it
        return time.monotonic() - started

    def _release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._busy -= 1

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """Wait for a core (first come, first served), hold it for the block; `breathe()` inside
        shares it. Re-entrant: a turn inside the thread's own turn or `sharing` block is that."""
        with self._one_off(take_now=True):
            yield

    @contextlib.contextmanager
    def sharing(self) -> Iterator[None]:
        """Page work that is usually short (a typed program): it runs at once, without a turn;
        only once it has run for a one-off's slice does its next `breathe()` queue for one."""
        with self._one_off(take_now=False):
            yield

    @contextlib.contextmanager
    def _one_off(self, take_now: bool, counted: bool = True) -> Iterator[None]:
        """A turn (`take_now`) or a share in the caller's thread; `counted`: a one-off, whose
        hold the one-offs under way share (a repeating job's turn is not one)."""
        outer: _Held | None = getattr(_thread, "held", None)
        if outer is not None and outer.scheduler is self:
            if take_now and not outer.holding:
                self._acquire()
                outer.holding, outer.since = True, self.clock()
            yield
            return
        with self._lock:
            self._one_offs += counted
        try:
            if take_now:
                self._acquire()
            held = _Held(self, self.clock(), holding=take_now)
            _thread.held = held
            try:
                yield
            finally:
                _thread.held = outer
                if held.holding:
                    self._release()
        finally:
            with self._lock:
                self._one_offs -= counted

    @contextlib.contextmanager
    def lending(self) -> Iterator[Lent]:
        """A one-off that blocks on another process (a DataLoader run waiting for its workers
        to start or for their next batch) lends its core for the block: the first thread
        queued runs meanwhile, and this one takes the core back ahead of the queue after (the
        seconds that took: `Lent.waited`, set as the block ends). The lent time counts toward
        its hold. Held through such waits, a turn kept the trainers waiting on an idle core for
        as long as the workers took. Outside a held turn, with nobody queued, or within a
        training slice of having taken the core back (so that each lent slice buys the one-off
        at least a slice of its own work, not one batch), it does nothing."""
        lent = Lent()
        held: _Held | None = getattr(_thread, "held", None)
        if held is None or held.scheduler is not self or not held.holding:
            yield lent
            return
        with self._lock:
            nobody_waits = not self._waiting
        if nobody_waits or self.clock() - max(held.since, held.back_at) < self.slice_seconds:
            yield lent
            return
        self._release()
        held.holding = False
        try:
            yield lent
        finally:
            lent.waited = self._acquire(first=True)
            held.holding, held.back_at = True, self.clock()

    def one_off_hold(self) -> float:
        """How long a one-off holds the core before its next `breathe()` queues it again: the
        one-offs' weight, `one_off_slices` training slices a round, shared among those under
        way. Two tabs looping DataLoader worker runs each held four slices, and ten trainers
        kept 10/18 of their pace instead of the 10/14 one neighbour leaves them."""
        with self._lock:
            return self.one_off_seconds / max(1, self._one_offs)

    def _breathe(self, held: _Held) -> float:
        now = self.clock()
        if now - held.since < self.one_off_hold():
            return 0.0
        if held.holding:
            with self._lock:
                nobody_waits = not self._waiting
            if nobody_waits:
                held.since = now
                return 0.0
            self._release()             # to the first in the queue; this thread queues behind all
        waited = self._acquire()
        held.holding, held.since = True, self.clock()
        return waited

    # -- repeating jobs ------------------------------------------------------------------------
    def start(self, owner: str, work: Callable[[float], bool | float]) -> None:
        """Run `work(slice_seconds)` again and again, fairly, until it returns False, `stop` is
        called or the lease lapses; a float it returns is a wait, in seconds, before its next
        turn (a paced run between its steps). Replaces `owner`'s previous job."""
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
                with self._one_off(take_now=True, counted=False):
                    if job.stopped.is_set() or self.clock() >= job.expires:
                        break
                    more = job.work(self.slice_seconds)
                    job.slices += 1
                if not more:
                    break
                # A paced job answers with the seconds until its next step is due: it waits
                # outside its turn, so the core goes to the others meanwhile.
                if type(more) is float and more > self.breath:
                    job.stopped.wait(more)
                else:
                    # A breath between slices: the GIL goes to the page runs and the server's
                    # event loop, which would otherwise wait for the interpreter's 5 ms switch
                    # interval.
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

    def owners(self) -> list[str]:
        """Whose repeating jobs run now."""
        with self._lock:
            return list(self._jobs)

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
        self._count_lock = threading.Lock()
        self._running = 0               # runs inside `run` now, holding a slot or waiting for one

    def running(self) -> int:
        """How many page or fragment runs are under way (the warm-up yields to them)."""
        return self._running

    @contextlib.contextmanager
    def stepped_out(self) -> Iterator[None]:
        """Give the calling thread's slot back for the block (while it waits for something
        else, such as a scheduler turn), and take one again after it."""
        if getattr(self._held, "depth", 0) == 0:
            yield
            return
        self._slots.release()
        try:
            yield
        finally:
            self._slots.acquire()

    @contextlib.contextmanager
    def run(self) -> Iterator[None]:
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            with self._count_lock:
                self._running += 1
            self._slots.acquire()
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth
            if depth == 0:
                self._slots.release()
                with self._count_lock:
                    self._running -= 1


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
#
# The one-offs under way hold the core for four training slices (100 ms) a round between them,
# then queue again: with ten learners training, neighbours' DataLoader runs or typed programs,
# one or several, take about 4/14 of the core and each trainer keeps about 10/14 of its pace
# (bench/hostile_neighbour.py).
SCHEDULER = FairScheduler(cores=1, niceness=JOB_NICENESS, one_off_slices=4,
                          while_waiting=SCRIPT_RUNS.stepped_out)
