"""The conjugate bit: ``conj()`` is a view that shares storage and reads conjugated, as PyTorch's.

Ops compute on the conjugated values (the dispatcher resolves the bit before any kernel); views
of a conjugated view keep the bit; writes into one store the conjugate. References are numpy's
``np.conj`` of the same values.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def vals(t):
    return np.asarray(t.resolve_conj().numpy())


def z(*shape, seed=0, dtype=np.complex128):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return fb.from_numpy(data.astype(dtype))


# -- the view and its API -----------------------------------------------------------------

def test_conj_is_a_view_with_the_bit():
    x = fb.tensor([1 + 2j, 3 - 4j])
    y = x.conj()
    assert y.is_conj() and fb.is_conj(y) and not x.is_conj()
    assert y.data_ptr() == x.data_ptr() and y._base is x
    assert np.array_equal(vals(y), [1 - 2j, 3 + 4j])
    assert fb.conj(x).is_conj()
    assert not y.conj().is_conj() and np.array_equal(vals(y.conj()), [1 + 2j, 3 - 4j])


def test_conj_of_a_real_tensor_is_itself():
    x = fb.tensor([1.0, 2.0])
    assert x.conj() is x and not x.conj().is_conj() and fb.conj(x) is x


def test_writes_through_a_conjugated_view_store_the_conjugate():
    x = fb.tensor([1 + 1j, 2 + 2j])
    y = x.conj()
    y[0] = 3 + 3j
    assert np.array_equal(x.numpy(), [3 - 3j, 2 + 2j])
    assert np.array_equal(vals(y), [3 + 3j, 2 - 2j])
    y.add_(1j)
    assert np.array_equal(x.numpy(), [3 - 4j, 2 + 1j])
    y.copy_(fb.tensor([5j, 1 + 0j]))
    assert np.array_equal(x.numpy(), [-5j, 1 + 0j])
    y.fill_(2 - 1j)
    assert np.array_equal(x.numpy(), [2 + 1j, 2 + 1j])


def test_in_place_into_a_plain_tensor_from_a_conjugated_view():
    x = fb.tensor([1 + 1j, 2 + 2j])
    w = fb.tensor([1 + 0j, 1 + 0j])
    w.mul_(x.conj())
    assert np.array_equal(w.numpy(), [1 - 1j, 2 - 2j])
    w.copy_(x.conj())
    assert np.array_equal(w.numpy(), [1 - 1j, 2 - 2j])


def test_out_into_a_conjugated_view():
    x = fb.tensor([1 + 1j, 2 + 2j])
    y = x.conj()
    r = fb.add(fb.tensor([1j, 1j]), 1, out=y)
    assert r is y
    assert np.array_equal(vals(y), [1 + 1j, 1 + 1j])
    assert np.array_equal(x.numpy(), [1 - 1j, 1 - 1j])


def test_resolve_conj_and_conj_physical():
    x = fb.tensor([1 + 2j])
    assert x.resolve_conj() is x and fb.resolve_conj(x) is x
    r = x.conj().resolve_conj()
    assert not r.is_conj() and r.data_ptr() != x.data_ptr()
    assert np.array_equal(r.numpy(), [1 - 2j])
    p = x.conj_physical()
    assert not p.is_conj() and np.array_equal(p.numpy(), [1 - 2j])
    w = x.clone()
    assert w.conj_physical_() is w and not w.is_conj() and np.array_equal(w.numpy(), [1 - 2j])
    # on a conjugated view, conj_physical_ conjugates the values it reads: storage becomes conj(storage)
    v = x.clone()
    v.conj().conj_physical_()
    assert np.array_equal(v.numpy(), [1 - 2j])


def test_numpy_and_dlpack_of_a_conjugated_view_are_refused():
    y = fb.tensor([1 + 2j]).conj()
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that has conjugate bit set. "
                                           r"Use tensor.resolve_conj\(\).numpy\(\) instead."):
        y.numpy()
    with pytest.raises(RuntimeError, match="conjugate bit"):
        y.__dlpack__()


def test_host_conversions_read_the_conjugated_values():
    y = fb.tensor([1 + 2j, -3j]).conj()
    assert y.tolist() == [1 - 2j, 3j]
    assert y[0].item() == 1 - 2j
    assert "1.-2.j" in repr(y)


def test_views_keep_the_bit_and_share_storage():
    x = z(3, 4)
    y = x.conj()
    for v in (y.t(), y.transpose(0, 1), y.permute(1, 0), y[1:, ::2], y.unsqueeze(0), y.view(12),
              y.reshape(2, 6), y.expand(2, 3, 4), y.select(0, 1), y.narrow(1, 1, 2), y.flatten(),
              y.as_strided((2, 2), (1, 4)), y.unfold(1, 2, 1), y.diagonal(), y.squeeze(), y.mT, y[None]):
        assert v.is_conj(), v
        assert v.data_ptr() >= x.data_ptr()
    assert np.array_equal(vals(y.t()), np.conj(x.numpy()).T)
    assert np.array_equal(vals(y[1:, ::2]), np.conj(x.numpy())[1:, ::2])
    assert all(p.is_conj() for p in y.unbind(0)) and all(p.is_conj() for p in y.split(2, 1))


def test_h_and_mh_are_conjugated_views():
    x = z(2, 3)
    assert x.mH.is_conj() and x.H.is_conj()
    assert np.array_equal(vals(x.mH), np.conj(x.numpy()).T)


def test_real_and_imag_of_a_conjugated_view():
    x = fb.tensor([1 + 2j, 3 - 4j])
    y = x.conj()
    assert np.array_equal(y.real.numpy(), [1, 3]) and not y.real.is_conj()
    assert np.array_equal(y.imag.numpy(), [-2, 4])
    y.real = fb.tensor([5.0, 6.0])
    assert np.array_equal(x.numpy(), [5 + 2j, 6 - 4j])
    y.imag = fb.tensor([1.0, 1.0])
    assert np.array_equal(x.numpy(), [5 - 1j, 6 - 1j])
    with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved conjugated tensors"):
        fb.view_as_real(y)


def test_detach_keeps_the_bit_and_writes_through():
    x = fb.tensor([1 + 1j])
    d = x.conj().detach()
    assert d.is_conj()
    d[0] = 2j
    assert np.array_equal(x.numpy(), [-2j])


def test_cat_and_where_with_conjugated_inputs():
    a, b = z(2, seed=1), z(2, seed=2)
    assert np.array_equal(vals(fb.cat([a.conj(), b])), np.concatenate([np.conj(a.numpy()), b.numpy()]))
    mask = fb.tensor([True, False])
    assert np.array_equal(vals(fb.where(mask, a.conj(), b)), np.where([True, False], np.conj(a.numpy()), b.numpy()))


def test_to_another_dtype_and_clone_read_conjugated_values():
    x = fb.tensor([1 + 2j], dtype=fb.complex64)
    assert np.array_equal(vals(x.conj().to(fb.complex128)), [1 - 2j])
    c = x.conj().clone()
    assert np.array_equal(vals(c), [1 - 2j])
    c.fill_(0)
    assert np.array_equal(x.numpy(), [1 + 2j])  # the clone has its own storage


# -- the property: every op sees the conjugated values ---------------------------------------

def _ops():
    la = fb.linalg
    return {
        # unary
        "exp": lambda t: t.exp(), "abs": lambda t: t.abs(), "neg": lambda t: -t, "sqrt": lambda t: t.sqrt(),
        "angle": lambda t: t.angle(), "sgn": lambda t: t.sgn(), "real": lambda t: t.real, "imag": lambda t: t.imag,
        "sin": lambda t: t.sin(), "reciprocal": lambda t: t.reciprocal(), "isfinite": lambda t: t.isfinite(),
        "clone": lambda t: t.clone(), "contiguous": lambda t: t.t().contiguous(), "flip": lambda t: t.flip(0),
        "getitem_adv": lambda t: t[fb.tensor([1, 0])], "masked": lambda t: t[t.abs() > 1],
        # binary, with the conjugated view on either side
        "add": lambda t: t + 1j, "mul_other": lambda t: fb.mul(fb.ones_like(t.resolve_conj()), t),
        "sub": lambda t: t - t.resolve_conj(), "div": lambda t: t / (2 + 1j), "eq": lambda t: t == t.resolve_conj(),
        "pow": lambda t: t ** 2,
        # reductions
        "sum": lambda t: t.sum(), "sum_dim": lambda t: t.sum(1), "mean": lambda t: t.mean(0),
        "prod": lambda t: t.prod(), "cumsum": lambda t: t.cumsum(1), "norm": lambda t: la.vector_norm(t),
        # linalg
        "matmul": lambda t: t @ t.resolve_conj().t(), "mv": lambda t: t @ fb.ones(t.shape[1], dtype=t.dtype),
        "det": lambda t: la.det(t[:, :t.shape[0]]), "inv": lambda t: la.inv(t[:, :t.shape[0]]),
        "solve": lambda t: la.solve(t[:, :t.shape[0]], t), "trace": lambda t: t[:, :t.shape[0]].trace(),
        "vdot": lambda t: fb.vdot(t.flatten(), t.flatten().resolve_conj()),
    }


OPS = _ops()


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(OPS)), rows=st.integers(2, 3), extra=st.integers(0, 2),
       seed=st.integers(0, 2 ** 16), double=st.booleans())
def test_ops_see_the_conjugated_values(name, rows, extra, seed, double):
    """op(x.conj()) == op(x.conj().resolve_conj()) for a sample of unary, binary, reduction and linalg ops."""
    x = z(rows, rows + extra, seed=seed, dtype=np.complex128 if double else np.complex64)
    op = OPS[name]
    lazy, eager = op(x.conj()), op(x.conj().resolve_conj())
    assert not eager.is_conj() or name in ("clone",)
    tol = 1e-10 if double else 1e-4
    np.testing.assert_allclose(vals(lazy), vals(eager), rtol=tol, atol=tol)
    assert lazy.dtype == eager.dtype and lazy.shape == eager.shape


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 16), name=st.sampled_from(["add_", "mul_", "sub_", "div_", "copy_", "neg_",
                                                          "exp_", "zero_", "fill_"]))
def test_in_place_ops_on_a_conjugated_view_match_numpy(seed, name):
    """An in-place op through a conjugated view: the view reads op(values), its base their conjugate."""
    x = z(2, 3, seed=seed)
    before = np.conj(x.numpy())  # what the view reads
    other = z(2, 3, seed=seed + 1)
    y = x.conj()
    ref = {"add_": lambda v: v + other.numpy(), "mul_": lambda v: v * other.numpy(),
           "sub_": lambda v: v - other.numpy(), "div_": lambda v: v / other.numpy(),
           "copy_": lambda v: other.numpy() + 0 * v, "neg_": lambda v: -v, "exp_": np.exp,
           "zero_": lambda v: 0 * v, "fill_": lambda v: np.full_like(v, 2 - 3j)}[name](before)
    args = {"add_": (other,), "mul_": (other,), "sub_": (other,), "div_": (other,), "copy_": (other,),
            "fill_": (2 - 3j,)}.get(name, ())
    assert getattr(y, name)(*args) is y
    np.testing.assert_allclose(vals(y), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.numpy(), np.conj(ref), rtol=1e-12, atol=1e-12)
