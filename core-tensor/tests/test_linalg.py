"""flambeau.linalg beyond the conformance kit: reconstructions of the factorisations, PyTorch's
errors and dtype rules, named tuples, batch broadcasting (hypothesis), aliases and ``out=``."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import flambeau as fb

LA = fb.linalg
FLOATS = [fb.float32, fb.float64, fb.complex64, fb.complex128]


def rand(rng, *shape, dtype=fb.float64):
    data = rng.standard_normal(shape)
    if dtype.is_complex:
        data = data + 1j * rng.standard_normal(shape)
    return fb.tensor(data, dtype=dtype)


def close(a, b, dtype=fb.float64):
    tol = 1e-4 if dtype in (fb.float32, fb.complex64) else 1e-9
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_factorisations_reconstruct(rng, dtype):
    A = rand(rng, 2, 4, 3, dtype=dtype)
    Q, R = LA.qr(A)
    close((Q @ R).numpy(), A.numpy(), dtype)
    assert np.allclose(np.triu(R.numpy()), R.numpy())
    U, S, Vh = LA.svd(A, full_matrices=False)
    close((U * S.to(dtype).unsqueeze(-2) @ Vh).numpy(), A.numpy(), dtype)
    assert S.dtype == dtype.to_real()
    P, L, Uu = LA.lu(A)
    close((P @ L @ Uu).numpy(), A.numpy(), dtype)
    M = rand(rng, 3, 3, dtype=dtype)
    w, V = LA.eig(M)
    close((M.to(w.dtype) @ V).numpy(), (V * w.unsqueeze(-2)).numpy(), dtype)
    H = M + M.mH
    lam, V = LA.eigh(H)
    close((V * lam.to(dtype).unsqueeze(-2) @ V.mH).numpy(), H.numpy(), dtype)
    spd = M @ M.mH + 3 * fb.eye(3, dtype=dtype)
    L = LA.cholesky(spd)
    close((L @ L.mH).numpy(), spd.numpy(), dtype)
    close(LA.cholesky(spd, upper=True).numpy(), L.mH.resolve_conj().numpy(), dtype)


def test_named_tuples():
    A = fb.tensor([[4.0, 1.0], [1.0, 3.0]])
    assert type(LA.slogdet(A)).__name__ == "linalg_slogdet"
    assert LA.slogdet(A)._fields == ("sign", "logabsdet")
    assert LA.eigh(A)._fields == ("eigenvalues", "eigenvectors")
    assert LA.svd(A)._fields == ("U", "S", "Vh")
    assert LA.qr(A)._fields == ("Q", "R")
    assert LA.lu_factor(A)._fields == ("LU", "pivots")
    assert LA.lu(A)._fields == ("P", "L", "U")
    assert LA.inv_ex(A)._fields == ("inverse", "info")
    assert LA.cholesky_ex(A)._fields == ("L", "info")
    assert LA.lstsq(A, A)._fields == ("solution", "residuals", "rank", "singular_values")
    assert LA.eig(A)._fields == ("eigenvalues", "eigenvectors")


def test_errors_have_pytorch_wording():
    with pytest.raises(RuntimeError, match=r"^linalg.inv: A must be batches of square matrices, but they are 2 by 3 "
                                           r"matrices$"):
        LA.inv(fb.ones(2, 3))
    with pytest.raises(LA.LinAlgError, match=r"^linalg.inv: The diagonal element 2 is zero, the inversion could "
                                             r"not be completed because the input matrix is singular.$"):
        LA.inv(fb.tensor([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(LA.LinAlgError, match=r"^linalg.inv: \(Batch element 1\): The diagonal element 1 is zero"):
        LA.inv(fb.stack([fb.eye(2), fb.zeros(2, 2)]))
    with pytest.raises(LA.LinAlgError, match=r"the leading minor of order 2 is not positive-definite\)\.$"):
        LA.cholesky(fb.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(RuntimeError, match=r"^linalg.inv: Expected a floating point or complex tensor as input. "
                                           r"Got Long$"):
        LA.inv(fb.ones(2, 2, dtype=fb.int64))
    with pytest.raises(RuntimeError, match="Low precision dtypes not supported. Got Half"):
        LA.det(fb.ones(2, 2, dtype=fb.float16))
    with pytest.raises(RuntimeError, match=r"linalg.solve: Incompatible shapes of A and B for the equation XA = B "
                                           r"\(2x2 and 3x1\)"):
        LA.solve(fb.eye(2), fb.ones(3, 1), left=False)
    with pytest.raises(LA.LinAlgError, match="The solver failed because the input matrix is singular"):
        LA.solve(fb.zeros(2, 2), fb.ones(2))
    assert issubclass(LA.LinAlgError, RuntimeError)


def test_ex_variants_report_instead_of_raising():
    A = fb.stack([fb.eye(2), fb.zeros(2, 2)])
    assert LA.inv_ex(A).info.tolist() == [0, 1]
    assert LA.inv_ex(A).info.dtype == fb.int32
    with pytest.raises(LA.LinAlgError, match="linalg.inv_ex"):
        LA.inv_ex(A, check_errors=True)
    assert LA.cholesky_ex(-fb.eye(2)).info.item() == 1
    close(LA.inv_ex(A).inverse[0].numpy(), np.eye(2))


@settings(max_examples=25, deadline=None)
@given(batch_a=st.lists(st.integers(1, 3), max_size=2), batch_b=st.lists(st.integers(1, 3), max_size=2),
       n=st.integers(1, 4), k=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_solve_broadcasts_batches_like_numpy(batch_a, batch_b, n, k, seed):
    rng = np.random.default_rng(seed)
    try:
        np.broadcast_shapes(tuple(batch_a), tuple(batch_b))
    except ValueError:
        assume(False)
    # B shaped like A's batch + (n,) is a batch of vectors (PyTorch's rule, not numpy's): drawn elsewhere
    assume(not (len(batch_b) + 2 == len(batch_a) + 1 and tuple(batch_b) + (n, k) == tuple(batch_a) + (n,)))
    a = rng.standard_normal(tuple(batch_a) + (n, n)) + 3 * n * np.eye(n)
    b = rng.standard_normal(tuple(batch_b) + (n, k))
    got = LA.solve(fb.tensor(a), fb.tensor(b)).numpy()
    np.testing.assert_allclose(got, np.linalg.solve(a, b), rtol=1e-9, atol=1e-9)


def test_solve_vector_rule():
    A = fb.tensor(np.eye(3)[None].repeat(2, 0) * 2)
    b = fb.ones(2, 3, dtype=fb.float64)
    assert LA.solve(A, b).shape == (2, 3)  # b is a batch of vectors: its shape is A's batch + (n,)
    assert LA.solve(A, fb.ones(3, 2, dtype=fb.float64)).shape == (2, 3, 2)


def test_lstsq_drivers():
    A = fb.tensor(np.random.default_rng(1).standard_normal((5, 3)))
    B = fb.tensor(np.random.default_rng(2).standard_normal((5, 2)))
    r = LA.lstsq(A, B)
    close(r.solution.numpy(), np.linalg.lstsq(A.numpy(), B.numpy(), rcond=None)[0])
    assert r.residuals.shape == (0,) and r.rank.item() == 3 and r.singular_values.shape == (0,)
    r = LA.lstsq(A, B, driver="gelsd")
    assert r.residuals.shape == (2,) and r.singular_values.shape == (3,)
    close(r.residuals.numpy(), np.linalg.lstsq(A.numpy(), B.numpy(), rcond=None)[1])


def test_norms_match_numpy(rng):
    x = rand(rng, 3, 4)
    for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        close(LA.matrix_norm(x, ord).numpy(), np.linalg.norm(x.numpy(), ord))
    for ord in (2, 1, 0, 3, math.inf, -math.inf):
        close(LA.vector_norm(x, ord).numpy(), np.linalg.norm(x.numpy().ravel(), ord))
    assert LA.vector_norm(fb.ones(3), dtype=fb.float64).dtype == fb.float64
    assert LA.vector_norm(fb.ones(3, dtype=fb.complex64)).dtype == fb.float32
    close(LA.norm(x, dim=1).numpy(), np.linalg.norm(x.numpy(), axis=1))


def test_rank_pinv_multi_dot_power(rng):
    low = fb.tensor(np.outer([1.0, 2.0, 3.0], [1.0, 0.0, -1.0]))
    assert LA.matrix_rank(low).item() == 1 and LA.matrix_rank(low).dtype == fb.int64
    assert LA.matrix_rank(fb.eye(3), atol=2.0).item() == 0
    A = rand(rng, 4, 3)
    close(LA.pinv(A).numpy(), np.linalg.pinv(A.numpy()))
    a, b, c = rand(rng, 10, 2), rand(rng, 2, 30), rand(rng, 30)
    close(LA.multi_dot([a, b, c]).numpy(), a.numpy() @ b.numpy() @ c.numpy())
    M = rand(rng, 2, 3, 3)
    close(LA.matrix_power(M, 5).numpy(), np.linalg.matrix_power(M.numpy(), 5))
    close(fb.matrix_power(M, 0).numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
    close(M.matrix_power(-1).numpy(), np.linalg.inv(M.numpy()))
    assert fb.matrix_power(fb.ones(2, 2, dtype=fb.int64), 3).tolist() == [[4, 4], [4, 4]]


def test_aliases_and_methods(rng):
    A = rand(rng, 3, 3) + 3 * fb.eye(3, dtype=fb.float64)
    close(A.det().numpy(), np.linalg.det(A.numpy()))
    close(fb.inverse(A).numpy(), np.linalg.inv(A.numpy()))
    close(A.logdet().numpy(), np.log(np.linalg.det(A.numpy())))
    close(LA.diagonal(A).numpy(), np.diagonal(A.numpy()))
    close(LA.matmul(A, A).numpy(), A.numpy() @ A.numpy())
    close(LA.vecdot(A, A).numpy(), (A.numpy() ** 2).sum(-1))
    close(LA.cross(fb.tensor([1.0, 0, 0]), fb.tensor([0.0, 1, 0])).numpy(), [0, 0, 1])
    assert math.isnan(fb.logdet(-fb.eye(3)).item())


def test_out_and_version_counter(rng):
    A = rand(rng, 3, 3) + 3 * fb.eye(3, dtype=fb.float64)
    out = fb.empty(3, 3, dtype=fb.float64)
    version = out._version_counter[0]
    assert LA.inv(A, out=out) is out and out._version_counter[0] > version
    close(out.numpy(), np.linalg.inv(A.numpy()))
    sign, logabs = fb.empty((), dtype=fb.float64), fb.empty((), dtype=fb.float64)
    r = LA.slogdet(A, out=(sign, logabs))
    assert r[0] is sign and r[1] is logabs


def test_empty_matrices():
    assert LA.det(fb.ones(2, 0, 0)).tolist() == [1.0, 1.0]
    assert LA.inv(fb.ones(0, 0)).shape == (0, 0)
    assert LA.svdvals(fb.ones(3, 0)).shape == (0,)


def test_legacy_top_level_forms(rng):
    A = rand(rng, 4, 3)
    U, S, V = fb.svd(A)
    assert type(fb.svd(A)).__name__ == "svd" and V.shape == (3, 3)
    close((U * S.unsqueeze(-2) @ V.mT).numpy(), A.numpy())
    assert [tuple(t.shape) for t in A.svd(some=False)] == [(4, 4), (3,), (3, 3)]
    Q, R = A.qr()
    close((Q @ R).numpy(), A.numpy())
    spd = A.mT @ A + fb.eye(3, dtype=fb.float64)
    close(spd.cholesky().numpy(), np.linalg.cholesky(spd.numpy()))
    close(fb.pinverse(A).numpy(), np.linalg.pinv(A.numpy()))
