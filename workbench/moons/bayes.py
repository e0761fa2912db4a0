"""The best possible classifier for each generative process of `data.py`.

`bayes_log_densities` gives the class-conditional densities of the generative process,
integrated numerically over the curve each class lives on (closed form for XOR and the
Gaussians). The Bayes-optimal classifier picks the denser class: no model can do better on
average, so the page shows it as the ceiling. This module never imports streamlit.
"""
from __future__ import annotations

import numpy as np
import torch

from workbench.moons.data import CURVES, GAUSSIAN_CENTRES

BAYES_CHUNK = 256      # points per (chunk, T) block of the numerical integral: 8 MB at T = 4001


def bayes_log_densities(name: str, points: np.ndarray, noise: float, curve_points: int = 4001
                        ) -> torch.Tensor:
    """log p(x | class) for class 0 and 1, shape (N, 2), up to a shared constant.

    Moons, circles and spiral: each class is a point drawn uniformly along its curve plus
    isotropic Gaussian noise, so p(x | c) = integral over t of N(x; curve_c(t), noise^2 I) dt,
    computed with the trapezoid rule as a log-sum-exp over `curve_points` values of t.
    XOR: uniform on two quadrants convolved with the noise, in closed form. Gaussians: exact.
    """
    sigma = max(float(noise), 1e-4)
    x = torch.tensor(points, dtype=torch.float64)    # a copy: shared arrays are read-only
    if name in CURVES:
        t = torch.linspace(0.0, 1.0, curve_points, dtype=torch.float64)
        weights = torch.full((curve_points,), 1.0, dtype=torch.float64)
        weights[0] = weights[-1] = 0.5                     # trapezoid rule
        out = []
        for label in (0, 1):
            curve = CURVES[name](t, label)                  # (T, 2)
            # In chunks of points: an (N, T) block of float64 for 2,500 grid points is 80 MB,
            # and thirty learners open the same link at once.
            out.append(torch.cat([
                torch.logsumexp(-torch.cdist(chunk, curve).square() / (2 * sigma**2) + weights.log(),
                                dim=1)
                for chunk in x.split(BAYES_CHUNK)]) if len(x) else x.new_zeros(0))
        return torch.stack(out, dim=1)
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
        return -torch.cdist(x, centres).square() / (2 * sigma**2)
    raise ValueError(f"unknown dataset {name!r}")


def bayes_predict(name: str, points: np.ndarray, noise: float) -> np.ndarray:
    """The Bayes-optimal label (classes equally likely): the class with the larger density."""
    log_density = bayes_log_densities(name, points, noise)
    return (log_density[:, 1] > log_density[:, 0]).long().numpy()


def bayes_accuracy(name: str, x: np.ndarray, y: np.ndarray, noise: float) -> float:
    """Accuracy of the Bayes-optimal classifier on these (raw, unscaled) points."""
    return float((bayes_predict(name, x, noise) == y).mean())
