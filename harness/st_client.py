"""A small client that drives Streamlit 1.67 browser sessions over the websocket, as the frontend does.

Protocol (read from streamlit/web/server/starlette/starlette_websocket.py, runtime/app_session.py
and the 1.67 frontend bundle):

- Connect to ws://HOST:PORT/_stcore/stream with the subprotocol list ["streamlit", xsrf, session];
  only the first entry is required. The XSRF token only matters for the auth cookie, and a
  missing Origin header is allowed; we send a same-origin Origin like a browser does.
- Every frame is binary protobuf: BackMsg up, ForwardMsg down. The server sends nothing until the
  client sends BackMsg.rerun_script (a ClientState). The first run of a tab carries
  page_name = the URL path without "/" ("" for the default page) and page_script_hash = "";
  once new_session has named the page, later reruns carry page_script_hash and page_name = "".
- query_string is location.search without "?", still URL-encoded; the server parses it.
  page_info_changed carries the query string the script wrote (st.query_params); the browser
  puts it in the address bar and sends it with every later rerun.
- WidgetStates holds every active widget's value, plus a trigger_value for a clicked button.
  An element's proto carries its value only when set_value is true; otherwise the browser keeps
  what it had, or the proto's default for a widget it has not seen.
- A run starts with new_session (metadata.run.script_run_id) and ends with script_finished:
  FINISHED_SUCCESSFULLY (also when the script raised: the exception is a delta),
  FINISHED_WITH_COMPILE_ERROR, FINISHED_EARLY_FOR_RERUN (st.rerun or a newer request: another
  run follows) or FINISHED_FRAGMENT_RUN_SUCCESSFULLY.
- st.fragment(run_every=s) sends auto_rerun {interval, fragment_id}; the browser then calls
  setInterval and sends rerun_script with fragment_id and is_auto_rerun = true every interval,
  until stop_auto_rerun names the fragment or a full run starts (new_session without
  metadata.run.fragment_ids clears every timer; that run re-sends auto_rerun if still wanted).
- A widget drawn inside an st.fragment arrives in a delta whose fragment_id names it; the
  browser sends a change to that widget with the same fragment_id, and only the fragment runs.
- new_session.page_script_hash is the entry script's; with st.navigation the page that ran is
  navigation.page_script_hash, and that is what the browser sends with later reruns.
- A keyed container is a Block whose id is "$$ID-<hash>-<key>".
- The server answers BackMsg.app_heartbeat with heartbeat_ack; websocket pings are answered by
  the websockets library. Nothing else is needed to keep a session alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import psutil
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from components.binary_payload import unpack

GUARD_KEY = "page_guard_error"
GUARD_TITLE = "This page hit an unexpected error"
ID_PREFIX = "$$ID-"

STATUS_NAMES = {
    ForwardMsg.FINISHED_SUCCESSFULLY: "success",
    ForwardMsg.FINISHED_WITH_COMPILE_ERROR: "compile_error",
    ForwardMsg.FINISHED_EARLY_FOR_RERUN: "early_for_rerun",
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY: "fragment_success",
}
FINAL_STATUSES = {"success", "compile_error", "fragment_success"}
WIDGET_KINDS = {
    "button",
    "button_group",
    "checkbox",
    "download_button",
    "file_uploader",
    "multiselect",
    "number_input",
    "radio",
    "selectbox",
    "slider",
    "text_area",
    "text_input",
    "color_picker",
    "date_input",
    "time_input",
    "chat_input",
}
TEXT_KINDS = {"markdown", "alert", "progress", "text", "heading", "code", "metric", "exception",
              "bidi_component"}


def user_key(element_id: str) -> str | None:
    """The user's key in a generated id "$$ID-<hash>-<key>"; None when the element has no key."""
    if not element_id.startswith(ID_PREFIX):
        return None
    parts = element_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[2] != "None" else None


@dataclass
class Widget:
    id: str
    kind: str
    label: str
    key: str | None
    disabled: bool
    options: list[str] = field(default_factory=list)
    fragment_id: str = ""    # drawn by this st.fragment: a change to it reruns only the fragment


@dataclass
class RunResult:
    """What one rerun_script request produced, up to the script_finished that ended it."""

    wall_s: float = 0.0
    finished: bool = False
    status: str | None = None
    runs: int = 0  # script runs (st.rerun makes more than one)
    exceptions: list[str] = field(default_factory=list)
    guard_panel: bool = False
    guard_text: str = ""
    texts: list[str] = field(default_factory=list)  # markdown, alerts, progress labels, ...
    elements: int = 0
    query_strings: list[str] = field(default_factory=list)  # page_info_changed, in order
    page_not_found: str | None = None
    compile_error: str = ""
    auto_reruns: dict[str, float] = field(default_factory=dict)
    stopped_fragments: list[str] = field(default_factory=list)
    error: str | None = None  # connection trouble, timeout
    plotly_specs: list[str] = field(default_factory=list)  # each st.plotly_chart's figure JSON

    def has_text(self, needle: str) -> bool:
        return any(needle in text for text in self.texts)


def _element_text(kind: str, element: Element) -> str:
    if kind == "markdown":
        return element.markdown.body
    if kind == "alert":
        return element.alert.body
    if kind == "progress":
        return element.progress.text
    if kind == "text":
        return element.text.body
    if kind == "heading":
        return element.heading.body
    if kind == "code":
        return element.code.code_text
    if kind == "metric":
        return f"{element.metric.label}: {element.metric.body}"
    if kind == "exception":
        return f"{element.exception.type}: {element.exception.message}"
    if kind == "bidi_component":
        return _component_status(element.bidi_component)
    return ""


def _component_status(component: Any) -> str:
    """The status line a browser component draws itself (the moons trainer's live view counts
    epochs in its canvas, not in markdown), from its binary payload (components/binary_payload.py)."""
    if component.WhichOneof("data") != "bytes":
        return ""
    try:
        header, _ = unpack(component.bytes)
    except (ValueError, KeyError, struct.error):
        return ""
    for part in (header, header.get("frame")):     # the live view nests it in its frame
        if isinstance(part, dict) and isinstance(part.get("status"), str):
            return part["status"]
    return ""


def _component_poll_url(component: Any) -> str | None:
    """The frame route a live view asks for its frames (the "poll" of its payload header), if any."""
    if component.WhichOneof("data") != "bytes":
        return None
    try:
        header, _ = unpack(component.bytes)
    except (ValueError, KeyError, struct.error):
        return None
    poll = header.get("poll")
    return poll if isinstance(poll, str) else None


def frame_status(message: bytes) -> tuple[str, bool]:
    """A frame route answer's status line (what the live view shows above its plane) and
    whether it says the run has ended."""
    header, _ = unpack(message)
    return str(header.get("frame", {}).get("status", "")), bool(header.get("ended"))


async def follow_frames(session: Session, until: float, on_status: Callable[[str], bool],
                        every: float = 0.1) -> bool:
    """Ask the session's frame route for frames as the live view does (its WebSocket: one
    message out, one frame back, ten a second) until `until`, or until `on_status(status)`
    returns True. Returns whether a frame said the run ended (its end, or a lapsed lease: the
    view's "ended" trigger then makes the page run again)."""
    if session.poll_url is None:
        return False
    host = session.base_url.split("://", 1)[-1]
    async with connect(f"ws://{host}/{session.poll_url.lstrip('/')}/stream", max_size=None) as socket:
        while time.monotonic() < until:
            asked = time.monotonic()
            await socket.send("0")
            status, ended = frame_status(await socket.recv())
            if on_status(status) or ended:
                return ended
            await asyncio.sleep(max(0.0, every - (time.monotonic() - asked)))
    return False


def _initial_state(kind: str, proto: Any) -> WidgetState | None:
    """The value a browser holds for a widget it draws: the proto's value if set, else its default."""
    state = WidgetState(id=proto.id)
    set_value = bool(getattr(proto, "set_value", False))
    if kind == "checkbox":
        state.bool_value = proto.value if set_value else proto.default
    elif kind == "number_input":
        if set_value:
            value = proto.value
        elif proto.HasField("default"):
            value = proto.default
        else:
            return None
        if proto.data_type == proto.INT:
            state.int_value = int(value)
        else:
            state.double_value = value
    elif kind in {"selectbox", "radio"}:
        if set_value:
            state.string_value = proto.raw_value
        elif proto.HasField("default") and proto.default < len(proto.options):
            state.string_value = proto.options[proto.default]
        else:
            return None
    elif kind == "slider":
        if proto.options:  # select_slider: not modelled
            return None
        values = proto.value if set_value else proto.default
        state.double_array_value.data.extend(values)
    elif kind in {"text_area", "text_input"}:
        if set_value:
            state.string_value = proto.value
        elif proto.HasField("default"):
            state.string_value = proto.default
        else:
            return None
    elif kind == "button_group":
        if set_value:
            values = list(proto.raw_values)
        else:
            values = [proto.options[i].content for i in proto.default if i < len(proto.options)]
        state.string_array_value.data.extend(values)
    elif kind == "multiselect":
        if set_value:
            values = list(proto.raw_values)
        else:
            values = [proto.options[i] for i in proto.default if i < len(proto.options)]
        state.string_array_value.data.extend(values)
    else:  # buttons are triggers; uploads, pickers and charts are not modelled
        return None
    return state


def _options(kind: str, proto: Any) -> list[str]:
    if kind in {"selectbox", "radio", "multiselect"}:
        return list(proto.options)
    if kind == "button_group":
        return [o.content for o in proto.options]
    return []


class Session:
    """One browser tab: a websocket, the widget values the tab holds, and its address bar."""

    def __init__(self, base_url: str, page: str = "", query: str = "", *, run_timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.page = page.strip("/")
        self.query = query.lstrip("?")
        self.run_timeout = run_timeout
        self.page_script_hash = ""
        self.session_id = ""
        self.widgets: dict[str, Widget] = {}
        self.values: dict[str, WidgetState] = {}
        self.fragments: dict[str, float] = {}  # fragment id -> run_every interval
        self.poll_url: str | None = None  # the frame route of the last component that named one
        self.pages: dict[str, str] = {}  # url path -> page script hash
        self.closed = False
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._result: RunResult | None = None
        self._done: asyncio.Event = asyncio.Event()
        self._full_run_ids: set[str] = set()

    async def connect(self) -> None:
        host = self.base_url.split("://", 1)[-1]
        self._ws = await connect(
            f"ws://{host}/_stcore/stream",
            subprotocols=[Subprotocol("streamlit")],
            origin=f"http://{host}",
            max_size=None,
            open_timeout=30,
            ping_interval=20,
            ping_timeout=60,
            close_timeout=2,
        )
        self._reader = asyncio.create_task(self._read())

    async def open(self) -> RunResult:
        """Connect and run the page as a freshly opened tab (the lesson link's first run)."""
        if self._ws is None:
            await self.connect()
        return await self.rerun(first=True)

    async def close(self) -> None:
        self.closed = True
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def widget(self, key: str) -> Widget:
        """The active widget drawn with this user key."""
        for widget in self.widgets.values():
            if widget.key == key:
                return widget
        keys = sorted(str(w.key) for w in self.widgets.values())
        raise KeyError(f"no widget with key {key!r}; keys: {keys}")

    def value_of(self, key: str) -> WidgetState | None:
        return self.values.get(self.widget(key).id)

    async def click(self, key: str) -> RunResult:
        widget = self.widget(key)
        return await self.rerun(trigger=widget.id, fragment_id=widget.fragment_id)

    async def set_value(self, key: str, state: WidgetState) -> RunResult:
        widget = self.widget(key)
        state.id = widget.id
        return await self.rerun(changes={widget.id: state}, fragment_id=widget.fragment_id)

    async def navigate(self, page: str, query: str = "") -> RunResult:
        """Follow an in-app link (st.page_link): same session, the link's query. To another page,
        the browser forgets the widgets it drew; to the page it is on, it keeps their values (and
        the server marks only the values it changes)."""
        page = page.strip("/")
        if page != self.page:
            self.values.clear()
            self.widgets.clear()
            self.fragments.clear()
        self.page = page
        self.page_script_hash = self.pages.get(self.page, "")
        return await self.rerun(query=query, first=not self.page_script_hash)

    async def tick(self, fragment_id: str) -> RunResult:
        """What the browser's setInterval sends for a run_every fragment."""
        return await self.rerun(fragment_id=fragment_id, is_auto_rerun=True)

    def widget_states(
        self, changes: dict[str, WidgetState] | None = None, trigger: str | None = None
    ) -> list[WidgetState]:
        if changes:
            self.values.update(changes)
        states = list(self.values.values())
        if trigger is not None:
            states.append(WidgetState(id=trigger, trigger_value=True))
        return states

    async def rerun(
        self,
        *,
        changes: dict[str, WidgetState] | None = None,
        trigger: str | None = None,
        query: str | None = None,
        fragment_id: str = "",
        is_auto_rerun: bool = False,
        first: bool = False,
    ) -> RunResult:
        """Send one rerun_script and wait for the script_finished that ends the run(s) it caused."""
        if self._ws is None or self.closed:
            return RunResult(error="not connected")
        if query is not None:
            self.query = query.lstrip("?")
        state = ClientState(query_string=self.query, fragment_id=fragment_id, is_auto_rerun=is_auto_rerun)
        if first or not self.page_script_hash:
            state.page_name = self.page
        else:
            state.page_script_hash = self.page_script_hash
        state.widget_states.widgets.extend(self.widget_states(changes, trigger))
        state.context_info.timezone = "UTC"
        state.context_info.timezone_offset = 0
        state.context_info.locale = "en-US"
        state.context_info.url = f"{self.base_url}/{self.page}" + (f"?{self.query}" if self.query else "")
        state.context_info.is_embedded = False
        state.context_info.color_scheme = "light"
        result = RunResult()
        self._result = result
        self._done = asyncio.Event()
        started = time.perf_counter()
        try:
            await self._ws.send(BackMsg(rerun_script=state).SerializeToString())
            await asyncio.wait_for(self._done.wait(), self.run_timeout)
        except TimeoutError:
            result.error = f"no script_finished within {self.run_timeout:.0f}s"
        except ConnectionClosed as exc:
            result.error = f"connection closed: {exc}"
        result.wall_s = time.perf_counter() - started
        if result.error is None and self.closed:
            result.error = "connection closed"
        self._result = None
        return result

    async def heartbeat(self) -> None:
        if self._ws is not None and not self.closed:
            await self._ws.send(BackMsg(app_heartbeat=True).SerializeToString())

    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for raw in self._ws:
                if isinstance(raw, bytes):
                    self._handle(ForwardMsg.FromString(raw))
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            if self._result is not None and self._result.error is None:
                self._result.error = "connection closed"
            self._done.set()

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        result = self._result
        if kind == "new_session":
            # With st.navigation this is the router's hash; the page's comes in `navigation`.
            self.page_script_hash = self.page_script_hash or msg.new_session.page_script_hash
            if msg.new_session.HasField("initialize"):
                self.session_id = msg.new_session.initialize.session_id or self.session_id
            if not msg.metadata.run.fragment_ids:
                # A full run: the browser drops widgets the new run does not draw again, and
                # its run_every timers (the run re-sends auto_rerun for fragments still live).
                self._full_run_ids = set()
                self.fragments.clear()
            if result is not None:
                result.runs += 1
        elif kind == "delta":
            self._handle_delta(msg, result)
        elif kind == "navigation":
            self.page_script_hash = msg.navigation.page_script_hash
            self.pages = {page.url_pathname: page.page_script_hash for page in msg.navigation.app_pages}
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
            if result is not None:
                result.query_strings.append(self.query)
        elif kind == "auto_rerun":
            self.fragments[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
            if result is not None:
                result.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                self.fragments.pop(fragment, None)
                if result is not None:
                    result.stopped_fragments.append(fragment)
        elif kind == "page_not_found":
            if result is not None:
                result.page_not_found = msg.page_not_found.page_name
        elif kind == "session_event":
            if result is not None and msg.session_event.HasField("script_compilation_exception"):
                exc = msg.session_event.script_compilation_exception
                result.compile_error = f"{exc.type}: {exc.message}"
        elif kind == "script_finished":
            status = STATUS_NAMES.get(msg.script_finished, str(msg.script_finished))
            if status == "success" and self._full_run_ids:
                for stale in set(self.values) - self._full_run_ids:
                    self.values.pop(stale, None)
                    self.widgets.pop(stale, None)
            if result is not None:
                result.status = status
                if status in FINAL_STATUSES:
                    result.finished = True
                    self._done.set()

    def _handle_delta(self, msg: ForwardMsg, result: RunResult | None) -> None:
        delta = msg.delta
        which = delta.WhichOneof("type")
        if which == "add_block":
            block_id = delta.add_block.id
            if GUARD_KEY in block_id and result is not None:
                result.guard_panel = True
            tabs = delta.add_block.tab_container if delta.add_block.HasField("tab_container") else None
            if tabs is not None and tabs.id:       # keyed st.tabs: a widget whose value is a label
                self._full_run_ids.add(tabs.id)
                self.widgets[tabs.id] = Widget(tabs.id, "tabs", "", user_key(tabs.id), False)
            return
        if which != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind is None:
            return
        if result is not None:
            result.elements += 1
            text = _element_text(kind, element) if kind in TEXT_KINDS else ""
            if text:
                result.texts.append(text)
                if GUARD_TITLE in text:
                    result.guard_panel = True
                    result.guard_text = result.guard_text or text
            if kind == "exception":
                result.exceptions.append(text)
            if kind == "code" and result.guard_panel and "|" not in result.guard_text:
                result.guard_text = f"{result.guard_text or GUARD_TITLE} | {text}"  # the error itself
        if kind == "plotly_chart" and result is not None:
            result.plotly_specs.append(element.plotly_chart.spec)
        if kind == "bidi_component":
            self.poll_url = _component_poll_url(element.bidi_component) or self.poll_url
        if kind in WIDGET_KINDS:
            proto = getattr(element, kind)
            widget_id = proto.id
            if not widget_id:
                return
            self._full_run_ids.add(widget_id)
            self.widgets[widget_id] = Widget(
                widget_id,
                kind,
                getattr(proto, "label", ""),
                user_key(widget_id),
                bool(getattr(proto, "disabled", False)),
                _options(kind, proto),
                delta.fragment_id,
            )
            if widget_id not in self.values or getattr(proto, "set_value", False):
                state = _initial_state(kind, proto)
                if state is not None:
                    self.values[widget_id] = state


# -- values for set_value -------------------------------------------------------------------------


def int_state(value: int) -> WidgetState:
    return WidgetState(int_value=value)


def double_state(value: float) -> WidgetState:
    return WidgetState(double_value=value)


def string_state(value: str) -> WidgetState:
    return WidgetState(string_value=value)


def bool_state(value: bool) -> WidgetState:
    return WidgetState(bool_value=value)


def slider_state(*values: float) -> WidgetState:
    state = WidgetState()
    state.double_array_value.data.extend(values)
    return state


def strings_state(values: Iterable[str]) -> WidgetState:
    state = WidgetState()
    state.string_array_value.data.extend(values)
    return state


def number_state(session: Session, key: str, value: float) -> WidgetState:
    """An int_value or double_value, whichever the number_input behind `key` holds."""
    current = session.value_of(key)
    if current is not None and current.WhichOneof("value") == "int_value":
        return int_state(int(value))
    return double_state(float(value))


# -- the server's memory ---------------------------------------------------------------------


def rss_bytes(pid: int) -> int:
    """Resident memory of a process and all its descendants."""
    try:
        process = psutil.Process(pid)
        total = process.memory_info().rss
        for child in process.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += child.memory_info().rss
        return int(total)
    except psutil.Error:
        return 0


class MemorySampler:
    """Samples rss_bytes(pid) every `interval` seconds in the background; keeps the peak."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self._task: asyncio.Task[None] | None = None

    def sample(self) -> int:
        value = rss_bytes(self.pid)
        self.peak = max(self.peak, value)
        self.samples += 1
        return value

    async def _run(self) -> None:
        while True:
            await asyncio.to_thread(self.sample)
            await asyncio.sleep(self.interval)

    def start(self) -> MemorySampler:
        self._task = asyncio.create_task(self._run())
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def mib(value: int) -> str:
    return f"{value / 2**20:.0f} MiB"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


async def run_timers(session: Session, until: float, stop: asyncio.Event,
                     on_result: Callable[[str, RunResult], None] | None = None) -> None:
    """Run the page's run_every fragments at their intervals, as the browser's timers do, until
    `until` (time.monotonic) or `stop`; `on_result(fragment, result)` sees each run. Each timer
    starts when this sees its fragment (bench/class.py keeps its own loop, which also starts a
    timer where the tab's page opened)."""
    due: dict[str, float] = {}
    while time.monotonic() < until and not stop.is_set() and not session.closed:
        now = time.monotonic()
        for fragment, interval in list(session.fragments.items()):
            due.setdefault(fragment, now + interval)
            if now >= due[fragment]:
                due[fragment] = now + interval
                result = await session.tick(fragment)
                if on_result is not None:
                    on_result(fragment, result)
        await asyncio.sleep(0.05)
