"""Random numbers: ``flambeau.Generator``, the default generators and seeding, and the public sampling
functions whose PyTorch signatures are overloaded (``rand(2, 3)``, ``randint(10, (3,))``, ``normal``'s four
forms, ``x.random_(5)``).

The ops themselves are declared in :mod:`flambeau._core_ops.random`; a backend implements a generator's
engine (:meth:`flambeau.plugins.Backend.create_generator`) and the sampling kernels.
"""
from __future__ import annotations

import builtins
import os
from typing import Any

from ._creation import empty_strided
# The Generator lives lower down, where the ops' `generator=` checks reach it; installed from here.
from ._generator import DEFAULT_SEED, Generator, _seed_value  # noqa: F401 - DEFAULT_SEED: backends read it here
from ._layout import like_strides
from ._tensor import Tensor
from .ops._registry import FUNCTIONS, TABLES

_defaults: dict[str, Generator] = {}


def default_generator_for(device: Any = "cpu") -> Generator:
    """The default generator of a device (the one sampling ops use when given none)."""
    from .ops._dispatch import resolve_device

    dev = resolve_device(device)
    key = str(dev)
    g = _defaults.get(key)
    if g is None:
        g = _defaults[key] = Generator._wrap(TABLES[dev.type].backend.default_generator(dev), dev)
    return g


def _loaded_backends() -> list[Any]:
    from . import plugins
    from .plugins._loader import BACKENDS

    found = []
    for name in dict.fromkeys(("cpu", *BACKENDS)):
        try:
            found.append(plugins.loaded_backend(name))
        except plugins.BackendUnavailable:
            pass
    return found


def manual_seed(seed: int) -> Generator | None:
    """Seed the default generators of every loaded backend; returns the CPU's default generator
    (``None`` where no CPU backend is installed, e.g. beside a third-party backend alone).

    Args:
        seed: an int in ``[-2**63, 2**64)``.

    Example::

        >>> fb.manual_seed(0)
        >>> a = fb.randn(2)
        >>> fb.manual_seed(0)
        >>> bool((fb.randn(2) == a).all())
        True
    """
    value = _seed_value(seed)
    backends = _loaded_backends()
    for backend in backends:
        backend.manual_seed(value)
    if not any(b.name == "cpu" for b in backends):
        return None
    return default_generator_for("cpu")


def seed() -> int:
    """Seed every default generator from a non-deterministic source; returns the seed."""
    value = builtins.int.from_bytes(os.urandom(8), "little")
    for backend in _loaded_backends():
        backend.manual_seed(value)
    return value


def initial_seed() -> int:
    """The initial seed of the CPU's default generator."""
    return default_generator_for("cpu").initial_seed()


def get_rng_state() -> Tensor:
    """The CPU default generator's state (a ``uint8`` tensor)."""
    return default_generator_for("cpu").get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the CPU default generator's state from :func:`get_rng_state`."""
    default_generator_for("cpu").set_state(new_state)


# -- the sampling functions -------------------------------------------------------------------

def _size(name: str, size: tuple, keyword: Any) -> tuple[int, ...]:
    if keyword is None and size:
        for s in size:
            if type(s) is not int or s < 0:
                break
        else:
            return size  # rand(2, 3): plain non-negative ints, nothing to convert
    from ._creation import _size_args

    return _size_args(name, size, keyword)


def _factory(op: str, args: tuple, shape: tuple, generator: Any, out: Any, dtype: Any, device: Any,
             requires_grad: bool) -> Tensor:
    if out is not None:
        if dtype is not None and dtype is not out._dtype:
            from .ops.meta import type_name

            raise RuntimeError(f"dtype {type_name(dtype)} does not match dtype of out parameter "
                               f"({type_name(out._dtype)})")
        return FUNCTIONS[op](*args, shape, generator=generator, dtype=out._dtype, device=out._device, out=out)
    return FUNCTIONS[op](*args, shape, generator=generator, dtype=dtype, device=device, requires_grad=requires_grad)


def rand(*size: Any, generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
         **kwargs: Any) -> Tensor:
    """Samples drawn uniformly from ``[0, 1)``.

    Args:
        *size: the shape, as ints or one sequence.
        generator: the generator to draw from (the device's default when None).
        out: write into this tensor instead (resized to ``size``).
        dtype: a floating or complex dtype (the default dtype when None).
        device: where to allocate (the default device when None).
        requires_grad: whether autograd records operations on the result.

    Example::

        >>> fb.manual_seed(0)
        >>> fb.rand(2, 3).shape
        flambeau.Size([2, 3])
    """
    shape = _size("rand", size, kwargs.pop("size", None) if kwargs else None)
    if out is None:
        if generator is None and dtype is None and device is None and not requires_grad:
            return _RAND(shape)
        return _RAND(shape, generator=generator, dtype=dtype, device=device, requires_grad=requires_grad)
    return _factory("rand", (), shape, generator, out, dtype, device, requires_grad)


def randn(*size: Any, generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
          layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
          **kwargs: Any) -> Tensor:
    """Samples from the standard normal distribution N(0, 1); arguments as :func:`rand`.

    Complex dtypes draw real and imaginary parts each from N(0, 1/2) (unit variance overall).

    Example::

        >>> fb.randn(4, generator=fb.Generator().manual_seed(1)).dtype
        flambeau.float32
    """
    shape = _size("randn", size, kwargs.pop("size", None) if kwargs else None)
    if out is None:
        if generator is None and dtype is None and device is None and not requires_grad:
            return _RANDN(shape)
        return _RANDN(shape, generator=generator, dtype=dtype, device=device, requires_grad=requires_grad)
    return _factory("randn", (), shape, generator, out, dtype, device, requires_grad)


def randint(*args: Any, generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
            layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
            **kwargs: Any) -> Tensor:
    """Integers drawn uniformly from ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``.

    Args:
        low: the lowest integer (default 0).
        high: one above the highest integer.
        size: the shape (a sequence).
        dtype: the result's dtype (int64 when None).

    Example::

        >>> fb.randint(3, 10, (2, 2)).dtype
        flambeau.int64
    """
    named = {k: kwargs.pop(k) for k in ("low", "high", "size") if k in kwargs}
    if kwargs:
        raise TypeError(f"randint() got an unexpected keyword argument '{next(iter(kwargs))}'")
    values = list(args)
    if "size" in named:
        values.append(named["size"])
    if len(values) == 2 and "high" not in named:
        low, high, size = named.get("low", 0), values[0], values[1]
    elif len(values) == 2:
        low, high, size = values[0], named["high"], values[1]
    elif len(values) == 3:
        low, high, size = values
    elif len(values) == 1 and "high" in named:
        low, high, size = named.get("low", 0), named["high"], values[0]
    else:
        raise TypeError("randint() received an invalid combination of arguments - expected one of: "
                        "(int high, tuple of ints size, ...) or (int low, int high, tuple of ints size, ...)")
    low, high = _as_int(low), _as_int(high)
    if not isinstance(size, (list, tuple)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    shape = _size("randint", (tuple(size),), None)
    return _factory("randint", (low, high), shape, generator, out, dtype, device, requires_grad)


def _as_int(value: Any) -> Any:
    if isinstance(value, Tensor) and value.numel() == 1:
        return builtins.int(value.item())
    if isinstance(value, float) and value.is_integer():
        return builtins.int(value)
    return value


def randperm(n: int, *, generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of the integers ``0 .. n-1``.

    Example::

        >>> sorted(fb.randperm(4).tolist())
        [0, 1, 2, 3]
    """
    n = _as_int(n)
    if out is not None:
        return FUNCTIONS["randperm"](n, generator=generator, dtype=out._dtype, device=out._device, out=out)
    return FUNCTIONS["randperm"](n, generator=generator, dtype=dtype, device=device, requires_grad=requires_grad)


def _like_args(input: Tensor, dtype: Any, device: Any) -> tuple:
    if not isinstance(input, Tensor):
        raise TypeError(f"argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.shape, dtype or input._dtype, device if device is not None else input._device


def _laid_out(name: str, input: Tensor, memory_format: Any, requires_grad: bool, values: Tensor) -> Tensor:
    """``values`` (a fresh row-major tensor) in the memory layout ``memory_format`` gives for ``input``
    (as :func:`flambeau.empty_like`): the same values, other strides."""
    strides = like_strides(input, memory_format, name)
    if strides is None:
        return values
    laid = empty_strided(tuple(values.shape), strides, dtype=values.dtype, device=values.device)
    laid.copy_(values.detach())
    return laid.requires_grad_(True) if requires_grad else laid


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """:func:`rand` with the shape (and, unless given, the dtype and device) of ``input``."""
    shape, dt, dev = _like_args(input, dtype, device)
    return _laid_out("rand_like", input, memory_format, requires_grad,
                     FUNCTIONS["rand"](shape, generator=generator, dtype=dt, device=dev, requires_grad=requires_grad))


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None, layout: Any = None,
               device: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """:func:`randn` with the shape (and, unless given, the dtype and device) of ``input``."""
    shape, dt, dev = _like_args(input, dtype, device)
    return _laid_out("randn_like", input, memory_format, requires_grad,
                     FUNCTIONS["randn"](shape, generator=generator, dtype=dt, device=dev, requires_grad=requires_grad))


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, generator: Generator | None = None,
                 dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
                 memory_format: Any = None) -> Tensor:
    """:func:`randint` with the shape of ``input``: ``randint_like(x, high)`` or ``randint_like(x, low, high)``."""
    if high is None:
        low, high = 0, low
    shape, dt, dev = _like_args(input, dtype, device)
    return FUNCTIONS["randint"](_as_int(low), _as_int(high), shape, generator=generator, dtype=dt, device=dev,
                                requires_grad=requires_grad)


def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None,
           out: Tensor | None = None, dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Normal samples: ``normal(mean, std)`` with a tensor mean and/or std (elementwise, broadcast), or
    ``normal(mean, std, size)`` with numbers.

    With tensor arguments the result is differentiable with respect to ``mean`` and ``std``.

    Args:
        mean: a tensor of means, or one mean.
        std: a tensor of standard deviations, or one (non-negative).
        size: the shape, when both ``mean`` and ``std`` are numbers.

    Example::

        >>> fb.normal(fb.zeros(3), 1.0).shape
        flambeau.Size([3])
        >>> fb.normal(2.0, 0.5, (2, 2)).shape
        flambeau.Size([2, 2])
    """
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None:
            raise TypeError("normal() received an invalid combination of arguments - size is only accepted "
                            "when mean and std are numbers")
        return FUNCTIONS["normal_tensor"](mean, std, generator=generator, out=out)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float), "
                        "expected a size with number arguments")
    shape = _size("normal", (size,), None)
    return _factory("normal_size", (mean, std), shape, generator, out, dtype, device, requires_grad)


# -- Tensor methods whose defaults differ from their op's ------------------------------------------

def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill with 0 or 1 drawn with probability ``p`` (a number, or a tensor broadcast to this one's shape)."""
    return FUNCTIONS["bernoulli_"](self, p, generator=generator)


def random_(self: Tensor, *args: Any, generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill with integers drawn uniformly: ``random_()`` over the dtype's exact integers,
    ``random_(to)`` from ``[0, to)``, ``random_(from, to)`` from ``[from, to)`` (``to=None``: up to the top)."""
    bounds = dict(kwargs)
    if "from" in bounds:
        bounds["from_"] = bounds.pop("from")
    unknown = set(bounds) - {"from_", "to"}
    if unknown:
        raise TypeError(f"random_() got an unexpected keyword argument '{unknown.pop()}'")
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    if len(args) == 1 and "to" not in bounds and "from_" not in bounds:
        from_, to = 0, args[0]
    else:
        given = dict(zip(("from_", "to"), args))
        from_, to = given.get("from_", bounds.get("from_", 0)), given.get("to", bounds.get("to"))
    return FUNCTIONS["random_"](self, _as_int(from_), _as_int(to), generator=generator)


def uniform_(self: Tensor, *args: Any, generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill with samples drawn uniformly from ``[from, to)`` (default ``[0, 1)``)."""
    if "from" in kwargs:
        kwargs["from_"] = kwargs.pop("from")
    return FUNCTIONS["uniform_"](self, *args, generator=generator, **kwargs)


FUNCTIONS_EXPORTED = {
    "Generator": Generator, "manual_seed": manual_seed, "seed": seed, "initial_seed": initial_seed,
    "get_rng_state": get_rng_state, "set_rng_state": set_rng_state, "rand": rand, "randn": randn,
    "randint": randint, "randperm": randperm, "rand_like": rand_like, "randn_like": randn_like,
    "randint_like": randint_like, "normal": normal,
}


_RAND: Any = None
_RANDN: Any = None


def install(namespace: Any) -> None:
    """Put the random API on ``flambeau`` and the in-place samplers on ``Tensor``."""
    global _RAND, _RANDN
    _RAND, _RANDN = FUNCTIONS["rand"], FUNCTIONS["randn"]  # bound once: rand(100) is on hot paths (dropout)
    for name, value in FUNCTIONS_EXPORTED.items():
        setattr(namespace, name, value)
    for name in ("normal_", "cauchy_", "exponential_", "geometric_", "log_normal_"):
        setattr(Tensor, name, FUNCTIONS[name])
    Tensor.bernoulli_ = bernoulli_
    Tensor.random_ = random_
    Tensor.uniform_ = uniform_
    import importlib

    namespace.random = importlib.import_module(__name__.rsplit(".", 1)[0] + ".random")  # fb.random, as torch.random
    try:
        namespace.default_generator = default_generator_for("cpu")
    except Exception:  # noqa: BLE001 - no CPU backend installed: there is no CPU default generator
        pass
