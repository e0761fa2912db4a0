"""The class store's roster (schema version 3) on SQLite and PostgreSQL: seats that go away,
names that cannot collide or pass for the teacher, remove, rename, hide names, close joining,
pinned checks, and the migration from a version-2 database.

The fixtures are conftest.py's (a temporary SQLite file, a throwaway PostgreSQL server).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select, text

from tests.unit.classroom.test_store import OPTIONS, _run
from workbench.classroom import codes, names
from workbench.classroom import store as store_module
from workbench.classroom.schema import LATEST, METADATA, MIGRATIONS, members, migrate, schema_version
from workbench.classroom.store import (PRESENT_SECONDS, SEEN_EVERY_SECONDS, ClassError,
                                       JoiningClosed, RemovedFromClass)


def _last_seen(store, token: str) -> float:
    with store.engine.connect() as connection:
        return connection.execute(select(members.c.last_seen_at).where(
            members.c.token_digest == codes.digest(token))).scalar_one()


# --- seats ----------------------------------------------------------------------------------------
def test_a_heartbeat_keeps_a_seat_present_and_writes_at_most_every_30_s(store):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    joined = store.clock_for_test.now
    store.send(started.code, started.teacher_key, "/lessons?lesson=tensors", "Tensors")
    store.clock_for_test.now += SEEN_EVERY_SECONDS - 1
    beat = store.heartbeat(started.code, ada.token)
    assert (beat.send.number, beat.send.link, beat.nickname) == (1, "/lessons?lesson=tensors", "Ada")
    assert _last_seen(store, ada.token) == joined                  # throttled: not written yet
    store.clock_for_test.now += 2
    store.heartbeat(started.code, ada.token)
    assert _last_seen(store, ada.token) == joined + SEEN_EVERY_SECONDS + 1


def test_a_seat_not_seen_for_a_few_minutes_is_away_and_back_on_its_next_heartbeat(store):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    store.join(started.code, "Bob")
    store.clock_for_test.now += PRESENT_SECONDS - 10
    store.heartbeat(started.code, ada.token)                       # Ada's page is open; Bob's not
    store.clock_for_test.now += 20
    view = store.find_class(started.code)
    assert (view.members, view.away) == (1, 1)
    roster = {entry.nickname: entry.present for entry in store.roster(started.code, started.teacher_key)}
    assert roster == {"Ada": True, "Bob": False}                   # the roster lists Bob as away


def test_a_script_filling_the_seats_is_refused_and_the_seats_free_once_away(store, monkeypatch):
    monkeypatch.setattr(store_module, "MAX_MEMBERS", 3)
    started = store.start_class()
    for _ in range(3):
        store.join(started.code)
    with pytest.raises(ClassError, match="is full"):
        store.join(started.code, "Real Learner")
    store.clock_for_test.now += PRESENT_SECONDS + 1                # the script's sessions closed
    assert store.join(started.code, "Real Learner").nickname == "Real Learner"
    assert store.find_class(started.code).members == 1


def test_rows_of_away_learners_who_gave_nothing_are_reused_those_who_answered_stay(store, monkeypatch):
    monkeypatch.setattr(store_module, "MAX_MEMBER_ROWS", 3)
    started = store.start_class()
    answering = store.join(started.code, "Ada")
    store.record_answer(started.code, answering.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    store.join(started.code, "Idle One")
    store.join(started.code, "Idle Two")
    store.clock_for_test.now += PRESENT_SECONDS + 1
    store.join(started.code, "Cy")
    assert [e.nickname for e in store.roster(started.code, started.teacher_key)] == ["Ada", "Cy"]
    assert store.tallies(started.code, started.teacher_key)[0].answered == 1


# --- names ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("hostile, why", [
    ("Teacher", "looks like the teacher"), ("T\u0435acher", "looks like the teacher"),
    ("Admin", "looks like the teacher"), ("\u3164", "nothing anyone could see"),
    ("sh1t", "does not allow"), ("Ada", "already has the name"), ("ADA", "already has the name"),
    ("\u0410da", "already has the name"),                       # Cyrillic А
])
def test_a_misleading_name_is_refused_on_joining_and_renaming_and_changes_nothing(store, hostile, why):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    bob = store.join(started.code, "Bob")
    with pytest.raises(ClassError, match=why):
        store.join(started.code, hostile)
    with pytest.raises(ClassError, match=why):
        store.rename(started.code, bob.token, hostile)
    with pytest.raises(ClassError, match=why):
        store.rename_member(started.code, started.teacher_key, 2, hostile)
    assert [e.nickname for e in store.roster(started.code, started.teacher_key)] == ["Ada", "Bob"]
    assert store.rename(started.code, ada.token, "Ada") == "Ada"  # one's own name is no collision


@pytest.mark.parametrize("name", ["Zoë", "Đức", "李雷", "Ольга", "Priyā"])
def test_ordinary_names_in_any_script_are_taken(store, name):
    started = store.start_class()
    assert store.join(started.code, name).nickname == name


def test_the_teacher_can_switch_the_word_filter_off(store):
    started = store.start_class()
    with pytest.raises(ClassError, match="does not allow"):
        store.join(started.code, "Dick")
    store.set_class_options(started.code, started.teacher_key, word_filter=False)
    assert store.join(started.code, "Dick").nickname == "Dick"
    with pytest.raises(ClassError, match="looks like the teacher"):   # the rest still holds
        store.join(started.code, "Teacher")


def test_a_class_of_300_made_up_names_has_no_duplicate(store):
    started = store.start_class()
    joined = [store.join(started.code).nickname for _ in range(300)]
    assert len({names.name_key(name) for name in joined}) == 300


# --- the teacher's roster -------------------------------------------------------------------------
def test_the_roster_counts_answers_and_runs_per_learner_and_needs_the_teacher_key(store):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    store.join(started.code, "Bob")
    store.record_answer(started.code, ada.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    store.record_answer(started.code, ada.token, "other_check", "yes", ("yes", "no"), 2)
    store.post_run(started.code, ada.token, _run())
    roster = store.roster(started.code, started.teacher_key)
    assert [(e.seat, e.nickname, e.answers, e.runs, e.present) for e in roster] == [
        (1, "Ada", 2, 1, True), (2, "Bob", 0, 0, True)]
    for action in (lambda key: store.roster(started.code, key),
                   lambda key: store.remove_member(started.code, key, 1),
                   lambda key: store.rename_member(started.code, key, 1, "Zed"),
                   lambda key: store.set_class_options(started.code, key, hide_names=True),
                   lambda key: store.set_pinned(started.code, key, "tensor_shape", True)):
        with pytest.raises(ClassError, match="does not open class"):
            action(ada.token)                                   # a learner's token is no key
    assert len(store.roster(started.code, started.teacher_key)) == 2
    assert not store.find_class(started.code).hide_names


def test_a_removed_learner_leaves_the_board_frees_their_seat_and_name_and_is_told(store):
    started = store.start_class()
    troll = store.join(started.code, "Troll")
    ada = store.join(started.code, "Ada")
    store.record_answer(started.code, troll.token, "tensor_shape", OPTIONS[0], OPTIONS, 1)
    store.record_answer(started.code, ada.token, "tensor_shape", OPTIONS[1], OPTIONS, 1)
    store.post_run(started.code, troll.token, _run())
    assert store.remove_member(started.code, started.teacher_key, 1) == "Troll"
    assert store.tallies(started.code, started.teacher_key)[0].counts == {OPTIONS[1]: 1}
    assert store.challenge_board(started.code, teacher_key=started.teacher_key).runs == []
    assert store.find_class(started.code).members == 1
    for action in (lambda: store.heartbeat(started.code, troll.token),
                   lambda: store.resume(started.code, troll.token),
                   lambda: store.record_answer(started.code, troll.token, "tensor_shape",
                                               OPTIONS[2], OPTIONS, 2),
                   lambda: store.post_run(started.code, troll.token, _run(lr=0.2))):
        with pytest.raises(RemovedFromClass, match="removed you from class"):
            action()
    assert store.join(started.code, "Troll").nickname == "Troll"   # the name is free again
    with pytest.raises(ClassError, match="No learner sits in seat 1"):
        store.remove_member(started.code, started.teacher_key, 1)


def test_a_teachers_rename_shows_on_the_learners_posted_runs(store):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    store.post_run(started.code, ada.token, _run())
    assert store.rename_member(started.code, started.teacher_key, 1, "Ada L") == "Ada L"
    assert store.heartbeat(started.code, ada.token).nickname == "Ada L"     # their page learns it
    (run,) = store.challenge_board(started.code, token=ada.token).runs
    assert run.nickname == "Ada L"
    store.rename(started.code, ada.token, "Ada Lovelace")
    (run,) = store.challenge_board(started.code, teacher_key=started.teacher_key).runs
    assert run.nickname == "Ada Lovelace"


def test_closed_joining_admits_no_one_new_and_keeps_the_members(store):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    store.set_class_options(started.code, started.teacher_key, joining_closed=True)
    with pytest.raises(JoiningClosed, match="closed to new learners"):
        store.join(started.code, "Bob")
    assert store.heartbeat(started.code, ada.token).send.number == 0   # Ada stays
    assert store.find_class(started.code).joining_closed
    store.set_class_options(started.code, started.teacher_key, joining_closed=False)
    assert store.join(started.code, "Bob").nickname == "Bob"


def test_hidden_names_are_a_setting_of_the_board(store):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    assert store.challenge_board(started.code, token=ada.token).hide_names is False
    store.set_class_options(started.code, started.teacher_key, hide_names=True)
    assert store.challenge_board(started.code, token=ada.token).hide_names is True
    assert store.find_class(started.code).hide_names


# --- the board the teacher steers -----------------------------------------------------------------
def test_one_learner_answering_seven_checks_does_not_push_the_class_question_down(store):
    started = store.start_class()
    learners = [store.join(started.code) for _ in range(4)]
    for learner in learners:
        store.record_answer(started.code, learner.token, "class_question", "yes", ("yes", "no"), 1)
    for number in range(7):
        store.clock_for_test.now += 1
        store.record_answer(started.code, learners[0].token, f"check_{number}", "yes",
                            ("yes", "no"), number + 2)
    tallies = store.tallies(started.code, started.teacher_key)
    assert tallies[0].check_key == "class_question" and tallies[0].answered == 4
    assert len(tallies) == 8                                       # every answered check is there
    assert [t.check_key for t in tallies[1:]] == [f"check_{n}" for n in range(6, -1, -1)]


def test_pinned_checks_come_first_in_the_order_pinned_even_before_anyone_answers(store):
    started = store.start_class()
    ada = store.join(started.code)
    store.record_answer(started.code, ada.token, "answered", "yes", ("yes", "no"), 1)
    store.set_pinned(started.code, started.teacher_key, "second_pin", True)
    store.clock_for_test.now += 1
    store.set_pinned(started.code, started.teacher_key, "first_pin", True)
    tallies = store.tallies(started.code, started.teacher_key)
    assert [(t.check_key, t.pinned, t.answered) for t in tallies] == [
        ("second_pin", True, 0), ("first_pin", True, 0), ("answered", False, 1)]
    store.set_pinned(started.code, started.teacher_key, "second_pin", False)
    assert [t.check_key for t in store.tallies(started.code, started.teacher_key)] == [
        "first_pin", "answered"]
    with pytest.raises(ClassError, match="not a knowledge check"):
        store.set_pinned(started.code, started.teacher_key, "'; DROP TABLE members; --", True)


# --- the migration ------------------------------------------------------------------------------
def test_a_version_2_database_gains_the_roster_and_keeps_its_members(store):
    now = store.clock_for_test.now
    with store.engine.begin() as connection:        # the database as the second release left it
        METADATA.create_all(connection, tables=[schema_version])
        MIGRATIONS[0](connection)
        MIGRATIONS[1](connection)
        connection.execute(schema_version.insert().values(version=2))
        connection.execute(text("INSERT INTO classes (code, teacher_key_digest, created_at, "
                                "last_activity_at, send_number, send_link, send_title) VALUES "
                                f"('AAAAAA', '{codes.digest('k')}', {now}, {now}, 0, '', '')"))
        # Two members the old release let take look-alike names.
        for token, name, at in (("t1", "Tidy Dolphin", now - 10), ("t2", "Tidy Dolphin", now - 5),
                                ("t3", "Ada", now - 1000)):
            connection.execute(text("INSERT INTO members (token_digest, class_code, nickname, "
                                    "joined_at, answers_written) VALUES "
                                    f"('{codes.digest(token)}', 'AAAAAA', '{name}', {at}, 0)"))
    assert migrate(store.engine) == 2
    roster = store.roster("AAAAAA", "k")
    assert [(e.seat, e.nickname, e.last_seen_at, e.present) for e in roster] == [
        (1, "Ada", now - 1000, False), (2, "Tidy Dolphin", now - 10, True),
        (3, "Tidy Dolphin", now - 5, True)]
    view = store.find_class("AAAAAA")
    assert (view.members, view.away, view.joining_closed, view.hide_names, view.word_filter) == (
        2, 1, False, False, True)
    assert store.heartbeat("AAAAAA", "t2").nickname == "Tidy Dolphin"   # old tokens still work
    with pytest.raises(ClassError, match="already has the name"):
        store.join("AAAAAA", "Tidy Dolphin")
    assert migrate(store.engine) == LATEST                          # again: nothing to do


def test_learners_joining_at_once_with_one_name_get_one_seat_each_and_the_name_once(store):
    started = store.start_class()
    with ThreadPoolExecutor(12) as pool:
        outcomes = list(pool.map(lambda _: _join_or_refusal(store, started.code, "Ada"), range(12)))
        anonymous = list(pool.map(lambda _: store.join(started.code).nickname, range(12)))
    assert outcomes.count("Ada") == 1, outcomes               # the unique index let one win
    assert all(o == "Ada" or "already has the name" in o for o in outcomes), outcomes
    roster = store.roster(started.code, started.teacher_key)
    assert sorted(e.seat for e in roster) == list(range(1, 14))
    assert len({names.name_key(n) for n in anonymous}) == 12


def _join_or_refusal(store, code: str, name: str) -> str:
    try:
        return store.join(code, name).nickname
    except ClassError as exc:
        return str(exc)
