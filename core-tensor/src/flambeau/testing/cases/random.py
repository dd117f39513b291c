"""Cases for the random sampling ops.

A random op's ``ref`` gives the support of its distribution, ``(low, high)`` or ``(low, high, integral)``,
broadcast to the result's shape; the kit checks bounds, shapes, dtypes and that a seed repeats its
numbers (see :mod:`flambeau.testing._random_runner`). Distribution statistics are checked by
core-tensor's own tests.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _promote as P
from .._case import DEVICE, Arg, ErrorCase, OpCase, Sample

INF = math.inf
SHAPES = [(3, 4), (), (0,), (2, 1, 5)]
LAYOUTS = [((3, 4), "contiguous"), ((3, 4), "transposed"), ((6,), "sliced"), ((), "contiguous"), ((0, 2), "contiguous")]
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _fb(name: str):
    import flambeau

    return getattr(flambeau, name)


def _kw(dtype: str) -> dict:
    return {"dtype": _fb(dtype), "device": DEVICE}


def _asked(sample: Sample) -> str:
    return sample.kwargs["dtype"].name


def _same_as_first(sample: Sample) -> str:
    return sample.args[0].dtype


def _support(low: float, high: float, integral: bool = False):
    def ref(*args, **kwargs):
        shape = _result_shape(args)
        return np.full(shape, low), np.full(shape, high), integral
    return ref


def _result_shape(args: tuple) -> tuple:
    """The shape a sample's result has: a factory's size argument, else the first array's shape."""
    for a in args:
        if isinstance(a, np.ndarray):
            return a.shape
    for a in args:
        if isinstance(a, tuple):
            return a
    return ()


# -- factories ---------------------------------------------------------------------------------

def _sized(dtype: str, before: tuple = ()) -> list[Sample]:
    return [Sample((*before, shape), _kw(dtype)) for shape in SHAPES]


def _rand_samples(dtype: str) -> list[Sample]:
    out = _sized(dtype)
    if dtype == "float32":
        out.append(Sample(((2, 2),), {"device": DEVICE}, note="default dtype"))
    return out


def _default_float(sample: Sample) -> str:
    return sample.kwargs["dtype"].name if "dtype" in sample.kwargs else P.DEFAULT_FLOAT


def _factory_errors(op: str, kernel: str):
    def errors():
        yield ErrorCase(((2,),), RuntimeError, f'"{kernel}" not implemented for \'Long\'',
                        kwargs={"dtype": _fb("int64"), "device": DEVICE})
        yield ErrorCase(((2, -1),), RuntimeError, "Trying to create tensor with negative dimension -1",
                        kwargs={"device": DEVICE})
        yield ErrorCase(((2,),), TypeError, "argument 'generator' must be flambeau.Generator, not int",
                        kwargs={"generator": 3, "device": DEVICE})
    return errors


def _randint_samples(dtype: str) -> list[Sample]:
    low = -3 if dtype not in ("bool", "uint8") else 0
    high = 2 if dtype == "bool" else 5
    out = [Sample((low, high, shape), _kw(dtype)) for shape in SHAPES]
    out.append(Sample((0, 1, (4,)), _kw(dtype), note="one value"))
    if dtype == "int64":
        out.append(Sample((0, 10, (3,)), {"device": DEVICE}, note="default int64"))
    return out


def _randint_ref(low, high, size, **kwargs):
    return np.full(size, low), np.full(size, high - 1), True


def _randint_dtype(sample: Sample) -> str:
    return sample.kwargs["dtype"].name if "dtype" in sample.kwargs else "int64"


def _randint_errors():
    yield ErrorCase((5, 3, (2,)), RuntimeError, "random_ expects 'from' to be less than 'to', but got from=5 >= to=3",
                    kwargs={"device": DEVICE})
    yield ErrorCase((0, 300, (2,)), RuntimeError, "to - 1 is out of bounds for Byte",
                    kwargs={"dtype": _fb("uint8"), "device": DEVICE})
    yield ErrorCase((-1, 3, (2,)), RuntimeError, "from is out of bounds for Byte",
                    kwargs={"dtype": _fb("uint8"), "device": DEVICE})


def _randperm_samples(dtype: str) -> list[Sample]:
    return [Sample((n,), _kw(dtype)) for n in (0, 1, 7)]


def _randperm_ref(n, **kwargs):
    return np.zeros(n), np.full(n, n - 1), True


def _randperm_errors():
    yield ErrorCase((-1,), RuntimeError, "n must be non-negative, got-1", kwargs={"device": DEVICE})
    yield ErrorCase((300,), RuntimeError, "n is too large for result tensor type: 'Byte'",
                    kwargs={"dtype": _fb("uint8"), "device": DEVICE})


def _normal_size_samples(dtype: str) -> list[Sample]:
    return [Sample((2.0, 0.5, shape), _kw(dtype)) for shape in SHAPES] + [Sample((0.0, 0.0, (3,)), _kw(dtype))]


def _normal_size_ref(mean, std, size, **kwargs):
    return np.full(size, mean - 40 * std), np.full(size, mean + 40 * std)


def _normal_size_errors():
    yield ErrorCase((0.0, -1.0, (2,)), RuntimeError, "normal expects std >= 0.0, but found std -1",
                    kwargs={"device": DEVICE})


# -- samplers shaped like their inputs -----------------------------------------------------------

def _normal_tensor_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype, "transposed"), Arg((3, 4), dtype, low=0.5, high=2))),
        Sample((Arg((2, 1, 4), dtype), Arg((3, 1), dtype, low=0.5, high=2)), note="broadcast"),
        Sample((Arg((6,), dtype, "sliced"), 2.0)),
        Sample((1.5, Arg((2, 3), dtype, low=0, high=2))),
        Sample((Arg((), dtype), Arg((), dtype, low=0, high=1))),
        Sample((Arg((0, 2), dtype), 1.0)),
    ]


def _normal_tensor_ref(mean, std, **kwargs):
    mean, std = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
    return mean - 40 * std - 0.05, mean + 40 * std + 0.05


def _normal_tensor_dtype(sample: Sample) -> str:
    return (sample.args[0] if isinstance(sample.args[0], Arg) else sample.args[1]).dtype


def _normal_tensor_errors():
    yield ErrorCase((Arg((3,), "float32"), Arg((3,), "float32", values=[1.0, -1.0, 2.0])), RuntimeError,
                    "normal expects all elements of std >= 0.0", data_dependent=True)
    yield ErrorCase((Arg((3,), "float32"), -2.0), RuntimeError, "normal expects std >= 0.0, but found std -2")
    yield ErrorCase((Arg((3,), "int64"), 1.0), RuntimeError, "\"normal_kernel_cpu\" not implemented for 'Long'")


def _bernoulli_samples(dtype: str) -> list[Sample]:
    out = [Sample((Arg(shape, dtype, layout), 0.3)) for shape, layout in LAYOUTS]
    out.append(Sample((Arg((3, 4), dtype), Arg((4,), "float32", low=0, high=1)), note="tensor p"))
    if P.category(dtype) == 2:
        out += [Sample((Arg(shape, dtype, layout, low=0, high=1),)) for shape, layout in LAYOUTS]
    return out


def _bernoulli_errors():
    yield ErrorCase((Arg((3,), "float32"), 1.5), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5")
    yield ErrorCase((Arg((3,), "float32"), 1.5), RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5",
                    call="bernoulli_")
    yield ErrorCase((Arg((2,), "float32", values=[0.5, 2.0]),), RuntimeError,
                    "Expected p_in >= 0 && p_in <= 1 to be true", data_dependent=True)


def _multinomial_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((5,), dtype, low=0.1, high=1), 3, True)),
        Sample((Arg((5,), dtype, low=0.1, high=1), 5)),
        Sample((Arg((3, 4), dtype, "transposed", low=0.1, high=1), 2)),
        Sample((Arg((2, 6), dtype, low=0.1, high=1), 10, True)),
        Sample((Arg((4,), dtype, values=[0.0, 1.0, 0.0, 2.0]), 6, True), note="zero probabilities"),
    ]


def _multinomial_ref(input, num_samples, replacement=False, **kwargs):
    shape = input.shape[:-1] + (num_samples,)
    return np.zeros(shape), np.full(shape, input.shape[-1] - 1), True


def _multinomial_errors():
    yield ErrorCase((Arg((2, 2, 2), "float32"), 1), RuntimeError, "prob_dist must be 1 or 2 dim")
    yield ErrorCase((Arg((3,), "int64"), 1), RuntimeError,
                    "multinomial only supports floating-point dtypes for input, got: Long")
    yield ErrorCase((Arg((3,), "float32"), 0), RuntimeError, "cannot sample n_sample <= 0 samples")
    yield ErrorCase((Arg((3,), "float32"), 4), RuntimeError,
                    "cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    yield ErrorCase((Arg((3,), "float32", values=[0.5, -1.0, 0.5]), 2), RuntimeError,
                    "probability tensor contains either `inf`, `nan` or element < 0", data_dependent=True)
    yield ErrorCase((Arg((3,), "float32", values=[0.0, 0.0, 0.0]), 2, True), RuntimeError,
                    "invalid multinomial distribution (sum of probabilities <= 0)", data_dependent=True)
    yield ErrorCase((Arg((3,), "float32", values=[0.5, -1.0, 0.5]), 2, True), RuntimeError,
                    "invalid multinomial distribution (encountering probability entry < 0)", data_dependent=True)


def _poisson_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout, low=0, high=6),)) for shape, layout in LAYOUTS]


def _poisson_errors():
    yield ErrorCase((Arg((3,), "int64"),), RuntimeError, "\"poisson_cpu\" not implemented for 'Long'")


# -- in-place samplers ------------------------------------------------------------------------

def _like_samples(*extra: tuple, base: tuple = ()):
    """Every layout with the default parameters (or ``base``), then the transposed input with each of ``extra``."""
    def samples(dtype: str) -> list[Sample]:
        out = [Sample((Arg(shape, dtype, layout), *base)) for shape, layout in LAYOUTS]
        out += [Sample((Arg((3, 4), dtype, "transposed"), *args)) for args in extra]
        return out
    return samples


def _uniform_ref(input, from_=0.0, to=1.0, **kwargs):
    return np.full(input.shape, from_), np.full(input.shape, to)


def _normal_ref(input, mean=0.0, std=1.0, **kwargs):
    return np.full(input.shape, mean - 40 * std), np.full(input.shape, mean + 40 * std)


def _random_samples(dtype: str) -> list[Sample]:
    top = 2 if dtype == "bool" else 100
    out = [Sample((Arg(shape, dtype, layout),)) for shape, layout in LAYOUTS]
    out.append(Sample((Arg((3, 4), dtype, "transposed"), 0, top)))
    out.append(Sample((Arg((5,), dtype), 1, None)))
    if P.category(dtype) == 2 or dtype in P.SIGNED:
        out.append(Sample((Arg((5,), dtype), -7, -2)))
    return out


def _random_ref(input, from_=0, to=None, **kwargs):
    if to is None:
        if input.dtype == np.bool_:
            top = 1
        elif input.dtype.kind in "iu":
            top = np.iinfo(input.dtype).max
        else:
            top = 2 ** _DIGITS.get(str(input.dtype), 53)
    else:
        top = to - 1
    return np.full(input.shape, from_), np.full(input.shape, top), True


def _sampler_errors(call: str, args: tuple, match: str, dtype: str = "int64", kernel: str = ""):
    def errors():
        yield ErrorCase((Arg((3,), "float32"), *args), RuntimeError, match, call=call)
        if kernel:
            yield ErrorCase((Arg((3,), dtype),), RuntimeError, f"\"{kernel}\" not implemented for 'Long'", call=call)
    return errors


def _random_errors():
    yield ErrorCase((Arg((3,), "float32"), 5, 5), RuntimeError,
                    "random_ expects 'from' to be less than 'to', but got from=5 >= to=5", call="random_")
    yield ErrorCase((Arg((3,), "uint8"), 0, 257), RuntimeError, "to - 1 is out of bounds for Byte", call="random_")


def cases() -> list[OpCase]:
    floats, cplx = P.FLOATS, P.FLOATS + P.COMPLEX
    return [
        OpCase("rand", cplx, _rand_samples, _support(0.0, 1.0), _default_float,
               errors=_factory_errors("rand", "check_uniform_bounds")),
        OpCase("randn", cplx, _rand_samples, _support(-40.0, 40.0), _default_float,
               errors=_factory_errors("randn", "normal_kernel_cpu")),
        OpCase("randint", P.REAL, _randint_samples, _randint_ref, _randint_dtype, errors=_randint_errors),
        OpCase("randperm", P.INTS + floats, _randperm_samples, _randperm_ref, _asked, errors=_randperm_errors),
        OpCase("normal_size", floats, _normal_size_samples, _normal_size_ref, _asked, errors=_normal_size_errors),
        OpCase("normal_tensor", floats, _normal_tensor_samples, _normal_tensor_ref, _normal_tensor_dtype,
               errors=_normal_tensor_errors),
        OpCase("bernoulli", P.REAL, _bernoulli_samples, _support(0.0, 1.0, True), _same_as_first,
               errors=_bernoulli_errors),
        OpCase("multinomial", floats, _multinomial_samples, _multinomial_ref, lambda s: "int64",
               errors=_multinomial_errors),
        OpCase("poisson", floats, _poisson_samples, _support(0.0, INF, True), _same_as_first, errors=_poisson_errors),
        OpCase("uniform", cplx, _like_samples((-2.0, 3.0), (5.0, 5.0)), _uniform_ref, _same_as_first,
               errors=_sampler_errors("uniform_", (2.0, 1.0), "uniform_ expects to return a [from, to) range, but "
                                      "found from=2 > to=1", kernel="check_uniform_bounds")),
        OpCase("normal", cplx, _like_samples((3.0, 0.5), (-1.0, 0.0)), _normal_ref, _same_as_first,
               errors=_sampler_errors("normal_", (0.0, -1.0), "normal expects std >= 0.0, but found std -1",
                                      kernel="normal_kernel_cpu")),
        OpCase("cauchy", floats, _like_samples((1.0, 2.0)), _support(-INF, INF), _same_as_first,
               errors=_sampler_errors("cauchy_", (0.0, -1.0), "cauchy_ expects sigma > 0.0, but found sigma=-1",
                                      kernel="cauchy_cpu")),
        OpCase("exponential", floats, _like_samples((3.0,)), _support(0.0, INF), _same_as_first,
               errors=_sampler_errors("exponential_", (0.0,), "exponential_ expects lambda > 0.0, but found lambda=0",
                                      kernel="exponential_cpu")),
        OpCase("geometric", P.INTS + floats, _like_samples((0.9,), base=(0.4,)), _support(1.0, INF, True),
               _same_as_first,
               errors=_sampler_errors("geometric_", (1.0,), "geometric_ expects p to be in (0, 1), but got p=1")),
        OpCase("log_normal", floats, _like_samples((0.0, 0.25)), _support(0.0, INF), _same_as_first,
               errors=_sampler_errors("log_normal_", (1.0, 0.0), "log_normal_ expects std > 0.0, but found std=0",
                                      kernel="log_normal_cpu")),
        OpCase("random", P.REAL, _random_samples, _random_ref, _same_as_first, errors=_random_errors),
    ]
