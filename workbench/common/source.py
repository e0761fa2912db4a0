"""Parsing Python text into `ast` trees and reading a function's or class's source, safely from
the server's many script threads.

CPython 3.11 keeps the depth counter of its AST-to-Python conversion in the interpreter, shared
by every thread (CPython issue gh-106905), so two threads building `ast` trees at once can fail
with "SystemError: AST constructor recursion depth mismatch". A class of 60 learners on one
server hit it (bench/class.py): the moons trainer read its classes' source, which
`inspect.getsource` finds by parsing the whole module. Every tree the app builds goes through
`parse`, under one lock (a chain or a program is a few hundred characters: microseconds), and a
source read once is kept: the modules do not change while the server runs.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import threading

_AST_LOCK = threading.Lock()


def parse(source: str, mode: str = "exec") -> ast.AST:
    """`ast.parse(source, mode=mode)`, one thread at a time."""
    with _AST_LOCK:
        return ast.parse(source, mode=mode)


@functools.cache
def source_of(obj: object) -> str:
    """The dedented source of a function or class, as it is in its module (read once)."""
    with _AST_LOCK:        # for a class, inspect parses the whole module to find it
        return textwrap.dedent(inspect.getsource(obj)).strip()
