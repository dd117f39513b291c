"""flambeau.save / flambeau.load: safetensors files with the structure as JSON, never pickles."""
from __future__ import annotations

import io
import json
import math
import os
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
from flambeau.serialization import CheckpointError

ALL_DTYPES = [fb.bool, fb.uint8, fb.int8, fb.int16, fb.int32, fb.int64, fb.float16, fb.bfloat16, fb.float32,
              fb.float64, fb.complex64, fb.complex128]


def _roundtrip(obj, tmp_path, **load_kwargs):
    path = tmp_path / "obj.safetensors"
    fb.save(obj, path)
    return fb.load(path, **load_kwargs)


def _same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, fb.Tensor):
        assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(np.asarray(a.detach()._host()), np.asarray(b.detach()._host()))
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_roundtrips(dtype, tmp_path):
    values = fb.arange(12).reshape(3, 4).to(dtype)
    if dtype.is_complex:
        values = values + 1j * fb.arange(12).reshape(3, 4).to(dtype)
    _same(values, _roundtrip(values, tmp_path))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@given(shape=st.lists(st.integers(0, 3), max_size=4))
@settings(max_examples=15, deadline=None)
def test_every_shape_roundtrips(dtype, shape):
    # 0-d and empty tensors keep their shape (np.ascontiguousarray once turned 0-d into 1-d)
    values = fb.from_numpy(np.arange(math.prod(shape), dtype=np.float64).reshape(shape)).to(dtype)
    buf = io.BytesIO()
    fb.save({"t": values}, buf)
    buf.seek(0)
    _same(values, fb.load(buf)["t"])


def test_structure_roundtrips(tmp_path):
    obj = {
        "od": OrderedDict([("b", 1), ("a", 2)]),
        "nums": [0, -3, 2**62, 1.5, float("inf"), float("-inf"), float("nan"), True, False, None],
        "tuple": (1, ("x", [2.0])),
        3: "int key", (1, 2): "tuple key", None: "none key", 2.5: "float key",
        "empty": [[], {}, ()],
        "unicode": "héllo ☃",
        "dtype": fb.float16, "device": fb.device("cpu"), "size": fb.Size([2, 3]),
    }
    _same(obj, _roundtrip(obj, tmp_path))


def test_views_and_non_contiguous_saved_as_values(tmp_path):
    base = fb.arange(24, dtype=fb.float32).reshape(4, 6)
    obj = {"t": base.t(), "slice": base[1:3, ::2], "base": base}
    back = _roundtrip(obj, tmp_path)
    for k in obj:
        _same(obj[k], back[k])
    back["base"][0, 0] = 100.0  # views are stored twice: independent after loading
    assert back["slice"][0, 0].item() == 6.0


def test_same_tensor_object_stored_once_and_loaded_as_one(tmp_path):
    t = fb.ones(3)
    back = _roundtrip([t, t, {"again": t}], tmp_path)
    assert back[0] is back[1] is back[2]["again"]
    with open(tmp_path / "obj.safetensors", "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    assert [k for k in header if k != "__metadata__"] == ["0"]


def test_tensor_names_that_clash_stay_distinct(tmp_path):
    obj = {"a.b": fb.ones(1), "a": {"b": fb.zeros(1)}, "__metadata__": fb.ones(2), "a.b#1": fb.ones(3),
           "x": [fb.ones(4)]}
    _same(obj, _roundtrip(obj, tmp_path))


def test_requires_grad_kept(tmp_path):
    t = fb.ones(2, requires_grad=True) if _has_autograd() else fb.ones(2)
    assert _roundtrip(t, tmp_path).requires_grad == t.requires_grad


def _has_autograd():
    try:
        import flambeau.autograd  # noqa: F401
    except ImportError:
        return False
    return True


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    fb.save({"a": fb.arange(3)}, buf)
    buf.seek(0)
    assert fb.load(buf)["a"].tolist() == [0, 1, 2]
    with open(tmp_path / "f.bin", "wb") as f:
        fb.save([1, 2], f)
    with open(tmp_path / "f.bin", "rb") as f:
        assert fb.load(f) == [1, 2]


def test_unsupported_objects_raise_before_writing(tmp_path):
    path = tmp_path / "x.safetensors"
    fb.save({"ok": 1}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match=r"cannot store an object of type .*set at obj\['bad'\]"):
        fb.save({"bad": {1, 2}}, path)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="nested more than"):
        fb.save(loop, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["x.safetensors"]  # no temporary file left behind
    with pytest.raises(ValueError, match="never pickles"):
        fb.save(1, path, pickle_module=pickle)


def test_failed_write_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "c.safetensors"
    fb.save({"v": 1}, path)

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="could not write .*c.safetensors.*No space left on device.*unchanged"):
        fb.save({"v": 2}, path)
    monkeypatch.undo()
    assert fb.load(path) == {"v": 1}
    assert os.listdir(tmp_path) == ["c.safetensors"]


def test_saved_file_mode_is_the_usual_one(tmp_path):
    path = tmp_path / "m.safetensors"
    fb.save(1, path)
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask


def test_safetensors_reads_the_tensors(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "st.safetensors"
    w = fb.arange(6, dtype=fb.float32).reshape(2, 3)
    fb.save({"model": {"w": w, "b": fb.ones(2, dtype=fb.int64)}, "epoch": 3, "c": fb.tensor([1 + 2j])}, path)
    arrays = safetensors_numpy.load_file(str(path))
    assert sorted(arrays) == ["c", "model.b", "model.w"]  # named by their place in the structure
    by_shape = {a.shape: a for a in arrays.values()}
    np.testing.assert_array_equal(by_shape[(2, 3)], np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(by_shape[(2,)], np.ones(2, dtype=np.int64))
    np.testing.assert_array_equal(by_shape[(1, 2)], np.array([[1.0, 2.0]], dtype=np.float32))  # complex: real view


def test_loads_a_plain_safetensors_file(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "plain.safetensors"
    safetensors_numpy.save_file({"x": np.arange(4, dtype=np.int32), "y": np.eye(2, dtype=np.float64)}, str(path))
    out = fb.load(path)
    assert sorted(out) == ["x", "y"]
    assert out["x"].dtype == fb.int32 and out["x"].tolist() == [0, 1, 2, 3]
    assert out["y"].tolist() == [[1.0, 0.0], [0.0, 1.0]]


def _has_backend(name: str) -> bool:
    try:
        fb.plugins.loaded_backend(name)
    except fb.plugins.BackendUnavailable:
        return False
    return True


def test_map_location_forms(tmp_path):
    path = tmp_path / "m.safetensors"
    fb.save({"w": fb.ones(2, 3)}, path)
    assert fb.load(path, map_location=fb.device("cpu"))["w"].device.type == "cpu"
    if _has_backend("meta"):  # core-tensor's own env installs the CPU backend only
        meta = fb.load(path, map_location="meta")["w"]
        assert meta.device.type == "meta" and tuple(meta.shape) == (2, 3)
        assert fb.load(path, map_location={"cpu": "meta"})["w"].device.type == "meta"
    seen = []

    def fn(t, location):
        seen.append(location)
        return t * 2

    assert fb.load(path, map_location=fn)["w"].tolist() == [[2.0] * 3] * 2
    assert seen == ["cpu"]
    with pytest.raises(ValueError, match="map_location should be"):
        fb.load(path, map_location=3)


def test_unknown_saved_device_suggests_map_location(tmp_path):
    path = tmp_path / "d.safetensors"
    fb.save({"w": fb.ones(2)}, path)
    data = bytearray(path.read_bytes())
    (n,) = struct.unpack("<Q", data[:8])
    header = data[8:8 + n].replace(b'\\"device\\":\\"cpu\\"', b'\\"device\\":\\"xla\\"')
    assert header != data[8:8 + n]
    path.write_bytes(bytes(data[:8]) + header + bytes(data[8 + n:]))
    with pytest.raises((RuntimeError, ValueError), match="xla"):
        fb.load(path)
    assert fb.load(path, map_location="cpu")["w"].tolist() == [1.0, 1.0]


@given(st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=3) | st.integers(-5, 5), inner, max_size=3),
    max_leaves=15))
@settings(max_examples=60, deadline=None)
def test_any_plain_structure_roundtrips(obj):
    buf = io.BytesIO()
    fb.save(obj, buf)
    buf.seek(0)
    _same(obj, fb.load(buf))


# -- bad files: a clear error naming the path, never a crash or a huge allocation ------------------

def _header_file(path, header: dict, data: bytes = b"", length: int | None = None):
    head = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head) if length is None else length) + head + data)


def _expect_bad(path, match):
    with pytest.raises(CheckpointError, match=match) as info:
        fb.load(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_foreign_files(tmp_path):
    p = tmp_path / "model.pt"
    p.write_bytes(pickle.dumps({"a": 1}))
    _expect_bad(p, "pickle")
    z = tmp_path / "torch.pt"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps(1))
    _expect_bad(z, "zip archive, as written by torch.save")
    r = tmp_path / "random.bin"
    r.write_bytes(np.random.default_rng(0).bytes(1000))
    _expect_bad(r, "not a readable flambeau checkpoint")
    e = tmp_path / "empty"
    e.write_bytes(b"")
    _expect_bad(e, "fewer than the 8")
    with pytest.raises(FileNotFoundError):
        fb.load(tmp_path / "missing")


def test_truncated_file(tmp_path):
    p = tmp_path / "t.safetensors"
    fb.save({"w": fb.ones(100)}, p)
    data = p.read_bytes()
    for cut in (4, 12, len(data) - 1):
        p.write_bytes(data[:cut])
        _expect_bad(p, "truncated|fewer than")


def test_header_claiming_more_than_the_file(tmp_path):
    p = tmp_path / "h.safetensors"
    _header_file(p, {}, length=2**63)
    _expect_bad(p, "header length field says")
    _header_file(p, {}, length=5000)
    _expect_bad(p, "has only")


def test_bad_offsets_and_dtypes(tmp_path):
    p = tmp_path / "o.safetensors"
    _header_file(p, {"a": {"dtype": "F32", "shape": [2], "data_offsets": [-8, 0]}}, b"\0" * 8)
    _expect_bad(p, "data_offsets")
    _header_file(p, {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                     "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12)
    _expect_bad(p, "overlapping")
    _header_file(p, {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}, b"\0" * 8)
    _expect_bad(p, "needs 16 bytes")
    _header_file(p, {"a": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 8]}}, b"\0" * 8)
    _expect_bad(p, "needs")
    _header_file(p, {"a": {"dtype": "Q99", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8)
    _expect_bad(p, "dtype 'Q99'")
    _header_file(p, {"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, b"\0" * 8)
    _expect_bad(p, "shape")
    _header_file(p, {"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8)
    _expect_bad(p, "cover 4 bytes of data but the file has 8")


def test_deeply_nested_json(tmp_path):
    p = tmp_path / "deep.safetensors"
    deep = "[" * 100_000 + "]" * 100_000
    head = ('{"__metadata__": {"format": "flambeau", "flambeau.version": "1", "flambeau.structure": '
            + json.dumps(deep) + "}}").encode()
    p.write_bytes(struct.pack("<Q", len(head)) + head)
    _expect_bad(p, "nested too deeply|untagged")
    head = ("{" + '"a":{' * 100_000 + "}" * 100_001).encode()
    p.write_bytes(struct.pack("<Q", len(head)) + head)
    _expect_bad(p, "nested too deeply")
    nested = {"$t": "list", "v": []}
    for _ in range(300):  # above MAX_DEPTH (200), below Python's recursion limit
        nested = {"$t": "list", "v": [nested]}
    head = json.dumps({"__metadata__": {"format": "flambeau", "flambeau.version": "1",
                                        "flambeau.structure": json.dumps(nested)}}).encode()
    p.write_bytes(struct.pack("<Q", len(head)) + head)
    _expect_bad(p, "nested more than")


def test_structure_referring_to_missing_tensor_or_unknown_tag(tmp_path):
    p = tmp_path / "s.safetensors"
    for structure, match in ((({"$t": "tensor", "key": "7", "dtype": "float32"}), "does not hold"),
                             ({"$t": "pickle", "v": "cos\nsystem"}, "unknown type 'pickle'"),
                             ({"$t": "float", "v": "1e999"}, "float node")):
        _header_file(p, {"__metadata__": {"format": "flambeau", "flambeau.version": "1",
                                          "flambeau.structure": json.dumps(structure)}})
        _expect_bad(p, match)
