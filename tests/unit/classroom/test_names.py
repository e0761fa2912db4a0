"""Nicknames that cannot mislead (workbench/classroom/names.py), both ways: each hostile name is
refused with a reason a teenager understands, and ordinary names in any script are taken."""
from __future__ import annotations

import random

import pytest

from workbench.classroom import names
from workbench.classroom.names import NameRefused


@pytest.mark.parametrize("hostile, why", [
    ("Teacher", "looks like the teacher"),
    ("T\u0435acher", "looks like the teacher"),          # Cyrillic е
    ("\u0422\u0435\u0430\u0441\u04bb\u0435\u0433", "looks like the teacher"),   # all Cyrillic
    ("TEACHER", "looks like the teacher"),
    ("Teacher's", "looks like the teacher"),
    ("T e a c h e r", "looks like the teacher"),
    ("Mr Teacher", "looks like the teacher"),
    ("Ｔｅａｃｈｅｒ", "looks like the teacher"),           # fullwidth
    ("Tea\u200bcher", "looks like the teacher"),          # a zero-width space inside
    ("Admin", "looks like the teacher"),
    ("Moderator", "looks like the teacher"),
    ("\u3164", "nothing anyone could see"),                # Hangul filler
    ("\u115f\u1160", "nothing anyone could see"),
    ("\uffa0\u200b\u200d", "nothing anyone could see"),
    ("\u202e\u2066", "nothing anyone could see"),          # bidi controls only
    ("!!!", "at least one letter or digit"),
    ("x" * 25, "at most 24 characters"),
    ("x" * 10_000, "at most 24 characters"),
    ("shit", "does not allow"), ("sh1t", "does not allow"), ("5h!t", "does not allow"),
    ("sh!t", "does not allow"),
    ("fvck", "does not allow"), ("f u c k", "does not allow"), ("f.u.c.k", "does not allow"),
    ("fück", "does not allow"), ("\u0455hit", "does not allow"),   # Cyrillic ѕ
    ("b1tch", "does not allow"),
])
def test_a_hostile_name_is_refused_with_a_reason(hostile, why):
    with pytest.raises(NameRefused, match=why):
        names.check(hostile)


@pytest.mark.parametrize("name", ["Ada", "Zoë", "Đức", "李雷", "Ольга", "محمد", "Priyā",
                                  "Siobhán", "José-María", "O'Brien", "Kim Ji-woo", "Teachy",
                                  "Badminton", "Modesty", "Cassandra", "Scunthorpe", "Ada 2"])
def test_an_ordinary_name_in_any_script_is_taken_as_typed(name):
    assert names.check(name) == name


def test_look_alike_names_share_a_key_and_collide_in_a_class():
    taken = {names.name_key("Tidy Dolphin")}
    for twin in ("tidy dolphin", "Tidy  Dolphin", "Tidy DoIphin", "T\u0456dy Dolphin", "TidyDolphin"):
        with pytest.raises(NameRefused, match="already has the name"):
            names.check(twin, taken_keys=taken)
    assert names.check("Tidy Dolphins", taken_keys=taken) == "Tidy Dolphins"
    assert names.name_key("rn") == names.name_key("m")       # UTS #39: "rn" looks like "m"
    assert names.name_key("Zoë") != names.name_key("Zoe")    # a visible accent is a difference


def test_invisible_characters_are_taken_out_of_a_name():
    assert names.clean("  Ada\u3164\u200b  Lovelace\u202e ") == "Ada Lovelace"
    assert names.check("Ada\u3164") == "Ada"


def test_the_word_filter_can_be_switched_off_the_other_checks_cannot():
    assert names.check("Dick", word_filter=False) == "Dick"
    with pytest.raises(NameRefused):
        names.check("Dick")
    with pytest.raises(NameRefused, match="looks like the teacher"):
        names.check("Teacher", word_filter=False)


def test_an_empty_name_asks_for_a_made_up_one():
    assert names.check("") == "" and names.check(None) == "" and names.check("   ") == ""


def test_made_up_names_never_repeat_even_past_the_word_lists():
    taken: set[str] = set()
    rng = random.Random(42)
    for _ in range(len(names.ADJECTIVES) * len(names.ANIMALS) + 50):
        name = names.generated(taken, rng)
        key = names.name_key(name)
        assert key not in taken
        taken.add(key)
    assert name.rsplit(" ", 1)[1].isdigit()                   # the lists ran out: a number


def test_no_made_up_name_is_refused_by_the_checks():
    for adjective in names.ADJECTIVES:
        for animal in names.ANIMALS:
            assert names.check(f"{adjective} {animal}") == f"{adjective} {animal}"
