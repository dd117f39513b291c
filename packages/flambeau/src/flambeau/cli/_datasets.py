"""The data sets of ``flambeau train``: the bundled 8x8 digits, and MNIST-format IDX files from disk.

Both give numpy arrays ``(images float32 in [0, 1], labels int64)``; the caller makes tensors.
"""
from __future__ import annotations

import gzip
import math
import os
from dataclasses import dataclass
from importlib import resources

import numpy as np

__all__ = ["DataError", "Split", "digits", "idx_folder", "read_idx"]


class DataError(ValueError):
    """A data file that cannot be used; the message names the file and what is wrong with it."""


@dataclass
class Split:
    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    name: str

    @property
    def num_features(self) -> int:
        return int(math.prod(self.train_x.shape[1:]))

    @property
    def num_classes(self) -> int:
        return int(max(self.train_y.max(initial=0), self.test_y.max(initial=0))) + 1


# The held-out split of the digits is fixed (not drawn from --seed), so that every run is scored
# on the same 20% of the images.
DIGITS_TEST_FRACTION = 0.2
DIGITS_SPLIT_SEED = 0


def digits() -> Split:
    """The 1,797 8x8 digits bundled with flambeau (scikit-learn's copy; see data/DIGITS_LICENSE.txt).

    Pixels are scaled from 0..16 to [0, 1]; 20% of the images, chosen once with a fixed seed, are
    the test split.
    """
    raw = resources.files("flambeau.cli").joinpath("data/digits.csv.gz").read_bytes()
    table = np.loadtxt(gzip.decompress(raw).decode("ascii").splitlines(), delimiter=",", dtype=np.int64)
    if table.shape != (1797, 65):
        raise DataError(f"the bundled digits have shape {table.shape}, expected (1797, 65)")
    x = (table[:, :64].astype(np.float32) / 16.0).reshape(-1, 8, 8)
    y = table[:, 64]
    order = np.random.default_rng(DIGITS_SPLIT_SEED).permutation(len(y))
    n_test = int(round(len(y) * DIGITS_TEST_FRACTION))
    test, train = order[:n_test], order[n_test:]
    return Split(x[train], y[train], x[test], y[test], "digits 8x8 (bundled)")


# IDX: 2 zero bytes, a type code, the number of dimensions, then each dimension as a big-endian
# 32-bit integer, then the values, big-endian, row-major (http://yann.lecun.com/exdb/mnist/).
_IDX_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
              0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def read_idx(path: str) -> np.ndarray:
    """Read one IDX file (gzip-compressed or not), checking its magic number, dimensions and size."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except OSError as e:
        raise DataError(f"{path}: cannot be read ({e.strerror})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise DataError(f"{path}: a damaged gzip file ({e})") from None
    if len(data) < 4:
        raise DataError(f"{path}: {len(data)} bytes, too short for an IDX file (4-byte magic number first)")
    if data[0] != 0 or data[1] != 0 or data[2] not in _IDX_TYPES:
        raise DataError(f"{path}: not an IDX file (magic number {data[:4].hex()}; expected 0000 then a type code "
                        f"among {', '.join(f'{c:02x}' for c in _IDX_TYPES)} and the number of dimensions)")
    dtype, ndim = _IDX_TYPES[data[2]], data[3]
    if ndim == 0:
        raise DataError(f"{path}: an IDX file with 0 dimensions")
    head = 4 + 4 * ndim
    if len(data) < head:
        raise DataError(f"{path}: truncated in its header ({len(data)} bytes; {ndim} dimensions need {head})")
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    expected = head + math.prod(shape) * dtype.itemsize
    if len(data) != expected:
        raise DataError(f"{path}: {len(data)} bytes, but its header (shape {shape}, {dtype.itemsize}-byte values) "
                        f"says {expected}" + (" (truncated?)" if len(data) < expected else ""))
    return np.frombuffer(data, dtype=dtype, offset=head).reshape(shape).astype(dtype.newbyteorder("="))


_MNIST_FILES = {
    "train_x": "train-images-idx3-ubyte", "train_y": "train-labels-idx1-ubyte",
    "test_x": "t10k-images-idx3-ubyte", "test_y": "t10k-labels-idx1-ubyte",
}


def _find(folder: str, stem: str) -> str:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    raise DataError(f"{os.path.join(folder, stem)}: no such file (nor {stem}.gz); --data expects a folder with "
                    f"MNIST's four IDX files: {', '.join(_MNIST_FILES.values())}")


def idx_folder(folder: str) -> Split:
    """MNIST-format data from ``folder``: its train and t10k images and labels (IDX, optionally .gz)."""
    if not os.path.exists(folder):
        raise DataError(f"{folder}: no such folder")
    if not os.path.isdir(folder):
        raise DataError(f"{folder}: not a folder; --data expects a folder with MNIST's four IDX files")
    arrays = {}
    for key, stem in _MNIST_FILES.items():
        path = _find(folder, stem)
        arr = read_idx(path)
        if key.endswith("_x") and arr.ndim < 2:
            raise DataError(f"{path}: images need at least 2 dimensions (count, ...), the file has shape {arr.shape}")
        if key.endswith("_y"):
            if arr.ndim != 1:
                raise DataError(f"{path}: labels need 1 dimension, the file has shape {arr.shape}")
            if arr.dtype.kind == "f" or arr.min(initial=0) < 0:
                raise DataError(f"{path}: labels must be non-negative integers")
        arrays[key] = (path, arr)
    for part in ("train", "test"):
        (xp, x), (yp, y) = arrays[f"{part}_x"], arrays[f"{part}_y"]
        if len(x) != len(y):
            raise DataError(f"{yp}: {len(y)} labels for the {len(x)} images of {xp}")
        if len(x) == 0:
            raise DataError(f"{xp}: no images")
    if arrays["train_x"][1].shape[1:] != arrays["test_x"][1].shape[1:]:
        raise DataError(f"{arrays['test_x'][0]}: images of shape {arrays['test_x'][1].shape[1:]}, but the training "
                        f"images have shape {arrays['train_x'][1].shape[1:]}")

    def scaled(arr: np.ndarray) -> np.ndarray:
        if arr.dtype.kind == "u" and arr.dtype.itemsize == 1:
            return arr.astype(np.float32) / 255.0
        return arr.astype(np.float32)

    return Split(scaled(arrays["train_x"][1]), arrays["train_y"][1].astype(np.int64),
                 scaled(arrays["test_x"][1]), arrays["test_y"][1].astype(np.int64), f"IDX files in {folder}")
