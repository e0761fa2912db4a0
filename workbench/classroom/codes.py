"""What a class is called and who may steer it: the join code, the teacher key, nicknames.

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
import unicodedata

CODE_ALPHABET = "34679ACEFGHJKMNPRTWXY"
CODE_LENGTH = 6
NICKNAME_MAX = 24

ADJECTIVES = ("Brave", "Calm", "Clever", "Curious", "Eager", "Gentle", "Happy", "Keen", "Lively",
              "Patient", "Quick", "Quiet", "Steady", "Swift", "Tidy", "Witty")
ANIMALS = ("Badger", "Crane", "Dolphin", "Falcon", "Fox", "Heron", "Koala", "Lynx", "Marten",
           "Otter", "Owl", "Panda", "Puffin", "Raven", "Seal", "Wren")


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
    """A nickname as it is stored and shown: letters, digits, spaces and common punctuation,
    whitespace collapsed. Control, format and symbol characters (bidi overrides, zero-width
    joiners) are dropped; the page escapes the rest when drawing it. The length is checked by the
    caller on what is left (a too-long name is refused, not cut: the learner would not recognise it)."""
    text = unicodedata.normalize("NFKC", str(raw))
    kept = "".join(ch for ch in text if unicodedata.category(ch)[0] in "LNZ" or ch in "-_.'!?")
    return " ".join(kept.split())


def anonymous_name() -> str:
    return f"{secrets.choice(ADJECTIVES)} {secrets.choice(ANIMALS)}"
