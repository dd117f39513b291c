"""Docstrings of the BLAS and "other" ops (PyTorch-style: what, Args, Shape, Example)."""
from __future__ import annotations

_SCALED = """{what}

    ``out = beta * input + alpha * ({product})``. ``input`` broadcasts to the product's shape; when
    ``beta`` is 0 it is ignored (NaN and inf in it do not propagate). Integer inputs take integer
    ``beta`` and ``alpha``.

    Args:
        input (Tensor): the tensor added to the product.
        {a} (Tensor): {a_doc}
        {b} (Tensor): {b_doc}
        beta (Number, optional): multiplier of ``input`` (default 1).
        alpha (Number, optional): multiplier of the product (default 1).
        out (Tensor, optional): the output tensor.

    Shape:
        {shape}

    Example::

        {example}
    """

DOCS = {
    "addmm": _SCALED.format(
        what="A matrix product added to a scaled tensor.", product="mat1 @ mat2",
        a="mat1", a_doc="the first matrix, :math:`(n, k)`.", b="mat2", b_doc="the second matrix, :math:`(k, m)`.",
        shape="input: broadcastable to :math:`(n, m)`; result: :math:`(n, m)`.",
        example=">>> fb.addmm(fb.zeros(2, 2), fb.ones(2, 3), fb.ones(3, 2), alpha=2)\n"
                "        tensor([[6., 6.],\n                [6., 6.]])"),
    "addmv": _SCALED.format(
        what="A matrix-vector product added to a scaled vector.", product="mat @ vec",
        a="mat", a_doc="the matrix, :math:`(n, k)`.", b="vec", b_doc="the vector, :math:`(k)`.",
        shape="input: broadcastable to :math:`(n)`; result: :math:`(n)`.",
        example=">>> fb.addmv(fb.ones(2), fb.ones(2, 3), fb.ones(3))\n        tensor([4., 4.])"),
    "addr": _SCALED.format(
        what="An outer product added to a scaled matrix (dtypes promote; bool works as logical and/or).",
        product="outer(vec1, vec2)",
        a="vec1", a_doc="the first vector, :math:`(n)`.", b="vec2", b_doc="the second vector, :math:`(m)`.",
        shape="input: broadcastable to :math:`(n, m)`; result: :math:`(n, m)`.",
        example=">>> fb.addr(fb.zeros(2, 2), fb.tensor([1., 2.]), fb.tensor([1., 3.]))\n"
                "        tensor([[1., 3.],\n                [2., 6.]])"),
    "addbmm": _SCALED.format(
        what="The sum of a batch of matrix products added to a scaled matrix.",
        product="sum over b of batch1[b] @ batch2[b]",
        a="batch1", a_doc="the first batch, :math:`(b, n, k)`.",
        b="batch2", b_doc="the second batch, :math:`(b, k, m)`.",
        shape="input: broadcastable to :math:`(n, m)`; result: :math:`(n, m)`.",
        example=">>> fb.addbmm(fb.zeros(2, 2), fb.ones(3, 2, 4), fb.ones(3, 4, 2))[0, 0]\n        tensor(12.)"),
    "baddbmm": _SCALED.format(
        what="A batch of matrix products added to a scaled batch.", product="bmm(batch1, batch2)",
        a="batch1", a_doc="the first batch, :math:`(b, n, k)`.",
        b="batch2", b_doc="the second batch, :math:`(b, k, m)`.",
        shape="input: broadcastable to :math:`(b, n, m)`; result: :math:`(b, n, m)`.",
        example=">>> fb.baddbmm(fb.zeros(1, 2, 2), fb.ones(1, 2, 3), fb.ones(1, 3, 2)).shape\n"
                "        flambeau.Size([1, 2, 2])"),
    "vdot": """The dot product of two 1-D tensors, the first one conjugated: ``sum(conj(input) * other)``.

    Args:
        input (Tensor): the first vector (conjugated when complex).
        other (Tensor): the second vector, of the same size and dtype.

    Example::

        >>> fb.vdot(fb.tensor([1j, 2]), fb.tensor([1j, 1]))
        tensor(3.+0.j)
    """,
    "tensordot": """Contracts dims of ``a`` with dims of ``b``: a generalised matrix product.

    Args:
        a (Tensor): the left operand.
        b (Tensor): the right operand.
        dims (int, or two lists of ints, or a Tensor): ``n`` contracts the last ``n`` dims of ``a``
            with the first ``n`` of ``b``; ``([i, ...], [j, ...])`` contracts ``a``'s dim ``i`` with
            ``b``'s dim ``j``, pairwise.

    Shape:
        The free dims of ``a``, then the free dims of ``b``.

    Example::

        >>> fb.tensordot(fb.ones(3, 4, 5), fb.ones(4, 5, 2), dims=2).shape
        flambeau.Size([3, 2])
    """,
    "cdist": """The ``p``-norm distance between every row of ``x1`` and every row of ``x2``, batched.

    Args:
        x1 (Tensor): :math:`(B..., P, M)` floating-point rows.
        x2 (Tensor): :math:`(B..., R, M)` floating-point rows (batch dims broadcast).
        p (float): the norm, in :math:`[0, \\infty]` (default 2).
        compute_mode (str): for ``p = 2``, ``'use_mm_for_euclid_dist_if_necessary'`` (a matrix product
            when P or R exceeds 25), ``'use_mm_for_euclid_dist'`` or ``'donot_use_mm_for_euclid_dist'``.

    Shape:
        :math:`(B..., P, R)`.

    Example::

        >>> fb.cdist(fb.tensor([[0., 0.]]), fb.tensor([[3., 4.]]))
        tensor([[5.]])
    """,
    "cov": """The covariance matrix of the variables in the rows of ``input`` (observations in columns).

    Args:
        input (Tensor): :math:`(N, O)` or :math:`(O)` (one variable).
        correction (int): subtracted from the number of observations (1: unbiased; 0: the maximum
            likelihood estimate).
        fweights (Tensor, optional): integer frequency weights, one per observation.
        aweights (Tensor, optional): floating-point observation weights.

    Shape:
        :math:`(N, N)`, or a scalar for one variable.

    Example::

        >>> fb.cov(fb.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """,
    "diff": """The ``n``-th forward difference along ``dim`` (``!=`` for bool).

    Args:
        input (Tensor): at least 1-D.
        n (int): how many times to difference (default 1).
        dim (int): the dim (default the last).
        prepend, append (Tensor, optional): joined to ``input`` along ``dim`` first; same number of dims.

    Example::

        >>> fb.diff(fb.tensor([1, 3, 6, 10]))
        tensor([2, 3, 4])
    """,
}
