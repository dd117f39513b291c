"""The dispatcher's several-output path: named-tuple results, their values, and the class cache."""
from __future__ import annotations

import numpy as np

import flambeau as fb
from flambeau import return_types
from flambeau.ops import _dispatch
from flambeau.ops._decl import OpDecl


def _x() -> fb.Tensor:
    return fb.from_numpy(np.array([[3.0, -1.0, 7.0], [2.0, 9.0, 0.5]], dtype=np.float32))


def test_two_outputs_are_the_ops_named_tuple() -> None:
    r = fb.max(_x(), 1)
    assert type(r) is return_types.max
    assert type(r).__module__ == "flambeau.return_types"
    assert r._fields == ("values", "indices")
    np.testing.assert_array_equal(r.values.numpy(), [7.0, 9.0])
    np.testing.assert_array_equal(r.indices.numpy(), [2, 1])
    assert r.values.dtype == fb.float32 and r.indices.dtype == fb.int64
    values, indices = r  # still a tuple
    assert values is r[0] and indices is r[1]


def test_the_class_is_shared_by_ops_with_one_public_name() -> None:
    # max_dim presents itself as max; a second call gets the same (cached) class
    assert type(fb.max(_x(), 0)) is type(fb.max(_x(), 1)) is return_types.max
    assert type(fb.min(_x(), 0)) is return_types.min


def test_three_outputs() -> None:
    a = fb.from_numpy(np.array([[4.0, 1.0], [2.0, 3.0]]))
    p, lower, upper = r = fb.linalg.lu(a)
    assert r._fields == ("P", "L", "U")
    np.testing.assert_allclose((p @ lower @ upper).numpy(), a.numpy(), atol=1e-12)


def test_topk_and_repr() -> None:
    y = fb.from_numpy(np.arange(10, dtype=np.float32)[::-1].copy())
    r = y.topk(3)
    assert type(r) is return_types.topk
    np.testing.assert_array_equal(r.values.numpy(), [9.0, 8.0, 7.0])
    np.testing.assert_array_equal(r.indices.numpy(), [0, 1, 2])
    assert repr(r).startswith("flambeau.return_types.topk(\nvalues=tensor(")


def test_op_without_output_names_gives_a_plain_tuple() -> None:
    decl = OpDecl("_two_plain", "(input: Tensor)", lambda input: [((), fb.float32)] * 2)
    results = (fb.tensor(1.0), fb.tensor(2.0))
    named = _dispatch._named(decl, results)
    assert type(named) is tuple and named == results
    named_decl = OpDecl("_two_named", "(input: Tensor)", lambda input: [((), fb.float32)] * 2,
                        output_names=("first", "second"))
    r = _dispatch._named(named_decl, results)
    assert r._fields == ("first", "second") and r.first is results[0] and r.second is results[1]
