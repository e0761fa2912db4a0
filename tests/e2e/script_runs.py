"""Which kind of script run a click started, read from Streamlit's own messages.

A page that reruns only a fragment for a click (the batch iterator's Next, the tensor
inspector's Append) ends that run with `FINISHED_FRAGMENT_RUN_SUCCESSFULLY`; a run of the whole
page ends with `FINISHED_SUCCESSFULLY`. A test listens on the page's `/_stcore/stream` websocket
(`stream(page)`, registered before the page opens) and waits for the message that ends the run.
"""
from __future__ import annotations

from collections.abc import Callable


def run_finished(payload: str | bytes) -> str | None:
    """A Streamlit ForwardMsg's script_finished status (None for any other message)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    if isinstance(payload, str):
        return None
    message = ForwardMsg()
    try:
        message.ParseFromString(payload)
    except Exception:  # noqa: BLE001 - not a ForwardMsg: not the message waited for
        return None
    if message.WhichOneof("type") != "script_finished":
        return None
    return ForwardMsg.ScriptFinishedStatus.Name(message.script_finished)


def collect_sockets(page) -> Callable[[], object]:
    """Start listening before the page opens; the returned function gives its Streamlit stream."""
    sockets = []
    page.on("websocket", lambda socket: sockets.append(socket))
    return lambda: next(ws for ws in sockets if ws.url.endswith("/_stcore/stream"))
