"""Predict, then run: a question the teacher poses before an experiment runs (pure functions).

A teacher writes a question and 2 to MAX_OPTIONS options, and marks which option the experiment
will show, or none (an opinion poll); or poses one of the workbench's knowledge checks, whose
answer PyTorch computes at the reveal. What a teacher types is cleaned (Unicode NFC, so a letter
and its combining accent are one character; controls, bidi overrides and other invisible
characters dropped; whitespace collapsed), bounded in length, and its options must differ from
each other after NFKC and case folding ("Yes" and "ｙｅｓ " are one option twice). NFC, not
NFKC, for what is stored: NFKC would turn the "²" of "the mean of y²" into "2". It is stored
as typed and cleaned, and escaped wherever it is shown (components/plain_text.md), never
rendered as Markdown or HTML.

A question travels to the teacher's next class as a small JSON file (export/import) or inside a
link (`?question=<base64url JSON>` on the Class page). Both are read with `json.loads` only,
bounded in size before they are decoded, with exactly the keys below: nothing is unpickled or
evaluated, and a file that is not one of these is refused with a message saying why.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from dataclasses import dataclass

from workbench.classroom.names import is_invisible

QUESTION_MIN, QUESTION_MAX = 3, 300        # characters, after cleaning
OPTION_MAX = 120
MIN_OPTIONS, MAX_OPTIONS = 2, 6
FORMAT = "workbench-prediction"
FORMAT_VERSION = 1
MAX_FILE_BYTES = 4096                      # a question of 300 and six options of 120 fit twice over
MAX_LINK_PARAM = 6000                      # base64 of MAX_FILE_BYTES, and then some
QUESTION_PARAM = "question"
_FILE_KEYS = {"format", "version", "question", "options", "expected"}
_WHITESPACE = re.compile(r"\s+")


class QuestionRefused(ValueError):
    """A question, an option or a file the class does not take; the message says why."""


@dataclass(frozen=True)
class Question:
    text: str
    options: tuple[str, ...]
    # The option (its index) the teacher says the experiment will show; None: no right answer,
    # an opinion poll. For a built-in check it is None here: PyTorch computes it at the reveal.
    expected: int | None = None
    check_key: str | None = None           # a workbench knowledge check posed as the question


def clean_text(raw: object) -> str:
    """`raw` as stored and shown: NFC, control, format and invisible characters dropped (a bidi
    override could reorder what the projector shows), whitespace collapsed and trimmed."""
    text = unicodedata.normalize("NFC", str(raw))
    kept = "".join(" " if ch.isspace() else ch for ch in text
                   if ch.isspace() or not (unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn")
                                           or is_invisible(ch)))
    return _WHITESPACE.sub(" ", kept).strip()


def _comparison_key(option: str) -> str:
    """Two options with one key read alike: fullwidth letters, ligatures and case folded."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", option).casefold())


def validate_question(text: object, options: object, expected: object = None,
                      check_key: str | None = None) -> Question:
    """The question as the class stores it, or QuestionRefused saying what to change. `options`
    is a list of strings (blank ones, the form's unused boxes, are left out); `expected` the
    index of the option the experiment will show among the options given, or None."""
    if not isinstance(text, str) or isinstance(options, (str, bytes)) \
            or not isinstance(options, (list, tuple)):
        raise QuestionRefused("A question is a text and a list of options.")
    if len(text) > QUESTION_MAX * 4 or len(options) > MAX_OPTIONS * 4:
        raise QuestionRefused(f"A question has at most {QUESTION_MAX} characters and "
                              f"{MAX_OPTIONS} options.")
    question = clean_text(text)
    if len(question) < QUESTION_MIN:
        raise QuestionRefused(f"Write the question: at least {QUESTION_MIN} visible characters.")
    if len(question) > QUESTION_MAX:
        raise QuestionRefused(f"The question has {len(question)} characters; at most "
                              f"{QUESTION_MAX} fit on a projector. Shorten it.")
    if expected is not None and (isinstance(expected, bool) or not isinstance(expected, int)
                                 or not 0 <= expected < len(options)):
        raise QuestionRefused("The option the experiment will show must be one of the options.")
    cleaned: list[str] = []
    seen: dict[str, int] = {}
    picked: int | None = None
    for number, raw in enumerate(options, 1):
        if not isinstance(raw, str):
            raise QuestionRefused(f"Option {number} is not a text.")
        if len(raw) > OPTION_MAX * 4:
            raise QuestionRefused(f"Option {number} has more than {OPTION_MAX} characters.")
        option = clean_text(raw)
        if not option:
            if expected == number - 1:
                raise QuestionRefused(f"Option {number}, marked as what the experiment will "
                                      "show, is empty.")
            continue                                   # an unused box of the form
        if len(option) > OPTION_MAX:
            raise QuestionRefused(f"Option {number} has {len(option)} characters; at most "
                                  f"{OPTION_MAX}. Shorten it.")
        key = _comparison_key(option)
        if key in seen:
            raise QuestionRefused(f"Options {seen[key]} and {number} are the same "
                                  f"(“{option}”): each option must differ.")
        seen[key] = number
        if expected == number - 1:
            picked = len(cleaned)
        cleaned.append(option)
    if not MIN_OPTIONS <= len(cleaned) <= MAX_OPTIONS:
        raise QuestionRefused(f"A question has {MIN_OPTIONS} to {MAX_OPTIONS} options; this one "
                              f"has {len(cleaned)}.")
    return Question(question, tuple(cleaned), picked, check_key)


# --- export and import ---------------------------------------------------------------------------
def export_question(question: Question) -> bytes:
    """The question as a small JSON file (UTF-8), for the teacher's next class. A built-in check
    travels as its text and options; its answer is the check's, so it is marked as none here."""
    return json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "question": question.text,
                       "options": list(question.options), "expected": question.expected},
                      ensure_ascii=False, indent=1).encode()


def import_question(data: bytes | str) -> Question:
    """The question in an exported file, validated as if typed; QuestionRefused for anything
    else (too big, not UTF-8 JSON, another format, keys missing or extra, values out of bounds)."""
    if isinstance(data, str):
        data = data.encode()
    if not isinstance(data, bytes):
        raise QuestionRefused("That is not a question file.")
    if len(data) > MAX_FILE_BYTES:
        raise QuestionRefused(f"That file has {len(data):,} bytes; a question file has at most "
                              f"{MAX_FILE_BYTES:,}. Is it the file the workbench exported?")
    try:
        parsed = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise QuestionRefused("That file is not a question the workbench exported (it is not "
                              "JSON text).") from None
    if not isinstance(parsed, dict) or parsed.get("format") != FORMAT:
        raise QuestionRefused("That file is not a question the workbench exported.")
    if parsed.get("version") != FORMAT_VERSION or set(parsed) != _FILE_KEYS:
        raise QuestionRefused(f"That question file is not version {FORMAT_VERSION} of the format "
                              "(keys missing or unknown): export it again from the workbench.")
    return validate_question(parsed["question"], parsed["options"], parsed["expected"])


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def question_link_param(question: Question) -> str:
    """The question as a link's parameter value: the exported file, base64url without padding."""
    return base64.urlsafe_b64encode(export_question(question)).decode().rstrip("=")


def question_from_link(value: str) -> Question:
    """The question a link carries (question_link_param), or QuestionRefused."""
    if not isinstance(value, str) or len(value) > MAX_LINK_PARAM:
        raise QuestionRefused("That question link is too long to be one the workbench made.")
    try:
        data = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise QuestionRefused("That question link is damaged: copy it again.") from None
    return import_question(data)


# --- the reveal -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Distribution:
    """How the class voted: per option (in order) its count and share, and how many voted."""
    counts: tuple[int, ...]
    voted: int

    def share(self, index: int) -> float:
        return self.counts[index] / self.voted if self.voted else 0.0


def distribution(options: tuple[str, ...], counts_by_index: dict[int, int]) -> Distribution:
    counts = tuple(int(counts_by_index.get(i, 0)) for i in range(len(options)))
    return Distribution(counts, sum(counts))


def reveal_sentence(question: Question, votes: Distribution, truth: int | None) -> str:
    """One sentence, computed from the votes, comparing them with the option the experiment
    showed (`truth`, PyTorch's for a check, the teacher's mark otherwise); plain text."""
    if truth is None:
        return (f"An opinion poll: {votes.voted} voted, no option is right."
                if votes.voted else "An opinion poll: nobody voted.")
    if not votes.voted:
        return "Nobody voted before the reveal."
    right = votes.counts[truth]
    top = max(votes.counts)
    leaders = [i for i, count in enumerate(votes.counts) if count == top]
    verdict = ("most of the class predicted it" if leaders == [truth]
               else "it tied for the most votes" if truth in leaders
               else f"most of the class predicted “{question.options[leaders[0]]}”"
               if len(leaders) == 1 else "the class split between other options")
    return f"{right} of {votes.voted} ({votes.share(truth):.0%}) predicted it; {verdict}."
