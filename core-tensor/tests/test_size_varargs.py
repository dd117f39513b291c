"""Sizes and dims as varargs, as PyTorch takes them.

PyTorch lets a method whose only positional argument is a list of ints take it spread out
(``x.view(2, 3)``, ``x.permute(1, 0)``, ``x.broadcast_to(3, 5)``), and a function whose only
positional argument is a size likewise (``zeros(2, 3)``). Each such callable here must give the
same result for every spelling: varargs, a tuple, a list and a ``flambeau.Size``.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb


def _x() -> fb.Tensor:
    return fb.arange(6.).view(1, 2, 3)


# name -> (call with the ints spread or packed, the ints, the numpy reference of the result)
METHODS = {
    "view": ((3, 2), lambda a: a.reshape(3, 2)),
    "reshape": ((6, 1), lambda a: a.reshape(6, 1)),
    "expand": ((4, 2, 3), lambda a: np.broadcast_to(a, (4, 2, 3))),
    "broadcast_to": ((2, 1, 2, 3), lambda a: np.broadcast_to(a, (2, 1, 2, 3))),
    "repeat": ((1, 2, 1), lambda a: np.tile(a, (1, 2, 1))),
    "tile": ((2, 1), lambda a: np.tile(a, (2, 1))),
    "permute": ((2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    "flip": ((0, 2), lambda a: a[::-1, :, ::-1]),
    "squeeze": ((0,), lambda a: a.reshape(2, 3)),
    "count_nonzero": ((0, 2), lambda a: np.count_nonzero(a, axis=(0, 2))),
    "sum_to_size": ((1, 3), lambda a: a.sum(axis=1)),
    "new_zeros": ((2, 4), lambda a: np.zeros((2, 4), a.dtype)),
    "new_ones": ((2, 4), lambda a: np.ones((2, 4), a.dtype)),
    "new_empty": ((2, 4), None),
}

FORMS = {
    "varargs": lambda f, ints: f(*ints),
    "tuple": lambda f, ints: f(tuple(ints)),
    "list": lambda f, ints: f(list(ints)),
    "Size": lambda f, ints: f(fb.Size(ints)),
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_takes_sizes_in_every_form(name, form):
    x = _x()
    ints, reference = METHODS[name]
    result = FORMS[form](getattr(x, name), ints)
    assert isinstance(result, fb.Tensor) and result.dtype is (fb.int64 if name == "count_nonzero" else x.dtype)
    if reference is None:
        assert tuple(result.shape) == ints
    else:
        np.testing.assert_array_equal(result.numpy(), reference(x.numpy()))


FACTORIES = {
    "zeros": lambda shape: np.zeros(shape),
    "ones": lambda shape: np.ones(shape),
    "empty": None,
    "rand": None,
    "randn": None,
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factory_takes_sizes_in_every_form(name, form):
    result = FORMS[form](getattr(fb, name), (2, 3))
    assert tuple(result.shape) == (2, 3) and result.dtype is fb.float32
    if FACTORIES[name] is not None:
        np.testing.assert_array_equal(result.numpy(), FACTORIES[name]((2, 3)))


@pytest.mark.parametrize("form", sorted(FORMS))
def test_legacy_constructor_and_resize_take_sizes_in_every_form(form):
    made = FORMS[form](fb.Tensor, (2, 3))
    if form in ("tuple", "list"):  # PyTorch's legacy constructor reads a sequence as data
        assert made.tolist() == [2., 3.]
    else:
        assert tuple(made.shape) == (2, 3)
    x = fb.arange(6.)
    FORMS[form](x.resize_, (2, 3))
    np.testing.assert_array_equal(x.numpy(), np.arange(6.).reshape(2, 3))


@pytest.mark.parametrize("bad", ["2", 2.0], ids=["str", "float"])
@pytest.mark.parametrize("name", sorted(set(METHODS) - {"new_empty", "new_ones", "new_zeros"}))
def test_sizes_refuse_non_integers_in_every_form(name, bad):
    x = _x()
    ints = METHODS[name][0]
    spoiled = ints[:-1] + (bad,)
    for form in FORMS.values() if not isinstance(bad, str) else [FORMS["varargs"], FORMS["list"]]:
        with pytest.raises(TypeError):
            form(getattr(x, name), spoiled)


@pytest.mark.parametrize("call", [
    lambda x: fb.tile(x, (1, "2")), lambda x: fb.permute(x, (0, 1, 2.0)), lambda x: fb.reshape(x, (6, "1")),
    lambda x: fb.flip(x, ("0",)), lambda x: fb.broadcast_to(x, (1, 2, 3.0)), lambda x: x.expand(2, 2, "3"),
], ids=["tile", "permute", "reshape", "flip", "broadcast_to", "expand"])
def test_functions_refuse_non_integer_sizes_before_any_kernel(call):
    with pytest.raises(TypeError):
        call(_x())


def test_optional_dims_take_varargs_too():
    x = fb.zeros(1, 1, 3)
    assert x.squeeze(0, 1).shape == (3,) and x.squeeze().shape == (3,) and x.squeeze(dim=1).shape == (1, 3)
    assert x.count_nonzero(0, 1).tolist() == [0, 0, 0] and x.count_nonzero().item() == 0
    assert x.count_nonzero(dim=(0, 2)).tolist() == [0]
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        x.squeeze(0, dim=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        x.squeeze(axis=1)
