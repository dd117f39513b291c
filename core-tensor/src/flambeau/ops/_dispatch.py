"""The per-op path: from unwrapped arguments to a wrapped result, and its slow exits.

``run_compute`` and friends are called by each op's generated function (``_codegen``).
The fast path is: look the kernel up in the device type's frozen table, run the meta
function, allocate, call the kernel, wrap, and record an autograd node only when an input
requires grad. Everything unusual (no kernel, fallback, ``out=``) leaves the fast path.
"""
from __future__ import annotations

import threading
import warnings
from collections import Counter
from typing import Any, Callable

from .. import _dtypes
from .. import _tensor as _tensor_module
from .._device import device as _device_cls
from .._grad_mode import STATE as _GRAD_STATE
from .._grad_mode import check_inference_write as _check_inference_write
from .._tensor import Tensor, wrap
from ._decl import COMPUTE, FACTORY, VIEW, OpDecl
from ._registry import OPS, TABLES, backend_distribution, check_dtype

_CPU = _device_cls("cpu")  # devices are interned: this is the object every cpu tensor carries

_engine: Any = None  # the autograd engine's slot; filled by flambeau-core-autograd


def set_autograd_engine(engine: Any) -> None:
    """Fill the recording slot (done once, at load, by the autograd package); the Tensor, a layer
    below, reads its own copy (``requires_grad_``, ``backward``)."""
    global _engine
    _engine = engine
    _tensor_module.autograd_engine = engine


def autograd_engine() -> Any:
    return _engine


def kernel_entry(op: OpDecl, cache: dict, device_type: str) -> tuple:
    """``(kernel or None, allocator, table)`` of ``op`` on a device type, cached per op function.

    Kernel tables are frozen once built, so the entry never goes stale.
    """
    table = TABLES[device_type]
    entry = (table.get(op.name), table.empty, table, _has_numpy_flags(table, device_type))
    cache[device_type] = entry
    return entry


_FLAGS: dict[str, bool] = {}


def _has_numpy_flags(table: Any, device_type: str) -> bool:
    """Whether the backend's native arrays carry numpy's ``flags`` (numpy's and CuPy's do), read by
    an elementwise op's quick layout test; found once per device type from a 1-element array."""
    known = _FLAGS.get(device_type)
    if known is None:
        dev = _device_cls(device_type) if device_type != "cpu" else _CPU
        try:
            probe = table.empty((1,), _dtypes.float32, resolve_device(dev))
            known = isinstance(getattr(getattr(probe, "flags", None), "c_contiguous", None), bool)
        except Exception:  # noqa: BLE001 - a backend that cannot allocate here: the general path
            known = False
        _FLAGS[device_type] = known
    return known


def elementwise_out(entry: tuple, shape: tuple, dt: Any, dev: Any, args: tuple) -> Any:
    """The output of an elementwise op laid out as its tensor inputs are (PyTorch's TensorIterator
    rule, ``flambeau._layout.elementwise_strides``): row-major unless they say otherwise."""
    from .._layout import elementwise_strides

    inputs = [(a._data.shape, a.stride()) for a in args if isinstance(a, Tensor)]
    strides = elementwise_strides(shape, inputs)
    table = entry[2]
    if strides is None:
        return table.empty(shape, dt, dev)
    return empty_strided_native(table, shape, strides, dt, dev)


def empty_strided_native(table: Any, shape: tuple, strides: tuple, dt: Any, dev: Any) -> Any:
    """A new native array of ``shape`` with the element ``strides`` (non-negative, not overlapping):
    its storage allocated flat, then viewed through the backend's ``as_strided``."""
    span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    storage = table.empty((span,), dt, dev)
    return table["as_strided"](storage, tuple(shape), tuple(strides), 0)


# -- the fast paths -------------------------------------------------------------------

def run_compute(op: OpDecl, dev: Any, args: tuple, natives: tuple, out: Any, rg: bool, inplace: bool) -> Any:
    table = TABLES[dev.type]
    kernel = table.get(op.name)
    if kernel is None:  # a composite op (or none at all): no exception to pay for on that path
        return _without_kernel(op, dev, args, out, inplace)
    spec = op.meta(*args)
    if out is None:
        return finish_compute(op, dev, table, kernel, args, natives, spec, rg)
    return _run_into(op, kernel, dev, args, natives, spec, out, rg, inplace)


def finish_compute(op: OpDecl, dev: Any, table: Any, kernel: Any, args: tuple, natives: tuple, spec: Any,
                   rg: bool) -> Any:
    """A functional compute op after its meta ran: allocate its outputs, run the kernel, wrap, record.

    The generated op functions inline the one-output case (``_codegen._compute_lines``)
    and call this for several outputs; keep the two in step.
    """
    if type(spec) is tuple:
        shape, dt = spec
        o = table.empty(shape, dt, dev)
        kernel(*natives, out=o)
        result = wrap(o, dt, dev)
        if rg:
            _engine.record(op, args, (result,), "functional", None)
        return result
    if len(spec) == 2:  # values/indices and the like: written out, no generator frames
        (s0, d0), (s1, d1) = spec
        empty = table.empty
        o0 = empty(s0, d0, dev)
        o1 = empty(s1, d1, dev)
        kernel(*natives, out=(o0, o1))
        results = (wrap(o0, d0, dev), wrap(o1, d1, dev))
    else:
        empty = table.empty
        outs = tuple([empty(shape, dt, dev) for shape, dt in spec])
        kernel(*natives, out=outs)
        results = tuple([wrap(o, dt, dev) for o, (_, dt) in zip(outs, spec)])
    if rg:
        _engine.record(op, args, results, "functional", None)
    cls = op.__dict__.get("_result_type") or _result_type(op)
    return results if cls is tuple else _tuple_new(cls, results)


def run_view(op: OpDecl, dev: Any, args: tuple, natives: tuple, rg: bool) -> Any:
    """A view op: its kernel's native view, wrapped, sharing the base's version counter.

    The generated op functions inline the path with a kernel (``_codegen._view_lines``); keep
    the two in step.
    """
    table = TABLES[dev.type]
    kernel = table.get(op.name)
    if kernel is None:
        return _without_kernel(op, dev, args, None, False)
    op.meta(*args)
    native = kernel(*natives)
    base = args[0]
    result = wrap(native, _dtypes._FROM_NUMPY.get(native.dtype) or _dtypes.from_numpy_dtype(native.dtype), dev)
    result._version_counter = base._version_counter
    result._base = base if base._base is None else base._base
    if op.name == "_conj":
        result._conj = not base._conj
    if rg:
        _engine.record(op, args, (result,), "view", None)
    return result


def run_dynamic(op: OpDecl, dev: Any, args: tuple, natives: tuple, rg: bool) -> Any:
    table = TABLES[dev.type]
    try:
        kernel = table[op.name]
    except KeyError:
        return _without_kernel(op, dev, args, None, False)
    op.meta(*args)
    produced = kernel(*natives)
    if isinstance(produced, tuple):
        results = tuple(wrap(n, _dtypes.from_numpy_dtype(n.dtype), dev) for n in produced)
    else:
        results = (wrap(produced, _dtypes.from_numpy_dtype(produced.dtype), dev),)
    if rg:
        _engine.record(op, args, results, "functional", None)
    return _named(op, results) if isinstance(produced, tuple) else results[0]


_tuple_new = tuple.__new__  # builds a named tuple from a tuple without its __new__'s Python frame


def _result_type(op: OpDecl) -> type:
    """The class of ``op``'s several-output result: its named tuple, or ``tuple`` for an op without
    output names. Made at the op's first call (not at import: ~100 ops are declared then) and kept
    on the declaration."""
    names = getattr(op, "output_names", None)
    if names:
        from ..return_types import for_op

        cls = for_op(op.name, names)
    else:
        cls = tuple
    op.__dict__["_result_type"] = cls
    return cls


def _named(op: OpDecl, results: tuple) -> Any:
    cls = op.__dict__.get("_result_type") or _result_type(op)
    return results if cls is tuple else _tuple_new(cls, results)


# -- the conjugate bit: resolved at the kernel boundary --------------------------------

def _flip(t: Tensor) -> Tensor:
    """The view of ``t`` with its conjugate bit flipped (the ``_conj`` view op, so autograd sees it)."""
    from ._registry import FUNCTIONS

    return FUNCTIONS["_conj"](t)


def resolve(t: Tensor) -> Tensor:
    """``t`` with its conjugate bit materialised: a conjugated view becomes a new tensor holding
    the conjugated values (differentiable: conj_physical of the unconjugated alias)."""
    if not t._conj:
        return t
    from ._registry import FUNCTIONS

    return FUNCTIONS["conj_physical"](_flip(t))


def _resolved(arg: Any) -> Any:
    if isinstance(arg, Tensor):
        return resolve(arg) if arg._conj else arg
    if isinstance(arg, (list, tuple)) and any(isinstance(a, Tensor) and a._conj for a in arg):
        return type(arg)(resolve(a) if isinstance(a, Tensor) else a for a in arg)
    return arg


def conj_call(op: OpDecl, call: Callable[..., Any], args: tuple, out: Any, inplace: bool) -> Any:
    """An op with a conjugated view among its inputs (its generated function sends it here):
    every input is resolved, then the op runs again. A result written into a conjugated view
    (in place, or ``out=``) is computed into a resolved copy and written back conjugated, so
    that the view reads the result."""
    resolved = tuple(_resolved(a) for a in args)
    if inplace:
        target = args[0]
        result = call(*resolved)
        if target._conj:
            _write_conj(target, result)
            return target
        return result
    if out is None:
        return call(*resolved)
    outs = (out,) if isinstance(out, Tensor) else tuple(out)
    temps = tuple(resolve(o) for o in outs)
    result = call(*resolved, temps[0] if isinstance(out, Tensor) else temps)
    for o, t in zip(outs, temps):
        if o._conj:
            _write_conj(o, t)
    if isinstance(out, Tensor):
        return out
    return result if all(r is t for r, t in zip(result, temps)) and not any(o._conj for o in outs) else \
        _named(op, outs)


def _write_conj(target: Tensor, values: Tensor) -> None:
    """Write ``values`` into the conjugated view ``target``: its storage gets their conjugate."""
    from ._registry import FUNCTIONS

    storage = _flip(target)  # the same memory, read as stored
    if values._dtype.is_complex:
        values = FUNCTIONS["conj_physical"](values)
    FUNCTIONS["copy_"](storage, values)


def conj_view(op: OpDecl, call: Callable[..., Any], args: tuple) -> Any:
    """A view op of a conjugated view: the view of the storage as stored, conjugated again, so
    that the result shares memory and keeps the bit (``x.conj().t().is_conj()``), as PyTorch's."""
    from ._registry import FUNCTIONS

    name = op.name
    if name == "view_as_real":
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
                           "conjugate tensor so you can view it as real, use self.resolve_conj()")
    first = args[0]
    if isinstance(first, (list, tuple)):  # broadcast_tensors: each result follows its own input
        flags = [isinstance(t, Tensor) and t._conj for t in first]
        results = call(type(first)(_flip(t) if c else t for t, c in zip(first, flags)), *args[1:])
        return type(results)(_flip(r) if c else r for r, c in zip(results, flags))
    result = call(_flip(first), *args[1:])
    if name == "imag":  # PyTorch gives a view with a negative bit, which flambeau has not: a copy
        return FUNCTIONS["neg"](result)
    if isinstance(result, Tensor):
        return _flip(result) if result._dtype.is_complex else result  # real: the real parts
    return type(result)(_flip(r) for r in result)


# -- writing into existing tensors (out= and in-place) ---------------------------------

def _fmt_shape(shape: tuple) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_out(op: OpDecl, spec: Any, out: Any, inplace: bool) -> tuple:
    """Check ``out`` tensors against the meta's specs before anything is written."""
    specs = [spec] if type(spec) is tuple else list(spec)
    outs = (out,) if isinstance(out, Tensor) else tuple(out) if isinstance(out, (tuple, list)) else None
    if outs is None or len(outs) != len(specs) or not all(isinstance(o, Tensor) for o in outs):
        expected = "Tensor" if len(specs) == 1 else f"a tuple of {len(specs)} Tensors"
        raise TypeError(f"{op.name}(): argument 'out' must be {expected}, not {type(out).__name__}")
    for o, (shape, dt) in zip(outs, specs):
        if not _dtypes.can_cast(dt, o._dtype):
            raise RuntimeError(f"result type {_type_name(dt)} can't be cast to the desired output type "
                               f"{_type_name(o._dtype)}")
        if tuple(o.shape) != tuple(shape):
            if inplace:
                raise RuntimeError(
                    f"output with shape {_fmt_shape(o.shape)} doesn't match the broadcast shape {_fmt_shape(shape)}"
                )
            if o._base is not None or o.numel() != 0:
                warnings.warn(
                    f"An output with one or more elements was resized since it had shape {_fmt_shape(o.shape)}, "
                    f"which does not match the required output shape {_fmt_shape(shape)}. "
                    "This behavior is deprecated; resize outputs explicitly with `Tensor.resize_(0)` first.",
                    UserWarning, stacklevel=4,
                )
            if o._base is not None:
                raise RuntimeError(f"{op.name}(): cannot resize out= tensor that is a view of another tensor")
            table = TABLES[o._device.type]
            o._data = table.empty(tuple(shape), o._dtype, o._device)
    return outs


def _type_name(dt: Any) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}[dt.name]


def _overlaps(native: Any) -> bool:
    """Whether an expanded view repeats an element (a stride of 0 on a dim longer than 1)."""
    if 0 in native.shape:
        return False  # an empty tensor has no elements to collide (numpy gives its dims stride 0)
    return any(s == 0 and n > 1 for s, n in zip(native.strides, native.shape))


def _out_into_conj(op: OpDecl, args: tuple, out: Any) -> Any:
    """``out=`` a conjugated view (the op's inputs have no bit set: ``conj_call`` saw to those)."""
    from ._registry import FUNCTIONS

    fn = FUNCTIONS[op.name]
    positional = [a for a, p in zip(args, op.parameters) if p.kind is not p.KEYWORD_ONLY]
    keywords = {p.name: a for a, p in zip(args, op.parameters) if p.kind is p.KEYWORD_ONLY}
    return conj_call(op, lambda *xs: fn(*xs[:-1], **keywords, out=xs[-1]), tuple(positional), out, False)


def _run_into(op, kernel, dev, args, natives, spec, out, rg, inplace):
    if not inplace:
        if out._conj if isinstance(out, Tensor) else any(isinstance(o, Tensor) and o._conj for o in out):
            return _out_into_conj(op, args, out)
        # out=: the user holds the tensor written into. A kernel that checks its input as it writes
        # (safe only into a fresh output) offers an `into_existing` variant that checks before writing.
        kernel = getattr(kernel, "into_existing", kernel)
    # The common case first (one output tensor of the right shape, a dtype it can take, on the
    # device, no zero strides): it needs none of check_out's conversions, messages or resizing.
    # `x.add_(y)` and optimizer steps live here; the general path below gives the same result.
    if type(spec) is tuple and isinstance(out, Tensor):
        shape, dt = spec
        native = out._data
        if out._device is dev and native.shape == shape and (dt is out._dtype or _dtypes.can_cast(dt, out._dtype)) \
                and 0 not in native.strides:
            if len(out._version_counter) != 1:
                _check_inference_write(out._version_counter)
            mode = "inplace" if inplace else "out"
            pre = _engine.before_write(op, args, (out,), mode) if (rg or out._requires_grad) and _engine else None
            kernel(*natives, out=native)
            out._version_counter[0] += 1
            if _engine is not None and (rg or pre is not None):
                _engine.record(op, args, (out,), mode, pre)
            return out
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        if isinstance(o, Tensor):  # before check_out, which may resize an out= tensor
            _check_inference_write(o._version_counter)
    outs = check_out(op, spec, out, inplace)
    for o in outs:
        if o._device is not dev:
            raise RuntimeError(f"Expected out tensor to be on device {dev}, but got {o._device}")
        if 0 in o._data.strides and op.name != "fill" and _overlaps(o._data):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation."
            )
    mode = "inplace" if inplace else "out"
    pre = _engine.before_write(op, args, outs, mode) if (rg or any(o.requires_grad for o in outs)) and _engine else None
    kernel(*natives, out=outs[0]._data if len(outs) == 1 else tuple(o._data for o in outs))
    for o in outs:
        o._version_counter[0] += 1
    if _engine is not None and (rg or pre is not None):
        _engine.record(op, args, outs, mode, pre)
    return outs[0] if len(outs) == 1 else _named(op, outs)


# -- no kernel: composite, CPU fallback, or a clear error ------------------------------

_fallback_enabled: set[str] = set()
_fallback_warned: set[tuple[str, str]] = set()
_fallback_counts: Counter = Counter()
_strict = False


def enable_cpu_fallback(backend: str, enabled: bool = True) -> None:
    """Let ops that ``backend`` lacks run on the CPU (copy in, compute, copy out), with a warning.

    Views, factories and random ops never fall back; ``set_strict(True)`` forbids every fallback.

    Args:
        backend: the device type, e.g. ``"cuda"``.
        enabled: False turns the fallback off again.

    Example::

        >>> fb.ops.enable_cpu_fallback("meta")
    """
    if not isinstance(backend, str):
        raise TypeError("enable_cpu_fallback(): backend must be a device type name (str), "
                        f"not {type(backend).__name__}")
    (_fallback_enabled.add if enabled else _fallback_enabled.discard)(backend)


def set_strict(strict: bool = True) -> None:
    """In strict mode every CPU fallback raises instead of running (process-wide, like the fallback itself)."""
    global _strict
    _strict = bool(strict)


def is_strict() -> bool:
    return _strict


def fallback_stats() -> dict[tuple[str, str], int]:
    """How many times each ``(backend, op)`` ran through the CPU fallback."""
    return dict(_fallback_counts)


def _any_requires_grad(args: tuple) -> bool:
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                return True
        elif isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) and t._requires_grad for t in a):
            return True
    return False


def _without_kernel(op: OpDecl, dev: Any, args: tuple, out: Any, inplace: bool) -> Any:
    if op.composite is not None:
        # the argument checks come first, as before a kernel: a composite built from other ops
        # would otherwise fail inside them with their messages (or not at all)
        if op.meta is not None:
            op.meta(*args)
        if out is not None and not inplace and _engine is not None and _GRAD_STATE.enabled and op.differentiable:
            # out= is not differentiable: refused here as on the kernel path, before any work
            outs = out if isinstance(out, (tuple, list)) else (out,)
            _engine.before_write(op, args, tuple(o for o in outs if isinstance(o, Tensor)), "out")
        if inplace and _engine is not None and _GRAD_STATE.enabled and _any_requires_grad(args):
            # The composite's graph may save its input, which the copy_ below overwrites (a
            # version error at backward): it computes from a copy of the old value instead, as a
            # kernel's in-place form saves the old value (the copy's history leads to the input's).
            target = args[0]
            result = op.composite(target.clone(), *args[1:])
        else:
            target = args[0] if inplace else None
            result = op.composite(*args)
        if not inplace and out is None:
            return result
        from ._registry import FUNCTIONS

        if inplace:
            return FUNCTIONS["copy_"](target, result)
        if out is not None:
            return FUNCTIONS["copy_"](out, result) if isinstance(out, Tensor) else tuple(
                FUNCTIONS["copy_"](o, r) for o, r in zip(out, result))
        return result
    table = TABLES[dev.type]
    backend = table.backend
    never = op.kind == VIEW or op.kind == FACTORY or getattr(op, "random", False)
    if dev.type != "cpu" and dev.type in _fallback_enabled and not never:
        if is_strict():
            raise RuntimeError(f"'{op.name}' has no kernel on backend '{dev.type}' and strict mode "
                               "(flambeau.ops.set_strict) forbids the CPU fallback")
        return _cpu_fallback(op, dev, args, out, inplace)
    raise NotImplementedError(missing_kernel_message(op, backend))


def missing_kernel_message(op: OpDecl, backend: Any) -> str:
    dist = backend_distribution(backend.name)
    refused = TABLES[backend.name].refused.get(op.name)
    why = f" (its kernel was refused: {refused})" if refused else ""
    return (
        f"Could not run '{op.name}' on backend '{backend.name}': the op (declared by {op.provider or '?'}) "
        f"has no kernel for this backend and no composite implementation{why}. "
        f"A kernel must come from {dist} or from a plugin that registers ('{backend.name}', '{op.name}')"
        + (f"; {op.kind if op.kind in (VIEW, FACTORY) else 'random'} ops never fall back to the CPU."
           if op.kind in (VIEW, FACTORY) or getattr(op, "random", False) else
           f"; or call flambeau.ops.enable_cpu_fallback('{backend.name}') to run it on the CPU.")
    )


def _by_declaration(op: OpDecl, fn: Callable[..., Any], args: tuple, **extra: Any) -> Any:
    """``fn`` called with ``args`` (one per declared parameter) as the op's signature takes them:
    keyword-only parameters by keyword (``prod(x, dim, keepdim, dtype=...)``)."""
    positional = [a for a, p in zip(args, op.parameters) if p.kind is not p.KEYWORD_ONLY]
    keywords = {p.name: a for a, p in zip(args, op.parameters) if p.kind is p.KEYWORD_ONLY}
    return fn(*positional, *args[len(op.parameters):], **keywords, **extra)


def _cpu_fallback(op: OpDecl, dev: Any, args: tuple, out: Any, inplace: bool) -> Any:
    """Run ``op`` on copies of its inputs on the CPU and bring the result back to ``dev``."""
    from ..plugins._discovery import user_stacklevel
    from ._registry import FUNCTIONS

    key = (dev.type, op.name)
    if key not in _fallback_warned:
        _fallback_warned.add(key)
        warnings.warn(f"flambeau: '{op.name}' has no kernel on '{dev.type}'; running it on the CPU (slow)",
                      stacklevel=user_stacklevel())
    _fallback_counts[key] += 1
    cpu = _CPU

    def to_cpu(x):
        if isinstance(x, Tensor):
            return x.to(cpu)
        if isinstance(x, (list, tuple)) and any(isinstance(i, Tensor) for i in x):
            return type(x)(to_cpu(i) for i in x)
        return x

    cpu_args = tuple(to_cpu(a) for a in args)
    if inplace:  # the in-place form runs on a CPU copy of `input` (its checks included), copied back
        _by_declaration(op, FUNCTIONS[op.name + "_"], cpu_args)
        return args[0].copy_(cpu_args[0])
    if out is not None:  # the CPU op checks and resizes copies of `out`; the device's `out` follows
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        cpu_outs = tuple(o.to(cpu) for o in outs)
        _by_declaration(op, FUNCTIONS[op.name], cpu_args, out=cpu_outs[0] if isinstance(out, Tensor) else cpu_outs)
        for o, c in zip(outs, cpu_outs):
            if tuple(o.shape) != tuple(c.shape):
                o._data = TABLES[dev.type].empty(tuple(c.shape), o._dtype, dev)
            o.copy_(c)
        return out
    result = _by_declaration(op, FUNCTIONS[op.name], cpu_args)
    if isinstance(result, Tensor):
        return result.to(dev)
    moved = [r.to(dev) for r in result]
    return type(result)(*moved) if hasattr(result, "_fields") else type(result)(moved)  # named tuples too


# -- argument errors, device rules ----------------------------------------------------

def type_error(op: OpDecl, name: str, value: Any) -> TypeError:
    position = op.param_names.index(name) + 1 if name in op.param_names else 0
    return TypeError(
        f"{op.name}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
    )


def zero_dim_common(first: Any, second: Any) -> tuple[Any, Any]:
    """``(first, second)`` with a 0-d one cast to the other's dtype when the other has dims and its
    dtype category (bool < integer < floating < complex) is no lower, as PyTorch casts operands to
    their common dtype: ``uint8_t == tensor(257)`` compares with ``257 -> 1``. Both 0-d, both with
    dims, or a 0-d operand of a higher category (``int_t * tensor(0.5)``): unchanged."""
    first_0d, second_0d = first.dim() == 0, second.dim() == 0
    if first_0d == second_0d:
        return first, second
    small, big = (first, second) if first_0d else (second, first)
    if small._dtype._category > big._dtype._category:
        return first, second
    small = small.to(big._dtype)
    return (small, second) if first_0d else (first, small)


def no_tensor_error(op: OpDecl) -> Exception:
    """No tensor among the arguments. For an op whose tensors all come in lists (``cat``, ``stack``),
    that means every list was empty (a non-tensor element is refused earlier): the op's own check
    (its meta, else its composite) then gives PyTorch's error for an empty list."""
    from ._decl import TENSOR_LIST, tensor_kind

    kinds = [tensor_kind(p) for p in op.parameters]
    if TENSOR_LIST in kinds and all(k in (None, TENSOR_LIST) for k in kinds):
        check = op.meta or op.composite
        args = [[] if k == TENSOR_LIST else None if p.default is p.empty else p.default
                for p, k in zip(op.parameters, kinds)]
        try:
            check(*args)
        except RuntimeError as exc:
            return exc
        except Exception:  # noqa: BLE001 - a check that cannot take empty lists: the generic error below
            pass
    return TypeError(f"{op.name}(): at least one argument must be a Tensor")


def _tensors_in(args: tuple) -> list[Tensor]:
    found: list[Tensor] = []
    for a in args:
        if isinstance(a, Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found += [t for t in a if isinstance(t, Tensor)]
    return found


def _moved(arg: Any, move: Callable[[Tensor], Tensor]) -> Any:
    if isinstance(arg, Tensor):
        return move(arg)
    if isinstance(arg, (list, tuple)) and any(isinstance(t, Tensor) for t in arg):
        return type(arg)(move(t) if isinstance(t, Tensor) else t for t in arg)
    return arg


def to_device(tensor: Tensor, dev: _device_cls, non_blocking: bool = False) -> Tensor:
    """A copy on another device: through the host unless both are the same backend.

    ``non_blocking`` is passed to the target backend's ``copy_from_host_``, which may queue the
    copy (a backend that cannot ignores it)."""
    if tensor._conj:  # the copy holds the conjugated values
        tensor = tensor.resolve_conj()
    source = TABLES[tensor._device.type].backend
    target_table = TABLES[dev.type]
    target = target_table.backend
    if source is target:
        native = target_table.empty(tensor._data.shape, tensor._dtype, dev)
        target.copy_(native, tensor._data)
    else:
        check_dtype(target, tensor._dtype)
        host = source.to_numpy(tensor._data)
        if non_blocking:
            native = target_table.empty(host.shape, tensor._dtype, dev)
            target.copy_from_host_(native, host, non_blocking=True)
        else:
            native = target.from_numpy(host, dev)
    result = wrap(native, tensor._dtype, dev)
    engine = _engine
    if tensor._requires_grad and engine is not None:
        engine.record_device_copy(tensor, result)
    return result


def cross_device(op: OpDecl, call: Callable[..., Any], args: tuple, out: Any, inplace: bool) -> Any:
    """An op whose tensor inputs are on more than one device (its generated function sends it here).

    As in PyTorch: ``copy_`` copies from any device (its source is moved to the destination's
    device); a 0-dim CPU tensor combines with tensors of one other device (it is moved there),
    unless it is the tensor written in place; anything else raises PyTorch's error, naming the
    first two devices found. The op then runs again on the moved inputs.
    """
    tensors = _tensors_in(args)
    if op.name == "copy" and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
        target = args[0]._device
        return call(args[0], to_device(args[1], target))
    devices = list(dict.fromkeys(t._device for t in tensors))
    others = [d for d in devices if d.type != "cpu"]
    movable = len(others) == 1 and all(t._device is others[0] or t.dim() == 0 for t in tensors)
    if movable and inplace and args[0]._device.type == "cpu":
        movable = False  # the tensor written in place stays where it is: PyTorch refuses
    if not movable:
        unify_devices(op, devices[0], next(t for t in tensors if t._device is not devices[0]))
    target = others[0]
    moved = tuple(_moved(a, lambda t: to_device(t, target) if t._device is not target else t) for a in args)
    return call(*moved) if out is None else call(*moved, out)


def unify_devices(op: OpDecl, current: Any, tensor: Tensor) -> Any:
    """Two inputs on different devices: PyTorch's error, naming both."""
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, {current} and "
        f"{tensor._device}! (when checking arguments for {op.name})"
    )


class _DefaultDevice(threading.local):
    value: Any = None  # a class default: reading it never raises (getattr with a default did, ~0.3 us a call)


_default_device = _DefaultDevice()


def factory_device(requested: Any) -> Any:
    """The device a factory op allocates on: the one asked for, else the default device."""
    if requested is None:
        return _default_device.value or _CPU
    return resolve_device(requested)


def resolve_device(requested: Any) -> Any:
    """A device with its index filled in as its backend would (``"cuda"`` -> ``cuda:0``)."""
    dev = requested if isinstance(requested, _device_cls) else _device_cls(requested)
    table = TABLES[dev.type]
    if dev.index is None:
        index = table.backend.default_index()
        if index is not None:
            dev = _device_cls(dev.type, index)
    elif dev.index >= table.backend.device_count():
        raise RuntimeError(
            f"Invalid device {dev}: {dev.type} has {table.backend.device_count()} device(s)"
        )
    return dev


def set_default_device(dev: Any) -> None:
    """Make factory functions allocate on ``dev`` when no device is given (``torch.set_default_device``)."""
    _default_device.value = None if dev is None else resolve_device(dev)


def get_default_device() -> Any:
    return _default_device.value or _CPU


__all__ = ["OPS", "run_compute", "run_view", "run_dynamic", "COMPUTE"]
