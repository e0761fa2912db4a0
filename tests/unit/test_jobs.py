from workbench.jobs import LeaseLimiter, busy_message


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
