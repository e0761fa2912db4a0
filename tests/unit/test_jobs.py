from workbench.common.jobs import LeaseLimiter, busy_message


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_capacity_is_enforced_and_renewal_keeps_a_slot():
    clock = Clock()
    limiter = LeaseLimiter(capacity=2, ttl=1.0, clock=clock)
    assert limiter.acquire("a") and limiter.acquire("b")
    assert not limiter.acquire("c")
    assert limiter.acquire("a"), "a holder renews its own lease"
    assert limiter.holders() == 2


def test_a_lease_that_is_not_renewed_frees_its_slot_within_ttl():
    clock = Clock()
    limiter = LeaseLimiter(capacity=1, ttl=1.0, clock=clock)
    assert limiter.acquire("closed-tab")
    clock.now = 0.99
    assert not limiter.acquire("other")
    clock.now = 1.0
    assert limiter.acquire("other")


def test_release_frees_at_once():
    limiter = LeaseLimiter(capacity=1)
    assert limiter.acquire("a")
    limiter.release("a")
    assert limiter.acquire("b")


def test_busy_message_names_the_capacity():
    assert "3 heavy jobs" in busy_message(LeaseLimiter(capacity=3))


def test_fair_share_gives_everyone_a_slice_that_shrinks_with_the_class():
    from workbench.common.jobs import FairShare

    clock = Clock()
    share = FairShare(cores=2, ttl=1.0, utilisation=0.5, minimum=0.001, clock=clock)
    assert share.slice_seconds("a", wanted=0.12, tick=0.3) == 0.12      # alone: all it wants
    for i in range(29):
        share.slice_seconds(f"learner-{i}", wanted=0.12, tick=0.3)
    assert share.active() == 30
    # 30 learners share 2 cores at half use: 0.3 s x 2 x 0.5 / 30 each, nobody refused.
    assert share.slice_seconds("a", wanted=0.12, tick=0.3) == 0.3 * 2 * 0.5 / 30
    clock.now = 1.0                          # 29 tabs closed: their leases lapse
    share.slice_seconds("a", wanted=0.12, tick=0.3)
    assert share.active() == 1
    share.release("a")
    assert share.active() == 0
    floored = FairShare(cores=2, minimum=0.05)
    for i in range(30):
        floored.slice_seconds(f"learner-{i}", wanted=0.12, tick=0.3)
    assert floored.slice_seconds("learner-0", wanted=0.12, tick=0.3) == 0.05


def test_run_slots_admit_capacity_runs_and_are_reentrant_per_thread():
    import threading

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
