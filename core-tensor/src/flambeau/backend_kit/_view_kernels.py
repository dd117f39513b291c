"""The core tier's view kernels: shape, element strides and offset over the input's storage.

They do stride arithmetic only, on the host, so they are the same for every array module; the
backend's :class:`~flambeau.backend_kit.ArrayStorage` builds the views. Dims arrive as the user wrote
them (negative ones too): the op's meta function has checked them, not normalised them.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._storage import ArrayStorage
from ._strides import contiguous_strides, view_strides

#: The view ops, in the core tier.
VIEW_OPS = ("_conj", "view", "as_strided", "basic_index", "expand", "permute", "transpose", "squeeze", "unsqueeze",
            "select", "unfold", "view_as_real", "view_as_complex")


def make_view_kernels(storage: ArrayStorage) -> dict[str, Callable[..., Any]]:
    """The view kernels over ``storage``."""
    strides_of, offset_of, strided = storage.strides_of, storage.offset_of, storage.strided

    def view_of(x, shape, strides, offset=None):
        return strided(x, shape, strides, offset_of(x) if offset is None else offset)

    def view(input, size):
        shape = list(size)
        if -1 in shape:
            known = 1
            for s in shape:
                known *= s if s != -1 else 1
            shape[shape.index(-1)] = input.size // known if known else 0
        shape = tuple(shape)
        if input.size == 0 or shape == input.shape:
            return view_of(input, shape, contiguous_strides(shape) if shape != input.shape else strides_of(input))
        return view_of(input, shape, view_strides(input.shape, strides_of(input), shape))

    def as_strided(input, size, stride, storage_offset):
        return view_of(input, tuple(size), tuple(stride), storage_offset)

    def transpose(input, dim0, dim1):
        if input.ndim == 0:
            return view_of(input, (), ())
        perm = list(range(input.ndim))
        d0, d1 = dim0 % input.ndim, dim1 % input.ndim
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return permute(input, perm)

    def permute(input, dims):
        shape, strides = input.shape, strides_of(input)
        dims = [d % input.ndim for d in dims] if input.ndim else []
        return view_of(input, tuple(shape[d] for d in dims), tuple(strides[d] for d in dims))

    def expand(input, size):
        offset = len(size) - input.ndim
        strides = strides_of(input)
        shape, out = [], []
        for i, s in enumerate(size):
            j = i - offset
            own = input.shape[j] if j >= 0 else 1
            n = own if s == -1 else s
            shape.append(n)
            out.append(strides[j] if j >= 0 and own == n else 0)
        return view_of(input, tuple(shape), tuple(out))

    def squeeze(input, dim):
        if input.ndim == 0:
            return view_of(input, (), ())
        if dim is None:
            dims = set(range(input.ndim))
        else:
            dims = {d % input.ndim for d in ((dim,) if isinstance(dim, int) else dim)}
        strides = strides_of(input)
        keep = [i for i in range(input.ndim) if not (i in dims and input.shape[i] == 1)]
        return view_of(input, tuple(input.shape[i] for i in keep), tuple(strides[i] for i in keep))

    def unsqueeze(input, dim):
        d = dim % (input.ndim + 1)
        shape, strides = list(input.shape), list(strides_of(input))
        new = shape[d] * strides[d] if d < input.ndim else 1  # PyTorch's stride for the new dim
        return view_of(input, tuple(shape[:d] + [1] + shape[d:]), tuple(strides[:d] + [new] + strides[d:]))

    def select(input, dim, index):
        d = dim % input.ndim
        i = index % input.shape[d]
        strides = strides_of(input)
        return view_of(input, input.shape[:d] + input.shape[d + 1:], strides[:d] + strides[d + 1:],
                       offset_of(input) + i * strides[d])

    def basic_index(input, index):
        """``input[index]`` for a tuple of ints, slices (positive steps) and None, left to right."""
        shape, strides = list(input.shape), list(strides_of(input))
        offset = offset_of(input)
        out_shape, out_strides, d = [], [], 0
        for i in index:
            if i is None:
                out_shape.append(1)
                out_strides.append(shape[d] * strides[d] if d < len(shape) else 1)
            elif isinstance(i, slice):
                start, stop, step = i.indices(shape[d])
                out_shape.append(len(range(start, stop, step)))
                out_strides.append(strides[d] * step)
                offset += start * strides[d] if out_shape[-1] else 0
                d += 1
            else:
                offset += (i % shape[d]) * strides[d]
                d += 1
        return view_of(input, tuple(out_shape + shape[d:]), tuple(out_strides + strides[d:]), offset)

    def unfold(input, dimension, size, step):
        if input.ndim == 0:
            return view_of(input, (size,), (1,))
        d = dimension % input.ndim
        shape, strides = list(input.shape), list(strides_of(input))
        count = (shape[d] - size) // step + 1
        inner = strides[d]
        shape[d], strides[d] = count, strides[d] * step
        return view_of(input, tuple(shape) + (size,), tuple(strides) + (inner,))

    def view_as_real(input):
        real = np.dtype(np.float32 if input.dtype == np.complex64 else np.float64)
        strides = tuple(2 * s for s in strides_of(input)) + (1,)
        return strided(input, input.shape + (2,), strides, 2 * offset_of(input), real)

    def view_as_complex(input):
        cplx = np.result_type(input.dtype, np.complex64)
        strides = tuple(s // 2 for s in strides_of(input)[:-1])
        return strided(input, input.shape[:-1], strides, offset_of(input) // 2, cplx)

    def _conj(input):
        # the conjugate bit lives on the Tensor: the kernel only gives a new view of the same elements
        return view_of(input, input.shape, strides_of(input))

    kernels = dict(_conj=_conj, view=view, as_strided=as_strided, basic_index=basic_index, expand=expand,
                   permute=permute, transpose=transpose, squeeze=squeeze, unsqueeze=unsqueeze, select=select,
                   unfold=unfold, view_as_real=view_as_real, view_as_complex=view_as_complex)
    return kernels
