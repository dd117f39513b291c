"""Problems for the optimizer tests: gradients computed in numpy (no autograd needed)."""
from __future__ import annotations

import numpy as np
import flambeau as fb

_rng = np.random.default_rng(0)
A = _rng.normal(size=(4, 4))
A = A @ A.T + 4 * np.eye(4)  # positive definite
B = _rng.normal(size=4)
X = _rng.normal(size=(8, 3))
Y = _rng.normal(size=(8, 2))


def quadratic_grad(x: np.ndarray) -> np.ndarray:
    """Gradient of 0.5 x^T A x - b^T x."""
    return A @ x - B


def rosenbrock_grad(x: np.ndarray) -> np.ndarray:
    a, b = x
    return np.array([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)])


def regression_grad(w: np.ndarray) -> np.ndarray:
    """Gradient of the mean squared error of X @ w against Y."""
    return X.T @ (X @ w - Y) * (2 / X.shape[0])


PROBLEMS = {
    "quadratic": (quadratic_grad, np.array([1.0, -2.0, 0.5, 3.0])),
    "rosenbrock": (rosenbrock_grad, np.array([-1.2, 1.0])),
    "regression": (regression_grad, _rng.normal(size=(3, 2))),
}


def as_param(x: np.ndarray, dtype=fb.float64) -> fb.Tensor:
    return fb.tensor(x.tolist(), dtype=dtype)
