"""Drawn data ("Your own points"): the `points` link parameter, the dataset made of them, the
split's minimum, and what the run says about its unknown ceiling."""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from workbench.common.links import MAX_RAW_LENGTH, PointsParam
from workbench.moons_trainer.challenge import not_reproducible
from workbench.moons_trainer.data import (
    MIN_DRAWN_PER_CLASS,
    drawn_minimum,
    drawn_shortfall,
    make_dataset,
    plot_extent,
    split_and_scale,
)
from workbench.moons_trainer.settings import (
    DRAW_BOUND,
    MAX_DRAWN,
    PRESET,
    SPLITS,
    TABLE,
    MoonsSettings,
    changes,
)
from workbench.moons_trainer.training import TrainingSession

POINTS = TABLE["points"]

# A drawing a learner might make: two clusters of ten, on the drawing's grid (what the Chromium
# test and the page's tests use too).
CLASS0 = [(-1 - 0.25 * (i % 4), 0.5 + 0.25 * (i // 4)) for i in range(10)]
CLASS1 = [(1 + 0.25 * (i % 4), -0.5 - 0.25 * (i // 4)) for i in range(10)]
DRAWING = "0:" + "_".join(f"{x:g},{y:g}" for x, y in CLASS0) + "~1:" + "_".join(
    f"{x:g},{y:g}" for x, y in CLASS1)


def drawn(text: str = DRAWING, **changes_) -> MoonsSettings:
    settings, problems = TABLE.read({"dataset": "drawn", "points": text})
    assert not problems, problems
    return dataclasses.replace(settings, **changes_)


# ---- the link parameter ------------------------------------------------------------------------

def test_points_round_trip_through_the_link():
    settings = drawn()
    assert len(settings.points) == 20
    assert settings.points[0] == (-1.0, 0.5, 0) and settings.points[-1] == (1.25, -1.0, 1)
    written = TABLE.write(settings)
    assert written == {"dataset": "drawn", "points": DRAWING}
    again, problems = TABLE.read(written)
    assert not problems and again == settings


def test_the_format_reads_as_written_and_rounds_to_the_grid():
    value = POINTS.parse(" 0:-1.2,0.5_0.3,1.1 ~ 1:2,1.5_-0.4,-2.03_0.024,-0.025 ")
    assert value == ((-1.2, 0.5, 0), (0.3, 1.1, 0), (2.0, 1.5, 1), (-0.4, -2.05, 1),
                     (0.0, -0.05, 1))
    assert POINTS.format(value) == "0:-1.2,0.5_0.3,1.1~1:2,1.5_-0.4,-2.05_0,-0.05"
    # Classes in either order, repeated, or one missing; a repeated point counts once.
    assert POINTS.parse("1:1,1~0:2,2_2,2~1:-1,0") == ((2.0, 2.0, 0), (1.0, 1.0, 1), (-1.0, 0.0, 1))
    assert POINTS.parse("") == () and POINTS.format(()) == ""
    assert POINTS.parse("1:0.5,0.5") == ((0.5, 0.5, 1),)
    # The same point in both classes is two points: contradictory data is the learner's to draw.
    assert len(POINTS.parse("0:1,1~1:1,1")) == 2


def test_every_character_of_the_link_stays_plain_in_a_shared_link():
    from components.classroom import lesson_url

    url = lesson_url("moons_trainer", TABLE.write(drawn()))
    assert url.endswith("points=" + DRAWING), url
    assert set(DRAWING) <= set("0123456789.,-_~:")


@pytest.mark.parametrize("raw, words", [
    ("x", "each class starts with 0: or 1:"),
    ("2:1,1", "each class starts with 0: or 1:"),
    ("0:1", "is not a point x,y"),
    ("0:1,2,3", "is not a point x,y"),
    ("0:a,b", "is not a point x,y"),
    ("0:nan,1", "is not a point x,y"),
    ("0:inf,1", "is not a point x,y"),
    ("0:1e400,1", "is not a point x,y"),
    ("0:3.5,0", "off the plane"),
    ("1:0,-4", "off the plane"),
])
def test_a_bad_value_is_named_and_the_default_used(raw, words):
    settings, problems = TABLE.read({"dataset": "drawn", "points": raw})
    assert settings.points == () and settings.dataset == "drawn"
    assert len(problems) == 1 and problems[0].param == "points"
    assert words in problems[0].reason, problems[0].reason
    assert "was ignored" in str(problems[0])


def test_the_cap_is_kept_and_the_longest_drawing_fits_a_link():
    assert MAX_DRAWN == 300 and POINTS.max_points == MAX_DRAWN
    longest = POINTS.longest()
    assert len(longest) < MAX_RAW_LENGTH, len(longest)
    assert len(POINTS.parse(longest)) == 2, "the longest value repeats one point per class"
    # MAX_DRAWN distinct points, each with the widest coordinates there are, fit too.
    grid = [round(-2.95 + 0.05 * k, 2) for k in range(0, 60)]
    widest = [(x, y, i % 2) for i, (x, y) in
              enumerate(itertools.product([v for v in grid if v < 0 and abs(v * 100) % 10],
                                          repeat=2))][:MAX_DRAWN]
    assert len(widest) == MAX_DRAWN
    text = POINTS.format(tuple(widest))
    assert len(text) <= len(longest) < MAX_RAW_LENGTH
    assert POINTS.parse(text) == tuple(p for c in (0, 1) for p in widest if p[2] == c)
    one_more = text + "_0,0"
    settings, problems = TABLE.read({"points": one_more})
    assert settings.points == () and f"more than {MAX_DRAWN} points" in problems[0].reason


def test_a_value_past_the_raw_length_is_refused_before_parsing():
    settings, problems = TABLE.read({"points": "0:" + "1,1_" * 1200})
    assert settings.points == () and "longer than" in problems[0].reason


def test_snap_rounds_half_away_from_zero_and_prints_one_way():
    p = PointsParam("p", 3, 0.05, 10)
    assert [p.snap(v) for v in (0.024, 0.025, -0.025, 1.0749, 2.999)] == [0.0, 0.05, -0.05, 1.05, 3.0]
    assert [p.number(v) for v in (0.0, -0.0, 1.0, -1.25, 0.05, 2.5)] == ["0", "0", "1", "-1.25",
                                                                        "0.05", "2.5"]
    with pytest.raises(ValueError):
        PointsParam("p", 3, 0.3, 10)


def test_a_drawing_is_named_in_words_when_it_changes():
    old, new = drawn(), drawn(DRAWING + "_2,-2")
    assert changes(old, new) == ["the drawn points changed from 20 points (10 of class 0, 10 of "
                                 "class 1) to 21 points (10 of class 0, 11 of class 1)"]


# ---- the dataset -------------------------------------------------------------------------------

def test_the_dataset_is_the_drawn_points_on_their_plane():
    settings = drawn()
    data = make_dataset("drawn", settings.n, settings.noise, settings.seed, settings.points)
    assert data.features.tolist() == [[x, y] for x, y, _ in settings.points]
    assert data.labels.tolist() == [c for _, _, c in settings.points]
    assert data.labels.dtype == np.int64 and data.features.dtype == np.float64
    assert plot_extent(data) == (-DRAW_BOUND, DRAW_BOUND, -DRAW_BOUND, DRAW_BOUND)
    # n, noise and seed play no part in the points themselves.
    other = make_dataset("drawn", 5000, 0.9, 7, settings.points)
    assert (other.features == data.features).all()


def test_other_datasets_ignore_the_drawing_kept_in_the_settings():
    settings = dataclasses.replace(drawn(), dataset="moons", n=300)
    assert settings.drawn_points == () and settings.samples == 300
    session = TrainingSession(settings)
    assert session.bayes_test_accuracy is not None
    assert len(session.split.y_train) + len(session.split.y_val) + len(session.split.y_test) == 300


@pytest.mark.parametrize("split", SPLITS)
def test_the_minimum_per_class_always_splits(split):
    """At the minimum every drawing splits, stratified, with both classes in training and points
    in validation and test, whatever the other class's count and the seed; one point fewer in a
    class is refused with the reason."""
    fractions = tuple(int(p) / 100 for p in split.split("/"))
    need = drawn_minimum(fractions)
    assert need >= MIN_DRAWN_PER_CLASS
    assert need >= math.ceil(1 / min(fractions[1:]) - 1e-9)
    rng = np.random.default_rng(0)
    for small, large, seed in itertools.product([need], range(need, need + 40, 3), (0, 1, 42)):
        for counts in ((small, large), (large, small)):
            labels = np.array([0] * counts[0] + [1] * counts[1])
            points = tuple((float(x), float(y), int(c)) for (x, y), c in
                           zip(rng.uniform(-3, 3, size=(len(labels), 2)), labels, strict=True))
            assert drawn_shortfall(points, fractions) is None
            split_ = split_and_scale(make_dataset("drawn", 0, 0, 0, points), fractions, seed)
            assert set(split_.y_train.tolist()) == {0, 1}
            assert len(split_.y_val) >= 2 and len(split_.y_test) >= 2
    short = tuple((0.0, 0.1 * i, 0) for i in range(need - 1)) + tuple((1.0, 0.1 * i, 1) for i in range(need))
    reason = drawn_shortfall(short, fractions)
    assert reason is not None and f"Draw at least {need} points of each class" in reason
    assert f"you have {need - 1} of class 0 and {need} of class 1" in reason
    assert "add 1 more of class 0" in reason and "class 1" not in reason.split("add")[1]


def test_a_run_on_drawn_points_trains_and_says_its_ceiling_is_unknown():
    session = TrainingSession(drawn(epochs=3, batch=8))
    assert session.bayes_test_accuracy is None and session.bayes_val_accuracy is None
    assert session.bayes_grid(48) is None
    session.run_to_end()
    report = session.test_report()
    assert report.bayes_accuracy is None and report.gap_points is None
    assert report.n == len(session.split.y_test)
    assert "20 drawn points" in session.describe()
    assert "no best possible accuracy" in not_reproducible(session)
    # Same drawing, same seed: the same run.
    again = TrainingSession(drawn(epochs=3, batch=8))
    again.run_to_end()
    assert again.history.val_loss == session.history.val_loss


def test_the_preset_is_untouched():
    assert PRESET.points == () and PRESET.dataset == "moons"
    assert "points" not in TABLE.write(PRESET)


def test_the_views_encoding_is_the_links():
    """tests/js/draw.test.mjs has the view write these points as this string; the server reads
    it back as the same points and writes the same string."""
    text = "0:-1.2,0.5_0.3,1.1~1:1,-0.5_2,1.5"
    assert POINTS.parse(text) == ((-1.2, 0.5, 0), (0.3, 1.1, 0), (1.0, -0.5, 1), (2.0, 1.5, 1))
    assert POINTS.format(POINTS.parse(text)) == text


def test_a_dataset_as_a_drawing_is_capped_clipped_and_on_the_grid():
    from workbench.moons_trainer.data import Dataset, as_drawing

    far = Dataset(np.array([[5.0, -7.0], [0.012, 0.5], [1.0, 1.0]]), np.array([0, 1, 1]), "xor", 0.1)
    assert as_drawing(far) == ((3.0, -3.0, 0), (0.0, 0.5, 1), (1.0, 1.0, 1))
    many = make_dataset("moons", 3000, 0.25, 42)
    drawing = as_drawing(many)
    assert len(drawing) <= MAX_DRAWN and len(POINTS.format(drawing)) < MAX_RAW_LENGTH
    assert all(POINTS.snap(x) == x and POINTS.snap(y) == y for x, y, _ in drawing)
    assert {c for *_, c in drawing} == {0, 1}
    assert drawn_shortfall(drawing, PRESET.fractions) is None
