"""This browser session's place in a class: as a learner (joined by `class=<code>`) or as the
teacher who started it; and the answers it sends to the class store.

The store (workbench/classroom/) holds everything a class shares, so a second replica or a
restarted one sees the same class; this module holds only what one session knows: its member
token or teacher key, the number of its last answer, and the answers the database did not take
yet (StoreUnavailable), sent again on the session's next page run so nothing is lost while the
session lives.

A reload starts a new session. So that it does not join the class a second time (the board would
count the learner twice) or lose the teacher's board, the browser keeps the seat in a cookie: the
member token, or the teacher key, with the class code. The new session reads it from the request
that opened it (st.context.cookies) and resumes the seat; leaving, or ending the class, deletes it.
A join by link also takes `class=` out of the address, so a reload resumes the seat instead of
joining again, even in a browser that keeps no cookie; the seat it would have left behind stops
counting once it is away (store.PRESENT_SECONDS without a heartbeat).

While a learner's page is open, the follow fragment's heartbeat (every FOLLOW_SECONDS) keeps
their seat present and learns where the class is sent; it notices at once when the teacher
removed them or ended the class. Joins are rate-limited per client address and per session
(workbench/classroom/limits.py).
"""
from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

import streamlit as st

from components.plain_text import md
from components.state import learner_state
from workbench.classroom.codes import NICKNAME_MAX
from workbench.classroom.limits import (BEHIND_PROXY_SETTING, JOINS_PER_SESSION, TokenBucket,
                                        client_address, join_rate, wait_message)
from workbench.classroom.send_cache import SendCache
from workbench.classroom.pacing import Pacing
from workbench.classroom.store import (IDLE_EXPIRY_SECONDS, URL_SETTING, CheckClosed, ClassError,
                                       ClassStore, Membership, RemovedFromClass, ReplayedAnswer, Send,
                                       StartedClass, StoreUnavailable)
from workbench.common.checks import Check
from workbench.classroom.sweep_store import destination as sweep_destination, is_sweep_send

CLASS_PARAM = "class"
TEACHER_PARAM = "teacher"
# No max_chars on the nickname boxes: Streamlit would cut a longer name silently; the store
# refuses it with a message instead, and the learner sees what went wrong.
NICKNAME_HELP = (f"Up to {NICKNAME_MAX} characters; what the class may see of you. A name that "
                 "looks like another learner's or the teacher's is refused. Leave it empty for a "
                 "made-up name.")
# The class bar: slim; on a phone the nickname button is its icon (the label visually hidden,
# still its accessible name) and no chevron.
SEAT_STYLE = """<style>
.st-key-class_seat { padding: 0.35rem 0.75rem; gap: 0.35rem; }
@media (max-width: 640px) {
  .st-key-class_seat [data-testid=stPopoverButton] [data-testid=stMarkdownContainer] {
    position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%);
    white-space: nowrap; }
  .st-key-class_seat [data-testid=stPopoverButton] div[aria-hidden=true] { display: none; }
}
</style>"""
MAX_PENDING = 100                # answers kept while the database is away (38 checks exist)
# A follower's page asks where the class is every FOLLOW_SECONDS, and the answer is at most
# SEND_MAX_AGE old (one read per class per process, workbench/classroom/send_cache.py): arrival
# within 3 s at 60 learners on 2 cores (bench/class.py; 1.5 s left p95 at 3.3-4.4 s).
FOLLOW_SECONDS = 1.0
SEND_MAX_AGE = 0.3
# A seat's own heartbeat this often (store.SEEN_EVERY_SECONDS bounds its writes; a removed or
# renamed learner's page learns it within this); the shared send between them.
HEARTBEAT_SECONDS = 5.0
SEAT_COOKIE = "workbench_class_seat"          # "<code>.<member token>"
TEACHER_COOKIE = "workbench_class_teacher"    # "<code>.<teacher key>"
COOKIE_KEY = "class_cookie_writer"
PAGE_ON_SCREEN = "class_page_on_screen"      # the url_path of the page this run draws

_STORES: dict[str, ClassStore] = {}
_STORES_LOCK = threading.Lock()
# Joins per client address, for the whole process (each replica counts its own).
JOIN_LIMIT = TokenBucket(*join_rate(os.environ))
_SENDS: SendCache[Send] = SendCache(SEND_MAX_AGE)     # keyed by (database URL, class code)
# The class's paced checks, keyed by (database URL, class code, pacing number): a new number is
# a new key, which the first of the class's pages to ask reads for all of them.
_PACINGS: SendCache[Pacing] = SendCache(SEND_MAX_AGE)


def class_store() -> ClassStore:
    """The process's store for the configured database (one engine and pool per URL). An ordinary
    module global, not st.cache_resource: a visitor's cache clear must not drop open pools."""
    url = os.environ.get(URL_SETTING) or ""
    with _STORES_LOCK:
        if url not in _STORES:
            _STORES[url] = ClassStore(url) if url else ClassStore.from_environment()
        return _STORES[url]


T = TypeVar("T")


def read_class(read: Callable[[], T]) -> T | None:
    """What `read` gets from the class store, or None after saying why on the page: the
    database away (a warning: the tools keep working) or the class ended or not to be read."""
    try:
        return read()
    except StoreUnavailable as exc:
        st.warning(md(str(exc)), icon=":material/cloud_off:")
    except ClassError as exc:
        st.error(md(str(exc)), icon=":material/error:")
    return None


@dataclass(frozen=True)
class PendingAnswer:
    code: str
    check_key: str
    option: str
    options: tuple[str, ...]
    sequence: int


@dataclass
class ClassSeat:
    membership: Membership | None = None
    teaching: StartedClass | None = None
    kept_report: StartedClass | None = None      # an ended class whose report is kept, to read
    teacher_link_dismissed: bool = False
    sequence: int = 0                            # this session's answers so far, numbered
    pending: list[PendingAnswer] = field(default_factory=list)
    notice: str = ""                             # the last thing the class store refused, shown once
    url_code_seen: str | None = None             # the `class=` value already acted on
    following: bool = True                       # False: "explore on my own"
    send_seen: int = 0                           # the teacher's last send this learner went to
    browser_read: bool = False                   # the seat cookies of the opening request, read
    cookie_writes: dict[str, str] = field(default_factory=dict)   # name -> value ("" deletes)
    joins: int = 0                               # join attempts this session made (bounded)
    heartbeat_at: float = -math.inf              # time.monotonic() of the last heartbeat
    pacing_seen: int | None = None               # the class's pacing number this page drew with
    refused: dict[str, str] = field(default_factory=dict)   # check key -> why its answer was not taken
    landed_on: str | None = None                 # the page a join link landed on, before any send


def seat() -> ClassSeat:
    return learner_state("class_seat", ClassSeat)


# --- the seat kept by the browser -------------------------------------------------------------
def seat_cookie_value(code: str, secret: str) -> str:
    return f"{code}.{secret}"


def parse_seat_cookie(value: str | None) -> tuple[str, str] | None:
    """(code, secret) from a seat cookie, or None for anything else (a cookie is the browser's
    to change: the store still checks the secret)."""
    code, dot, secret = (value or "")[:300].partition(".")
    return (code, secret) if dot and code and secret else None


def _remember(name: str, value: str) -> None:
    seat().cookie_writes[name] = value


def cookie_script(writes: dict[str, str], max_age: int = IDLE_EXPIRY_SECONDS) -> str:
    """The script that sets (or, for an empty value, deletes) the browser's seat cookies. Values
    are written as JSON strings, never pasted into the script as they are."""
    lines = [f"document.cookie = {_js_string(name)} + '=' + {_js_string(value)} + "
             f"'; Max-Age={max_age if value else 0}; Path=/; SameSite=Lax' + secure;"
             for name, value in writes.items()]
    return ("<script>(() => { const secure = location.protocol === 'https:' ? '; Secure' : '';\n"
            + "\n".join(lines) + "\n})();</script>")


def _js_string(text: str) -> str:
    """A JavaScript string literal of `text` that cannot end the script element it sits in."""
    return json.dumps(text).replace("<", "\\u003c")


def write_cookies() -> None:
    """Send this session's cookie changes to the browser, in a hidden element of the sidebar."""
    mine = seat()
    if not mine.cookie_writes:
        return
    with st.sidebar, st.container(key=COOKIE_KEY):
        st.html(f"<style>.st-key-{COOKIE_KEY}, :has(> .st-key-{COOKIE_KEY}) {{ display: none; }}"
                "</style>" + cookie_script(mine.cookie_writes), unsafe_allow_javascript=True)
    mine.cookie_writes = {}


def _request_cookies() -> dict[str, str]:
    try:
        return dict(st.context.cookies)
    except Exception:  # noqa: BLE001 - no browser request (bare mode)
        return {}


def restore_from_browser() -> None:
    """Once per session: the teacher's board and the learner's seat the browser kept, resumed
    (a reload, or a new tab of the same browser). A cookie the store no longer knows (the class
    ended, the learner left) is deleted; a database out of reach leaves it for the next session."""
    mine = seat()
    if mine.browser_read:
        return
    mine.browser_read = True
    cookies = _request_cookies()
    taught = parse_seat_cookie(cookies.get(TEACHER_COOKIE))
    if taught is not None and mine.teaching is None:
        try:
            code = class_store().check_teacher(*taught)
            mine.teaching, mine.teacher_link_dismissed = StartedClass(code, taught[1]), True
        except StoreUnavailable:
            pass
        except ClassError:
            if not _reopen_kept_report(*taught):
                _remember(TEACHER_COOKIE, "")
    held = parse_seat_cookie(cookies.get(SEAT_COOKIE))
    if held is not None and mine.membership is None:
        try:
            mine.membership, mine.sequence = class_store().resume(*held)
            mine.pacing_seen, mine.refused = None, {}
            mine.send_seen, mine.following = _current_send_number(mine.membership.code), True
        except StoreUnavailable:
            pass
        except RemovedFromClass as exc:
            mine.notice = str(exc)
            _remember(SEAT_COOKIE, "")
        except ClassError:
            _remember(SEAT_COOKIE, "")


def begin_teaching(started: StartedClass, *, link_seen: bool) -> None:
    mine = seat()
    mine.teaching, mine.teacher_link_dismissed = started, link_seen
    _remember(TEACHER_COOKIE, seat_cookie_value(started.code, started.teacher_key))


def stop_teaching() -> None:
    mine = seat()
    mine.teaching, mine.teacher_link_dismissed = None, False
    _remember(TEACHER_COOKIE, "")


def keep_report(started: StartedClass) -> None:
    """The class ended with its report kept: this session reads it, and the browser's teacher
    cookie keeps opening it until it is deleted."""
    mine = seat()
    mine.teaching, mine.teacher_link_dismissed, mine.kept_report = None, False, started


def forget_report() -> None:
    mine = seat()
    if mine.kept_report is not None and mine.teaching is None:
        _remember(TEACHER_COOKIE, "")
    mine.kept_report = None


def _reopen_kept_report(code: str, teacher_key: str) -> bool:
    """A teacher key for a class that ended with its report kept: open the report (True)."""
    try:
        ended = class_store().ended(code, teacher_key)
    except ClassError:
        return False
    if ended is None:
        return False
    seat().kept_report = StartedClass(ended.code, teacher_key)
    return True


def open_teacher_link(code: str, teacher_key: str) -> str:
    """The private teacher link: this session teaches the class (returns ""), or reads its
    kept report if it ended; otherwise the store's reason."""
    try:
        found = class_store().check_teacher(code, teacher_key)
    except StoreUnavailable as exc:
        return str(exc)
    except ClassError as exc:
        if _reopen_kept_report(code, teacher_key):
            _remember(TEACHER_COOKIE, seat_cookie_value(seat().kept_report.code, teacher_key))
            return ""
        return str(exc)
    begin_teaching(StartedClass(found, teacher_key), link_seen=True)
    return ""


# --- joining by link ------------------------------------------------------------------------------
def join_from_url(page_path: str = "", pages: dict[str, str] | None = None) -> None:
    """`class=<code>` on any page's link joins that class once per session and value (a rerun
    of the same page does not join twice). The private teacher link (`teacher=`) is the Class
    page's business, not a learner's join; and a session never joins a class it teaches (the
    teacher would count as a learner and follow their own sends).

    The class's join link opens Home (`/?class=CODE`), which is not where the class is: a
    learner who joins late goes to the teacher's last send, and one who joins before any send
    is told on the page that they are in the class (`landing_panel`). A link to another page
    (a lesson link with `class=`) is where the teacher meant: it stays."""
    raw = st.query_params.get(CLASS_PARAM)
    mine = seat()
    if raw is None or raw == mine.url_code_seen or st.query_params.get(TEACHER_PARAM):
        return
    mine.url_code_seen = raw
    # Out of the address: a reload (a new session) resumes the seat, it does not join again.
    del st.query_params[CLASS_PARAM]
    code = raw.strip().upper()
    if mine.teaching is not None and mine.teaching.code == code:
        return
    if mine.membership is not None and mine.membership.code == code:
        return
    if join(raw, "") and page_path == "":
        _go_where_the_class_is(mine, pages or {})


def _go_where_the_class_is(mine: ClassSeat, pages: dict[str, str]) -> None:
    assert mine.membership is not None
    try:
        send = class_store().current_send(mine.membership.code)
    except ClassError:                  # the database away: the seat's poll says so
        send = None
    script = pages.get(urlsplit(send.link).path.strip("/")) if send and send.link else None
    if send is None or script is None or send.number == 0:
        mine.landed_on = ""
        return
    mine.send_seen = send.number
    st.switch_page(script, query_params=dict(parse_qsl(urlsplit(send.link).query,
                                                        keep_blank_values=True)))


def landing_panel(page_path: str) -> None:
    """On the page a join link landed on, before the teacher has sent the class anywhere: the
    class on the page itself (a phone's sidebar is folded), and what happens next."""
    mine = seat()
    if mine.landed_on is None:
        return
    if mine.membership is None or mine.landed_on != page_path or mine.send_seen:
        mine.landed_on = None           # moved on: the sidebar keeps the class's state
        return
    with st.container(border=True, key="class_landing"):
        st.markdown(f"**:material/groups: You are in class {mine.membership.code}** as "
                    f"{md(mine.membership.nickname)}. Your teacher has not sent the class to a "
                    "page yet: this page opens what they send, within a few seconds. Until then, "
                    "explore here.")


def _client_address() -> str | None:
    """The address this session's joins count against; None with no browser request behind the
    session (AppTest, bare mode): nothing to count."""
    try:
        headers = st.context.headers
        if not headers:
            return None
        peer = st.context.ip_address
    except Exception:  # noqa: BLE001 - no request context
        return None
    return client_address(peer, headers.get("X-Forwarded-For"),
                          behind_proxy=os.environ.get(BEHIND_PROXY_SETTING) == "1")


def join(code: str, nickname: str) -> bool:
    mine = seat()
    if mine.joins >= JOINS_PER_SESSION:
        mine.notice = (f"This page has tried to join a class {JOINS_PER_SESSION} times, the most "
                       "one page may. Reload the page to try again.")
        return False
    address = _client_address()
    wait = JOIN_LIMIT.take(address) if address is not None else 0.0
    if wait:
        mine.notice = wait_message(wait)
        return False
    mine.joins += 1
    try:
        joined = class_store().join(code, nickname)
    except ClassError as exc:
        mine.notice = str(exc)
        return False
    if mine.membership is not None:
        leave()
    mine.membership, mine.notice = joined, ""
    mine.pacing_seen, mine.refused = None, {}
    _remember(SEAT_COOKIE, seat_cookie_value(joined.code, joined.token))
    # The link the learner opened wins over an older send; the next send moves them. A sweep's
    # send is the exception: a late joiner is taken to their own cell (the least-filled one).
    mine.send_seen, mine.following = _seen_on_joining(joined.code), True
    return True


def _seen_on_joining(code: str) -> int:
    try:
        send = class_store().current_send(code)
    except ClassError:
        return 0
    return send.number - 1 if is_sweep_send(send.link) else send.number


def _current_send_number(code: str) -> int:
    try:
        return class_store().current_send(code).number
    except ClassError:
        return 0


def rename(nickname: str) -> None:
    mine = seat()
    if mine.membership is None:
        return
    try:
        name = class_store().rename(mine.membership.code, mine.membership.token, nickname)
    except ClassError as exc:
        mine.notice = str(exc)
        return
    mine.membership = Membership(mine.membership.code, mine.membership.token, name)
    mine.notice = ""


def leave() -> None:
    mine = seat()
    if mine.membership is None:
        return
    try:
        class_store().leave(mine.membership.code, mine.membership.token)
    except StoreUnavailable:
        pass                          # the class forgets this learner when it ends or expires
    mine.membership, mine.pending = None, []
    _remember(SEAT_COOKIE, "")
    if CLASS_PARAM in st.query_params:
        del st.query_params[CLASS_PARAM]


# --- answers -----------------------------------------------------------------------------------
def record_answer(check: Check, option: str) -> None:
    """A learner in a class committed `option` for `check`: send it to the class."""
    mine = seat()
    if mine.membership is None:
        return
    mine.sequence += 1
    mine.pending.append(PendingAnswer(mine.membership.code, check.key, option, tuple(check.options),
                                      mine.sequence))
    del mine.pending[:-MAX_PENDING]
    send_pending()


def answer_refused(check_key: str) -> str:
    """Why the class did not take this learner's answer to the check ("" if it did, or none)."""
    return seat().refused.get(check_key, "")


def class_pacing() -> Pacing | None:
    """The paced checks of this learner's class (None: in no class, or the class out of reach:
    every check then behaves as open, and the store still refuses what it must)."""
    mine = seat()
    if mine.membership is None:
        return None
    code = mine.membership.code
    try:
        return _PACINGS.get((os.environ.get(URL_SETTING) or "", code, mine.pacing_seen),
                            lambda: class_store().pacing(code))
    except ClassError:
        return None


def answer_waits(check_key: str) -> bool:
    """Whether this learner's answer to the check still waits for the class database."""
    return any(answer.check_key == check_key for answer in seat().pending)


def send_pending() -> None:
    """Send the answers waiting, oldest first; stop at the first the database cannot take."""
    mine = seat()
    while mine.pending and mine.membership is not None:
        answer = mine.pending[0]
        try:
            class_store().record_answer(answer.code, mine.membership.token, answer.check_key,
                                        answer.option, answer.options, answer.sequence)
        except StoreUnavailable:
            return
        except ReplayedAnswer:
            pass                                 # it arrived before: nothing to send
        except CheckClosed as exc:               # said on the check itself, not in the sidebar
            mine.refused[answer.check_key] = str(exc)
        except ClassError as exc:
            mine.notice = str(exc)
        mine.pending.pop(0)


# --- the sidebar ---------------------------------------------------------------------------------
def draw_class_state(page_path: str, pages: dict[str, str]) -> None:
    """The class on every page: for a learner, a bar at the top of the page itself (a phone's
    sidebar is folded, and a class joins by phone): "In class <code>" with their name, following
    the teacher, Leave and a nickname box, or the message of a link that could not join; for a
    teacher, "Send the class here" in the sidebar (and on the presenter stage). `page_path` is
    the page on screen, `pages` each page's url_path -> script."""
    mine = seat()
    write_cookies()
    send_pending()
    st.session_state[PAGE_ON_SCREEN] = page_path
    if mine.teaching is not None and page_path != "class":
        with st.sidebar, st.container(key="class_teacher"):
            send_here_button("class_send_here")
            if mine.notice:
                st.warning(md(mine.notice), icon=":material/groups:")
                mine.notice = ""
    if mine.membership is None and not mine.notice:
        return
    with st.container(key="class_seat", border=True):
        if mine.notice:
            st.warning(md(mine.notice), icon=":material/groups:")
            if mine.membership is None:       # removed, or the link could not join: said where
                # the learner looks, until it is closed.
                st.toast(md(mine.notice), icon=":material/groups:", duration="infinite")
            mine.notice = ""
        if mine.membership is None:
            return
        # One row that wraps (two lines on a phone's 390 px): the seat with the nickname one
        # click away beside the name, then Follow and Leave; a slim box, so that the page's
        # figure still leads. On a phone the nickname's button shows its icon alone (its name
        # stays for a screen reader), which keeps it on the seat's line: three lines were 151 px.
        st.html(SEAT_STYLE)
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            st.markdown(f"**:material/groups: In class {mine.membership.code}** as "
                        f"{md(mine.membership.nickname)}", width="content")
            with st.popover("Nickname", icon=":material/edit:", help="Change your nickname"), \
                    st.form("class_nickname", border=False):
                name = st.text_input("Nickname (optional)", key="class_nickname_input",
                                     help=NICKNAME_HELP)
                if st.form_submit_button("Set nickname"):
                    rename(name or "")
                    st.rerun()
            # The toggle shows the seat's own state, whatever changed it (a reload resumes it).
            st.session_state["class_follow"] = mine.following
            st.toggle("Follow the teacher", key="class_follow", on_change=_follow_changed,
                      help="On: your page goes where the teacher sends the class. Off: explore "
                      "on your own; turning it on again takes you back to the class.")
            if st.button("Leave", key="class_leave", icon=":material/logout:",
                         help="Leave the class: your answers leave the class's board too."):
                leave()
                st.rerun()
        if not mine.following:
            st.caption("Exploring on your own.")
        if mine.pending:
            st.caption(f"{len(mine.pending)} answer(s) wait for the class database; they are sent "
                       "when it is back.")
        _follow(pages)                # the heartbeat: also while exploring on one's own


def send_here_button(key: str) -> None:
    """The teacher's "Send class <code> here" for the page on screen (drawn in the sidebar, and
    on the stage itself in presenter mode: components/stage.py); nothing for anyone else, or on
    the Class page, which has its own send."""
    mine = seat()
    page_path = st.session_state.get(PAGE_ON_SCREEN, "")
    if mine.teaching is None or page_path == "class":
        return
    st.button(f"Send class {mine.teaching.code} here", key=key, icon=":material/near_me:",
              on_click=_send_here, args=(page_path,),
              help="Every learner who follows you opens this page with these settings within "
              "a few seconds, in their own layout (presenter mode stays yours); their own work "
              "on other pages is kept.")


# --- follow the teacher --------------------------------------------------------------------------
# Left out of a sent link: the class's own parameters, and presenter mode, which belongs to the
# teacher's projector, not to each follower's laptop or phone. `hide=` travels: a teacher hides
# controls on purpose, to fix a setting for the whole class.
NOT_SENT = (CLASS_PARAM, TEACHER_PARAM, "present")


def page_link(page_path: str, params: dict[str, str]) -> str:
    """The link of a page with its parameters, as the class is sent there (NOT_SENT left out)."""
    kept = {k: v for k, v in params.items() if k not in NOT_SENT}
    return f"/{page_path}" + (f"?{urlencode(kept)}" if kept else "")


def _send_here(page_path: str) -> None:
    """The teacher's "Send the class here": this page with the settings in its URL now."""
    send_class(page_link(page_path, st.query_params.to_dict()), page_path or "home")


def send_class(link: str, title: str) -> None:
    mine = seat()
    if mine.teaching is None:
        return
    try:
        sent = class_store().send(mine.teaching.code, mine.teaching.teacher_key, link, title)
        _SENDS.forget((os.environ.get(URL_SETTING) or "", mine.teaching.code))
        st.toast(f"Class {mine.teaching.code} sent to {md(sent.title)}.", icon=":material/near_me:")
    except ClassError as exc:
        mine.notice = str(exc)


def _follow_changed() -> None:
    mine = seat()
    mine.following = bool(st.session_state.get("class_follow"))
    if mine.following:
        mine.send_seen = 0            # back to the class: go to where it was sent last


def _heartbeat_or_shared_send(mine: ClassSeat) -> Send:
    """Where the class is sent. Every HEARTBEAT_SECONDS the learner's own heartbeat (the store
    sees them, and a removal or a teacher's rename reaches them); in between, the send every
    follower of the class shares (one read per class and process per SEND_MAX_AGE), so sixty
    followers polling every second cost one read, not sixty."""
    assert mine.membership is not None
    code, token = mine.membership.code, mine.membership.token
    now = time.monotonic()
    if now - mine.heartbeat_at >= HEARTBEAT_SECONDS:
        beat = class_store().heartbeat(code, token)
        mine.heartbeat_at = now
        if beat.nickname != mine.membership.nickname:        # renamed by the teacher
            mine.membership = Membership(code, token, beat.nickname)
            st.rerun(scope="app")
        return beat.send
    return _SENDS.get((os.environ.get(URL_SETTING) or "", code),
                      lambda: class_store().current_send(code))


@st.fragment(run_every=FOLLOW_SECONDS)
def _follow(pages: dict[str, str]) -> None:
    """Runs by itself every FOLLOW_SECONDS: a new send moves this learner's page there
    (st.switch_page keeps the session, so their work on every other page is kept)."""
    mine = seat()
    send_pending()                  # the database back: answers given meanwhile go now
    if mine.membership is None:
        return
    try:
        send = _heartbeat_or_shared_send(mine)
    except StoreUnavailable as exc:
        # Said where the seat is, while it lasts: a learner who is only looking at a page
        # learns the class is out of reach within one poll and the store's deadline.
        st.warning(md(str(exc)), icon=":material/cloud_off:")
        return
    except ClassError as exc:                 # the class ended, or the teacher removed this learner
        mine.membership, mine.pending, mine.notice = None, [], str(exc)
        _remember(SEAT_COOKIE, "")
        st.rerun(scope="app")
    if mine.pacing_seen is None:
        mine.pacing_seen = send.pacing
    elif send.pacing != mine.pacing_seen:     # the teacher opened, closed, timed or reset a check
        mine.pacing_seen = send.pacing
        st.rerun(scope="app")
    if not mine.following or send.number <= mine.send_seen or not send.link:
        return
    mine.send_seen = send.number
    # A sweep's send opens each learner's own cell (workbench/classroom/sweep_store.py).
    parts = urlsplit(sweep_destination(class_store(), mine.membership.code, mine.membership.token,
                                       send.link))
    script = pages.get(parts.path.strip("/"))
    if script is None:
        return                                # not a page of this app (the store checks links too)
    # Blank values are values: `hidden=` is a linear model, not the default layers.
    st.switch_page(script, query_params=dict(parse_qsl(parts.query, keep_blank_values=True)))
