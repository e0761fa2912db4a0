"""The frame route's protocol is written once, in Python, and sent to the live view in the
header the page mounts it with (live_canvas.protocol()): the JavaScript (static/live/) reads it
from there and keeps no copies."""
from __future__ import annotations

import re
from pathlib import Path

from app_pages.moons_trainer import live_canvas
from components import binary_payload, frame_route
from workbench.common.jobs import SCHEDULER

LIVE = Path(__file__).resolve().parents[2] / "static" / "live"


def test_the_protocol_is_the_python_constants():
    assert live_canvas.protocol() == {
        "gone": frame_route.GONE,
        "pause": frame_route.PAUSE,
        "frame_ms": round(frame_route.ASK_SECONDS * 1000),
        "lease_ms": round(SCHEDULER.ttl * 1000),
        "socket_open_ms": round(frame_route.SOCKET_OPEN_SECONDS * 1000),
        "socket_patience_ms": round(frame_route.SOCKET_PATIENCE_SECONDS * 1000),
        "wire": binary_payload.FORMAT,
    }
    assert binary_payload.FORMAT["align"] == binary_payload.ALIGN
    assert set(binary_payload.FORMAT["dtypes"]) == set(binary_payload.DTYPES.values())


def test_the_view_gives_up_on_a_socket_within_the_runs_lease():
    # A view that asks for no frame for a lease is taken for a closed tab: the socket's waits,
    # and the view's pace, leave room for a fetch before that.
    assert frame_route.SOCKET_OPEN_SECONDS < SCHEDULER.ttl
    assert frame_route.SOCKET_PATIENCE_SECONDS + frame_route.ASK_SECONDS < SCHEDULER.ttl
    # The view asks no sooner than the route serves: a sooner ask would wait for its turn.
    assert frame_route.ASK_SECONDS >= frame_route.FRAME_INTERVAL


def test_the_javascript_keeps_no_copy_of_the_protocol():
    sources = {path.name: path.read_text() for path in LIVE.glob("*.js")}
    assert {"view.js", "polling.js", "transport.js", "wire.js", "plane.js", "curves.js",
            "ticks.js"} <= set(sources)
    p = live_canvas.protocol()
    literals = [str(p["gone"]), str(p["frame_ms"]), str(p["lease_ms"]), str(p["socket_open_ms"]),
                str(p["socket_patience_ms"])]
    for name, text in sources.items():
        code = re.sub(r"//.*", "", text)           # comments may name them
        for literal in literals:
            assert not re.search(rf"\b{literal}\b", code), (name, literal)
        assert not re.search(rf"[\"'`]{p['pause']}[\"'`]", code), name
    assert "protocol.pause" in sources["transport.js"] and "protocol.gone" in sources["transport.js"]
    # The view paces its asks by the route's frame_ms (polling.js, the poll loop view.js starts).
    assert "protocol.frame_ms" in sources["polling.js"]
