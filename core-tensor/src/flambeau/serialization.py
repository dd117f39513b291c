"""``flambeau.save`` and ``flambeau.load``: checkpoints as safetensors files, never pickles.

The file is a plain safetensors file (https://github.com/huggingface/safetensors, format version 1):
8 bytes of little-endian header length, a JSON header naming each tensor's dtype, shape and byte
range, then the raw little-endian bytes. The structure around the tensors (dicts, lists, tuples,
numbers, strings, ``None``) is JSON too, in the header's ``__metadata__`` under
``"flambeau.structure"``; each tensor appears in it as a reference to a header entry. Loading parses
JSON and copies bytes: nothing in a file is ever executed. safetensors' own tools read the tensors
(complex tensors are stored as their real view with a trailing dimension of 2, since safetensors
has no complex128; flambeau puts the dtype back).

- Tensors are named by their place in the structure (`model.0.weight`). The same tensor object
  referenced twice is stored once and loaded as one object; two different
  tensors that share memory (views of one another) are stored twice, as their values, and load as
  independent tensors.
- Writes to a path are atomic: a temporary file in the same folder, fsync, rename. A file object
  receives the whole file in one write, after everything has been encoded.
- A truncated, corrupted or foreign file (a pickle, a ``torch.save`` zip, anything else) raises
  :class:`flambeau.serialization.CheckpointError` (a ``RuntimeError``) naming the path.
"""
from __future__ import annotations

import json
import math
import os
import struct
import tempfile
from collections import OrderedDict
from typing import IO, Any, Callable, Union

import numpy as np

__all__ = ["CheckpointError", "load", "save"]

FILE_LIKE = Union[str, os.PathLike, IO[bytes]]

FORMAT = "flambeau"
FORMAT_VERSION = "1"
# safetensors' own readers refuse headers above 100 MB; so do we, before allocating anything.
MAX_HEADER_BYTES = 100_000_000
# Deeper structures are refused on save and load (JSON this deep is an attack, not a checkpoint).
MAX_DEPTH = 200

# flambeau dtype name -> safetensors dtype string (complex: stored as the real view, see above).
_ST_DTYPE = {
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
    "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64",
    "complex64": "F32", "complex128": "F64",
}
_FROM_ST = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
            "F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64"}
_ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "I32": 4, "I64": 8, "F16": 2, "BF16": 2, "F32": 4, "F64": 8}


class CheckpointError(RuntimeError):
    """A file that flambeau.load cannot read as a checkpoint: truncated, corrupted or of another format."""


def _describe(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<file object {type(f).__name__}>"


# -- encoding -------------------------------------------------------------------------------------

class _Encoder:
    """Turns ``obj`` into JSON-able data, collecting its tensors as numpy arrays."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.dtypes: dict[str, str] = {}
        self.by_id: dict[int, str] = {}
        self.keep: list[Any] = []  # keeps the tensors alive so that their ids stay unique

    def encode(self, obj: Any, where: str, depth: int = 0, path: tuple[str, ...] = ()) -> Any:
        import flambeau

        if depth > MAX_DEPTH:
            raise ValueError(f"flambeau.save: the object is nested more than {MAX_DEPTH} levels deep at {where} "
                             "(a container that contains itself?)")
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$t": "float", "v": repr(obj)}
        if isinstance(obj, flambeau.Tensor):
            return self._tensor(obj, where, path)
        if isinstance(obj, flambeau.dtype):
            return {"$t": "dtype", "v": obj.name}
        if isinstance(obj, flambeau.device):
            return {"$t": "device", "v": str(obj)}
        if isinstance(obj, flambeau.Size):
            return {"$t": "size", "v": [int(s) for s in obj]}
        if isinstance(obj, dict):
            tag = "odict" if isinstance(obj, OrderedDict) else "dict"
            if type(obj) not in (dict, OrderedDict):
                raise TypeError(f"flambeau.save cannot store a {type(obj).__qualname__} at {where}: only dict and "
                                "OrderedDict mappings are stored (convert it with dict(...))")
            keys = [self._key(k, where) for k in obj]
            values = [self.encode(v, f"{where}[{k!r}]", depth + 1, (*path, str(k))) for k, v in obj.items()]
            return {"$t": tag, "k": keys, "v": values}
        if type(obj) in (list, tuple):
            items = [self.encode(v, f"{where}[{i}]", depth + 1, (*path, str(i))) for i, v in enumerate(obj)]
            return {"$t": type(obj).__name__, "v": items}
        raise TypeError(f"flambeau.save cannot store an object of type {type(obj).__module__}.{type(obj).__qualname__} "
                        f"at {where}: it stores tensors, dicts, lists, tuples, numbers, strings, bools and None "
                        "(never pickled objects)")

    def _key(self, key: Any, where: str) -> Any:
        if key is None or isinstance(key, (bool, int, str)):
            return key
        if isinstance(key, float):
            return key if math.isfinite(key) else {"$t": "float", "v": repr(key)}
        if type(key) is tuple:
            return {"$t": "tuple", "v": [self._key(k, where) for k in key]}
        raise TypeError(f"flambeau.save cannot store a dict key of type {type(key).__qualname__} at {where}")

    def _tensor(self, t: Any, where: str, path: tuple[str, ...]) -> dict:
        if t.device.type == "meta":
            raise ValueError(f"flambeau.save cannot store the meta tensor at {where}: it has no data")
        key = self.by_id.get(id(t))
        if key is None:
            # named by its place in the structure ("model.0.weight"), so that safetensors' tools
            # show useful names; a clash (a dict key containing dots) gets a suffix
            base = key = ".".join(path) or "tensor"
            n = 1
            while key == "__metadata__" or key in self.arrays:
                key, n = f"{base}#{n}", n + 1
            # np.asarray(order="C"), not np.ascontiguousarray, which makes 0-d arrays 1-d
            host = np.asarray(t._host(), order="C")
            if t.is_complex():
                # (..., 1) first: numpy cannot change the itemsize of a 0-d array's dtype
                host = host.reshape(*host.shape, 1).view(host.real.dtype)
            if host.dtype.byteorder == ">":
                host = host.astype(host.dtype.newbyteorder("<"))
            self.arrays[key] = host
            self.dtypes[key] = t.dtype.name
            self.by_id[id(t)] = key
            self.keep.append(t)
        entry = {"$t": "tensor", "key": key, "dtype": t.dtype.name, "device": str(t.device)}
        if t.requires_grad:
            entry["requires_grad"] = True
        cls = type(t)
        if cls.__name__ == "Parameter" and cls.__module__.startswith("flambeau.nn"):
            entry["parameter"] = True
        return entry


def _file_bytes(obj: Any) -> bytes:
    enc = _Encoder()
    structure = enc.encode(obj, "obj")
    header: dict[str, Any] = {"__metadata__": {
        "format": FORMAT, "flambeau.version": FORMAT_VERSION,
        "flambeau.structure": json.dumps(structure, allow_nan=False, separators=(",", ":")),
    }}
    offset = 0
    for key, arr in enc.arrays.items():
        header[key] = {"dtype": _ST_DTYPE[enc.dtypes[key]], "shape": list(arr.shape),
                       "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)  # safetensors pads the header so that the data starts aligned
    parts = [struct.pack("<Q", len(head)), head]
    parts.extend(arr.tobytes() for arr in enc.arrays.values())
    return b"".join(parts)


def save(obj: Any, f: FILE_LIKE, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    r"""Save ``obj`` (tensors, state dicts, and dicts, lists and tuples of them with numbers and strings) to ``f``.

    The file is a safetensors file: the tensors as safetensors entries, the structure as JSON in
    its metadata; nothing is pickled, so any object of another type raises :class:`TypeError`
    before anything is written.

    Args:
        obj: what to save.
        f: a path (``str`` or ``os.PathLike``), written atomically through a temporary file in the
            same folder (``fsync``, then rename), or a binary file object, which gets the whole
            file in one ``write``.
        pickle_module, pickle_protocol, _use_new_zipfile_serialization: accepted for PyTorch's
            signature; flambeau never pickles, so ``pickle_module`` must be ``None``.

    Example::

        >>> flambeau.save({"w": flambeau.ones(2), "epoch": 3}, "ckpt.fb")
        >>> flambeau.load("ckpt.fb")
        {'w': tensor([1., 1.]), 'epoch': 3}
    """
    if pickle_module is not None:
        raise ValueError("flambeau.save never pickles: pickle_module must be None")
    data = _file_bytes(obj)
    if isinstance(f, (str, os.PathLike)):
        _write_atomic(os.fspath(f), data)
        return
    if not hasattr(f, "write"):
        raise TypeError(f"flambeau.save expects a path or a binary file object, got {type(f).__name__}")
    f.write(data)
    flush = getattr(f, "flush", None)
    if flush is not None:
        flush()
    try:
        os.fsync(f.fileno())
    except (AttributeError, OSError, ValueError):  # BytesIO and other objects without a descriptor
        pass


def _write_atomic(path: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"flambeau.save: {path!r} is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise OSError(e.errno, f"flambeau.save could not create a file in {folder!r} for {path!r}: {e.strerror}") from e
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; a saved file gets the usual mode
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OSError(e.errno, f"flambeau.save could not write {path!r}: {e.strerror}; "
                                   "any previous file there is unchanged") from e
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


# -- decoding -------------------------------------------------------------------------------------

def _foreign(data: bytes) -> str | None:
    """A hint for files of a known other format."""
    if data[:4] == b"PK\x03\x04":
        return ("it is a zip archive, as written by torch.save; flambeau.load reads safetensors files only and "
                "never unpickles (load it with PyTorch and save its tensors with safetensors)")
    if data[:1] == b"\x80" and len(data) > 1 and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "it is a Python pickle; flambeau.load never unpickles, since that can run code from the file"
    if data[:6] == b"\x93NUMPY":
        return "it is a numpy .npy file (load it with numpy.load)"
    return None


def _parse(data: bytes | bytearray | memoryview, name: str) -> tuple[dict, dict[str, tuple], int]:
    """Validate the safetensors layout: (metadata, {key: (st_dtype, shape, begin, end)}, data start)."""
    def bad(msg: str) -> CheckpointError:
        hint = _foreign(bytes(data[:8]))
        return CheckpointError(f"{name} is not a readable flambeau checkpoint: {hint or msg}")

    if len(data) < 8:
        raise bad(f"the file has {len(data)} bytes, fewer than the 8 of a safetensors header length (truncated?)")
    (n,) = struct.unpack("<Q", bytes(data[:8]))
    if n > MAX_HEADER_BYTES:
        raise bad(f"its header length field says {n} bytes, more than the {MAX_HEADER_BYTES} allowed")
    if 8 + n > len(data):
        raise bad(f"its header length field says {n} bytes but the file has only {len(data) - 8} after it (truncated?)")
    raw = bytes(data[8:8 + n])
    if not raw.startswith(b"{"):
        raise bad("its header is not a JSON object")
    try:
        header = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise bad("its header is nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise bad(f"its header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    metadata = header.pop("__metadata__", {}) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise bad("its __metadata__ is not a mapping of strings to strings")
    body = len(data) - 8 - n
    entries: dict[str, tuple[str, list[int], int, int]] = {}
    for key, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise bad(f"tensor {key!r} is not described by exactly dtype, shape and data_offsets")
        st, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if st not in _ITEMSIZE:
            raise bad(f"tensor {key!r} has dtype {st!r}, which flambeau does not know")
        if (not isinstance(shape, list) or len(shape) > 64
                or not all(type(s) is int and s >= 0 for s in shape)):
            raise bad(f"tensor {key!r} has shape {shape!r}, not a list of non-negative integers")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(type(o) is int for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= body):
            raise bad(f"tensor {key!r} has data_offsets {offsets!r} outside the {body} bytes of data (truncated?)")
        expected = math.prod(shape) * _ITEMSIZE[st]
        if offsets[1] - offsets[0] != expected:
            raise bad(f"tensor {key!r} of dtype {st} and shape {shape} needs {expected} bytes, but its data_offsets "
                      f"span {offsets[1] - offsets[0]}")
        entries[key] = (st, shape, offsets[0], offsets[1])
    # As safetensors' own validator: the tensors tile the data without gaps or overlaps.
    position = 0
    for key, (_, _, begin, end) in sorted(entries.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        if begin != position:
            raise bad(f"tensor {key!r} starts at byte {begin} of the data, expected {position} (overlapping or "
                      "missing data)")
        position = end
    if position != body:
        raise bad(f"the tensors cover {position} bytes of data but the file has {body} (truncated or trailing data?)")
    return metadata, entries, 8 + n


def _location_fn(map_location: Any) -> Callable[[str], str]:
    """``fn(saved_location) -> target location`` for map_location's non-callable forms."""
    import flambeau

    if map_location is None:
        return lambda loc: loc
    if isinstance(map_location, (str, flambeau.device)):
        target = str(flambeau.device(map_location))
        return lambda loc: target
    if isinstance(map_location, dict):
        table = {str(k): str(v) for k, v in map_location.items()}
        return lambda loc: table.get(loc, loc)
    raise ValueError(f"map_location should be a str, a flambeau.device, a dict or a callable, got {map_location!r}")


class _Decoder:
    def __init__(self, data: Any, entries: dict, start: int, name: str, map_location: Any) -> None:
        self.data, self.entries, self.start, self.name = data, entries, start, name
        self.user_fn = map_location if callable(map_location) and not isinstance(map_location, type) else None
        self.locate = None if self.user_fn is not None else _location_fn(map_location)
        self.loaded: dict[str, Any] = {}

    def bad(self, msg: str) -> CheckpointError:
        return CheckpointError(f"{self.name} is not a readable flambeau checkpoint: {msg}")

    def decode(self, node: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise self.bad(f"its structure is nested more than {MAX_DEPTH} levels deep")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):  # structures write lists as tagged objects; a bare one is corrupt
            raise self.bad("its structure holds an untagged list")
        if not isinstance(node, dict) or not isinstance(node.get("$t"), str):
            raise self.bad(f"its structure holds an unknown node {str(node)[:80]!r}")
        tag = node["$t"]
        value = node.get("v")
        if tag in ("list", "tuple"):
            if not isinstance(value, list):
                raise self.bad(f"a {tag} node has no list of values")
            items = [self.decode(v, depth + 1) for v in value]
            return items if tag == "list" else tuple(items)
        if tag in ("dict", "odict"):
            keys = node.get("k")
            if not isinstance(keys, list) or not isinstance(value, list) or len(keys) != len(value):
                raise self.bad(f"a {tag} node's keys and values do not match")
            pairs = [(self.decode(k, depth + 1), self.decode(v, depth + 1)) for k, v in zip(keys, value)]
            try:
                return OrderedDict(pairs) if tag == "odict" else dict(pairs)
            except TypeError:
                raise self.bad("a dict node has a key that cannot be hashed") from None
        if tag == "float":
            if value not in ("inf", "-inf", "nan"):
                raise self.bad(f"a float node holds {value!r}")
            return float(value)
        if tag == "dtype":
            from ._dtypes import _BY_NAME

            if value not in _BY_NAME:
                raise self.bad(f"it names an unknown dtype {value!r}")
            return _BY_NAME[value]
        if tag == "device":
            import flambeau

            return flambeau.device(str(value))
        if tag == "size":
            import flambeau

            if not isinstance(value, list) or not all(type(s) is int and s >= 0 for s in value):
                raise self.bad("a size node holds something other than non-negative integers")
            return flambeau.Size(value)
        if tag == "tensor":
            return self.tensor(node)
        raise self.bad(f"its structure holds a node of unknown type {tag!r}")

    def tensor(self, node: dict) -> Any:
        from ._dtypes import _BY_NAME

        key, dtype_name = node.get("key"), node.get("dtype")
        if key not in self.entries:
            raise self.bad(f"its structure refers to a tensor {key!r} that the file does not hold")
        if key in self.loaded:
            return self.loaded[key]
        st, shape, begin, end = self.entries[key]
        dt = _BY_NAME.get(dtype_name) if isinstance(dtype_name, str) else None
        if dt is None or _ST_DTYPE[dt.name] != st or (dt.is_complex and (not shape or shape[-1] != 2)):
            raise self.bad(f"tensor {key!r} is stored as {st} with shape {shape}, which cannot hold a {dtype_name}")
        location = str(node.get("device", "cpu"))
        out = self._materialise(key, dt, shape, begin, end, location)
        if node.get("requires_grad"):
            if not (dt.is_floating_point or dt.is_complex):
                raise self.bad(f"tensor {key!r} of dtype {dt.name} is marked requires_grad")
            out.requires_grad_(True)
        if node.get("parameter"):
            try:
                from flambeau.nn import Parameter

                out = Parameter(out, requires_grad=out.requires_grad)
            except ImportError:
                pass  # without flambeau-nn a Parameter loads as a plain tensor
        self.loaded[key] = out
        return out

    def _materialise(self, key: str, dt: Any, shape: list[int], begin: int, end: int, location: str) -> Any:
        import flambeau

        real_shape = shape[:-1] if dt.is_complex else shape
        if self.user_fn is not None:
            # PyTorch's callable form: fn(tensor on the CPU, saved location) -> the tensor to use, a
            # device, or None to keep the CPU tensor
            cpu = self._cpu_tensor(dt, real_shape, begin, end)
            target = self.user_fn(cpu, location)
            if target is None or isinstance(target, flambeau.Tensor):
                return cpu if target is None else target
        else:
            target = self.locate(location)  # type: ignore[misc]
            cpu = None
        try:
            device = flambeau.device(target)
        except Exception:
            raise ValueError(f"map_location gave {target!r} for tensor {key!r}, not a device") from None
        if device.type == "meta":
            return flambeau.empty(real_shape, dtype=dt, device="meta")
        if cpu is None:
            cpu = self._cpu_tensor(dt, real_shape, begin, end)
        if device.type == "cpu":
            return cpu
        try:
            return cpu.to(device)
        except Exception as e:
            raise RuntimeError(f"flambeau.load: {self.name} holds a tensor saved on {location!r}, which cannot be "
                               f"restored on {str(device)!r} here ({e}); pass map_location='cpu' to load it on the "
                               "CPU") from e

    def _cpu_tensor(self, dt: Any, shape: list[int], begin: int, end: int) -> Any:
        import flambeau

        raw = np.frombuffer(self.data, dtype=np.uint8, count=end - begin, offset=self.start + begin)
        stored = dt.to_real().numpy_dtype if dt.is_complex else dt.numpy_dtype
        arr = raw.view(stored.newbyteorder("<"))
        arr = arr.astype(stored, copy=True)  # owned, aligned, in native byte order
        if dt.is_complex:
            arr = arr.view(dt.numpy_dtype)
        return flambeau.from_numpy(arr.reshape(shape))


def load(f: FILE_LIKE, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = True,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    r"""Load an object saved with :func:`flambeau.save` (or the tensors of any safetensors file).

    Nothing in the file is ever executed: the structure is JSON and the tensors are raw bytes, so
    ``weights_only`` is always effectively ``True`` (``False`` is accepted and changes nothing).
    A safetensors file written by another tool loads as a dict of its tensors, in file order.

    Args:
        f: a path or a binary file object.
        map_location: where the tensors go: ``None`` (where they were saved), a device or its name
            (``"cpu"``, ``"meta"``: shapes and dtypes only), a dict mapping saved locations to new
            ones (``{"cuda:0": "cpu"}``), or a callable ``fn(tensor, location)`` that gets each
            tensor on the CPU and its saved location (a string) and returns the tensor to use, or a
            device, or ``None`` to keep it on the CPU.

    Raises:
        CheckpointError: (a ``RuntimeError``) the file is truncated, corrupted or of another format;
            the message names the path.
    """
    if pickle_module is not None:
        raise ValueError("flambeau.load never unpickles: pickle_module must be None")
    if pickle_load_args:
        raise TypeError(f"flambeau.load got unexpected keyword arguments {sorted(pickle_load_args)}")
    name = _describe(f)
    if isinstance(f, (str, os.PathLike)):
        with open(os.fspath(f), "rb") as fh:
            data = fh.read()
    elif hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"flambeau.load expects a binary file object; {name} returned {type(data).__name__}")
    else:
        raise TypeError(f"flambeau.load expects a path or a binary file object, got {type(f).__name__}")
    metadata, entries, start = _parse(data, name)
    decoder = _Decoder(data, entries, start, name, map_location)
    if metadata.get("format") != FORMAT:
        # a safetensors file from another tool: its tensors by name, as safetensors' load_file
        return OrderedDict((key, decoder.tensor({"key": key, "dtype": _FROM_ST[entries[key][0]]}))
                           for key in entries)
    version = metadata.get("flambeau.version")
    if version != FORMAT_VERSION:
        raise CheckpointError(f"{name} was written by a flambeau checkpoint format version {version!r}; this "
                              f"flambeau reads version {FORMAT_VERSION}")
    try:
        structure = json.loads(metadata.get("flambeau.structure", "null"))
    except RecursionError:
        raise decoder.bad("its structure is nested too deeply") from None
    except ValueError as e:
        raise decoder.bad(f"its structure is not valid JSON ({e})") from None
    try:
        return decoder.decode(structure)
    except RecursionError:
        raise decoder.bad("its structure is nested too deeply") from None
