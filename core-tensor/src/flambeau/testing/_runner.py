"""Running a case: draw inputs, build tensors on the device, call the op, compare with numpy."""
from __future__ import annotations

import math
import warnings
import zlib
from typing import Any, Iterable

import numpy as np

import flambeau
from flambeau.ops import declarations, function

from . import _promote
from ._case import DEVICE, Arg, ErrorCase, OpCase, Sample

#: (rtol, atol) by dtype when comparing values; integral and bool results must be exact.
TOLERANCES = {
    "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 2e-2), "float32": (2e-6, 2e-5), "float64": (1e-9, 1e-10),
    "complex64": (2e-6, 2e-5), "complex128": (1e-9, 1e-10),
}


_cpu_state: list[bool] = []


def cpu_available() -> bool:
    """Whether the CPU backend is installed and loads (a backend may be tested without it)."""
    if not _cpu_state:
        try:
            flambeau.plugins.loaded_backend("cpu")
            _cpu_state.append(True)
        except flambeau.plugins.BackendUnavailable:
            _cpu_state.append(False)
    return _cpu_state[0]


def to_device(host: np.ndarray, device: Any) -> Any:
    """A host array on ``device``: built on the CPU and moved with ``.to(device)``; straight
    from the host (the backend's ``from_numpy``) where no CPU backend is installed."""
    if cpu_available():
        return flambeau.from_numpy(host).to(device)
    return flambeau.tensor(host, device=device)


def fb_dtype(name: str) -> flambeau.dtype:
    return getattr(flambeau, name)


def seed_for(*parts: Any) -> int:
    """A stable seed per test and sample, so that a failure reproduces."""
    return zlib.crc32(":".join(str(p) for p in parts).encode())


class Inputs:
    """Draws the values of a sample's :class:`Arg` s and builds them on ``device``.

    For each Arg it keeps the host view the reference sees, the tensor the op sees (built on
    the CPU, moved with ``.to(device)``, then laid out there with a device view), and the
    device tensor that owns the storage (to check that view results share it).
    """

    def __init__(self, device: Any, seed: int):
        self.device = device
        self.rng = np.random.default_rng(seed)
        self.roots: list[Any] = []

    def draw(self, arg: Arg, shape: tuple[int, ...]) -> np.ndarray:
        np_dtype = fb_dtype(arg.dtype).numpy_dtype
        if arg.values is not None:
            return np.array(arg.values).astype(np_dtype).reshape(shape)
        cat = _promote.category(arg.dtype)
        rng = self.rng
        if cat == 0:
            return np.asarray(rng.random(shape) < 0.5)
        if cat == 1:
            info = np.iinfo(np_dtype)
            low, high = max(math.ceil(arg.low), info.min), min(math.floor(arg.high), info.max)
            values = rng.integers(low, high + 1, size=shape, dtype=np.int64)
            if arg.nonzero:
                values[values == 0] = 1 if high >= 1 else -1
            return np.asarray(values.astype(np_dtype))
        values = rng.uniform(arg.low, arg.high, size=shape)
        if arg.nonzero:
            values[np.abs(values) < 0.25] = 0.5
        if cat == 3:
            imag = rng.uniform(arg.low, arg.high, size=shape)
            values = values + 1j * imag
        return np.asarray(values).astype(np_dtype)

    def arg(self, arg: Arg) -> tuple[np.ndarray, Any]:
        logical = self.draw(arg, arg.shape)
        if arg.layout == "transposed":
            base = np.ascontiguousarray(np.swapaxes(logical, -1, -2))
            host = np.swapaxes(base, -1, -2)
        elif arg.layout == "sliced":
            wide = arg.shape[:-1] + (2 * arg.shape[-1],)
            base = self.draw(Arg(wide, arg.dtype, low=arg.low, high=arg.high, nonzero=arg.nonzero), wide)
            base[..., ::2] = logical
            host = base[..., ::2]
        else:
            base = logical.copy()
            host = base
        root = to_device(base.copy(), "cpu" if arg.on_cpu else self.device)
        self.roots.append(root)
        if arg.layout == "transposed":
            tensor = root.transpose(-1, -2)
        elif arg.layout == "sliced":
            tensor = root[..., ::2]
        else:
            tensor = root
        return host, tensor

    def build(self, value: Any) -> tuple[Any, Any]:
        """``value`` with Args replaced: (host version, device version)."""
        if isinstance(value, Arg):
            return self.arg(value)
        if isinstance(value, (list, tuple)) and any(isinstance(v, Arg) for v in value):
            pairs = [self.build(v) for v in value]
            return type(value)(p[0] for p in pairs), type(value)(p[1] for p in pairs)
        if isinstance(value, str) and value == DEVICE:
            return None, self.device
        return value, value

    def sample(self, sample: Sample) -> tuple[tuple, dict, tuple, dict]:
        built = [self.build(a) for a in sample.args]
        kw = {k: self.build(v) for k, v in sample.kwargs.items()}
        return (tuple(b[0] for b in built), {k: v[0] for k, v in kw.items()},
                tuple(b[1] for b in built), {k: v[1] for k, v in kw.items()})


def for_reference(value: Any, upcast: bool) -> Any:
    """A host input as the reference sees it: float and complex data in double precision."""
    if isinstance(value, np.ndarray):
        if not upcast:
            return value
        kind = value.dtype.kind
        if kind == "f" or value.dtype.name == "bfloat16":
            return value.astype(np.float64)
        if kind == "c":
            return value.astype(np.complex128)
        return value
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(for_reference(v, upcast) for v in value)
    return value


def as_list(result: Any) -> list:
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


def host_array(tensor: Any) -> np.ndarray:
    """A tensor's values on the host: through ``.to("cpu")`` where the CPU backend is installed,
    else through the tensor's own backend's host transfer (a backend may be tested without the CPU one)."""
    if cpu_available():
        return np.asarray(tensor.to("cpu").numpy())
    return np.asarray(tensor._host())


def to_host(tensor: Any) -> np.ndarray:
    host = host_array(tensor.resolve_conj())  # the values a conjugated view reads (numpy() refuses one)
    return host.astype(np.float64) if host.dtype.name == "bfloat16" else host


def compare_values(actual: np.ndarray, expected: np.ndarray, dtype: str, tolerances: dict) -> None:
    """Bool and integer results must be exact; floating ones within the dtype's tolerance."""
    if _promote.category(dtype) <= 1:
        # A reference computed in float64 (true division, trunc...) is cast as the backend must.
        np.testing.assert_array_equal(actual, expected.astype(fb_dtype(dtype).numpy_dtype))
        return
    rtol, atol = tolerances.get(dtype, TOLERANCES[dtype])
    wide = np.complex128 if _promote.category(dtype) == 3 else np.float64
    np.testing.assert_allclose(actual.astype(wide), np.asarray(expected).astype(wide), rtol=rtol, atol=atol,
                               equal_nan=True)


def expected_dtypes(case: OpCase, sample: Sample, count: int) -> list[str]:
    dts = case.result_dtype(sample)
    return list(dts) if isinstance(dts, (tuple, list)) else [dts] * count


def check_outputs(actual: list, expected: list, dtypes: list[str], device: Any, case: OpCase,
                  data: bool) -> None:
    if len(actual) != len(expected):
        raise AssertionError(f"expected {len(expected)} outputs, got {len(actual)}")
    for i, (t, e, d) in enumerate(zip(actual, expected, dtypes)):
        where = f"output {i}: " if len(actual) > 1 else ""
        if not isinstance(t, flambeau.Tensor):
            raise AssertionError(f"{where}expected a Tensor, got {type(t).__name__}")
        if str(t.device) != str(device):
            raise AssertionError(f"{where}device is {t.device}, expected {device}")
        if tuple(t.shape) != e.shape:
            raise AssertionError(f"{where}shape is {tuple(t.shape)}, expected {e.shape}")
        if t.dtype.name != d:
            raise AssertionError(f"{where}dtype is {t.dtype.name}, expected {d}")
        if case.check_strides and e.size > 1:
            want = tuple(s // e.itemsize for s in e.strides)
            got = t.stride()
            if any(n > 1 and a != b for n, a, b in zip(e.shape, got, want)):
                raise AssertionError(f"{where}strides are {got}, expected {want}")
        if data:
            try:
                compare_values(to_host(t), np.asarray(e), d, case.tolerances)
            except AssertionError as exc:
                raise AssertionError(f"{where}values differ: {exc}") from None


def _expected(case: OpCase, host_args: tuple, host_kwargs: dict) -> tuple[list[np.ndarray] | None, list]:
    """The reference's outputs (None when it returns nothing) and its copies of mutated arguments."""
    args = tuple(for_reference(a, case.upcast) for a in host_args)
    kwargs = {k: for_reference(v, case.upcast) for k, v in host_kwargs.items()}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        # log(0), mean of nothing...: the reference's own warnings are not the backend's.
        warnings.simplefilter("ignore", RuntimeWarning)
        produced = case.ref(*args, **kwargs)
    mutated = [args[i] for i in case.mutates]
    if produced is None:
        return None, mutated
    return [np.asarray(r) if not isinstance(r, np.ndarray) else r for r in as_list(produced)], mutated


def _check_mutated(case: OpCase, sample: Sample, args: tuple, mutated: list, device: Any, data: bool) -> None:
    for position, want in zip(case.mutates, mutated):
        spec, got = sample.args[position], args[position]
        specs = list(spec) if isinstance(spec, (list, tuple)) else [spec]
        tensors = list(got) if isinstance(got, (list, tuple)) else [got]
        wants = list(want) if isinstance(want, (list, tuple)) else [want]
        try:
            check_outputs(tensors, [np.asarray(w) for w in wants], [a.dtype for a in specs], device, case, data)
        except AssertionError as exc:
            raise AssertionError(f"argument {position}, written in place: {exc}") from None


def run_sample(case: OpCase, dtype: str, index: int, sample: Sample, device: Any, data: bool) -> None:
    """Every check of one sample: the functional call, ``out=``, the in-place form, view sharing."""
    decl = declarations()[case.op]
    if sample.data_dependent and not data:
        return
    if decl.random:  # no numpy reference for random values: support, shape, dtype and determinism instead
        from ._random_runner import run_random_sample

        return run_random_sample(case, dtype, index, sample, device, data)
    seed = seed_for(case.op, dtype, index)
    host_args, host_kwargs, args, kwargs = Inputs(device, seed).sample(sample)
    expected, mutated = _expected(case, host_args, host_kwargs)
    fn = function(case.op)

    inputs = Inputs(device, seed)
    host_args, host_kwargs, args, kwargs = inputs.sample(sample)
    result = fn(*args, **kwargs)
    _check_mutated(case, sample, args, mutated, device, data)
    if expected is None:
        if result is not None and result != ():
            raise AssertionError(f"expected no result, got {type(result).__name__}")
        return
    dtypes = expected_dtypes(case, sample, len(expected))
    check_outputs(as_list(result), expected, dtypes, device, case, data)

    if data and decl.kind == "view" and decl.composite is None and inputs.roots:
        _check_shares_storage(case.op, inputs.roots[0], as_list(result))

    if decl.returns_out and "out" not in sample.kwargs:
        _, _, args, kwargs = Inputs(device, seed).sample(sample)
        outs = [flambeau.empty(e.shape, dtype=fb_dtype(d), device=device) for e, d in zip(expected, dtypes)]
        given = outs[0] if len(outs) == 1 else tuple(outs)
        returned = fn(*args, out=given, **kwargs)
        if not all(r is o for r, o in zip(as_list(returned), outs)):
            raise AssertionError("with out=: the op did not return the out tensor(s)")
        try:
            check_outputs(outs, expected, dtypes, device, case, data)
        except AssertionError as exc:
            raise AssertionError(f"with out=: {exc}") from None

    first = sample.args[0] if sample.args else None
    if (decl.inplace and isinstance(first, Arg) and len(expected) == 1 and expected[0].shape == first.shape
            and flambeau.can_cast(fb_dtype(dtypes[0]), fb_dtype(first.dtype))):
        # In place, the result is cast into the input's dtype (x.ge_(y) on floats writes 0. and 1.)
        want = expected if dtypes[0] == first.dtype else [_cast(expected[0], first.dtype)]
        _, _, args, kwargs = Inputs(device, seed).sample(sample)
        target = args[0]
        returned = function(case.op + "_")(*args, **kwargs)
        if returned is not target:
            raise AssertionError(f"{case.op}_ did not return its input")
        try:
            check_outputs([target], want, [first.dtype], device, case, data)
        except AssertionError as exc:
            raise AssertionError(f"in place ({case.op}_, input {first.describe()}): {exc}") from None


def _cast(values: np.ndarray, dtype: str) -> np.ndarray:
    """The reference's result as an in-place op stores it into a tensor of ``dtype``."""
    target = fb_dtype(dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return np.asarray(values).astype(target.numpy_dtype if target is not flambeau.bfloat16 else np.float32)


def _check_shares_storage(op: str, root: Any, results: list) -> None:
    """Writing to the input's storage must show through a view result."""
    # 1+1j for complex storage, so that views of the imaginary parts (imag) see the write too
    function("fill_")(root, 1 + 1j if root.dtype.is_complex else 1)
    for t in results:  # a conjugated view (_conj) reads the 1+1j as 1-1j
        if t.numel() and not np.all(np.isin(to_host(t), (1, 1 + 1j, 1 - 1j))):
            raise AssertionError(f"the result of {op} does not share storage with its input")


def run_error(op: str, case: ErrorCase, device: Any, index: int) -> None:
    _, _, args, kwargs = Inputs(device, seed_for(op, "error", index)).sample(Sample(case.args, case.kwargs))
    fn = function(case.call or op)
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the type is what is checked
        if type(exc) is not case.exc:
            raise AssertionError(
                f"raised {type(exc).__name__} ({exc}), expected {case.exc.__name__} with {case.match!r}") from exc
        if case.match not in str(exc):
            raise AssertionError(f"message {str(exc)!r} does not contain {case.match!r}") from exc
        return
    raise AssertionError(f"did not raise {case.exc.__name__} ({case.match!r})")


def generic_errors(op: str, device: Any) -> Iterable[ErrorCase]:
    """Errors every op gives, whatever package declares it: a non-tensor where a tensor goes,
    and (off the CPU) tensors on two devices."""
    decl = declarations()[op]
    params = decl.parameters
    if not params or params[0].annotation != "Tensor" or params[0].default is not params[0].empty:
        return
    rest: list[Any] = []
    for p in params[1:]:
        if p.default is not p.empty:
            break
        if p.kind is p.KEYWORD_ONLY:
            return  # a required keyword argument: no generic call to make
        rest.append([] if p.annotation == "TensorList" else Arg((2,), "float32")
                    if p.annotation in ("Tensor", "TensorOrScalar", "Tensor?") else 0)
    name = params[0].name
    yield ErrorCase(([1.0, 2.0], *rest), TypeError, f"argument '{name}' (position 1) must be Tensor, not list")
    # copy_ copies from any device, as PyTorch's (contract:mixed_devices checks it)
    if getattr(device, "type", "cpu") != "cpu" and rest and isinstance(rest[0], Arg) and cpu_available() \
            and op != "copy":
        on_cpu = Arg((2,), "float32", on_cpu=True)
        yield ErrorCase((Arg((2,), "float32"), on_cpu, *rest[1:]), RuntimeError,
                        "Expected all tensors to be on the same device")
