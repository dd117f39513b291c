"""Declarations of the random sampling ops: factories (rand, randn, randint, randperm, normal with a size),
samplers shaped like their input (bernoulli, multinomial, poisson, normal with tensor parameters), and the
in-place samplers behind ``Tensor.uniform_``, ``normal_``, ``bernoulli_``, ``cauchy_``, ``exponential_``,
``geometric_``, ``log_normal_`` and ``random_``.

Every op here takes ``generator=``: None (the device's default generator) or a ``flambeau.Generator`` on
the op's device. Kernels receive the generator as given and read its backend engine from
``generator._native`` (see :meth:`flambeau.plugins.Backend.create_generator`).
Checks that need values (all ``std >= 0``, probabilities in [0, 1]) run in the kernels, before they write.
"""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._generator import Generator
from .._tensor import Tensor
from ..ops._decl import COMPUTE, FACTORY, OpDecl
from ..ops.meta import broadcast_shapes, check_dtype_in, type_name
from ..ops.sizes import checked_nbytes, checked_numel

FACTORY_KW = "*, generator=None, dtype=None, device=None, requires_grad=False"
FLOATING = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
COMPLEX = (_dtypes.complex64, _dtypes.complex128)


def fmt_number(value: Any) -> str:
    """A number as PyTorch's C++ messages print it (``-1``, ``0.5``, ``1e+20``)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    return f"{value:g}"


def check_generator(op: str, generator: Any, dev: Any) -> None:
    """``generator`` is None or a Generator on the device type the op runs on."""
    if generator is None:
        return
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}(): argument 'generator' must be flambeau.Generator, not {type(generator).__name__}")
    want = dev.type if hasattr(dev, "type") else "cpu"
    if generator.device.type != want:
        raise RuntimeError(f"Expected a '{want}' device type for generator but found '{generator.device.type}'")


def _factory_device(device: Any) -> Any:
    from ..ops._dispatch import factory_device

    return factory_device(device)


def _shape(op: str, size: Any, dt: Any) -> tuple[int, ...]:
    if type(size) is tuple:
        for s in size:
            if type(s) is not int or s < 0:
                break
        else:
            _checked(size, dt)
            return size  # the common case, checked without building anything
    from ..ops.meta import check_size

    if isinstance(size, int):
        size = (size,)
    size = check_size(op, tuple(size))
    _checked(size, dt)
    return size


def _checked(size: tuple[int, ...], dt: Any) -> None:
    # before any backend allocates (the meta backend would not refuse); PyTorch's random factories
    # count the elements first, then the bytes
    checked_numel(size)
    checked_nbytes(size, dt.itemsize)


def _real_number(op: str, name: str, value: Any) -> float:
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(value).__name__}")
    return value


# -- factories -----------------------------------------------------------------------------

_RAND_DTYPES = frozenset(FLOATING + COMPLEX)


def _rand_meta(size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> tuple:
    dt = dtype or _dtypes.get_default_dtype()
    if generator is not None:
        check_generator("rand", generator, _factory_device(device))
    if dt not in _RAND_DTYPES:
        check_dtype_in("check_uniform_bounds", dt, FLOATING + COMPLEX)
    return _shape("rand", size, dt), dt


def _randn_meta(size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> tuple:
    dt = dtype or _dtypes.get_default_dtype()
    if generator is not None:
        check_generator("randn", generator, _factory_device(device))
    if dt not in _RAND_DTYPES:
        check_dtype_in("normal_kernel_cpu", dt, FLOATING + COMPLEX)
    return _shape("randn", size, dt), dt


def integer_range(d: _dtypes.dtype) -> tuple[int, int]:
    """The integers a dtype holds exactly: its whole range, or ``[-2**digits, 2**digits]`` for floats."""
    if d is _dtypes.bool:
        return 0, 1
    if d._category == _dtypes._INT:
        info = _dtypes.iinfo(d)
        return int(info.min), int(info.max)
    digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[d.name]
    return -(2 ** digits), 2 ** digits


def _finite_range(d: _dtypes.dtype) -> tuple[float, float]:
    if d._category == _dtypes._FLOAT:
        info = _dtypes.finfo(d)
        return float(info.min), float(info.max)
    return integer_range(d)


def check_from_to(d: _dtypes.dtype, low: int, high_inclusive: int) -> None:
    """PyTorch's bounds checks of ``random_(from, to)`` and ``randint`` for the output dtype."""
    lo, hi = _finite_range(d)
    for value, name in ((low, "from"), (high_inclusive, "to - 1")):
        if not lo <= value <= hi:
            raise RuntimeError(f"{name} is out of bounds for {type_name(d)}")


def _randint_meta(low: Any, high: Any, size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> tuple:
    dt = dtype or _dtypes.int64
    check_generator("randint", generator, _factory_device(device))
    for name, value in (("low", low), ("high", high)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"randint(): argument '{name}' must be int, not {type(value).__name__}")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    check_dtype_in("random_from_to_range", dt, _dtypes.ALL_DTYPES[:10])
    check_from_to(dt, low, high - 1)
    return _shape("randint", size, dt), dt


def _randperm_meta(n: Any, generator: Any = None, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> tuple:
    dt = dtype or _dtypes.int64
    check_generator("randperm", generator, _factory_device(device))
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    check_dtype_in("randperm", dt, _dtypes.ALL_DTYPES[1:10])
    if n > 0 and integer_range(dt)[1] < n - 1:
        raise RuntimeError(f"n is too large for result tensor type: '{type_name(dt)}'")
    return (n,), dt


def _normal_size_meta(mean: Any, std: Any, size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
                      requires_grad: bool = False) -> tuple:
    dt = dtype or _dtypes.get_default_dtype()
    check_generator("normal", generator, _factory_device(device))
    mean, std = _real_number("normal", "mean", mean), _real_number("normal", "std", std)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt_number(std)}")
    check_dtype_in("normal_kernel_cpu", dt, FLOATING)
    return _shape("normal", size, dt), dt


# -- samplers shaped like their inputs -------------------------------------------------------

def _normal_tensor_meta(mean: Any, std: Any, generator: Any = None) -> tuple:
    dev = mean._device if isinstance(mean, Tensor) else std._device
    check_generator("normal", generator, dev)
    if isinstance(std, Tensor):
        if std._dtype in COMPLEX:
            raise RuntimeError("normal expects standard deviation to be non-complex")
    elif not _real_number("normal", "std", std) >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt_number(std)}")
    if not isinstance(mean, Tensor):
        _real_number("normal", "mean", mean)
    dt = mean._dtype if isinstance(mean, Tensor) else std._dtype
    check_dtype_in("normal_kernel_cpu", dt, FLOATING)
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        check_dtype_in("normal_kernel_cpu", std._dtype, FLOATING)
        return broadcast_shapes(mean._data.shape, std._data.shape), dt
    return (mean if isinstance(mean, Tensor) else std)._data.shape, dt


def _bernoulli_meta(input: Tensor, p: Any = None, generator: Any = None) -> tuple:
    check_generator("bernoulli", generator, input._device)
    if input._dtype in COMPLEX:
        raise RuntimeError(f'"bernoulli_tensor_cpu_self_" not implemented for \'{type_name(input._dtype)}\'')
    if p is None:
        check_dtype_in("bernoulli_tensor_cpu_p_", input._dtype, FLOATING)
    elif isinstance(p, Tensor):
        check_dtype_in("bernoulli_tensor_cpu_p_", p._dtype, FLOATING)
        if broadcast_shapes(input._data.shape, p._data.shape) != tuple(input._data.shape):
            raise RuntimeError(f"expand(flambeau.FloatTensor{{[{', '.join(map(str, p._data.shape))}]}}, "
                               f"size=[{', '.join(map(str, input._data.shape))}]): the number of sizes provided "
                               f"({input._data.ndim}) must be greater or equal to the number of dimensions in the "
                               f"tensor ({p._data.ndim})")
    else:
        value = _real_number("bernoulli", "p", p)
        if not 0 <= value <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={fmt_number(value)}")
    return input._data.shape, input._dtype


def _multinomial_meta(input: Tensor, num_samples: Any, replacement: bool = False, generator: Any = None) -> tuple:
    check_generator("multinomial", generator, input._device)
    if not 1 <= input._data.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if input._dtype not in FLOATING:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {type_name(input._dtype)}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, int):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, "
                        f"not {type(num_samples).__name__}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input._data.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if categories > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    return input._data.shape[:-1] + (num_samples,), _dtypes.int64


def _poisson_meta(input: Tensor, generator: Any = None) -> tuple:
    check_generator("poisson", generator, input._device)
    check_dtype_in("poisson_cpu", input._dtype, FLOATING)
    return input._data.shape, input._dtype


# -- in-place samplers (their functional forms sample a tensor shaped like ``input``) ----------

def _like(op: str, input: Tensor, generator: Any, kernel_name: str, allowed: tuple) -> tuple:
    check_generator(op, generator, input._device)
    check_dtype_in(kernel_name, input._dtype, allowed)
    return input._data.shape, input._dtype


def _uniform_meta(input: Tensor, from_: Any = 0.0, to: Any = 1.0, generator: Any = None) -> tuple:
    spec = _like("uniform_", input, generator, "check_uniform_bounds", FLOATING + COMPLEX)
    low, high = _real_number("uniform_", "from", from_), _real_number("uniform_", "to", to)
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={fmt_number(low)} "
                           f"> to={fmt_number(high)}")
    real = input._dtype.to_real() if input._dtype in COMPLEX else input._dtype
    if high - low > _finite_range(real)[1]:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{type_name(real)}>::max(), but found "
                           f"to={fmt_number(high)} and from={fmt_number(low)} which result in to-from to exceed "
                           "the limit")
    return spec


def _normal_meta(input: Tensor, mean: Any = 0.0, std: Any = 1.0, generator: Any = None) -> tuple:
    spec = _like("normal_", input, generator, "normal_kernel_cpu", FLOATING + COMPLEX)
    _real_number("normal_", "mean", mean)
    if not _real_number("normal_", "std", std) >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt_number(std)}")
    return spec


def _cauchy_meta(input: Tensor, median: Any = 0.0, sigma: Any = 1.0, generator: Any = None) -> tuple:
    spec = _like("cauchy_", input, generator, "cauchy_cpu", FLOATING)
    _real_number("cauchy_", "median", median)
    if not _real_number("cauchy_", "sigma", sigma) > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={fmt_number(sigma)}")
    return spec


def _exponential_meta(input: Tensor, lambd: Any = 1.0, generator: Any = None) -> tuple:
    spec = _like("exponential_", input, generator, "exponential_cpu", FLOATING)
    if not _real_number("exponential_", "lambd", lambd) > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={fmt_number(lambd)}")
    return spec


def _geometric_meta(input: Tensor, p: Any, generator: Any = None) -> tuple:
    spec = _like("geometric_", input, generator, "geometric_cpu", FLOATING + _dtypes.ALL_DTYPES[1:6])
    value = _real_number("geometric_", "p", p)
    if not 0 < value < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={fmt_number(value)}")
    return spec


def _log_normal_meta(input: Tensor, mean: Any = 1.0, std: Any = 2.0, generator: Any = None) -> tuple:
    spec = _like("log_normal_", input, generator, "log_normal_cpu", FLOATING)
    _real_number("log_normal_", "mean", mean)
    if not _real_number("log_normal_", "std", std) > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={fmt_number(std)}")
    return spec


def random_bounds(d: _dtypes.dtype, from_: Any, to: Any) -> tuple[int, int]:
    """``random_(from, to)``'s inclusive range ``[low, high]`` for dtype ``d``, checked.

    ``to=None`` means the top of the dtype's exact integers (``2**digits`` for floats).
    """
    for name, value in (("from", from_), ("to", to)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"random_(): argument '{name}' must be int, not {type(value).__name__}")
    if to is None:
        low, high = from_, integer_range(d)[1]
        if low > high:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                               f"to dtype, but got from={low} > to_inc={high}")
        check_from_to(d, low, low)
        return low, high
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    check_from_to(d, from_, to - 1)
    return from_, to - 1


def _random_meta(input: Tensor, from_: Any = 0, to: Any = None, generator: Any = None) -> tuple:
    spec = _like("random_", input, generator, "random_from_to_range", _dtypes.ALL_DTYPES[:10])
    random_bounds(input._dtype, from_, to)
    return spec


def _decl(name: str, signature: str, meta: Any, doc: str, **kw: Any) -> OpDecl:
    kw.setdefault("differentiable", False)
    return OpDecl(name, signature, meta, random=True, doc=doc, **kw)


def declarations() -> list[OpDecl]:
    factory = {"kind": FACTORY, "method": False, "export": False}
    # In-place samplers, bernoulli and poisson keep a tensor that requires grad connected to the graph, with
    # zero derivatives (flambeau-core-autograd's formulas), as PyTorch does.
    inplace = {"kind": COMPUTE, "method": False, "export": False, "inplace": True, "differentiable": True}
    return [
        _decl("rand", f"(size, {FACTORY_KW})", _rand_meta,
              "Uniform samples from [0, 1).", **factory),
        _decl("randn", f"(size, {FACTORY_KW})", _randn_meta,
              "Standard normal samples.", **factory),
        _decl("randint", f"(low, high, size, {FACTORY_KW})", _randint_meta,
              "Integers drawn uniformly from [low, high).", **factory),
        _decl("randperm", f"(n, {FACTORY_KW})", _randperm_meta,
              "A random permutation of 0 .. n-1.", **factory),
        _decl("normal_size", f"(mean, std, size, {FACTORY_KW})", _normal_size_meta,
              "Normal samples with one mean and standard deviation, in a tensor of ``size``.", **factory),
        _decl("normal_tensor", "(mean: TensorOrScalar, std: TensorOrScalar, *, generator=None)", _normal_tensor_meta,
              "Normal samples with elementwise (broadcast) means and standard deviations.",
              method=False, export=False, differentiable=True),
        _decl("bernoulli", "(input: Tensor, p: TensorOrScalar = None, *, generator=None)", _bernoulli_meta,
              "0 or 1 drawn with probability ``p`` (the elements of ``input`` when ``p`` is None); the in-place form "
              "``bernoulli_`` fills ``input``.", inplace=True, differentiable=True),
        _decl("multinomial", "(input: Tensor, num_samples, replacement=False, *, generator=None)", _multinomial_meta,
              "Indices of categories drawn from the rows of ``input`` (unnormalised probabilities)."),
        _decl("poisson", "(input: Tensor, generator=None)", _poisson_meta,
              "Poisson samples with the rates in ``input``.", method=False, differentiable=True),
        _decl("uniform", "(input: Tensor, from_=0.0, to=1.0, *, generator=None)", _uniform_meta,
              "Uniform samples from [from, to), shaped like ``input`` (``Tensor.uniform_`` fills it).", **inplace),
        _decl("normal", "(input: Tensor, mean=0.0, std=1.0, *, generator=None)", _normal_meta,
              "Normal samples shaped like ``input`` (``Tensor.normal_`` fills it).", **inplace),
        _decl("cauchy", "(input: Tensor, median=0.0, sigma=1.0, *, generator=None)", _cauchy_meta,
              "Cauchy samples shaped like ``input`` (``Tensor.cauchy_`` fills it).", **inplace),
        _decl("exponential", "(input: Tensor, lambd=1.0, *, generator=None)", _exponential_meta,
              "Exponential samples of rate ``lambd`` (``Tensor.exponential_`` fills ``input``).", **inplace),
        _decl("geometric", "(input: Tensor, p, *, generator=None)", _geometric_meta,
              "Geometric samples (trials to the first success, from 1) (``Tensor.geometric_``).", **inplace),
        _decl("log_normal", "(input: Tensor, mean=1.0, std=2.0, *, generator=None)", _log_normal_meta,
              "Log-normal samples: exp of N(mean, std) (``Tensor.log_normal_`` fills ``input``).", **inplace),
        _decl("random", "(input: Tensor, from_=0, to=None, *, generator=None)", _random_meta,
              "Integers drawn uniformly from [from, to - 1] (``Tensor.random_`` fills ``input``).", **inplace),
    ]
