"""The moons trainer's data: a known generative process, a stratified split and a scaler.

`make_dataset` draws points from one of five generative processes (moons, circles, XOR, spiral
or two Gaussians), 2-D features and 0/1 labels; because the process is known, `bayes.py` can
compute the best possible accuracy too. Or the data are the learner's own points (`drawn`),
clicked onto the plane: no process drew them, so no best possible accuracy is known. Two
datasets are regression, as in TensorFlow Playground (`plane`, `multigauss`): each point has a
float target in [-1, 1] instead of a class; their ceiling is the best possible predictor's MSE and
R² (`bayes.regression_ceiling`).
`split_and_scale` makes a stratified train/val/test split and fits a StandardScaler on the
training split only, so nothing about the val/test points leaks into training. This module
never imports streamlit.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import make_circles, make_moons
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from workbench.moons_trainer.settings import (
    DATASETS,
    DRAW_BOUND,
    MAX_DRAWN,
    MAX_SAMPLES,
    REGRESSION,
    TABLE,
)

DrawnPoints = tuple[tuple[float, float, int], ...]      # (x, y, class), as the settings hold them

def _spiral_curve(t: torch.Tensor, label: int) -> torch.Tensor:
    """Two interleaved arms of an Archimedean spiral; t in [0, 1] runs along an arm."""
    radius = 0.2 + 1.8 * t
    angle = 3.0 * math.pi * t + math.pi * label
    return torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=-1)


def _moons_curve(t: torch.Tensor, label: int) -> torch.Tensor:
    """scikit-learn's two half circles, t in [0, 1] mapped to the angle 0..pi."""
    angle = math.pi * t
    if label == 0:
        return torch.stack([torch.cos(angle), torch.sin(angle)], dim=-1)
    return torch.stack([1 - torch.cos(angle), 1 - torch.sin(angle) - 0.5], dim=-1)


def _circles_curve(t: torch.Tensor, label: int) -> torch.Tensor:
    """scikit-learn's circles with factor 0.5: label 0 outer (radius 1), label 1 inner."""
    angle = 2 * math.pi * t
    radius = 1.0 if label == 0 else 0.5
    return torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=-1)


CURVES: dict[str, Callable[[torch.Tensor, int], torch.Tensor]] = {
    "moons": _moons_curve, "circles": _circles_curve, "spiral": _spiral_curve,
}
GAUSSIAN_CENTRES = ((-0.5, -0.5), (0.5, 0.5))


# One function per generative process, each standing alone (numpy and scikit-learn only): the
# trainer's code panel pastes the chosen one's source into its script.

def draw_moons(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's two interleaving half circles."""
    return make_moons(n_samples=n, noise=noise, random_state=seed)


def draw_circles(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's two circles: label 0 outer (radius 1), label 1 inner (radius 0.5)."""
    return make_circles(n_samples=n, noise=noise, random_state=seed, factor=0.5)


def draw_xor(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform on the square [-1, 1]^2; label 1 where x and y have the same sign."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 2))
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)
    return x + rng.normal(scale=noise, size=(n, 2)), y


def draw_spiral(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two arms of an Archimedean spiral, half a turn apart; t runs uniformly along each arm."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2                    # equal classes, in random order
    rng.shuffle(y)
    t = rng.uniform(0.0, 1.0, size=n)
    radius = 0.2 + 1.8 * t
    angle = 3.0 * np.pi * t + np.pi * y
    x = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    return x + rng.normal(scale=noise, size=(n, 2)), y


def draw_gaussians(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One Gaussian blob per class around GAUSSIAN_CENTRES; the noise is each blob's std."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2                    # equal classes, in random order
    rng.shuffle(y)
    x = np.asarray(GAUSSIAN_CENTRES, dtype=np.float64)[y]
    return x + rng.normal(scale=noise, size=(n, 2)), y


# TensorFlow Playground's regression datasets, on the square [-1, 1]^2 (Playground's is
# [-6, 6]^2: its coordinates divided by 6). As in Playground, the point stays where it was drawn
# and the noise moves the place its target is read at: the target is a noisy function of the
# input. Targets are floats in [-1, 1].

def draw_plane(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Like Playground's regressPlane, not the same: here the target is (x1 + x2) / 2, a tilted
    plane, read at Gaussian noise and clipped to [-1, 1]; Playground's is 0.6·(x1 + x2) on these
    coordinates ((x + y) / 10 on its [-6, 6]), read at uniform noise, unclipped."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 2))
    read_at = x + rng.normal(scale=noise, size=(n, 2))
    return x, np.clip((read_at[:, 0] + read_at[:, 1]) / 2, -1.0, 1.0)


MULTI_GAUSSIANS = ((-2 / 3, 5 / 12, 1.0), (0.0, 5 / 12, -1.0), (2 / 3, 5 / 12, 1.0),
                   (-2 / 3, -5 / 12, -1.0), (0.0, -5 / 12, 1.0), (2 / 3, -5 / 12, -1.0))
BUMP_RADIUS = 1 / 3             # a bump falls linearly from 1 at its centre to 0 at this distance


def draw_multigauss(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Playground's regressGaussian: six bumps of sign +1 or -1 (MULTI_GAUSSIANS, (x, y, sign));
    the target is the signed height of the tallest bump at the point, in [-1, 1]."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 2))
    read_at = x + rng.normal(scale=noise, size=(n, 2))
    bumps = np.asarray(MULTI_GAUSSIANS)
    distance = np.linalg.norm(read_at[:, None, :] - bumps[None, :, :2], axis=-1)    # (n, 6)
    height = bumps[:, 2] * np.clip(1 - distance / BUMP_RADIUS, 0.0, 1.0)
    return x, height[np.arange(n), np.abs(height).argmax(axis=1)]


GENERATORS: dict[str, Callable[[int, float, int], tuple[np.ndarray, np.ndarray]]] = {
    "moons": draw_moons, "circles": draw_circles, "xor": draw_xor, "spiral": draw_spiral,
    "gaussians": draw_gaussians, "plane": draw_plane, "multigauss": draw_multigauss,
}


def drawn_points(points: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The points drawn on the page, (x1, x2, class) each: features (n, 2) and labels (n,)."""
    table = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return table[:, :2].copy(), table[:, 2].astype(np.int64)


def as_drawing(data: Dataset, most: int = MAX_DRAWN) -> DrawnPoints:
    """Up to `most` of a dataset's points as a drawing to edit ("Draw on these points"): evenly
    spaced through the data (shuffled by their generators, so each class keeps about its
    share), each clipped to the drawing's plane and rounded to its grid, repeats dropped."""
    param = TABLE["points"]
    picked = np.unique(np.linspace(0, len(data.labels) - 1, min(most, len(data.labels))).round().astype(int))
    clipped = np.clip(data.features[picked], -DRAW_BOUND, DRAW_BOUND)
    points = [(param.snap(float(x)), param.snap(float(y)), int(c))
              for (x, y), c in zip(clipped, data.labels[picked], strict=True)]
    return param.parse(param.format(points))


MIN_DRAWN_PER_CLASS = 5      # a class needs at least this many points, whatever the split


def drawn_minimum(fractions: tuple[float, float, float]) -> int:
    """The points each class needs for a stratified split of drawn data: at least
    MIN_DRAWN_PER_CLASS, and enough that the smaller of validation and test holds two points
    (80/10/10: ten of each class). tests/unit/moons_trainer/test_data_drawn.py splits every such drawing."""
    smallest = min(fractions[1], fractions[2])
    return max(MIN_DRAWN_PER_CLASS, math.ceil(1 / smallest - 1e-9))


def drawn_shortfall(points: DrawnPoints, fractions: tuple[float, float, float]) -> str | None:
    """Why these drawn points cannot be trained on yet, in words; None when they can."""
    counts = [sum(1 for point in points if point[2] == c) for c in (0, 1)]
    need = drawn_minimum(fractions)
    if min(counts) >= need:
        return None
    missing = [f"{need - count} more of class {c}" for c, count in enumerate(counts) if count < need]
    split = "/".join(f"{round(100 * f)}" for f in fractions)
    return (f"Draw at least {need} points of each class to train: you have {counts[0]} of class 0 "
            f"and {counts[1]} of class 1, so add {' and '.join(missing)}. The points are split "
            f"{split} into train, validation and test, stratified, and each split needs points of "
            "both classes.")


@dataclass(frozen=True)
class Dataset:
    features: np.ndarray   # (n, 2) float64, raw (unscaled) coordinates
    labels: np.ndarray     # (n,) int64, 0 or 1; float64 in [-1, 1] for a regression dataset
    name: str
    noise: float

    @property
    def regression(self) -> bool:
        return self.name in REGRESSION


def make_dataset(name: str, n: int, noise: float, seed: int, points: DrawnPoints = ()) -> Dataset:
    """Draw `n` labelled points. Moons and circles are scikit-learn's own generators; `drawn`
    takes the learner's `points` as they are (no noise added: `n`, `noise` and `seed` play no
    part)."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(DATASETS)}")
    if name == "drawn":
        x, y = drawn_points(points)
        return Dataset(x, y, name, 0.0)
    n = int(min(max(n, 4), MAX_SAMPLES))
    x, y = GENERATORS[name](n, noise, seed)
    dtype = np.float64 if name in REGRESSION else np.int64
    return Dataset(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=dtype), name, noise)


@dataclass(frozen=True)
class Split:
    """Raw and scaled features of the three splits, and the scaler fitted on train only."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    scaler: StandardScaler

    def scaled(self, x: np.ndarray) -> np.ndarray:
        return self.scaler.transform(x)


def split_and_scale(data: Dataset, fractions: tuple[float, float, float], seed: int) -> Split:
    """Stratified train/val/test split (a plain random one for regression: continuous targets
    have no classes to keep balanced), then a StandardScaler fitted on the training split."""
    _, val_frac, test_frac = fractions
    stratify = not data.regression
    x_rest, x_test, y_rest, y_test = train_test_split(
        data.features, data.labels, test_size=test_frac,
        stratify=data.labels if stratify else None, random_state=seed)
    x_train, x_val, y_train, y_val = train_test_split(
        x_rest, y_rest, test_size=val_frac / (1 - test_frac),
        stratify=y_rest if stratify else None, random_state=seed)
    scaler = StandardScaler().fit(x_train)
    return Split(x_train, y_train, x_val, y_val, x_test, y_test, scaler)


def as_tensors(x: np.ndarray, y: np.ndarray, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """float32 features (N, 2) and float32 targets (N,): BCEWithLogitsLoss wants float targets."""
    return (torch.tensor(x, dtype=torch.float32, device=device),
            torch.tensor(y, dtype=torch.float32, device=device))


def grid_points(extent: tuple[float, float, float, float], resolution: int) -> np.ndarray:
    """The (resolution^2, 2) raw coordinates of a grid over `extent`, row by row (y, then x)."""
    x0, x1, y0, y1 = extent
    gx, gy = np.meshgrid(np.linspace(x0, x1, resolution), np.linspace(y0, y1, resolution))
    return np.column_stack([gx.ravel(), gy.ravel()])


def plot_extent(data: Dataset, margin: float = 0.25) -> tuple[float, float, float, float]:
    """Fixed axes for the whole run: the data's bounding box plus a margin, rounded; drawn
    data keep the plane they were drawn on."""
    if data.name == "drawn":
        return (-DRAW_BOUND, DRAW_BOUND, -DRAW_BOUND, DRAW_BOUND)
    return extent_of(data.features, margin)


def extent_of(points: np.ndarray, margin: float = 0.25) -> tuple[float, float, float, float]:
    """(x min, x max, y min, y max) of raw points (n, 2), plus a margin, rounded out to 0.25."""
    lo = points.min(axis=0) - margin
    hi = points.max(axis=0) + margin
    return (math.floor(lo[0] * 4) / 4, math.ceil(hi[0] * 4) / 4,
            math.floor(lo[1] * 4) / 4, math.ceil(hi[1] * 4) / 4)


def read_only(*arrays: np.ndarray) -> None:
    """Make arrays shared between runs read-only, so no run can change what the others see."""
    for array in arrays:
        array.flags.writeable = False
