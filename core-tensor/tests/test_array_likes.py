"""Any array-like in: objects that speak DLPack, ``__array_interface__`` or ``__array__``.

``fb.tensor`` copies them, ``fb.as_tensor`` and ``fb.from_dlpack`` share their memory, as
PyTorch does with other libraries' arrays. Each fake class below offers one protocol only, so
every path is taken without PyTorch; the last test uses PyTorch itself when it is installed.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import flambeau as fb

def _has_autograd() -> bool:
    try:  # flambeau's finder for missing subpackages raises ModuleNotFoundError naming the distribution
        return importlib.util.find_spec("flambeau.autograd") is not None
    except ImportError:
        return False


_HAS_AUTOGRAD = _has_autograd()


class OnlyArray:
    """Offers ``__array__`` only (as pandas objects, xarray, PIL images...)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)


class OnlyInterface:
    """Offers ``__array_interface__`` only (numpy's buffer description)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    @property
    def __array_interface__(self):
        return self._array.__array_interface__


class OnlyDLPack:
    """Offers the DLPack protocol only (as JAX, CuPy and PyTorch arrays do)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


KINDS = [OnlyArray, OnlyInterface, OnlyDLPack]
SOURCES = {
    "float32": lambda: np.arange(6, dtype=np.float32).reshape(2, 3),
    "int64": lambda: np.arange(6, dtype=np.int64).reshape(2, 3),
    "bool": lambda: np.array([True, False, True]),
    "complex128": lambda: np.array([1 + 2j, -3j]),
    "strided": lambda: np.arange(12, dtype=np.float64).reshape(3, 4)[:, 1::2],
    "0-d": lambda: np.array(2.5),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_tensor_copies_any_array_like(kind, source):
    array = SOURCES[source]()
    t = fb.tensor(kind(array))
    assert t.dtype is fb.from_numpy(np.ascontiguousarray(array)).dtype and tuple(t.shape) == array.shape
    np.testing.assert_array_equal(t.numpy(), array)
    if array.size:
        flat = t.view(-1)
        flat[0] = flat[0].logical_not() if t.dtype is fb.bool else flat[0] + 1  # a copy: the source is untouched
        assert not np.array_equal(t.numpy(), array)


@pytest.mark.parametrize("share", [fb.as_tensor, fb.from_dlpack, fb.asarray])
@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_as_tensor_and_from_dlpack_share_any_array_like(kind, source, share):
    array = SOURCES[source]()
    t = share(kind(array))
    assert tuple(t.shape) == array.shape and t.device == fb.device("cpu")
    np.testing.assert_array_equal(t.numpy(), array)
    assert np.shares_memory(t.numpy(), array)
    t.view(-1)[0] = 0 if source != "bool" else False  # writes show in the source
    assert array.reshape(-1)[0] == 0


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_array_likes_with_dtype_device_and_grad(kind):
    array = np.array([1.5, -2.5])
    t = fb.tensor(kind(array), dtype=fb.int32, requires_grad=False)
    assert t.dtype is fb.int32 and t.tolist() == [1, -2]
    if _HAS_AUTOGRAD:  # requires_grad=True needs flambeau-core-autograd (core-tensor's tests run without it too)
        g = fb.tensor(kind(array), dtype=fb.float32, requires_grad=True)
        assert g.requires_grad and g.is_leaf and g.tolist() == [1.5, -2.5]
    converted = fb.as_tensor(kind(array), dtype=fb.float32)
    assert converted.dtype is fb.float32 and not np.shares_memory(converted.numpy(), array)
    same = fb.as_tensor(kind(array), device="cpu")
    assert np.shares_memory(same.numpy(), array)
    assert fb.Tensor(kind(np.array([1, 2]))).dtype is fb.float32  # the legacy constructor: default dtype


def test_array_like_is_not_warned_about_as_a_tensor_copy():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fb.tensor(OnlyDLPack(np.ones(2)))


def test_objects_without_a_protocol_are_still_refused():
    class Nothing:
        pass

    with pytest.raises(RuntimeError, match="Could not infer dtype of Nothing"):
        fb.tensor(Nothing())
    with pytest.raises(RuntimeError, match="Could not infer dtype of Nothing"):
        fb.as_tensor(Nothing())


def test_pytorch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    source = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    copied = fb.tensor(source)
    assert copied.dtype is fb.float32 and copied.tolist() == source.tolist()
    shared = fb.as_tensor(source)
    shared[0, 0] = 100.
    assert source[0, 0].item() == 100.
    via_dlpack = fb.from_dlpack(source.t())
    assert via_dlpack.stride() == (1, 3) and via_dlpack.tolist() == source.t().tolist()
    assert fb.tensor(torch.tensor([True, False])).dtype is fb.bool
    assert fb.tensor(torch.tensor(3)).shape == () and fb.tensor(torch.tensor(3)).item() == 3
    back = torch.from_dlpack(fb.arange(3.))
    assert back.tolist() == [0., 1., 2.]
    assert torch.as_tensor(np.asarray(fb.arange(3))).tolist() == [0, 1, 2]
