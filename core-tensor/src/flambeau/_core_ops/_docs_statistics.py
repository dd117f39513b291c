"""PyTorch-style docstrings of the statistics and sorting ops (Args, Shape, Example).

The example outputs were produced by flambeau itself and are checked by the unit tests.
"""
from __future__ import annotations

DOCS: dict[str, str] = {}

DOCS['nansum'] = """Sum of the elements, or along ``dim``, treating NaN as zero.

Args:
    input (Tensor): the input.
    dim (int or tuple of ints, optional): the dims to reduce (all by default).
    keepdim (bool): keep the reduced dims with size 1.
    dtype (flambeau.dtype, optional): the accumulation and result dtype; integral inputs give int64.

Example::

    >>> x = flambeau.tensor([1.0, float('nan'), 2.0])
    >>> flambeau.nansum(x)
    tensor(3.)
"""

DOCS['nanmean'] = """Mean of the non-NaN elements, or along ``dim``; floating-point inputs only.

Args:
    input (Tensor): the input.
    dim (int or tuple of ints, optional): the dims to reduce.
    keepdim (bool): keep the reduced dims with size 1.
    dtype (flambeau.dtype, optional): the result dtype.

Example::

    >>> x = flambeau.tensor([[1.0, float('nan')], [3.0, 4.0]])
    >>> flambeau.nanmean(x, 1)
    tensor([1.0000, 3.5000])
"""

DOCS['var'] = """Variance over ``dim``: ``sum((x - mean)^2) / max(0, N - correction)``.

Args:
    input (Tensor): a floating-point or complex input (complex gives a real result).
    dim (int or tuple of ints, optional): the dims to reduce (all by default).
    correction (int or float): subtracted from the sample count N (1, Bessel's correction, by default);
        ``unbiased=False`` is ``correction=0``.
    keepdim (bool): keep the reduced dims with size 1.

Example::

    >>> x = flambeau.tensor([1.0, 2.0, 3.0, 4.0])
    >>> flambeau.var(x, correction=0)
    tensor(1.2500)
"""

DOCS['std'] = """Standard deviation over ``dim``: the square root of :func:`var`.

Args:
    input (Tensor): a floating-point or complex input.
    dim (int or tuple of ints, optional): the dims to reduce (all by default).
    correction (int or float): subtracted from the sample count N (1 by default).
    keepdim (bool): keep the reduced dims with size 1.

Example::

    >>> x = flambeau.tensor([[1.0, 3.0], [2.0, 2.0]])
    >>> flambeau.std(x, 1)
    tensor([1.4142, 0.0000])
"""

DOCS['var_mean'] = """``(var, mean)`` over ``dim`` in one call (see :func:`var`).

Args:
    input (Tensor): a floating-point or complex input.
    dim (int or tuple of ints, optional): the dims to reduce.
    correction (int or float): as in :func:`var`.
    keepdim (bool): keep the reduced dims with size 1.

Example::

    >>> x = flambeau.tensor([1.0, 2.0, 3.0])
    >>> flambeau.var_mean(x)
    (tensor(1.), tensor(2.))
"""

DOCS['std_mean'] = """``(std, mean)`` over ``dim`` in one call (see :func:`std`).

Args:
    input (Tensor): a floating-point or complex input.
    dim (int or tuple of ints, optional): the dims to reduce.
    correction (int or float): as in :func:`var`.
    keepdim (bool): keep the reduced dims with size 1.

Example::

    >>> x = flambeau.tensor([1.0, 2.0, 3.0])
    >>> flambeau.std_mean(x)
    (tensor(1.), tensor(2.))
"""

DOCS['aminmax'] = """The minimum and maximum, of all elements or along ``dim``, as ``(min, max)``.

Args:
    input (Tensor): a real input.
    dim (int, optional): the dim to reduce (all by default).
    keepdim (bool): keep the reduced dim with size 1.

Example::

    >>> x = flambeau.tensor([[1, 5], [-2, 3]])
    >>> flambeau.aminmax(x, dim=1)
    flambeau.return_types.aminmax(
    min=tensor([ 1, -2]),
    max=tensor([5, 3]))
"""

DOCS['mode'] = """The most frequent value along ``dim`` (the smallest of equally frequent ones) and its last index.

Args:
    input (Tensor): a real input.
    dim (int): the dim to reduce (the last by default).
    keepdim (bool): keep the reduced dim with size 1.

Example::

    >>> x = flambeau.tensor([[1, 2, 2, 3], [4, 4, 0, 0]])
    >>> flambeau.mode(x)
    flambeau.return_types.mode(
    values=tensor([2, 0]),
    indices=tensor([2, 3]))
"""

DOCS['quantile'] = """The ``q``-th quantiles of all elements (flattened) or along ``dim``. NaN propagates.

Args:
    input (Tensor): a float32 or float64 input.
    q (float or Tensor): quantiles in [0, 1]; a 1-d tensor of them adds a leading dim to the result.
    dim (int, optional): the dim to reduce (the flattened input by default).
    keepdim (bool): keep the reduced dim with size 1.
    interpolation (str): between the two nearest ranks: ``'linear'``, ``'lower'``, ``'higher'``, ``'midpoint'`` or
        ``'nearest'``.

Example::

    >>> x = flambeau.tensor([[0.0, 1.0, 2.0, 3.0]])
    >>> flambeau.quantile(x, flambeau.tensor([0.25, 0.5]), dim=1)
    tensor([[0.7500],
            [1.5000]])
"""

DOCS['nanquantile'] = """As :func:`quantile`, ignoring NaN (a row of NaN only gives NaN).

Args:
    input (Tensor): a float32 or float64 input.
    q (float or Tensor): quantiles in [0, 1].
    dim (int, optional): the dim to reduce.
    keepdim (bool): keep the reduced dim with size 1.
    interpolation (str): as in :func:`quantile`.

Example::

    >>> x = flambeau.tensor([1.0, float('nan'), 3.0])
    >>> flambeau.nanquantile(x, 0.5)
    tensor(2.)
"""

DOCS['logsumexp'] = """``log(sum(exp(input), dim))``, computed without overflow; integral inputs give the default
float dtype.

Args:
    input (Tensor): the input.
    dim (int or tuple of ints): the dims to reduce.
    keepdim (bool): keep the reduced dims with size 1.

Example::

    >>> x = flambeau.tensor([1000.0, 1000.0])
    >>> flambeau.logsumexp(x, 0)
    tensor(1000.6932)
"""

DOCS['norm'] = """The vector p-norm over ``dim`` (all elements by default), the Frobenius norm ``'fro'``, or the
nuclear norm ``'nuc'`` of a matrix.

Args:
    input (Tensor): a floating-point or complex input (complex gives a real result).
    p (float or str): the order: any number (``inf``, ``-inf`` and ``0`` included), ``'fro'`` or ``'nuc'``.
    dim (int or tuple of ints, optional): the dims to reduce; two of them for ``'nuc'``.
    keepdim (bool): keep the reduced dims with size 1.
    dtype (flambeau.dtype, optional): compute and return in this dtype.

Example::

    >>> x = flambeau.tensor([[3.0, -4.0], [0.0, 1.0]])
    >>> flambeau.norm(x, 1, dim=1)
    tensor([7., 1.])
"""

DOCS['dist'] = """``norm(input - other, p)`` of the broadcast difference.

Args:
    input (Tensor): a floating-point input.
    other (Tensor): broadcastable with ``input``, of its dtype.
    p (float): the order of the norm (2 by default).

Example::

    >>> a, b = flambeau.tensor([0.0, 0.0]), flambeau.tensor([3.0, 4.0])
    >>> flambeau.dist(a, b)
    tensor(5.)
"""

DOCS['count_nonzero'] = """The number of non-zero elements, in all or along ``dim``.

Args:
    input (Tensor): the input.
    dim (int or tuple of ints, optional): the dims to count along.

Example::

    >>> x = flambeau.tensor([[0, 1, 2], [0, 0, 3]])
    >>> flambeau.count_nonzero(x, 0)
    tensor([0, 1, 2])
"""

DOCS['cumsum'] = """Running sums along ``dim``: ``out[i] = input[0] + ... + input[i]``. Integral and bool inputs
give int64.

Args:
    input (Tensor): the input.
    dim (int): the dim to run along.
    dtype (flambeau.dtype, optional): the accumulation and result dtype.

Shape:
    The input's.

Example::

    >>> x = flambeau.tensor([1, 2, 3, 4])
    >>> flambeau.cumsum(x, 0)
    tensor([ 1,  3,  6, 10])
"""

DOCS['cumprod'] = """Running products along ``dim``. Integral and bool inputs give int64.

Args:
    input (Tensor): the input.
    dim (int): the dim to run along.
    dtype (flambeau.dtype, optional): the accumulation and result dtype.

Shape:
    The input's.

Example::

    >>> x = flambeau.tensor([1.0, 2.0, 3.0])
    >>> flambeau.cumprod(x, 0)
    tensor([1., 2., 6.])
"""

DOCS['cummax'] = """Running maxima along ``dim`` and the index of each (ties: the latest; NaN, once met, stays).

Args:
    input (Tensor): a real input.
    dim (int): the dim to run along.

Example::

    >>> x = flambeau.tensor([1.0, 3.0, 2.0, 3.0])
    >>> flambeau.cummax(x, 0)
    flambeau.return_types.cummax(
    values=tensor([1., 3., 3., 3.]),
    indices=tensor([0, 1, 1, 3]))
"""

DOCS['cummin'] = """Running minima along ``dim`` and the index of each (ties: the latest; NaN, once met, stays).

Args:
    input (Tensor): a real input.
    dim (int): the dim to run along.

Example::

    >>> x = flambeau.tensor([3, 1, 2, 1])
    >>> flambeau.cummin(x, 0)
    flambeau.return_types.cummin(
    values=tensor([3, 1, 1, 1]),
    indices=tensor([0, 1, 1, 3]))
"""

DOCS['logcumsumexp'] = """``log(cumsum(exp(input), dim))``, computed without overflow.

Args:
    input (Tensor): a floating-point input.
    dim (int): the dim to run along.

Example::

    >>> x = flambeau.tensor([0.0, 0.0, 0.0])
    >>> flambeau.logcumsumexp(x, 0)
    tensor([0.0000, 0.6931, 1.0986])
"""

DOCS['unique'] = """The distinct elements, sorted (or distinct slices along ``dim``), optionally with the inverse
indices and the counts. NaNs are each distinct.

Args:
    input (Tensor): the input.
    sorted (bool): kept for PyTorch's signature; the result is always sorted.
    return_inverse (bool): also return, for each input element, its index in the result.
    return_counts (bool): also return how often each distinct element occurs.
    dim (int, optional): compare whole slices along this dim instead of elements.

Example::

    >>> x = flambeau.tensor([2, 1, 2, 3])
    >>> flambeau.unique(x, return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 2, 1]))
"""

DOCS['unique_consecutive'] = """Collapses each run of equal consecutive elements (or slices along ``dim``) to one.

Args:
    input (Tensor): the input.
    return_inverse (bool): also return each element's index in the result.
    return_counts (bool): also return each run's length.
    dim (int, optional): compare whole slices along this dim.

Example::

    >>> x = flambeau.tensor([1, 1, 2, 2, 1])
    >>> flambeau.unique_consecutive(x, return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 2, 1]))
"""

DOCS['bincount'] = """How often each value 0, 1, ..., max(input) occurs in a 1-d non-negative integral tensor
(summing ``weights`` instead of ones when given).

Args:
    input (Tensor): 1-d, integral, non-negative.
    weights (Tensor, optional): 1-d, as long as ``input``; float32/float64 weights keep their dtype, others give
        float64.
    minlength (int): the least length of the result.

Example::

    >>> x = flambeau.tensor([0, 1, 1, 3])
    >>> flambeau.bincount(x)
    tensor([1, 2, 0, 1])
"""

DOCS['histc'] = """A histogram of ``bins`` equal-width bins over ``[min, max]`` (the data's range when both are 0);
elements outside are ignored.

Args:
    input (Tensor): a floating-point input.
    bins (int): the number of bins.
    min (float): the lower end of the range.
    max (float): the upper end of the range.

Example::

    >>> x = flambeau.tensor([1.0, 2.0, 1.0])
    >>> flambeau.histc(x, bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
"""

DOCS['isclose'] = """``|input - other| <= atol + rtol * |other|`` elementwise (infinities equal themselves).

Args:
    input (Tensor): the first operand.
    other (Tensor): the second, broadcastable, of the same dtype.
    rtol (float): relative tolerance.
    atol (float): absolute tolerance.
    equal_nan (bool): whether NaN equals NaN.

Example::

    >>> a, b = flambeau.tensor([1.0, 2.0]), flambeau.tensor([1.0 + 1e-9, 2.1])
    >>> flambeau.isclose(a, b)
    tensor([ True, False])
"""

DOCS['isposinf'] = """Whether each element is positive infinity.

Args:
    input (Tensor): a real input.

Example::

    >>> x = flambeau.tensor([1.0, float('inf'), float('-inf')])
    >>> flambeau.isposinf(x)
    tensor([False,  True, False])
"""

DOCS['isneginf'] = """Whether each element is negative infinity.

Args:
    input (Tensor): a real input.

Example::

    >>> x = flambeau.tensor([1.0, float('inf'), float('-inf')])
    >>> flambeau.isneginf(x)
    tensor([False, False,  True])
"""

DOCS['isreal'] = """Whether each element has a zero imaginary part (always true for real dtypes).

Args:
    input (Tensor): the input.

Example::

    >>> x = flambeau.tensor([1 + 0j, 1 + 1j])
    >>> flambeau.isreal(x)
    tensor([ True, False])
"""

DOCS['fmax'] = """The elementwise maximum, ignoring NaN: NaN only where both are NaN.

Args:
    input (Tensor): the first operand.
    other (Tensor): the second, broadcastable.

Example::

    >>> a, b = flambeau.tensor([1.0, float('nan')]), flambeau.tensor([float('nan'), 2.0])
    >>> flambeau.fmax(a, b)
    tensor([1., 2.])
"""

DOCS['fmin'] = """The elementwise minimum, ignoring NaN: NaN only where both are NaN.

Args:
    input (Tensor): the first operand.
    other (Tensor): the second, broadcastable.

Example::

    >>> a, b = flambeau.tensor([1.0, float('nan')]), flambeau.tensor([0.0, 2.0])
    >>> flambeau.fmin(a, b)
    tensor([0., 2.])
"""

DOCS['sort'] = """Sorts along ``dim``; returns ``(values, indices)``. NaN sorts last ascending and first descending;
equal elements keep their input order (the sort is always stable).

Args:
    input (Tensor): a real input.
    dim (int): the dim to sort along (the last by default).
    descending (bool): largest first.
    stable (bool): accepted for PyTorch's signature; the sort is always stable.

Shape:
    ``values`` and ``indices`` (int64) have the input's shape.

Example::

    >>> x = flambeau.tensor([3.0, float('nan'), 1.0, 2.0])
    >>> flambeau.sort(x)
    flambeau.return_types.sort(
    values=tensor([1., 2., 3., nan]),
    indices=tensor([2, 3, 0, 1]))
"""

DOCS['argsort'] = """The indices that sort ``input`` along ``dim`` (as :func:`sort`'s ``indices``).

Args:
    input (Tensor): a real input.
    dim (int): the dim to sort along.
    descending (bool): largest first.
    stable (bool): accepted; the order is always stable.

Example::

    >>> x = flambeau.tensor([3, 1, 2])
    >>> flambeau.argsort(x)
    tensor([1, 2, 0])
"""

DOCS['msort'] = """Sorts along the first dim, ascending (``sort(input, 0).values``).

Args:
    input (Tensor): a real input.

Example::

    >>> x = flambeau.tensor([[3, 1], [1, 2]])
    >>> flambeau.msort(x)
    tensor([[1, 1],
            [3, 2]])
"""

DOCS['topk'] = """The ``k`` largest (or smallest) elements along ``dim``, best first, and their indices; NaN counts
as the largest, and equal elements come in input order.

Args:
    input (Tensor): a real input.
    k (int): how many, at most the size of ``dim``.
    dim (int): the dim to select along (the last by default).
    largest (bool): the largest (else the smallest).
    sorted (bool): accepted; the result is always sorted.

Shape:
    The input's, with ``k`` along ``dim``.

Example::

    >>> x = flambeau.tensor([1.0, 5.0, 3.0, 4.0])
    >>> flambeau.topk(x, 2)
    flambeau.return_types.topk(
    values=tensor([5., 4.]),
    indices=tensor([1, 3]))
"""

DOCS['kthvalue'] = """The ``k``-th smallest element along ``dim`` (k counts from 1) and its index.

Args:
    input (Tensor): a real input.
    k (int): the rank, from 1 to the size of ``dim``.
    dim (int): the dim to select along (the last by default).
    keepdim (bool): keep the reduced dim with size 1.

Example::

    >>> x = flambeau.tensor([5.0, 1.0, 4.0, 2.0])
    >>> flambeau.kthvalue(x, 2)
    flambeau.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(3))
"""

DOCS['searchsorted'] = """For each value of ``input``, the index in the innermost dim of ``sorted_sequence`` where it
would go to keep the order.

Args:
    sorted_sequence (Tensor): 1-d, or with the leading dims of ``input``; sorted along its last dim (or through
        ``sorter``).
    input (Tensor or Scalar): the values to place.
    out_int32 (bool): return int32 instead of int64.
    right (bool): after equal elements instead of before.
    side (str, optional): ``'left'`` or ``'right'`` (the same as ``right``).
    sorter (Tensor, optional): int64 indices that sort ``sorted_sequence``.

Example::

    >>> seq = flambeau.tensor([1, 3, 5, 7])
    >>> flambeau.searchsorted(seq, flambeau.tensor([3, 6]))
    tensor([1, 3])
"""

DOCS['bucketize'] = """The bucket of each element of ``input`` among the 1-d sorted ``boundaries``:
``boundaries[i-1] < x <= boundaries[i]`` (``<=``/``<`` swapped with ``right=True``).

Args:
    input (Tensor or Scalar): the values.
    boundaries (Tensor): 1-d, sorted.
    out_int32 (bool): return int32 instead of int64.
    right (bool): as described above.

Example::

    >>> boundaries = flambeau.tensor([1, 3, 5])
    >>> flambeau.bucketize(flambeau.tensor([0, 3, 6]), boundaries)
    tensor([0, 1, 3])
"""
