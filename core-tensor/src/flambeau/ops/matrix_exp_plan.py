"""The plan of ``matrix_exp`` by scaling and squaring: the Padé coefficients, the norms each degree
covers, and the degree and squarings for a given 1-norm (Higham 2005; the maths is in
``flambeau._core_ops.matrix_exp``). Shared by core's composite and by backends' kernels, which may
import it: it is part of the public backend API.
"""
from __future__ import annotations

import math


def pade_coefficients(m: int) -> tuple[float, ...]:
    """``b_0..b_m`` of the [m/m] Padé approximant of exp, scaled so that ``b_m = 1``:
    ``b_k = (2m - k)! / (k! (m - k)!)`` (exact integers; 13 gives Higham's 64764752532480000, ..., 182, 1)."""
    return tuple(float(math.factorial(2 * m - k) // (math.factorial(k) * math.factorial(m - k)))
                 for k in range(m + 1))


PADE = {m: pade_coefficients(m) for m in (3, 5, 7, 9, 13)}

#: theta_m for double precision (Higham 2005, table 2.3) and single precision (table 2.1's
#: unit roundoff 2^-24); the last degree of each is the one used with scaling.
THETA_DOUBLE = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
                (9, 2.097847961257068e0), (13, 5.371920351148152e0))
THETA_SINGLE = ((3, 4.258730016922831e-1), (5, 1.880152677804762e0), (7, 3.925724783138660e0))


def thetas(double: bool) -> tuple:
    return THETA_DOUBLE if double else THETA_SINGLE


def degree_and_squarings(norm: float, double: bool) -> tuple[int, int]:
    """The Padé degree for a 1-norm, and how many squarings it needs (0 below the last theta)."""
    table = thetas(double)
    for m, theta in table:
        if norm <= theta:
            return m, 0
    m, theta = table[-1]
    return m, max(0, math.ceil(math.log2(norm / theta)))
