"""The class store (workbench/classroom/) against SQLite and PostgreSQL: the same tests on both.

The PostgreSQL runs start a throwaway server (harness/postgres.py), so they carry the `spawns`
marker: `make check` runs the SQLite half, `make test` both.
"""
from __future__ import annotations

import pytest
from sqlalchemy import func, select, text

from workbench.classroom import codes, names
from workbench.classroom.schema import (LATEST, METADATA, MIGRATIONS, answers, classes, members, migrate,
                                        schema_version)
from workbench.classroom.store import (DEFAULT_CHALLENGE_DATA, IDLE_EXPIRY_SECONDS, MAX_ANSWERS_WRITTEN,
                                       MAX_RUNS_PER_MEMBER,
                                       ChallengeBoard, ClassError, ClassStore, ReplayedAnswer, RunEntry,
                                       StoreUnavailable)

OPTIONS = ("(2, 3)", "(3, 2)", "(6,)")


def _rows(store: ClassStore, table) -> int:
    with store.engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(table)).scalar_one()


def _snapshot(store: ClassStore) -> dict[str, list]:
    with store.engine.connect() as connection:
        return {t.name: sorted(map(tuple, connection.execute(select(t)).all()), key=repr)
                for t in (classes, members, answers)}


# --- codes, keys and names ----------------------------------------------------------------------
def test_codes_avoid_characters_people_confuse():
    for _ in range(200):
        code = codes.new_code()
        assert len(code) == codes.CODE_LENGTH
        assert not set(code) & set("0O1IL2Z5S8BUVQD")
    assert codes.normalise_code("AK37WAX") is None          # one too many
    assert codes.normalise_code("ak3-7wa") == "AK37WA"
    assert codes.normalise_code("AK37W0") is None


def test_nicknames_are_cleaned_of_controls():
    assert codes.clean_nickname("  Ada\u202e  Lovelace\u200b ") == "Ada Lovelace"
    assert codes.clean_nickname("<b>x</b>") == "bxb"


# --- starting, finding, ending ---------------------------------------------------------------
def test_a_started_class_is_found_and_its_key_stored_only_as_a_digest(store):
    started = store.start_class()
    view = store.find_class(started.code.lower())
    assert view.code == started.code and view.members == 0 and view.send.number == 0
    with store.engine.connect() as connection:
        stored = connection.execute(select(classes.c.teacher_key_digest)).scalar_one()
    assert stored == codes.digest(started.teacher_key) and started.teacher_key not in stored
    assert store.check_teacher(started.code, started.teacher_key) == started.code


def test_the_schema_is_versioned_and_migrating_again_changes_nothing(store):
    store.start_class()
    assert migrate(store.engine) == LATEST
    with store.engine.connect() as connection:
        assert connection.execute(select(schema_version.c.version)).scalars().all() == [LATEST]
    assert _rows(store, classes) == 1


@pytest.mark.parametrize("code", ["AAAAAA", "", "0O1IL", "x" * 10_000, "'; DROP TABLE classes; --"])
def test_an_unknown_or_malformed_class_gets_a_clear_message_and_changes_nothing(store, code):
    store.start_class()
    before = _snapshot(store)
    with pytest.raises(ClassError, match="class code|no class"):
        store.join(code, "Ada")
    with pytest.raises(ClassError):
        store.find_class(code)
    assert _snapshot(store) == before


def test_a_forged_teacher_key_gets_a_clear_message_and_changes_nothing(store):
    started = store.start_class()
    learner = store.join(started.code, "Ada")
    store.record_answer(started.code, learner.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    before = _snapshot(store)
    for forged in ("", "x" * 10_000, learner.token, codes.new_secret(),
                   codes.digest(started.teacher_key)):
        with pytest.raises(ClassError, match="teacher key does not open"):
            store.tallies(started.code, forged)
        with pytest.raises(ClassError, match="teacher key does not open"):
            store.send(started.code, forged, "/lessons", "Lesson")
        with pytest.raises(ClassError, match="teacher key does not open"):
            store.set_revealed(started.code, forged, "tensor_shape", True)
        with pytest.raises(ClassError, match="teacher key does not open"):
            store.end_class(started.code, forged)
    assert _snapshot(store) == before


def test_a_teacher_key_opens_only_its_own_class(store):
    first, second = store.start_class(), store.start_class()
    learner = store.join(second.code)
    store.record_answer(second.code, learner.token, "tensor_shape", OPTIONS[1], OPTIONS, 1)
    with pytest.raises(ClassError, match="does not open"):
        store.tallies(second.code, first.teacher_key)
    assert store.tallies(first.code, first.teacher_key) == []


def test_ending_a_class_deletes_its_data_and_its_code_is_then_unknown(store):
    started, other = store.start_class(), store.start_class()
    learner = store.join(started.code, "Ada")
    store.record_answer(started.code, learner.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    store.join(other.code)
    store.end_class(started.code, started.teacher_key)
    with pytest.raises(ClassError, match=f"no class {started.code}"):
        store.find_class(started.code)
    assert _rows(store, answers) == 0 and _rows(store, members) == 1 and _rows(store, classes) == 1


def test_a_class_expires_after_a_day_without_activity(store):
    clock = store.clock_for_test
    idle, busy = store.start_class(), store.start_class()
    clock.now += IDLE_EXPIRY_SECONDS - 10
    store.join(busy.code)                            # activity keeps `busy` alive
    clock.now += 20
    with pytest.raises(ClassError, match="after a day without activity"):
        store.find_class(idle.code)
    assert store.find_class(busy.code).members == 1
    assert store.expire_idle() == 1                  # unknown at once; the sweep deletes its data
    assert _rows(store, classes) == 1
    clock.now += IDLE_EXPIRY_SECONDS + 1
    store.expire_idle()
    assert _rows(store, classes) == 0


# --- members ----------------------------------------------------------------------------------
def test_a_learner_joins_with_a_nickname_or_an_anonymous_name(store):
    started = store.start_class()
    named = store.join(started.code, "  Ada  ")
    anonymous = store.join(started.code, "")
    assert named.nickname == "Ada"
    adjective, animal = anonymous.nickname.split()
    assert adjective in names.ADJECTIVES and animal in names.ANIMALS
    assert store.find_class(started.code).members == 2
    assert store.rename(started.code, anonymous.token, "Grace") == "Grace"


def test_a_10000_character_nickname_gets_a_clear_message_and_changes_nothing(store):
    started = store.start_class()
    learner = store.join(started.code, "Ada")
    before = _snapshot(store)
    for name in ("x" * 10_000, "y" * (codes.NICKNAME_MAX + 1)):
        with pytest.raises(ClassError, match=f"at most {codes.NICKNAME_MAX} characters"):
            store.join(started.code, name)
        with pytest.raises(ClassError, match=f"at most {codes.NICKNAME_MAX} characters"):
            store.rename(started.code, learner.token, name)
    assert _snapshot(store) == before


def test_a_learner_back_after_a_reload_resumes_the_same_seat_and_numbers_above_their_answers(store):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    assert store.resume(started.code, ada.token) == (ada, 0)
    store.record_answer(started.code, ada.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    store.record_answer(started.code, ada.token, "other_check", "yes", ("yes", "no"), 4)
    resumed, last_sequence = store.resume(started.code.lower(), ada.token)
    assert resumed == ada and last_sequence == 4
    assert store.find_class(started.code).members == 1           # counted once, not twice
    # The new session numbers above 4: its answer replaces the old one, not a replay.
    store.record_answer(started.code, ada.token, "tensor_shape", OPTIONS[2], OPTIONS,
                        last_sequence + 1)
    tally = {t.check_key: t for t in store.tallies(started.code, started.teacher_key)}
    assert tally["tensor_shape"].counts == {OPTIONS[2]: 1}


# What a token that is no member must not do: answer for someone, or resume their seat.
AS_A_MEMBER = {
    "answer": lambda store, code, token: store.record_answer(code, token, "tensor_shape",
                                                             OPTIONS[0], OPTIONS, 1),
    "resume": lambda store, code, token: store.resume(code, token),
}


@pytest.mark.parametrize("action", list(AS_A_MEMBER))
def test_a_token_that_is_no_member_answers_or_resumes_nothing(store, action):
    """A made-up token, none, a member's token in another class, and the digest the database
    keeps instead of the token: each refused, nothing changed."""
    act = AS_A_MEMBER[action]
    started, other = store.start_class(), store.start_class()
    ada = store.join(started.code)
    before = _snapshot(store)
    for code, token in ((started.code, codes.new_secret()), (started.code, ""),
                        (other.code, ada.token), (started.code, codes.digest(ada.token))):
        with pytest.raises(ClassError, match="not in class"):
            act(store, code, token)
    assert _snapshot(store) == before
    store.leave(started.code, ada.token)                   # and after leaving, neither
    with pytest.raises(ClassError, match="not in class"):
        act(store, started.code, ada.token)


def test_leaving_takes_the_learners_answers_with_them(store):
    started = store.start_class()
    learner = store.join(started.code)
    store.record_answer(started.code, learner.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    store.leave(started.code, learner.token)
    store.leave(started.code, learner.token)         # twice: nothing left to do
    assert store.find_class(started.code).members == 0
    assert store.tallies(started.code, started.teacher_key) == []


# --- answers ----------------------------------------------------------------------------------
def test_the_board_counts_one_answer_per_learner_and_check(store):
    started = store.start_class()
    ada, bob, cy = (store.join(started.code, n) for n in ("Ada", "Bob", "Cy"))
    store.record_answer(started.code, ada.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    store.record_answer(started.code, bob.token, "tensor_shape", OPTIONS[1], OPTIONS, 1)
    store.record_answer(started.code, cy.token, "tensor_shape", OPTIONS[1], OPTIONS, 1)
    store.record_answer(started.code, ada.token, "tensor_shape", OPTIONS[2], OPTIONS, 2)  # replaces
    store.clock_for_test.now += 1
    store.record_answer(started.code, cy.token, "other_check", "yes", ("yes", "no"), 2)
    tallies = store.tallies(started.code, started.teacher_key)
    # The most answered first, not the latest answered (one learner cannot push it down).
    assert [t.check_key for t in tallies] == ["tensor_shape", "other_check"]
    assert tallies[0].answered == 3 and tallies[0].counts == {OPTIONS[1]: 2, OPTIONS[2]: 1}
    assert tallies[1].answered == 1 and not tallies[0].revealed
    store.set_revealed(started.code, started.teacher_key, "tensor_shape", True)
    assert [t.revealed for t in store.tallies(started.code, started.teacher_key)] == [True, False]
    store.set_revealed(started.code, started.teacher_key, "tensor_shape", False)
    assert [t.revealed for t in store.tallies(started.code, started.teacher_key)] == [False, False]


def test_a_replayed_answer_gets_a_clear_message_and_changes_nothing(store):
    started = store.start_class()
    learner = store.join(started.code)
    store.record_answer(started.code, learner.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    store.record_answer(started.code, learner.token, "tensor_shape", OPTIONS[1], OPTIONS, 2)
    before = _snapshot(store)
    for option, sequence in ((OPTIONS[1], 2), (OPTIONS[0], 1), (OPTIONS[2], 2)):
        with pytest.raises(ReplayedAnswer, match="recorded already"):
            store.record_answer(started.code, learner.token, "tensor_shape", option, OPTIONS, sequence)
    assert _snapshot(store) == before
    assert store.tallies(started.code, started.teacher_key)[0].counts == {OPTIONS[1]: 1}


@pytest.mark.parametrize("check_key,option,sequence,message", [
    ("tensor_shape", "(9, 9)", 1, "not one of the check's options"),
    ("Robert'); DROP TABLE answers;--", OPTIONS[0], 1, "not a knowledge check"),
    ("tensor_shape", OPTIONS[0], 0, "sequence"),
])
def test_an_invalid_answer_gets_a_clear_message_and_changes_nothing(store, check_key, option,
                                                                     sequence, message):
    started = store.start_class()
    learner = store.join(started.code)
    before = _snapshot(store)
    with pytest.raises(ClassError, match=message):
        store.record_answer(started.code, learner.token, check_key, option, OPTIONS, sequence)
    assert _snapshot(store) == before


def test_1000_answers_from_one_session_stop_at_the_bound_and_change_nothing_after(store):
    started = store.start_class()
    flooder, other = store.join(started.code), store.join(started.code)
    store.record_answer(started.code, other.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    refused = 0
    for sequence in range(1, 1001):
        try:
            store.record_answer(started.code, flooder.token, "tensor_shape",
                                OPTIONS[sequence % 3], OPTIONS, sequence)
        except ClassError as exc:
            assert f"sent {MAX_ANSWERS_WRITTEN} answers" in str(exc)
            refused += 1
            if refused == 1:
                before = _snapshot(store)
    assert refused == 1000 - MAX_ANSWERS_WRITTEN
    assert _snapshot(store) == before
    counts = store.tallies(started.code, started.teacher_key)[0].counts
    assert sum(counts.values()) == 2                     # the flooder still counts once


# --- the send and posted runs -------------------------------------------------------------------
def test_a_send_is_numbered_and_only_to_a_page_of_this_app(store):
    started = store.start_class()
    assert store.current_send(started.code).number == 0
    first = store.send(started.code, started.teacher_key, "/lessons?lesson=tensors&step=2", "Step 2")
    second = store.send(started.code, started.teacher_key, "/moons_trainer?lr=0.1", "Moons")
    assert (first.number, second.number) == (1, 2)
    assert store.current_send(started.code) == second
    for link in ("https://evil.example/", "//evil.example/x", "javascript:alert(1)", "/" + "x" * 3000):
        with pytest.raises(ClassError, match="page of this app"):
            store.send(started.code, started.teacher_key, link, "x")
    assert store.current_send(started.code) == second


def _run(accuracy: float = 0.9, parameters: int = 337, lr: float = 0.1) -> RunEntry:
    return RunEntry(link=f"/moons_trainer?lr={lr:g}&opt=Adam", optimizer="Adam", learning_rate=lr,
                    test_accuracy=accuracy, bayes_ceiling=0.95, parameter_count=parameters)


def test_posted_runs_are_bounded_per_learner_and_validated(store):
    started = store.start_class()
    learner = store.join(started.code, "Ada")
    for number in range(MAX_RUNS_PER_MEMBER):
        assert store.post_run(started.code, learner.token, _run(lr=0.1 + number / 100)) is True
    with pytest.raises(ClassError, match=f"posted {MAX_RUNS_PER_MEMBER} runs"):
        store.post_run(started.code, learner.token, _run(lr=0.5))
    other = store.join(started.code)
    for bad in (_run(1.5), _run(float("nan")), _run(parameters=0), _run(parameters=True),
                RunEntry("https://x/", "Adam", 0.1, 0.9, 0.9, 3),
                RunEntry("//evil.example/x", "Adam", 0.1, 0.9, 0.9, 3),
                RunEntry("/\\evil.example", "Adam", 0.1, 0.9, 0.9, 3),
                RunEntry("/moons_trainer?x=<script>", "Adam", 0.1, 0.9, 0.9, 3),
                RunEntry("/moons_trainer", "", 0.1, 0.9, 0.9, 3),
                RunEntry("/moons_trainer", "Adam", 0.0, 0.9, 0.9, 3)):
        with pytest.raises(ClassError, match="cannot be posted"):
            store.post_run(started.code, other.token, bad)
    posted = store.challenge_board(started.code, teacher_key=started.teacher_key).runs
    assert len(posted) == MAX_RUNS_PER_MEMBER and posted[0].nickname == "Ada"
    assert posted[0] == RunEntry(**{**_run().__dict__, "nickname": "Ada",
                                    "posted_at": store.clock_for_test.now,
                                    "data_settings": DEFAULT_CHALLENGE_DATA})


def test_the_same_link_posted_again_by_a_learner_adds_no_row(store):
    started = store.start_class()
    ada, bo = store.join(started.code, "Ada"), store.join(started.code, "Bo")
    assert store.post_run(started.code, ada.token, _run()) is True
    assert store.post_run(started.code, ada.token, _run()) is False
    assert store.post_run(started.code, bo.token, _run()) is True       # Bo's own run of it
    board = store.challenge_board(started.code, teacher_key=started.teacher_key)
    assert [run.nickname for run in board.runs] == ["Ada", "Bo"]


def test_the_challenge_board_is_read_by_its_teacher_and_learners_only(store):
    started, elsewhere = store.start_class(), store.start_class()
    ada, eve = store.join(started.code, "Ada"), store.join(elsewhere.code, "Eve")
    store.post_run(started.code, ada.token, _run(0.91))
    store.post_run(elsewhere.code, eve.token, _run(0.99))
    for reader in ({"teacher_key": started.teacher_key}, {"token": ada.token}):
        board = store.challenge_board(started.code, **reader)
        assert [(r.nickname, r.test_accuracy) for r in board.runs] == [("Ada", 0.91)]
        assert board.max_parameters is None
    # A code alone, another class's key or token, a forged one: no board.
    hostile = ({}, {"teacher_key": elsewhere.teacher_key}, {"token": eve.token},
               {"teacher_key": "x" * 43}, {"token": "x" * 43})
    for reader in hostile:
        with pytest.raises(ClassError, match="does not open|not in class"):
            store.challenge_board(started.code, **reader)
    # Eve cannot post into Ada's class with her own class's token either.
    with pytest.raises(ClassError, match="not in class"):
        store.post_run(started.code, eve.token, _run(1.0))
    assert len(store.challenge_board(started.code, token=ada.token).runs) == 1


def test_only_the_teacher_sets_the_challenge(store):
    started, elsewhere = store.start_class(), store.start_class()
    ada = store.join(started.code, "Ada")
    store.set_challenge(started.code, started.teacher_key, 500)
    assert store.challenge_board(started.code, token=ada.token).max_parameters == 500
    for key in ("", ada.token, elsewhere.teacher_key):
        with pytest.raises(ClassError, match="does not open"):
            store.set_challenge(started.code, key, 10)
    for bad in (0, -5, 10**9, 2.5, True, "100"):
        with pytest.raises(ClassError, match="whole number"):
            store.set_challenge(started.code, started.teacher_key, bad)
    assert store.challenge_board(started.code, token=ada.token).max_parameters == 500
    store.set_challenge(started.code, started.teacher_key, None)
    assert store.challenge_board(started.code, token=ada.token).max_parameters is None
    assert store.challenge_board(elsewhere.code, teacher_key=elsewhere.teacher_key).max_parameters is None


def test_a_version_1_database_gains_the_challenge_and_keeps_its_classes(store):
    with store.engine.begin() as connection:        # the database as the first release left it
        METADATA.create_all(connection, tables=[schema_version])
        MIGRATIONS[0](connection)
        connection.execute(schema_version.insert().values(version=1))
        connection.execute(text("INSERT INTO classes (code, teacher_key_digest, created_at, "
                                "last_activity_at, send_number, send_link, send_title) VALUES "
                                f"('AAAAAA', '{codes.digest('k')}', {store.clock_for_test.now}, "
                                f"{store.clock_for_test.now}, 0, '', '')"))
    assert migrate(store.engine) == 1
    board = store.challenge_board("AAAAAA", teacher_key="k")
    assert board == ChallengeBoard([], None)
    store.set_challenge("AAAAAA", "k", 1000)
    assert store.challenge_board("AAAAAA", teacher_key="k").max_parameters == 1000


# --- an unreachable database ---------------------------------------------------------------------
def test_an_unreachable_database_is_a_clear_message_not_a_crash(tmp_path):
    gone = ClassStore("postgresql+psycopg://nobody@127.0.0.1:9/none")
    with pytest.raises(StoreUnavailable, match="cannot be reached"):
        gone.find_class("AAAAAA")
    gone.dispose()
