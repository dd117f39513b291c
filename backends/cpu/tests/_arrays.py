"""hypothesis strategies for the native-kernel tests: float arrays in awkward layouts."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

FLOATS = (np.float32, np.float64)
SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30)


def fill(rng: np.random.Generator, shape: tuple[int, ...], dtype, specials: bool, positive: bool = False) -> np.ndarray:
    """Random values in ``shape``, with a sprinkle of NaN, infinities, zeros and extremes if ``specials``."""
    x = np.asarray(rng.standard_normal(shape) * 3)
    if positive:
        x = np.abs(x)
    if specials and x.size:
        mask = rng.random(shape) < 0.1
        x[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    return x.astype(dtype)


@st.composite
def layouts(draw, shape: tuple[int, ...]) -> tuple:
    """A recipe for a view of ``shape`` that is not contiguous: (base shape, slices, permutation).

    The view slices a bigger base array with steps (negative ones walk backwards), then permutes its dims.
    """
    ndim = len(shape)
    perm = tuple(draw(st.permutations(range(ndim)))) if ndim else ()
    pre_shape = tuple(shape[i] for i in np.argsort(perm)) if ndim else ()  # the shape before permuting
    base_shape, slices = [], []
    for size in pre_shape:
        step = draw(st.sampled_from((1, 1, 2, 3, -1, -2)))
        start = draw(st.integers(0, 2))
        stop = start + size * abs(step)
        base_shape.append(stop + draw(st.integers(0, 1)))
        if step > 0:
            slices.append(slice(start, stop, step))
        else:  # the same elements, last first
            last = start + (size - 1) * abs(step)
            slices.append(slice(last, start - 1 if start > 0 else None, step) if size else slice(0, 0))
    return tuple(base_shape), tuple(slices), perm


def make(rng: np.random.Generator, shape: tuple[int, ...], dtype, layout, specials: bool,
         positive: bool = False) -> np.ndarray:
    """An array of ``shape`` and ``dtype``: contiguous when ``layout`` is None, else a strided view."""
    if layout is None:
        return fill(rng, shape, dtype, specials, positive)
    view = view_of(fill(rng, layout[0], dtype, specials, positive), layout)
    assert view.shape == shape, (view.shape, shape, layout)
    return view


def view_of(base: np.ndarray, layout) -> np.ndarray:
    """The view of ``base`` that ``layout`` describes."""
    _, slices, perm = layout
    view = base[slices] if slices else base[...]
    return np.transpose(view, perm) if perm else view


shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)
