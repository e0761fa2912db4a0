"""The moons trainer's live view as a browser component (its drawing code: static/live/, ES modules;
the entry is static/live/view.js).

The component is mounted once and updated in place. What does not change while a run trains
(the points, the axes, the colours: the *scene*) is sent when it changes or when the page runs
in full; each frame sends the probability grid and the points' probabilities as uint8, the
status line and the epochs finished since the last frame, in one binary message
(components/binary_payload.py): about 5 KB.

The component's inline JavaScript is only a loader: Streamlit sends a component's JavaScript
with every update, so the drawing code is a static file (`server.enableStaticServing`), fetched
once from this app's own server and cached by the browser. Its modules import each other by
relative paths from the same folder: no build step.

The frame route's protocol (its close code, the pause message, the view's pace and socket timings
under the run's lease, the wire format) is written once, here and in components/frame_route.py,
and sent in every header the page sends (`protocol()`): the JavaScript has no copies.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

from components import binary_payload, frame_route
from components.binary_payload import pack
from components.classroom import visible
from components.figures import graph_scale, presenting
from workbench.common.jobs import SCHEDULER
from workbench.common.palette import (
    BLUE,
    CLASS0_BLUE,
    CLASS1_AMBER,
    GREEN,
    INK_SOFT,
    ORANGE,
    VERMILION,
    WHITE,
)
from workbench.common.theme import DARK, LIGHT, sign_colours
from workbench.moons_trainer.data import drawn_minimum, plot_extent
from workbench.moons_trainer.network import MAP_RESOLUTION, WEIGHT_ZERO, quantised_maps, quantised_weights
from workbench.moons_trainer.settings import TABLE as SETTINGS_TABLE
from workbench.moons_trainer.settings import MoonsSettings, feature_words
from workbench.moons_trainer.training import LiveSnapshot, NetworkSnapshot, TrainingSession

RESOLUTION = 48
# The network view's unit maps (workbench/moons_trainer/network.py MAP_RESOLUTION, which the code panel's
# script reads too).
NETWORK_RESOLUTION = MAP_RESOLUTION
KEY = "mt_live"
CLASS_SHAPES = ("circle", "square")   # the points' shape by class (0, 1), as the legend names them

_LOADER = """
const source = new URL("app/static/live/view.js", document.baseURI).href;
export default function (component) {
  const cleanup = { run: null };
  (window.__moonsLiveModule ??= import(source))
    .then((module) => { cleanup.run = module.render(component); })
    .catch((error) => {
      component.parentElement.textContent = "The live view could not load: " + error;
    });
  return () => cleanup.run && cleanup.run();
}
"""
_RENDERER = st.components.v2.component("workbench_moons_live", js=_LOADER)


def protocol() -> dict:
    """What the view's transport needs to know of the frame route, in the page's header."""
    return {
        "gone": frame_route.GONE,           # the stream's close code for a view it does not know
        "pause": frame_route.PAUSE,         # the path (POSTed under the token) that pauses
        "frame_ms": round(frame_route.ASK_SECONDS * 1000),
        "lease_ms": round(SCHEDULER.ttl * 1000),
        "socket_open_ms": round(frame_route.SOCKET_OPEN_SECONDS * 1000),
        "socket_patience_ms": round(frame_route.SOCKET_PATIENCE_SECONDS * 1000),
        "wire": binary_payload.FORMAT,
    }


@dataclass
class SentToBrowser:
    """What this learner's live view already holds, so a frame sends only what is new."""

    scene_id: str = ""
    history_epochs: int = 0
    page_run: int = -1          # the page run whose first frame was sent (a full run resends all)


def scene(session: TrainingSession, *, show_test: bool, show_bayes: bool,
          max_height: int) -> tuple[dict, dict[str, np.ndarray]]:
    """The points, axes and colours: what a run's frames are drawn over."""
    split = session.split
    # A point's class is its colour and its shape (CLASS_SHAPES), so that neither a colour-blind
    # learner nor a grey projector loses it; its split is how the shape is filled.
    groups = [("train", "filled", 2.8, split.x_train, split.y_train, "train"),
              ("val", "open", 3.8, split.x_val, split.y_val, "validation")]
    if show_test or session.settings.drawn:     # drawn points never vanish from the plane
        groups.append(("test", "dot", 3.8, split.x_test, split.y_test, "test"))
    blobs: dict[str, np.ndarray] = {}
    regression = session.settings.regression
    for name, _, _, x, y, _ in groups:
        blobs[f"{name}_xy"] = np.asarray(x, dtype=np.float32).ravel()
        if regression:
            # A regression point's colour and shape are its target's sign (orange squares at or
            # above 0, blue circles below, as the shading's ends); its value is read out.
            blobs[f"{name}_y"] = (np.asarray(y) >= 0).astype(np.uint8)
            blobs[f"{name}_t"] = np.asarray(y, dtype=np.float32)
        else:
            blobs[f"{name}_y"] = np.asarray(y, dtype=np.uint8)
    bayes = session.bayes_grid(RESOLUTION) if show_bayes else None     # None: drawn data
    if bayes is not None:
        blobs["bayes"] = bayes.astype(np.float32).ravel()
    network = network_scene(session, blobs) if session.settings.net else None
    header = plane_header(session.settings, plot_extent(session.data), max_height)
    header.update({
        "groups": [{"name": n, "fill": fill, "size": size, "label": label}
                   for n, fill, size, _, _, label in groups],
        "bayes_accuracy": session.bayes_test_accuracy,
        # Regression: the best possible predictor's test R², the R² chart's dotted ceiling.
        "best_r2": session.best_test_r2,
        "network": network,
    })
    return _scene_id(header, blobs, session)


def plane_header(settings: MoonsSettings, extent: tuple[float, ...], max_height: int) -> dict:
    """The scene's plane: axes, colours, layout and, for drawn data, the drawing (`draw`)."""
    return {
        "extent": [float(v) for v in extent], "resolution": RESOLUTION, "groups": [],
        "class_shapes": list(CLASS_SHAPES),
        "x_title": "x\u2081 (raw)", "y_title": "x\u2082 (raw)", "scale": graph_scale(),
        # Presenter mode: the browser sizes the plane to the rest of its viewport (the server
        # never knows the projector's size); otherwise at most `max_height` pixels tall.
        "fit_viewport": presenting(), "max_height": max_height, "bayes_accuracy": None,
        "shade_opacity": 0.85, "discretize": settings.discrete,
        "colours": {"classes": [BLUE, ORANGE], "class_names": ["blue", "orange"], "class0_shade": CLASS0_BLUE,
                    "class1_shade": CLASS1_AMBER, "middle": WHITE, "outline": INK_SOFT,
                    "bayes": GREEN, "curves": [BLUE, VERMILION]},
        "network": None,
        "draw": drawing(settings) if settings.drawn else None,
        # Regression: the shading is the model's output value over [-1, 1] (the frame's uint8
        # grid carries (clip(v, -1, 1) + 1) / 2), the points' "classes" are their targets' signs.
        "regression": settings.regression,
    }


def drawing(settings: MoonsSettings) -> dict:
    """What the view draws with (static/live/draw.js): the points as the settings hold them and
    as their link writes them, the plane's grid and cap from the settings table, the points each
    class needs, and whether this learner may change them (a link can hide `points`)."""
    param = SETTINGS_TABLE["points"]
    return {"points": [list(point) for point in settings.points], "text": param.format(settings.points),
            "bound": param.bound, "step": param.step, "max": param.max_points,
            "minimum": drawn_minimum(settings.fractions), "editable": visible("points")}


def _scene_id(header: dict, blobs: dict[str, np.ndarray], owner: object) -> tuple[dict, dict]:
    digest = hashlib.blake2b(repr(sorted(header.items())).encode(), digest_size=8)
    for name in sorted(blobs):
        digest.update(blobs[name].tobytes())
    header["id"] = digest.hexdigest() + f"-{id(owner):x}"
    return header, blobs


def network_scene(session: TrainingSession, blobs: dict[str, np.ndarray]) -> dict:
    """What the network view draws its pictures over: the layers' widths, the inputs' maps (the
    input features the model computes from the scaled coordinates, which never change) and the
    sign colours of both themes; the input maps go into `blobs`."""
    codes, low, high = quantised_maps(session.network_input_maps(NETWORK_RESOLUTION))
    blobs["input_maps"] = codes.ravel()
    blobs["input_range"] = np.concatenate([low, high]).astype(np.float32)
    s = session.settings
    colours = {}
    for theme in (LIGHT, DARK):
        negative, positive = sign_colours(theme)
        colours[theme.name] = {"negative": negative, "positive": positive}
    return {"widths": [len(s.features), *s.hidden, 1], "resolution": NETWORK_RESOLUTION,
            "activation": s.act, "input_names": list(s.feature_labels),
            "input_words": [feature_words(f) for f in s.features], "weight_zero": WEIGHT_ZERO,
            "colours": colours}


def network_frame(network: NetworkSnapshot) -> tuple[dict, dict[str, np.ndarray]]:
    """A network picture as uint8: every hidden unit's map in its own range (`unit_range`:
    every unit's low, then every unit's high), every layer's weights around WEIGHT_ZERO with the
    layer's scale, and the biases as float32."""
    picture = network.picture
    maps = (np.concatenate(picture.maps) if picture.maps
            else np.zeros((0, NETWORK_RESOLUTION ** 2), np.float32))     # a linear model
    codes, low, high = quantised_maps(maps)
    weights, scales = zip(*(quantised_weights(w) for w in picture.weights), strict=True)
    header = {"serial": network.serial, "epoch": network.epoch, "weight_scales": list(scales)}
    return header, {"unit_maps": codes.ravel(), "unit_range": np.concatenate([low, high]),
                    "weights": np.concatenate(weights),
                    "biases": np.concatenate(picture.biases).astype(np.float32)}


UNCHANGED = "unchanged"        # a frame that leaves the view's pinned curves as they are


def frame(session: TrainingSession, snapshot: LiveSnapshot, status: str, history_from: int,
          with_test: bool, *, playing: bool, end_note: str = "",
          network: NetworkSnapshot | None = None, pinned: dict | str | None = UNCHANGED
          ) -> tuple[dict, dict]:
    """A snapshot's picture, and the epochs finished from `history_from` on. `playing`: whether
    the run goes on after this frame; `end_note`: why it cannot go on, in plain text (empty while
    it can). The view announces progress, a pause and the end from these two, however its frames
    come (the route, or page reruns where no route is reached). `network`: the network view's
    picture, sent with this frame (a frame without one leaves the view's as it is). `pinned`: the
    pinned run's curves to overlay (compare_panel.pinned_curves; None: no pinned run), or
    UNCHANGED to leave the view's as they are."""
    with_test = with_test or session.settings.drawn     # the scene shows drawn test points too
    points = snapshot.points if with_test else snapshot.points[:len(session.y_train) + len(session.y_val)]
    h = session.history
    loaded = session.loaded
    note = ""
    if loaded is not None:
        note = (f"The curves start at epoch {loaded.epoch}: a resume checkpoint holds no history."
                if loaded.kind == "resume" else
                "The loaded state_dict holds no training history: the curves start with the "
                "epochs trained here.")
    upto = snapshot.epochs_recorded         # the history only grows: a slice is safe to read
    header = {
        "epoch": snapshot.epoch, "epochs": session.settings.epochs, "status": status,
        "playing": playing, "end_note": end_note,
        "history_from": history_from, "history_note": note,
        "history": {name: [round(v, 5) if isinstance(v, float) else v
                           for v in getattr(h, name)[history_from:upto]]
                    for name in ("epoch", "train_loss", "val_loss", "train_acc", "val_acc")},
        "changes": [{"epoch": c.epoch, "short": c.short} for c in list(session.changes)],
    }
    if pinned != UNCHANGED:
        header["pinned"] = pinned
    blobs = {"grid": snapshot.grid, "point_probability": points}
    if network is not None:
        header["network"], network_blobs = network_frame(network)
        blobs.update(network_blobs)
    return header, blobs


def polled_frame(session: TrainingSession, snapshot: LiveSnapshot, status: str, paused_status: str,
                 since: int, scene_id: str, with_test: bool, ended: bool, end_note: str = "",
                 network: NetworkSnapshot | None = None, pinned: dict | str | None = UNCHANGED) -> bytes:
    """The message the frame route answers while a run plays: the latest snapshot, the epochs
    from `since` (what the browser already has), whether the run has ended (and `end_note`, why
    it cannot go on, if so), and the status line the view shows if the learner pauses on this
    frame."""
    header, blobs = frame(session, snapshot, status, min(since, snapshot.epochs_recorded), with_test,
                          playing=not ended, end_note=end_note if ended else "", network=network,
                          pinned=pinned)
    header["paused_status"] = paused_status
    return pack({"frame": header, "scene_id": scene_id, "ended": ended}, blobs)


def live_canvas(session: TrainingSession, sent: SentToBrowser, status: Callable[[LiveSnapshot], str], *,
                playing: bool, show_test: bool, show_bayes: bool, full_run: bool,
                poll_url: str | None = None, settle: bool = False, pause_key: str | None = None,
                pause_shortcut: str | None = None, end_note: str = "",
                max_height: int = 520, replay_epoch: int | None = None,
                pinned: dict | None = None,
                on_points: Callable[[], None] | None = None) -> None:
    """Draw (or update in place) the live view; send the scene only when the browser lacks it.
    With `poll_url`, the browser asks it for the playing run's frames itself (WebSocket, else
    fetch), and a press of the button with key `pause_key` (or of its `pause_shortcut` key) pauses
    the run through it at once.
    `end_note`: why the run cannot go on (plain text, empty while it can), which the view
    announces when the run ends. `replay_epoch`: show the run as it was at the end of that
    finished epoch (paused only), recomputed from its recorded weights. `pinned`: a pinned run's
    curves, overlaid on this run's (compare_panel.pinned_curves). `on_points`: called when the
    learner changed the drawn points (dataset `drawn`; the points in `st.session_state[KEY]`)."""
    result = st.session_state.get(KEY)
    asked = result.get("resync") if result is not None else None    # the browser lacks something
    if full_run or asked is not None:
        sent.scene_id, sent.history_epochs = "", 0
    scene_header, blobs = scene(session, show_test=show_test, show_bayes=show_bayes,
                                max_height=max_height)
    replaying = replay_epoch is not None and not playing
    snapshot = session.latest if playing else None
    network = session.latest_network if playing and session.settings.net else None
    if replaying:
        with session.lock:
            snapshot, network = session.replay(replay_epoch, RESOLUTION,
                                               NETWORK_RESOLUTION if session.settings.net else None)
    elif snapshot is None or (session.settings.net and network is None):
        # Paused (or no slice yet): the model is still, look at it.
        with session.lock:
            snapshot = session.latest = session.snapshot(RESOLUTION)
            if session.settings.net:
                network = session.network_snapshot(NETWORK_RESOLUTION)
    history_from = min(sent.history_epochs, snapshot.epochs_recorded)
    shown = status(snapshot)
    if replaying:
        shown = f"Replaying · {shown} (now: epoch {session.epoch})"
    frame_header, frame_blobs = frame(session, snapshot, shown, history_from, show_test,
                                      playing=playing, end_note="" if playing else end_note,
                                      network=network, pinned=pinned)
    if replaying:
        frame_header["replay_epoch"] = replay_epoch
    epochs_now = snapshot.epochs_recorded
    header: dict = {"frame": frame_header, "poll": poll_url, "settle": settle, "pause_key": pause_key,
                    "pause_shortcut": pause_shortcut,
                    "protocol": protocol()}
    if scene_header["id"] != sent.scene_id:
        header["scene"] = scene_header
        blobs = {**blobs, **frame_blobs}
    else:
        header["scene_id"] = scene_header["id"]
        blobs = frame_blobs
    _mount(pack(header, blobs), on_points)
    sent.scene_id, sent.history_epochs = scene_header["id"], epochs_now


def _mount(data: bytes, on_points: Callable[[], None] | None) -> None:
    _RENDERER(data=data, key=KEY, on_resync_change=lambda: None,
              on_ended_change=lambda: None, on_settle_change=lambda: None,
              on_no_route_change=lambda: None, on_points_change=on_points or (lambda: None))


BOARD_TITLE = "Your points: no model yet"


def board_canvas(settings: MoonsSettings, status: str, *, on_points: Callable[[], None],
                 max_height: int = 520) -> None:
    """The live view with drawn points too few to train on: the plane and the points alone, no
    model (P = 0.5 everywhere, no boundary), and `status` above it."""
    bound = float(SETTINGS_TABLE["points"].bound)
    header, _ = _scene_id(plane_header(settings, (-bound, bound, -bound, bound), max_height), {},
                          BOARD_TITLE)
    frame_header = {
        "epoch": 0, "epochs": settings.epochs, "status": status, "playing": False, "end_note": "",
        "history_from": 0, "history_note": "", "changes": [], "plane_title": BOARD_TITLE,
        "history": {name: [] for name in ("epoch", "train_loss", "val_loss", "train_acc", "val_acc")},
    }
    blobs = {"grid": np.full(RESOLUTION ** 2, 128, dtype=np.uint8),
             "point_probability": np.zeros(0, dtype=np.uint8)}
    _mount(pack({"frame": frame_header, "scene": header, "protocol": protocol()}, blobs), on_points)
