"""The cookie that keeps a class seat across a reload (components/class_session.py): what is read
back from a browser, and the script that writes it."""
from __future__ import annotations

import json
import re

import pytest

from components.class_session import (SEAT_COOKIE, TEACHER_COOKIE, cookie_script, parse_seat_cookie,
                                      seat_cookie_value)
from workbench.classroom import codes
from workbench.classroom.store import IDLE_EXPIRY_SECONDS


def test_a_seat_cookie_reads_back_as_its_code_and_secret():
    secret = codes.new_secret()
    assert parse_seat_cookie(seat_cookie_value("AK37WA", secret)) == ("AK37WA", secret)


@pytest.mark.parametrize("value", [None, "", "AK37WA", "AK37WA.", ".secret", "x" * 10_000])
def test_anything_else_reads_back_as_no_seat(value):
    assert parse_seat_cookie(value) is None


def test_the_script_sets_for_a_day_deletes_an_empty_value_and_cannot_end_its_element():
    hostile = '</script><script>alert(1)</script>"'
    script = cookie_script({SEAT_COOKIE: f"AK37WA.{hostile}", TEACHER_COOKIE: ""})
    body = script.removeprefix("<script>").removesuffix("</script>")
    assert "</" not in body and "<script" not in body
    writes = re.findall(r'document\.cookie = ("[^"]*") \+ \'=\' \+ ("(?:[^"\\]|\\.)*") \+ '
                        r"'; Max-Age=(\d+); Path=/; SameSite=Lax' \+ secure;", body)
    assert [(json.loads(n), json.loads(v), int(age)) for n, v, age in writes] == [
        (SEAT_COOKIE, f"AK37WA.{hostile}", IDLE_EXPIRY_SECONDS), (TEACHER_COOKIE, "", 0)]
