"""The best possible classifier for each generative process of `data.py`.

`bayes_log_densities` gives log p(x, class) of the generative process: the class's share of the
points times the density of a point of that class at x. The Bayes-optimal classifier picks the
class with the larger value. On average over fresh draws of the data no classifier beats it, so
the page shows its accuracy as the ceiling (on one finite test split a lucky model can score a
little above it). This module never imports streamlit.

Moons and circles are scikit-learn's own generators, and those do not draw the position along
the curve at random: `make_moons(n)` puts n // 2 points of class 0 at `np.linspace(0, pi, n // 2)`
on the upper half circle and the rest of the points at `np.linspace(0, pi, n - n // 2)` on the
lower one, shuffles, and adds Gaussian noise to each. So given n, a class's density is exactly a
mixture of equal Gaussians centred on those points, and the Bayes classifier is computed exactly
(in float64), with no integral to approximate. The spiral draws t uniformly, so its density is an
integral along the arm (trapezoid rule, as a log-sum-exp); XOR and the Gaussians are closed form.

The regression datasets (`plane`, `multigauss`) have a ceiling too. Their target is a known
function read at the point moved by Gaussian noise, so under the squared error the best possible
predictor is the target's mean given the point, E[target | x] (`bayes_regression_mean`): no
model's test MSE beats its MSE on average over fresh draws, and its R² is the best possible.
With noise 0 it is the target itself (MSE 0, R² 1).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from workbench.moons_trainer.data import BUMP_RADIUS, CURVES, GAUSSIAN_CENTRES, MULTI_GAUSSIANS

BAYES_CHUNK = 256      # points per (chunk, T) block of a log-sum-exp: 8 MB at T = 4001
CIRCLES_FACTOR = 0.5   # data.py's make_circles(..., factor=0.5)


def sklearn_centres(name: str, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Where scikit-learn puts each class's points before the noise, exactly as it does.

    make_moons: class 0 at angles `np.linspace(0, pi, n // 2)` on (cos, sin), class 1 at
    `np.linspace(0, pi, n - n // 2)` on (1 - cos, 1 - sin - 0.5). make_circles: the same counts at
    `np.linspace(0, 2 pi, count, endpoint=False)` on radius 1 (class 0) and `factor` (class 1).
    """
    counts = (n // 2, n - n // 2)
    centres = []
    for label, count in enumerate(counts):
        if name == "moons":
            angle = torch.from_numpy(np.linspace(0, np.pi, count))
            if label == 0:
                centres.append(torch.stack([torch.cos(angle), torch.sin(angle)], dim=1))
            else:
                centres.append(torch.stack([1 - torch.cos(angle), 1 - torch.sin(angle) - 0.5], dim=1))
        elif name == "circles":
            angle = torch.from_numpy(np.linspace(0, 2 * np.pi, count, endpoint=False))
            radius = 1.0 if label == 0 else CIRCLES_FACTOR
            centres.append(torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1))
        else:
            raise ValueError(f"{name!r} is not one of scikit-learn's generators here")
    return centres[0], centres[1]


def _log_sum_gaussians(x: torch.Tensor, centres: torch.Tensor, sigma: float,
                       log_weights: torch.Tensor | float = 0.0) -> torch.Tensor:
    """log sum_k w_k exp(-|x - c_k|^2 / (2 sigma^2)) for every row of x, in chunks of rows."""
    if not len(x):
        return x.new_zeros(0)
    return torch.cat([
        torch.logsumexp(-torch.cdist(chunk, centres).square() / (2 * sigma**2) + log_weights, dim=1)
        for chunk in x.split(BAYES_CHUNK)])


def class_counts(name: str, n: int) -> tuple[int, int]:
    """How many of the n points each class gets (xor: equal areas, so equal chances)."""
    if name in ("moons", "circles"):
        return n // 2, n - n // 2
    if name in ("spiral", "gaussians"):       # labels np.arange(n) % 2, shuffled
        return n - n // 2, n // 2
    return 1, 1


def bayes_log_densities(name: str, points: np.ndarray, noise: float, n: int,
                        curve_points: int = 4001) -> torch.Tensor:
    """log p(x, class) for class 0 and 1, shape (N, 2), up to a constant shared by both classes.

    `n` is the number of points the dataset was drawn with: it sets where scikit-learn's moons
    and circles sit and each class's share of the points.
    """
    sigma = max(float(noise), 1e-4)
    x = torch.tensor(points, dtype=torch.float64)    # a copy: shared arrays are read-only
    counts = class_counts(name, n)
    log_prior = torch.tensor([math.log(c / sum(counts)) for c in counts], dtype=torch.float64)
    if name in ("moons", "circles"):
        # p(x, c) = (n_c / n) * (1 / n_c) * sum_k N(x; centre_k, sigma^2 I): the 1/n is shared.
        return torch.stack([_log_sum_gaussians(x, c, sigma) for c in sklearn_centres(name, n)], dim=1)
    if name in CURVES:
        t = torch.linspace(0.0, 1.0, curve_points, dtype=torch.float64)
        weights = torch.full((curve_points,), 1.0, dtype=torch.float64)
        weights[0] = weights[-1] = 0.5                     # trapezoid rule
        out = [_log_sum_gaussians(x, CURVES[name](t, label), sigma, weights.log()) for label in (0, 1)]
        return torch.stack(out, dim=1) + log_prior
    if name == "xor":
        normal = torch.distributions.Normal(0.0, sigma)

        def mass(u: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
            return normal.cdf(hi - u) - normal.cdf(lo - u)   # uniform [lo, hi] convolved with noise

        pos_x, neg_x = mass(x[:, 0], 0, 1), mass(x[:, 0], -1, 0)
        pos_y, neg_y = mass(x[:, 1], 0, 1), mass(x[:, 1], -1, 0)
        same_sign = pos_x * pos_y + neg_x * neg_y
        opposite = pos_x * neg_y + neg_x * pos_y
        return torch.stack([opposite, same_sign], dim=1).clamp_min(1e-300).log()
    if name == "gaussians":
        centres = torch.tensor(GAUSSIAN_CENTRES, dtype=torch.float64)
        return -torch.cdist(x, centres).square() / (2 * sigma**2) + log_prior
    raise ValueError(f"unknown dataset {name!r}")


def bayes_predict(name: str, points: np.ndarray, noise: float, n: int) -> np.ndarray:
    """The Bayes-optimal label: the class with the larger p(x, class) (ties go to class 0)."""
    log_density = bayes_log_densities(name, points, noise, n)
    return (log_density[:, 1] > log_density[:, 0]).long().numpy()


def bayes_accuracy(name: str, x: np.ndarray, y: np.ndarray, noise: float, n: int) -> float:
    """Accuracy of the Bayes-optimal classifier on these (raw, unscaled) points of a dataset of n."""
    return float((bayes_predict(name, x, noise, n) == y).mean())


# ---- regression: the best possible predictor under the squared error --------------------------

# Gauss-Hermite nodes per axis for multigauss's mean over the 2-D Gaussian noise. Its target has
# kinks (a bump's rim, where the tallest bump changes), so the rule converges slowly: 48 nodes are
# within 0.004 of 160 nodes for noise up to 0.5 and within 0.012 at noise 1, which moves the
# ceiling's MSE by under 2e-4 (tests/unit/moons_trainer/test_regression_ceiling.py compares it
# with a Monte Carlo mean).
HERMITE_NODES = 48
REGRESSION_CHUNK = 64    # points per block: 64 x 48^2 x 6 bumps in float64 is 7 MB


def multigauss_height(read_at: torch.Tensor) -> torch.Tensor:
    """data.py's multigauss target at these places (..., 2): the signed height of the tallest bump."""
    bumps = torch.tensor(MULTI_GAUSSIANS, dtype=torch.float64)
    distance = torch.linalg.vector_norm(read_at[..., None, :] - bumps[:, :2], dim=-1)
    height = bumps[:, 2] * (1 - distance / BUMP_RADIUS).clamp(0.0, 1.0)
    return height.gather(-1, height.abs().argmax(dim=-1, keepdim=True)).squeeze(-1)


def _plane_mean(x: torch.Tensor, noise: float) -> torch.Tensor:
    """E[clip((x1 + e1 + x2 + e2) / 2, -1, 1)] with e ~ N(0, noise^2 I): the sum's half is
    m + Z with Z ~ N(0, noise^2 / 2), and the mean of a clipped normal is closed form."""
    m = x.sum(dim=1) / 2
    if noise == 0:
        return m.clamp(-1.0, 1.0)
    s = noise / math.sqrt(2)
    normal = torch.distributions.Normal(torch.zeros((), dtype=torch.float64),
                                        torch.ones((), dtype=torch.float64))
    a, b = (-1 - m) / s, (1 - m) / s
    below, above = normal.cdf(a), 1 - normal.cdf(b)
    density = normal.log_prob(a).exp() - normal.log_prob(b).exp()
    return -below + above + m * (1 - below - above) + s * density


def _multigauss_mean(x: torch.Tensor, noise: float) -> torch.Tensor:
    """E[height(x + e)], e ~ N(0, noise^2 I), by a tensor-product Gauss-Hermite rule."""
    if noise == 0:
        return multigauss_height(x)
    nodes, weights = np.polynomial.hermite.hermgauss(HERMITE_NODES)
    t = torch.from_numpy(nodes) * math.sqrt(2) * noise
    w = torch.from_numpy(weights) / math.sqrt(math.pi)
    offsets = torch.stack(torch.meshgrid(t, t, indexing="ij"), dim=-1).reshape(-1, 2)
    offset_weights = (w[:, None] * w[None, :]).reshape(-1)
    if not len(x):
        return x.new_zeros(0)
    return torch.cat([multigauss_height(chunk[:, None, :] + offsets) @ offset_weights
                      for chunk in x.split(REGRESSION_CHUNK)])


def bayes_regression_mean(name: str, points: np.ndarray, noise: float) -> torch.Tensor:
    """E[target | x] of a regression dataset at these (raw) points, float64 (N,): the predictor
    with the least expected squared error."""
    x = torch.tensor(points, dtype=torch.float64).reshape(-1, 2)
    noise = max(float(noise), 0.0)
    if name == "plane":
        return _plane_mean(x, noise)
    if name == "multigauss":
        return _multigauss_mean(x, noise)
    raise ValueError(f"{name!r} is not a regression dataset")


def regression_ceiling(name: str, x: np.ndarray, y: np.ndarray, noise: float) -> tuple[float, float]:
    """(MSE, R²) of the best possible predictor on these (raw) points and their targets."""
    best = bayes_regression_mean(name, x, noise)
    target = torch.tensor(y, dtype=torch.float64)    # a copy: shared arrays are read-only
    sse = float(((target - best) ** 2).sum())
    sst = float(((target - target.mean()) ** 2).sum())
    return sse / len(target), (1 - sse / sst) if sst > 0 else math.nan
