"""The Backend contract itself: devices, allocation, fills, host transfers, copies, views."""
from __future__ import annotations

import re

import numpy as np
import pytest

import flambeau
from flambeau.testing._promote import ALL
from flambeau.testing._runner import cpu_available, host_array, to_device

KIT = pytest.mark.flambeau_conformance


def _data_only(computes_data: bool) -> None:
    if not computes_data:
        pytest.skip("the backend computes no data (shape-and-dtype mode)")


def _supported(backend) -> list:
    return [getattr(flambeau, name) for name in ALL if getattr(flambeau, name) in backend.dtypes]


@KIT("contract:devices")
def test_devices(flambeau_backend, flambeau_device) -> None:
    count = flambeau_backend.device_count()
    assert isinstance(count, int) and count >= 1, f"device_count() is {count!r}"
    assert flambeau_device.type == flambeau_backend.name
    flambeau_backend.synchronize(flambeau_device.index)
    assert flambeau.float32 in flambeau_backend.dtypes, "every backend must support float32"
    assert all(isinstance(d, flambeau.dtype) for d in flambeau_backend.dtypes)
    flambeau_backend.manual_seed(0)


@KIT("contract:empty")
def test_empty(flambeau_backend, flambeau_device) -> None:
    for dt in _supported(flambeau_backend):
        for shape in ((), (0,), (3,), (2, 0, 3), (2, 3, 4)):
            t = flambeau.empty(shape, dtype=dt, device=flambeau_device)
            assert tuple(t.shape) == shape and t.dtype is dt and t.device == flambeau_device
            assert t._data.dtype == dt.numpy_dtype, (
                f"the backend declares {dt} but its allocator returns {t._data.dtype} arrays for it")
            assert tuple(t._data.shape) == shape
            assert t.is_contiguous(), f"empty{shape} on {flambeau_device} is not contiguous: strides {t.stride()}"
            assert t.storage_offset() == 0
            assert flambeau_backend.storage_numel(t._data) >= t.numel()
            assert flambeau_backend.device_of(t._data) == flambeau_device
            assert isinstance(t.data_ptr(), int)


@KIT("contract:full")
def test_full(flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    for dt in _supported(flambeau_backend):
        value = {"bool": True}.get(dt.name, 3 if not dt.is_complex else 2 - 1j)
        for shape in ((), (0,), (2, 3)):
            t = flambeau.full(shape, value, dtype=dt, device=flambeau_device)
            z = flambeau.zeros(shape, dtype=dt, device=flambeau_device)
            assert tuple(t.shape) == shape and t.dtype is dt and t.device == flambeau_device
            if flambeau_computes_data:
                np.testing.assert_array_equal(host_array(t), np.full(shape, value, dt.numpy_dtype))
                np.testing.assert_array_equal(host_array(z), np.zeros(shape, dt.numpy_dtype))


@KIT("contract:fill_strided")
def test_fill_strided(flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    base = flambeau.zeros((4, 6), device=flambeau_device)
    view = base.t()[::2]
    view.fill_(5.0)
    if flambeau_computes_data:
        expected = np.zeros((4, 6), np.float32)
        expected.T[::2] = 5
        np.testing.assert_array_equal(host_array(base), expected)


@KIT("contract:host_round_trip")
def test_host_round_trip(flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    rng = np.random.default_rng(0)
    for dt in _supported(flambeau_backend):
        for shape in ((), (0,), (5,), (3, 4), (2, 0, 3)):
            host = (rng.uniform(0, 4, shape) + (1j * rng.uniform(0, 4, shape) if dt.is_complex else 0))
            host = np.asarray(host).astype(dt.numpy_dtype)
            for view in (host, host.T, host[..., ::2] if host.ndim else host):
                t = to_device(view, flambeau_device)
                assert tuple(t.shape) == view.shape and t.dtype is dt and t.device == flambeau_device
                if flambeau_computes_data:
                    back = host_array(t)
                    assert isinstance(back, np.ndarray)
                    np.testing.assert_array_equal(back, view)
                    native = flambeau_backend.to_numpy(t._data)
                    assert isinstance(native, np.ndarray) and native.dtype == dt.numpy_dtype
                    np.testing.assert_array_equal(native, view)


@KIT("contract:device_copy")
def test_device_copy(flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    src = flambeau.arange(12.0, device=flambeau_device).reshape(3, 4)
    for source in (src, src.t(), src[:, ::2]):
        twin = source.to(flambeau_device, copy=True)
        assert twin._data is not source._data
        assert tuple(twin.shape) == tuple(source.shape) and twin.device == flambeau_device
        copied = flambeau.empty(tuple(source.shape), dtype=flambeau.float64, device=flambeau_device)
        copied.copy_(source)
        if flambeau_computes_data:
            np.testing.assert_array_equal(host_array(twin), host_array(source))
            np.testing.assert_array_equal(host_array(copied), host_array(source))
    for index in range(flambeau_backend.device_count()):
        other = flambeau.device(flambeau_device.type, index) if flambeau_device.index is not None else flambeau_device
        moved = src.to(other)
        assert moved.device == other
        if flambeau_computes_data:
            np.testing.assert_array_equal(host_array(moved), np.arange(12.0).reshape(3, 4))


@KIT("contract:views_share_storage")
def test_views_share_storage(flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    base = flambeau.zeros((3, 4), device=flambeau_device)
    views = [base.t(), base[1:, ::2], base.view(12), base.unsqueeze(0), base.select(1, 2), base.narrow(0, 1, 1),
             base.expand(2, 3, 4), base.as_strided((2, 2), (1, 4), 1), base.unfold(1, 2, 2)]
    for v in views:
        assert v._version_counter is base._version_counter, "a view must share its base's version counter"
    before = base._version_counter[0]
    base.add_(1)
    assert base._version_counter[0] == before + 1
    if flambeau_computes_data:
        for v in views:
            assert np.all(host_array(v) == 1), f"a view of shape {tuple(v.shape)} does not see a write to its base"
        base[1:, ::2].fill_(7)
        assert host_array(base)[2, 2] == 7
    assert base.t().stride() == (1, 4)
    assert base[1:, ::2].stride() == (4, 2) and base[1:, ::2].storage_offset() == 4
    assert base.expand(2, 3, 4).stride() == (0, 4, 1)


@KIT("contract:mixed_devices")
def test_mixed_devices(flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    if flambeau_device.type == "cpu" or not cpu_available():
        pytest.skip("needs the CPU backend and a device other than the CPU")
    a = flambeau.ones(2, device=flambeau_device)
    b = flambeau.ones(2)
    message = f"Expected all tensors to be on the same device, but found at least two devices, {a.device} and cpu!"
    with pytest.raises(RuntimeError, match=re.escape(message)):
        a + b
    # as in PyTorch: a 0-dim CPU tensor combines with any device; copy_ copies across devices
    for r, want in ((a + flambeau.tensor(2.0), [3.0, 3.0]), (flambeau.tensor(2.0) * a, [2.0, 2.0])):
        assert r.device == a.device
        if flambeau_computes_data:
            np.testing.assert_array_equal(host_array(r), want)
    dst = flambeau.zeros(2, 3, device=flambeau_device)
    assert dst.copy_(flambeau.arange(6.0).reshape(2, 3)) is dst and dst.device == flambeau_device
    if flambeau_computes_data:  # (a backend without data cannot be copied out of, as PyTorch's meta)
        back = flambeau.zeros(2, 3).copy_(dst)
        np.testing.assert_array_equal(host_array(back), np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match=re.escape(f"can't convert {flambeau_device.type} device type tensor")):
        np.asarray(a)


@KIT("contract:host_transfers_copy")
def test_host_transfers_copy(flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    """Writing to the host array a device tensor came from, or to what came back from the device,
    must not change the device tensor (only the CPU backend may share memory with numpy)."""
    _data_only(flambeau_computes_data)
    source = np.arange(6.0, dtype=np.float32)
    made = flambeau.tensor(source, device=flambeau_device)
    source[0] = 100
    assert host_array(made)[0] == 0, "flambeau.tensor(array, device=...) kept a reference to the numpy array"
    if flambeau_device.type == "cpu":
        return  # from_numpy and .cpu() share memory on the CPU, as in PyTorch
    moved = made
    if cpu_available():  # CPU tensors to and from the device (a backend may be installed without cpu)
        shared = np.arange(6.0, dtype=np.float32)
        moved = flambeau.from_numpy(shared).to(flambeau_device)
        shared[1] = 100
        assert host_array(moved)[1] == 1, "Backend.from_numpy did not copy: a write to the host array reached it"
        back = moved.cpu()
        back.numpy()[2] = 100
        assert host_array(moved)[2] == 2, "Backend.to_numpy did not copy: a write to .cpu()'s result reached the device"
    native_back = flambeau_backend.to_numpy(moved._data)
    if native_back.flags.writeable:
        native_back[3] = 100
        assert host_array(moved)[3] == 3, "Backend.to_numpy returned the device's memory, not a copy"


@KIT("contract:int_scalar_wrap")
def test_int_scalars_outside_a_narrow_dtype_wrap_as_on_the_cpu(flambeau_backend, flambeau_device,
                                                              flambeau_computes_data) -> None:
    """A Python int outside a narrow integer dtype's range converts as PyTorch converts it (wrapping):
    ``uint8 [250, 3] < 1000`` compares with 232; ``int8 + 300`` adds 44; results stay in the dtype."""
    cases = [("uint8", [250, 3], "lt", 1000), ("int8", [1, 100], "add", 300), ("uint8", [250, 3], "mul", 300),
             ("int8", [1, 100], "eq", 257), ("int16", [7, -7], "sub", 70000)]
    for dtype, values, op, scalar in cases:
        if getattr(flambeau, dtype) not in flambeau_backend.dtypes:
            continue
        t = flambeau.tensor(values, dtype=getattr(flambeau, dtype), device=flambeau_device)
        result = getattr(flambeau, op)(t, scalar)
        np_dtype = np.dtype(dtype)
        wrapped = np.array(scalar).astype(np.int64).astype(np_dtype)  # two's complement, as PyTorch's cast
        with np.errstate(over="ignore"):
            expected = getattr(np, {"lt": "less", "add": "add", "mul": "multiply", "eq": "equal",
                                    "sub": "subtract"}[op])(np.array(values, np_dtype), wrapped)
        assert result.dtype.name == expected.dtype.name, f"{dtype} {op} {scalar}: dtype {result.dtype}"
        if flambeau_computes_data:
            np.testing.assert_array_equal(host_array(result), expected, err_msg=f"{dtype} {values} {op} {scalar}")


@KIT("contract:repr")
def test_repr(flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    t = flambeau.ones(2, 3, device=flambeau_device)
    text = repr(t)
    assert text.startswith("tensor(")
    if flambeau_device.type != "cpu":
        assert f"device='{flambeau_device}'" in text
    if flambeau_computes_data:
        assert "1." in text
