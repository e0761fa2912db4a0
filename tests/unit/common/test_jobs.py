"""The process-wide scheduler every learner's CPU work shares, and the bound on page runs."""
import os
import sys
import threading
import time

import pytest

from workbench.common.jobs import JOB_NICENESS, SCHEDULER, FairScheduler


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _counting_job(counts, name, slices):
    def work(seconds):
        counts.append(name)
        # Long enough that the thread whose slice just ended is queued again before this one
        # ends, even on a busy machine.
        time.sleep(0.01)
        return counts.count(name) < slices
    return work


def test_every_learner_trains_and_turns_go_round_robin():
    scheduler = FairScheduler(cores=1, breath=0.0)
    order = []
    for name in "abc":
        scheduler.start(name, _counting_job(order, name, slices=20))
    assert scheduler.active() == 3, "nobody is refused"
    assert scheduler.wait_until_idle(10)
    assert sorted(order) == sorted("abc" * 20)
    # From the slice where the last thread has queued (a busy machine starts threads late) to
    # the first run's end, no learner gets a second slice before the others had one.
    all_queued = max(order.index(name) for name in "abc")
    first_done = min(len(order) - 1 - order[::-1].index(name) for name in "abc")
    rotation = order[all_queued + 1:first_done + 1]
    assert len(rotation) >= 30, order
    for i in range(len(rotation) - 2):
        assert sorted(rotation[i:i + 3]) == ["a", "b", "c"], rotation


def test_at_most_one_slice_per_core_runs_at_once():
    scheduler = FairScheduler(cores=2, breath=0.0)
    running, most = [0], [0]
    guard = threading.Lock()

    def work(seconds):
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.005)
        with guard:
            running[0] -= 1
        return True

    for i in range(6):
        scheduler.start(f"learner-{i}", work)
    time.sleep(0.3)
    for i in range(6):
        scheduler.stop(f"learner-{i}")
    assert scheduler.wait_until_idle(5)
    assert most[0] == 2


def test_a_lapsed_lease_stops_the_job_within_ttl():
    clock = Clock()
    scheduler = FairScheduler(cores=1, ttl=1.0, breath=0.0, clock=clock)
    slices = []
    scheduler.start("closed-tab", lambda seconds: slices.append(1) or True)
    while len(slices) < 3:
        time.sleep(0.001)
    assert scheduler.keep_alive("closed-tab")
    clock.now = 1.0                         # no frame renewed it: the tab is gone
    job = scheduler.job("closed-tab")
    assert job is not None and job.finished.wait(2)
    assert not scheduler.running("closed-tab") and not scheduler.keep_alive("closed-tab")


def test_stop_ends_the_job_before_its_next_slice():
    scheduler = FairScheduler(cores=1, breath=0.0)
    started = threading.Event()
    slices = []

    def work(seconds):
        slices.append(1)
        started.set()
        time.sleep(0.02)
        return True

    scheduler.start("a", work)
    assert started.wait(2)
    job = scheduler.job("a")
    scheduler.stop("a", wait=1.0)
    assert job.finished.is_set()
    done = len(slices)
    time.sleep(0.1)
    assert len(slices) == done


def test_a_one_off_turn_waits_behind_one_slice_of_each_job_not_for_the_jobs_to_end():
    scheduler = FairScheduler(cores=1, breath=0.0)
    for name in "ab":
        scheduler.start(name, lambda seconds: time.sleep(0.01) or True)
    time.sleep(0.05)
    waited = time.perf_counter()
    with scheduler.turn():
        waited = time.perf_counter() - waited
    for name in "ab":
        scheduler.stop(name)
    assert scheduler.wait_until_idle(5)
    # Not a timing assertion about speed: two slices of 10 ms cannot take seconds unless the
    # queue were unfair to the one-off.
    assert waited < 2.0


def test_a_failing_job_ends_and_its_error_is_kept_for_the_page():
    scheduler = FairScheduler(cores=1, breath=0.0)

    def work(seconds):
        raise RuntimeError("boom")

    scheduler.start("a", work)
    assert scheduler.wait_until_idle(5)
    error = scheduler.last_error("a")
    assert isinstance(error, RuntimeError) and str(error) == "boom"
    assert scheduler.last_error("a") is None, "told once"
    with scheduler.turn():                 # the core it held is free again
        pass


def test_starting_again_replaces_the_owners_job():
    scheduler = FairScheduler(cores=1, breath=0.0)
    first, second = [], []
    scheduler.start("a", lambda seconds: first.append(1) or True)
    time.sleep(0.02)
    scheduler.start("a", lambda seconds: second.append(1) or len(second) < 5)
    assert scheduler.wait_until_idle(5)
    assert len(second) == 5 and scheduler.active() == 0


def test_run_slots_admit_capacity_runs_and_are_reentrant_per_thread():
    from workbench.common.jobs import RunSlots

    slots = RunSlots(1)
    entered = threading.Event()
    with slots.run():
        with slots.run():                 # a fragment drawn inside its page's run
            pass
        other = threading.Thread(target=lambda: (slots.run().__enter__(), entered.set()))
        other.start()
        assert not entered.wait(0.2), "a second thread waits while the slot is held"
    assert entered.wait(5), "and runs once it is free"
    other.join()


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice is per thread on Linux only")
def test_jobs_run_at_a_lower_priority_than_the_page_runs_that_started_them():
    seen = []

    def work(seconds):
        seen.append(_nice())
        return False

    before = _nice()
    scheduler = FairScheduler(cores=1, breath=0.0, niceness=5)
    scheduler.start("a", work)
    assert scheduler.wait_until_idle(5)
    assert seen == [min(19, before + 5)]
    assert _nice() == before, "the thread that started the job keeps its priority"
    with scheduler.turn():      # a one-off turn runs in the caller's thread, at its priority
        assert _nice() == before
    assert SCHEDULER.niceness == JOB_NICENESS > 0


def _one_off_beside_a_trainer(breathing: bool) -> tuple[list[str], FairScheduler]:
    """A trainer plays while a one-off holds a turn for 40 pieces of work of 10 ms (clock time:
    a fake clock the one-off advances), calling breathe() between pieces if `breathing`."""
    from workbench.common.jobs import breathe

    clock = Clock()
    scheduler = FairScheduler(cores=1, breath=0.0, clock=clock, slice_seconds=0.025, one_off_slices=4)
    order: list[str] = []
    trained = threading.Event()

    def train(seconds):
        order.append("t")
        trained.set()
        time.sleep(0.002)
        return True

    scheduler.start("trainer", train)
    assert trained.wait(5)
    with scheduler.turn():
        for _ in range(40):
            order.append("o")
            time.sleep(0.002)       # real work takes real time: the trainer queues meanwhile
            clock.now += 0.01
            scheduler.keep_alive("trainer")
            if breathing:
                breathe()
    scheduler.stop("trainer", wait=2)
    return order, scheduler


def test_a_one_off_that_breathes_lets_the_training_run_between_its_slices():
    order, _ = _one_off_beside_a_trainer(breathing=True)
    during = order[order.index("o"):len(order) - order[::-1].index("o")]
    # 40 pieces of 10 ms in turns of 100 ms: a training slice after each of the first 3 turns
    # at least (the last turn may end before the trainer queued again).
    assert during.count("t") >= 3, during
    runs = "".join(during).split("t")
    assert max(len(run) for run in runs) <= 10 + 1, f"a one-off held the core too long: {runs}"


def test_without_breathing_a_one_off_holds_the_core_for_its_whole_turn():
    order, _ = _one_off_beside_a_trainer(breathing=False)
    during = order[order.index("o"):len(order) - order[::-1].index("o")]
    assert during.count("t") == 0, "the test above can fail: this is what it guards against"


def test_short_shared_work_never_waits_and_long_shared_work_queues_for_a_turn():
    from workbench.common.jobs import breathe

    clock = Clock()
    scheduler = FairScheduler(cores=1, breath=0.0, clock=clock, one_off_slices=4)
    holding, release = threading.Event(), threading.Event()

    def hold_the_core():
        with scheduler.turn():
            holding.set()
            release.wait(5)

    holder = threading.Thread(target=hold_the_core)
    holder.start()
    assert holding.wait(5)
    with scheduler.sharing():
        assert breathe() == 0.0, "a short program runs at once, whoever holds the core"
        clock.now += scheduler.one_off_seconds
        threading.Timer(0.05, release.set).start()
        assert breathe() > 0.0, "a long one waits for its turn like any one-off"
    holder.join(5)
    with scheduler.turn():      # and gave its turn back
        pass


def test_a_thread_waiting_for_a_turn_gives_its_page_run_slot_to_others():
    from workbench.common.jobs import RunSlots

    slots = RunSlots(1)
    scheduler = FairScheduler(cores=1, breath=0.0, while_waiting=slots.stepped_out)
    holding, release, queued, done = (threading.Event() for _ in range(4))

    def hold_the_core():
        with scheduler.turn():
            holding.set()
            release.wait(5)

    def page_run_with_a_worker_run():
        with slots.run():
            queued.set()
            with scheduler.turn():
                done.set()

    threading.Thread(target=hold_the_core).start()
    assert holding.wait(5)
    waiting = threading.Thread(target=page_run_with_a_worker_run)
    waiting.start()
    assert queued.wait(5)
    entered, leave = threading.Event(), threading.Event()

    def another_page_run():
        with slots.run():
            entered.set()
            leave.wait(5)

    other = threading.Thread(target=another_page_run)
    other.start()
    assert entered.wait(5), "another page ran while the worker run waited for its turn"
    leave.set()
    release.set()
    assert done.wait(5)
    waiting.join(5)
    other.join(5)


def test_a_paced_job_waits_outside_its_turn_and_stop_ends_the_wait():
    """A job answering a float waits that long before its next turn, without holding the core:
    a one-off gets the turn during a wait that would last a minute, and stop() ends it."""
    scheduler = FairScheduler(cores=1, breath=0.0)
    answered = threading.Event()

    def work(seconds):
        answered.set()
        return 60.0                  # the next step is due in a minute

    scheduler.start("paced", work)
    assert answered.wait(5)
    job = scheduler.job("paced")
    with scheduler.turn():           # would wait the minute if the wait held the turn
        assert scheduler.running("paced")
    scheduler.stop("paced", wait=5.0)
    assert job.finished.is_set(), "stop() ends a paced job's wait"
    assert job.slices == 1


def test_the_one_offs_under_way_share_one_hold_so_several_neighbours_weigh_as_one():
    scheduler = FairScheduler(cores=1, breath=0.0, clock=Clock(), one_off_slices=4)
    assert scheduler.one_off_hold() == scheduler.one_off_seconds
    inside, leave = threading.Event(), threading.Event()

    def neighbour():
        with scheduler.sharing():
            inside.set()
            leave.wait(5)

    other = threading.Thread(target=neighbour)
    other.start()
    assert inside.wait(5)
    with scheduler.turn():
        assert scheduler.one_off_hold() == scheduler.one_off_seconds / 2
        with scheduler.sharing():               # the same thread's nested block is one one-off
            assert scheduler.one_off_hold() == scheduler.one_off_seconds / 2
    assert scheduler.one_off_hold() == scheduler.one_off_seconds
    leave.set()
    other.join(5)
    assert scheduler.one_off_hold() == scheduler.one_off_seconds


def test_beside_a_second_one_off_a_one_off_queues_again_after_half_its_hold():
    """Turn-taking with a fake clock: a trainer queues; the one-off's breathe() keeps the core
    before half the hold and gives it up at half, because another one-off is under way."""
    from workbench.common.jobs import breathe

    clock = Clock()
    scheduler = FairScheduler(cores=1, breath=0.0, clock=clock, one_off_slices=4)
    inside, leave = threading.Event(), threading.Event()

    def neighbour():
        with scheduler.sharing():
            inside.set()
            leave.wait(5)

    other = threading.Thread(target=neighbour)
    other.start()
    assert inside.wait(5)
    trained = threading.Event()
    with scheduler.turn():
        scheduler.start("trainer", lambda seconds: trained.set() or False)
        while not scheduler._waiting:            # the trainer's thread queues for the core
            time.sleep(0.001)
        assert scheduler.one_off_hold() == scheduler.one_off_seconds / 2   # a job is no one-off
        clock.now += scheduler.one_off_seconds / 2 - 0.001
        assert breathe() == 0.0 and not trained.is_set()
        clock.now += 0.001
        breathe()                                 # half the hold: the trainer's turn first
        assert trained.is_set()
    leave.set()
    other.join(5)
    scheduler.wait_until_idle(5)


def test_a_one_off_waiting_on_another_process_lends_its_turn_and_takes_it_back_first():
    """Inside `lending()` the first trainer queued runs; after it, the one-off has the core
    again before the second trainer queued (ahead of the queue); with nobody queued, or within
    a training slice of getting the core, lending changes nothing."""
    from workbench.common.jobs import lending

    clock = Clock()
    scheduler = FairScheduler(cores=1, breath=0.0, clock=clock, one_off_slices=4)
    order: list[str] = []
    slices = threading.Semaphore(0)

    def trainer(name):
        def train(seconds):
            order.append(name)
            slices.release()
            time.sleep(0.005)   # long enough for the one-off to queue again, busy machine or not
            return order.count(name) < 20
        return train

    with scheduler.turn():
        with lending():                          # nobody queued: nothing to lend
            order.append("o-alone")
        scheduler.start("a", trainer("a"))
        while len(scheduler._waiting) < 1:
            time.sleep(0.001)
        scheduler.start("b", trainer("b"))
        while len(scheduler._waiting) < 2:
            time.sleep(0.001)
        with lending():                          # within a slice of its turn: not lent yet
            order.append("o-early")
        clock.now += scheduler.slice_seconds
        with lending():
            assert slices.acquire(timeout=5), "a trainer ran on the lent core"
            order.append("o-waited")
        order.append("o-back")                   # the core is the one-off's again, b still waits
        with lending():                          # just taken back: its own slice first
            order.append("o-own")
    scheduler.stop("a", wait=2)
    scheduler.stop("b", wait=2)
    assert order[:6] == ["o-alone", "o-early", "a", "o-waited", "o-back", "o-own"], order


def test_lending_outside_a_turn_does_nothing():
    from workbench.common.jobs import lending

    scheduler = FairScheduler(cores=1, breath=0.0)
    with lending(), scheduler.lending():
        pass
    with scheduler.turn():                       # the core is free: nothing was taken
        pass
