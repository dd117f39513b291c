"""complex128 gradcheck and gradgradcheck of the ops not covered by test_formulas_complex: reductions,
cumulative ops, norms, index ops, shape ops and views, the BLAS-like ops and flambeau.linalg.

PyTorch's convention (the gradient of a real ``L`` is ``dL/dRe + i dL/dIm``): a holomorphic op's
slope enters conjugated, so a formula written for real inputs only (``g * prod / x``,
``g * alpha``, QR's complex diagonal, the SVD's phase freedom...) fails these checks. Where
PyTorch refuses complex autograd (scatter_reduce, index_reduce) or refuses a phase-dependent loss
(svd, eig, eigh), the same error is checked.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck

LA = fb.linalg
IDX = fb.tensor([[0, 2, 1, 0], [2, 1, 0, 1]])
MASK = fb.tensor([[True, False, True, False], [False, True, True, False], [True, True, False, False]])


def _cplx(rng, *shape):
    data = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
    return fb.tensor(data, dtype=fb.complex128).requires_grad_()


def _well(a):
    return a + 4 * fb.eye(a.shape[-1], dtype=a.dtype)


def _herm_pd(a):
    return a @ a.mH + a.shape[-1] * fb.eye(a.shape[-1], dtype=a.dtype)


def _with_zero(x, pattern):
    return x * fb.tensor(pattern, dtype=fb.complex128)


def _svd_rebuild(a):
    U, S, Vh = LA.svd(a, full_matrices=False)
    return (U * S.unsqueeze(-2).to(U.dtype)) @ Vh


def _eigh_rebuild(a):
    w, V = LA.eigh(a + a.mH)
    return (V * w.unsqueeze(-2).to(V.dtype)) @ V.mH


#: name -> (function, input shapes)
CASES = {
    # reductions and cumulative ops
    "sum": (lambda x: x.sum(0), [(3, 4)]),
    "mean": (lambda x: x.mean(1, keepdim=True), [(3, 4)]),
    "prod": (lambda x: x.prod(1), [(3, 4)]),
    "prod_all": (lambda x: x.prod(), [(2, 3)]),
    "prod_one_zero": (lambda x: _with_zero(x, [[1, 0, 1], [1, 1, 1]]).prod(1), [(2, 3)]),
    "cumsum": (lambda x: x.cumsum(1), [(3, 4)]),
    "cumprod": (lambda x: x.cumprod(1), [(3, 4)]),
    "cumprod_zero": (lambda x: _with_zero(x, [[1, 0, 1, 1], [1, 1, 1, 0]]).cumprod(1), [(2, 4)]),
    "logsumexp": (lambda x: x.logsumexp(1), [(3, 4)]),
    "var": (lambda x: x.var(1), [(3, 4)]),
    "std": (lambda x: x.std(1), [(3, 4)]),
    "var_mean": (lambda x: fb.var_mean(x, 1), [(3, 4)]),
    "std_mean": (lambda x: fb.std_mean(x, 1), [(3, 4)]),
    "nanmean": (lambda x: x.nanmean(1), [(3, 4)]),
    # norms
    "norm_2": (lambda x: x.norm(), [(3, 4)]),
    "norm_1": (lambda x: x.norm(1, dim=1), [(3, 4)]),
    "norm_3": (lambda x: x.norm(3, dim=1), [(3, 4)]),
    "norm_inf": (lambda x: x.norm(float("inf"), dim=1), [(3, 4)]),
    "norm_nuc": (lambda x: fb.norm(x, "nuc"), [(3, 4)]),
    "dist": (lambda x, y: fb.dist(x, y), [(3, 4), (3, 4)]),
    "dist_1": (lambda x, y: fb.dist(x, y, 1), [(3, 4), (3, 4)]),
    "vector_norm_half": (lambda x: LA.vector_norm(x, 0.5, 1), [(3, 4)]),
    "vector_norm_inf": (lambda x: LA.vector_norm(x, float("inf"), 1), [(3, 4)]),
    "matrix_norm_2": (lambda x: LA.matrix_norm(x, 2), [(3, 4)]),
    "matrix_norm_1": (lambda x: LA.matrix_norm(x, 1), [(3, 4)]),
    # index ops
    "gather": (lambda x: x.gather(0, IDX), [(3, 4)]),
    "scatter": (lambda x, s: x.scatter(0, IDX, s), [(3, 4), (2, 4)]),
    "scatter_value": (lambda x: x.scatter(0, IDX, 2.5 + 1j), [(3, 4)]),
    "scatter_add": (lambda x, s: x.scatter_add(0, IDX, s), [(3, 4), (2, 4)]),
    "index_select": (lambda x: x.index_select(1, fb.tensor([0, 2, 2])), [(3, 4)]),
    "index_add": (lambda x, s: x.index_add(1, fb.tensor([0, 2, 2]), s, alpha=2 - 1j), [(3, 4), (3, 3)]),
    "index_copy": (lambda x, s: x.index_copy(1, fb.tensor([0, 2]), s), [(3, 4), (3, 2)]),
    "index_fill": (lambda x, v: x.index_fill(1, fb.tensor([0, 2]), v), [(3, 4), ()]),
    "masked_fill": (lambda x, v: x.masked_fill(MASK, v), [(3, 4), ()]),
    "masked_select": (lambda x: x.masked_select(MASK), [(3, 4)]),
    "masked_scatter": (lambda x, s: x.masked_scatter(MASK, s), [(3, 4), (8,)]),
    "take": (lambda x: x.take(fb.tensor([0, 5, -1, 5])), [(3, 4)]),
    "take_along_dim": (lambda x: fb.take_along_dim(x, fb.tensor([[0], [2], [1]]), 1), [(3, 4)]),
    "index": (lambda x: x[fb.tensor([0, 2, 2])], [(3, 4)]),
    "index_put_accumulate": (lambda x, v: x.index_put((fb.tensor([0, 0]),), v, accumulate=True), [(3, 4), (2, 4)]),
    "where": (lambda x, y: fb.where(MASK, x, y), [(3, 4), (3, 4)]),
    # shape ops and views
    "cat": (lambda x, y: fb.cat([x, y], 1), [(2, 3), (2, 2)]),
    "flip_roll": (lambda x: x.flip(1).roll(1, 0), [(2, 3)]),
    "repeat": (lambda x: x.repeat(2, 1), [(2, 3)]),
    "tril_triu": (lambda x: x.tril() + 2j * x.triu(1), [(3, 3)]),
    "diag_embed_diagonal": (lambda x: fb.diag_embed(x).diagonal(1, -2, -1), [(2, 3)]),
    "unfold": (lambda x: x.unfold(1, 2, 1), [(2, 3)]),
    "as_strided": (lambda x: x.as_strided((2, 2), (1, 2)), [(2, 3)]),
    "mH_conj": (lambda x: x.mH.conj(), [(2, 3)]),
    # elementwise with complex scalars
    "add_alpha": (lambda x, y: fb.add(x, y, alpha=2j), [(3,), (3,)]),
    "sub_alpha": (lambda x, y: fb.sub(x, y, alpha=1 - 2j), [(3,), (3,)]),
    "sinc": (lambda x: fb.sinc(x), [(3,)]),
    "float_power": (lambda x: fb.float_power(x, 2), [(3,)]),
    "float_power_tensor": (lambda x, y: fb.float_power(x + 2, y), [(3,), (3,)]),
    # BLAS-like
    "addmm": (lambda a, b, c: fb.addmm(a, b, c, beta=1j, alpha=2 - 1j), [(2, 2), (2, 3), (3, 2)]),
    "baddbmm": (lambda a, b, c: fb.baddbmm(a, b, c, beta=1j, alpha=2), [(2, 2, 2), (2, 2, 3), (2, 3, 2)]),
    "einsum": (lambda a, b: fb.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
    "cross": (lambda a, b: LA.cross(a, b), [(2, 3), (2, 3)]),
    "vecdot": (lambda a, b: LA.vecdot(a, b), [(2, 3), (2, 3)]),
    # linalg
    "det": (lambda a: LA.det(_well(a)), [(3, 3)]),
    "slogdet": (lambda a: LA.slogdet(_well(a)), [(3, 3)]),
    "logdet": (lambda a: fb.logdet(_well(a)), [(3, 3)]),
    "inv": (lambda a: LA.inv(_well(a)), [(3, 3)]),
    "solve": (lambda a, b: LA.solve(_well(a), b), [(3, 3), (3, 2)]),
    "solve_triangular": (lambda a, b: LA.solve_triangular(_well(a).triu(), b, upper=True), [(3, 3), (3, 2)]),
    "lstsq": (lambda a, b: LA.lstsq(a, b).solution, [(4, 3), (4, 2)]),
    "cholesky": (lambda a: LA.cholesky(_herm_pd(a)), [(3, 3)]),
    "qr_tall": (lambda a: LA.qr(a), [(4, 3)]),
    "qr_wide": (lambda a: LA.qr(a), [(3, 4)]),
    "eigh": (_eigh_rebuild, [(3, 3)]),
    "svd_rebuild": (_svd_rebuild, [(3, 4)]),
    "svd_pair": (lambda a: (lambda U, S, Vh: U[:, :1] @ Vh[:1, :])(*LA.svd(a, full_matrices=False)), [(4, 3)]),
    "svdvals": (lambda a: LA.svdvals(a), [(3, 4)]),
    "pinv": (lambda a: LA.pinv(a), [(3, 4)]),
    "matrix_power": (lambda a: LA.matrix_power(_well(a), -2), [(3, 3)]),
    "eigvals": (lambda a: LA.eigvals(a), [(3, 3)]),
    "lu": (lambda a: LA.lu(a)[1:], [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_gradcheck(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    fn, shapes = CASES[name]
    inputs = tuple(_cplx(rng, *shape) for shape in shapes)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_the_checks_catch_an_unconjugated_slope():
    # prod's old complex gradient (g * prod / x, no conjugate) must fail the check
    from flambeau.autograd.function import Function

    class UnconjugatedProd(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.prod()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.prod() / x

    x = _cplx(np.random.default_rng(0), 3)
    assert not gradcheck(UnconjugatedProd.apply, (x,), raise_exception=False)
    assert gradcheck(lambda t: t.prod(), (x,))


def test_prod_gradient_written_out():
    z = fb.tensor([1 + 1j, 2 - 1j, 0.5j], dtype=fb.complex128, requires_grad=True)
    (g,) = fb.autograd.grad(z.prod().real, z)
    zs = z.detach().numpy()
    others = np.array([zs[1] * zs[2], zs[0] * zs[2], zs[0] * zs[1]])
    np.testing.assert_allclose(g.numpy(), others.conj())  # holomorphic: d Re f / dz* -> conj(f')


def test_qr_gradient_keeps_r_diagonal_real():
    # A = QR with real diag(R): a loss on Im(diag R) has no gradient (it is identically 0)
    A = _cplx(np.random.default_rng(1), 4, 3)
    Q, R = LA.qr(A)
    assert float(R.diagonal().imag.abs().max()) == 0.0
    (g,) = fb.autograd.grad(R.diagonal().imag.sum() + 0 * Q.real.sum(), A)
    np.testing.assert_allclose(g.numpy(), 0, atol=1e-12)


SVD_PHASE = ("svd_backward: The singular vectors in the complex case are specified up to multiplication by "
             "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.")


def test_svd_phase_dependent_loss_raises():
    A = _cplx(np.random.default_rng(2), 3, 3)
    U, _, _ = LA.svd(A)
    with pytest.raises(RuntimeError) as info:
        U.sum().abs().backward()
    assert str(info.value) == SVD_PHASE
    _, _, Vh = LA.svd(A)
    with pytest.raises(RuntimeError) as info:
        Vh.sum().abs().backward()
    assert str(info.value) == SVD_PHASE


@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce"])
def test_reduce_ops_refuse_complex_autograd(op):
    x = fb.ones(3, 4, dtype=fb.complex128, requires_grad=True)
    src = fb.ones(2, 4, dtype=fb.complex128)
    message = f"{op} does not support automatic differentiation for outputs with complex dtype."
    with pytest.raises(RuntimeError) as info:
        if op == "scatter_reduce":
            x.scatter_reduce(0, IDX, src, "mean")
        else:
            x.index_reduce(0, fb.tensor([0, 2]), src, "prod")
    assert str(info.value) == message
