"""tests/spawns.py: in a session without `spawns` tests, a test that starts a Python fails."""
import sys

import pytest

from tests.spawns import starts_python

pytest_plugins = ["pytester"]

INI = "[pytest]\nmarkers =\n    spawns: starts another Python\n"

UNMARKED = """
import multiprocessing
import os
import subprocess
import sys


def test_a_child_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_a_worker_process():
    worker = multiprocessing.get_context("spawn").Process(target=os.getpid)
    worker.start()
    worker.join()


def test_git_is_not_a_python():
    subprocess.run(["git", "--version"], capture_output=True)


def test_nothing_started():
    pass
"""


def test_which_commands_start_a_python():
    assert starts_python([sys.executable, "-c", "pass"])
    assert starts_python(["/usr/bin/python3.11", "script.py"])
    assert starts_python("python3 -m ipykernel_launcher")
    assert starts_python(["anything"], executable=sys.executable)
    assert not starts_python(["git", "ls-files"])
    assert not starts_python("nginx -c nginx.conf")


@pytest.mark.spawns
def test_an_unmarked_test_that_starts_a_python_fails_naming_the_marker(pytester):
    pytester.makeini(INI)
    pytester.makepyfile(test_unmarked=UNMARKED)
    result = pytester.runpytest_inprocess("-p", "tests.spawns")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "*test_a_child_python started another Python*", "*a child Python:*",
        "*Mark it @pytest.mark.spawns*",
        "*test_a_worker_process started another Python*", "*a multiprocessing process: *Process*",
    ])


@pytest.mark.spawns
def test_a_session_that_runs_spawns_tests_is_not_watched(pytester):
    pytester.makeini(INI)
    pytester.makepyfile(test_unmarked=UNMARKED, test_marked="""
import subprocess
import sys

import pytest


@pytest.mark.spawns
def test_marked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
""")
    pytester.runpytest_inprocess("-p", "tests.spawns").assert_outcomes(passed=5)
