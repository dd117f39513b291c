"""The meta backend: metadata right, no data, PyTorch's errors, found through its entry point."""
from __future__ import annotations

import math
from importlib import metadata

import numpy as np
import pytest

import flambeau as fb
from flambeau_meta._array import MetaArray, contiguous_strides
from flambeau_meta._views import view_strides


def _cpu_available() -> bool:
    try:
        fb.plugins.loaded_backend("cpu")
        return True
    except fb.plugins.BackendUnavailable:
        return False


# The backend installs beside core-tensor alone; a few tests need the CPU backend as well.
needs_cpu = pytest.mark.skipif(not _cpu_available(), reason="needs flambeau-backend-cpu")


def test_entry_point_and_metadata():
    eps = metadata.entry_points().select(group="flambeau.backends", name="meta")
    assert [ep.value for ep in eps] == ["flambeau_meta:create_backend"]
    from packaging.requirements import Requirement

    core = [Requirement(r) for r in metadata.requires("flambeau-backend-meta")]
    core = [r for r in core if r.name == "flambeau-core-tensor" and r.marker is None]  # not the testing extra
    assert len(core) == 1 and "0.1.0" in core[0].specifier and "0.2.0" not in core[0].specifier


def test_loads_as_the_meta_device():
    backend = fb.plugins.loaded_backend("meta")
    assert backend.name == "meta" and backend.device_count() == 1
    assert backend.computes_data is False
    assert fb.empty(2, device="meta").device == fb.device("meta")


def test_allocates_nothing():
    # 8 TB of float64 if it were allocated.
    x = fb.empty(1_000_000, 1_000_000, dtype=fb.float64, device="meta")
    assert isinstance(x._data, MetaArray)
    assert not hasattr(x._data, "__array_interface__") and not hasattr(x._data, "data")
    y = (x @ x).sum(dim=0, keepdim=True)
    assert tuple(y.shape) == (1, 1_000_000) and y.dtype is fb.float64


def test_shapes_and_dtypes_follow_the_ops():
    a = fb.empty(4, 1, 3, device="meta", dtype=fb.int32)
    b = fb.empty(5, 1, device="meta", dtype=fb.float16)
    c = a + b
    assert tuple(c.shape) == (4, 5, 3) and c.dtype is fb.float16 and c.is_meta
    assert (a / 2).dtype is fb.float32
    values, indices = fb.ops.fn.max_dim(c, 1)
    assert tuple(values.shape) == (4, 3) and indices.dtype is fb.int64
    assert fb.arange(0, 10, 3, device="meta").shape == (4,)


def test_views_compute_strides_and_offsets():
    base = fb.empty(3, 4, 5, device="meta")
    host = np.empty((3, 4, 5), np.float32)

    def strides(a: np.ndarray) -> tuple:
        return tuple(s // a.itemsize for s in a.strides)

    pairs = [
        (base.transpose(0, 2), host.transpose(2, 1, 0)),
        (base.permute(1, 2, 0), host.transpose(1, 2, 0)),
        (base[1:, ::2, 3], host[1:, ::2, 3]),
        (base.narrow(2, 1, 3), host[:, :, 1:4]),
        (base.select(1, -1), host[:, -1]),
        (base.expand(2, 3, 4, 5), np.broadcast_to(host, (2, 3, 4, 5))),
    ]
    for view, ref in pairs:
        assert tuple(view.shape) == ref.shape
        assert view.stride() == strides(ref)
    assert base[1:, ::2, 3].storage_offset() == 1 * 20 + 3
    assert base.unfold(2, 2, 2).stride() == (20, 5, 2, 1) and tuple(base.unfold(2, 2, 2).shape) == (3, 4, 2, 2)
    assert base.unsqueeze(1).stride() == (20, 20, 5, 1)
    assert base.view(12, 5).stride() == (5, 1)
    assert base.as_strided((2, 2), (1, 7), 3).storage_offset() == 3


def test_view_of_a_non_contiguous_tensor():
    t = fb.empty(4, 6, device="meta").t()  # strides (1, 6)
    assert t.view(3, 2, 4).stride() == (2, 1, 6)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(24)
    assert t.reshape(24).stride() == (1,)  # a copy: the composite clones


@pytest.mark.parametrize("old,new", [((2, 3, 4), (6, 4)), ((2, 3, 4), (24,)), ((1, 4), (2, 2, 1)), ((0, 3), (3, 0))])
def test_view_strides_of_contiguous_shapes(old, new):
    assert tuple(view_strides(old, [s // 4 for s in contiguous_strides(old, 4)], new)) == \
        tuple(s // 4 for s in contiguous_strides(new, 4)) or math.prod(new) == 0


@needs_cpu
def test_copy_to_the_cpu_fails():
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        fb.ones(2, 3, device="meta").cpu()
    assert fb.ones(2, 3).to("meta").is_meta


def test_no_data_errors():
    x = fb.ones(2, 3, device="meta")
    with pytest.raises(NotImplementedError, match="no data"):
        x.tolist()
    with pytest.raises(NotImplementedError, match="no data"):
        np.asarray(x._data)
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        x.numpy()


def test_argument_errors_still_raised():
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        fb.empty(2, 3, device="meta") + fb.empty(4, device="meta")
    with pytest.raises(IndexError, match="Dimension out of range"):
        fb.empty(2, device="meta").sum(3)


@needs_cpu
def test_mixed_devices_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        fb.empty(2, device="meta") + fb.empty(2)


def test_repr():
    assert repr(fb.empty(2, 3, device="meta")) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(fb.empty(4, dtype=fb.int32, device="meta")) == \
        "tensor(..., device='meta', size=(4,), dtype=flambeau.int32)"


def test_in_place_and_out_keep_metadata():
    x = fb.empty(3, device="meta")
    version = x._version_counter[0]
    assert x.add_(1) is x and x._version_counter[0] == version + 1
    out = fb.empty(3, device="meta")
    assert fb.mul(x, 2, out=out) is out


def test_complex_views_on_meta():
    # Moved from core-tensor's tests: core-tensor's own run has no meta backend.
    c = fb.view_as_complex(fb.empty(40, device="meta").as_strided((3, 2), (4, 1), 2))
    assert c.device.type == "meta" and c.dtype is fb.complex64
    assert tuple(c.shape) == (3,) and c.stride() == (2,) and c.storage_offset() == 1
    r = fb.view_as_real(c)
    assert tuple(r.shape) == (3, 2) and r.stride() == (4, 1) and r.storage_offset() == 2


def test_matrix_exp_on_meta():
    out = fb.matrix_exp(fb.empty(2, 3, 3, dtype=fb.complex64, device="meta"))
    assert out.device.type == "meta" and tuple(out.shape) == (2, 3, 3) and out.dtype is fb.complex64


@pytest.mark.skipif(_cpu_available(), reason="checks an install without the CPU backend")
def test_manual_seed_without_the_cpu_backend():
    # Seeds the backends there are; there is no CPU generator to return.
    assert fb.manual_seed(3) is None
    assert fb.rand(2, device="meta").shape == (2,)
