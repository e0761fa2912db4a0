"""What a class is called and who may steer it: the join code, the teacher key (nicknames:
names.py).

A join code is read off a projector and typed on a phone, so its alphabet leaves out the
characters people confuse (0/O/Q/D, 1/I/L, 2/Z, 5/S, 8/B, U/V): 20 letters and digits, 6 of
them, 64 million codes. The teacher key is a 32-byte secret; only its SHA-256 is stored, so a
copy of the database does not let anyone steer a class (a salted slow hash is for guessable
passwords; a random 256-bit key cannot be guessed, so a fast hash loses nothing).
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from workbench.classroom import names

CODE_ALPHABET = "34679ACEFGHJKMNPRTWXY"
CODE_LENGTH = 6
NICKNAME_MAX = names.NICKNAME_MAX


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(raw: str) -> str | None:
    """The code as stored, or None if `raw` cannot be one: case and spaces or dashes a person
    types are forgiven, anything else is not."""
    code = re.sub(r"[\s-]", "", str(raw)[:40]).upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


def new_secret() -> str:
    """A teacher key or a member's token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    return hashlib.sha256(str(secret)[:200].encode()).hexdigest()


def same_digest(secret: str, stored: str) -> bool:
    return hmac.compare_digest(digest(secret), stored)


def clean_nickname(raw: str) -> str:
    """A nickname as it is stored and shown (names.clean: the checks live there)."""
    return names.clean(raw)


def anonymous_name() -> str:
    """A made-up name; within a class, the store draws one no member has (names.generated)."""
    return names.generated(())
