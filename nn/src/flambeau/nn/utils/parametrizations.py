"""Parametrizations built on :mod:`flambeau.nn.utils.parametrize`: ``weight_norm`` and ``spectral_norm``."""
from __future__ import annotations


import flambeau
from flambeau import Tensor

from ..modules.module import Module
from . import _norms, parametrize

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


class _WeightNorm(Module):
    """``g * v / ||v||`` from ``(g, v)``; ``right_inverse`` splits a weight into its ``(g, v)``."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _norms.weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norms.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    r"""Parametrize ``module.<name>`` as ``g * v / ||v||``, with g in
    ``module.parametrizations.<name>.original0`` and v in ``...original1`` (PyTorch's layout and state-dict
    keys); the norm is taken over every dimension but ``dim`` (``None``: over the whole tensor)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        ndim = weight.ndim
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        if ndim > 1:
            with flambeau.no_grad():
                mat = _norms.reshape_to_matrix(weight, self.dim)
                h, w = mat.shape
                u = _norms.normalize(flambeau.empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1), eps)
                v = _norms.normalize(flambeau.empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1), eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            _norms.power_iteration(mat, self._u, self._v, 15, eps)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return _norms.normalize(weight, self.eps)
        mat = _norms.reshape_to_matrix(weight, self.dim)
        if self.training:
            _norms.power_iteration(mat.detach(), self._u, self._v, self.n_power_iterations, self.eps)
        u, v = self._u.clone(), self._v.clone()
        sigma = flambeau.vdot(u, mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    r"""Parametrize ``module.<name>`` as itself divided by its spectral norm (estimated by power iteration,
    refined at every access in training mode)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


class _Orthogonal(Module):
    """An orthogonal matrix (or the first columns of one) from an unconstrained one: the exponential or the
    Cayley transform of the skew-symmetric part ``A = tril(X) - tril(X)^H``, or the product of the
    Householder reflectors stored below X's diagonal; times a fixed orthogonal ``base`` (the
    trivialization: the original starts at a fixed point and ``base`` holds the initial matrix)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def _square(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        if self.orthogonal_map == "householder":
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # X's diagonal holds the reflections' signs (+-1); truncated to ints as PyTorch does, so
            # that no gradient reaches it
            return Q * X.diagonal(dim1=-2, dim2=-1).to(flambeau.int32).unsqueeze(-2)
        if n != k:  # the tall n x k block sits in an n x n matrix's first k columns
            pad = flambeau.zeros(*X.shape[:-1], n - k, dtype=X.dtype, device=X.device)
            X = flambeau.cat([X, pad], dim=-1)
        A = X.tril()
        A = A - A.mH
        if self.orthogonal_map == "matrix_exp":
            Q = flambeau.linalg.matrix_exp(A)
        else:  # cayley: (I - A/2)^{-1} (I + A/2)
            eye = flambeau.eye(n, dtype=X.dtype, device=X.device)
            Q = flambeau.linalg.solve(eye - A / 2, eye + A / 2)
        return Q[..., :k] if n != k else Q

    def forward(self, X: Tensor) -> Tensor:
        transposed = X.shape[-2] < X.shape[-1]
        if transposed:
            X = X.mT
        Q = self._square(X)
        base = self.__dict__["_buffers"].get("base")
        if base is not None:
            Q = (base.mT if transposed else base).matmul(Q)  # base is square: n x n
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        if tuple(Q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{tuple(Q.shape)}.")
        if "base" not in self._buffers and self.orthogonal_map == "householder":
            transposed = Q.shape[-2] < Q.shape[-1]
            A = _householder_qr_reflectors(Q.mT if transposed else Q)
            return A.mT if transposed else A
        if "base" not in self._buffers:
            raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                      "parametrizations when use_trivialization=False.")
        with flambeau.no_grad():
            transposed = Q.shape[-2] < Q.shape[-1]
            M = Q.mT if transposed else Q
            n, k = M.shape[-2], M.shape[-1]
            # base: an orthogonal n x n matrix whose first k columns span Q's columns (Q itself when Q is)
            full = flambeau.cat([M, flambeau.randn(*M.shape[:-1], n - k, dtype=M.dtype, device=M.device)], dim=-1) \
                if n != k else M
            q, r = flambeau.linalg.qr(full)
            q = q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
            self.base = q.mT if transposed else q
        if self.orthogonal_map == "householder":
            # the reflectors' fixed point: every reflector flips one axis and the -1 signs undo it,
            # so the product is the identity and the weight is ``base``
            neg_id = flambeau.zeros(M.shape, dtype=M.dtype, device=M.device)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id.mT if transposed else neg_id
        return flambeau.zeros_like(Q)


def _householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first k columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` the i-th column
    of ``A``'s strictly lower part plus a 1 on the diagonal (LAPACK's orgqr; written with flambeau
    ops so that it is differentiable). ``A``: (..., n, k), ``tau``: (..., k)."""
    n, k = A.shape[-2], A.shape[-1]
    V = A.tril(-1) + flambeau.eye(n, k, dtype=A.dtype, device=A.device)
    Q = flambeau.eye(n, k, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], n, k)
    for i in range(k - 1, -1, -1):  # Q = H_i Q, from the last reflector to the first
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i:i + 1].unsqueeze(-1) * v) * (v.mT @ Q)
    return Q


def _householder_qr_reflectors(Q: Tensor) -> Tensor:
    """The reflectors of Q's Householder QR (LAPACK's geqrf), below the diagonal, with the signs of R's
    diagonal on it (a sign flipped where a column needed no reflection): what the householder map
    turns back into Q. Computed on the host in float64; Q is (..., n, k) with n >= k."""
    import numpy as np

    q = np.array(Q.detach().cpu().numpy(), dtype=np.float64)
    batch = q.reshape((-1,) + q.shape[-2:])
    out = np.empty_like(batch)
    for b, a in enumerate(batch):
        a = a.copy()
        n, k = a.shape
        for i in range(k):
            alpha, rest = a[i, i], a[i + 1:, i]
            norm = float(np.linalg.norm(rest))
            if norm == 0.0:  # no reflection needed (tau = 0)
                a[i, i] = -np.sign(alpha) if alpha != 0 else -1.0
                continue
            beta = -np.copysign(np.hypot(alpha, norm), alpha)
            tau = (beta - alpha) / beta
            v = rest / (alpha - beta)
            # apply H = I - tau [1; v][1; v]^T to the remaining columns
            w = a[i, i + 1:] + v @ a[i + 1:, i + 1:]
            a[i, i + 1:] -= tau * w
            a[i + 1:, i + 1:] -= tau * np.outer(v, w)
            a[i + 1:, i] = v
            a[i, i] = np.sign(beta)
        out[b] = a
    return flambeau.tensor(out.reshape(q.shape), dtype=Q.dtype, device=Q.device)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    r"""Parametrize ``module.<name>`` (a matrix or a batch of them) to be orthogonal (semi-orthogonal when
    not square: orthonormal columns, or rows when wide).

    Args:
        orthogonal_map: ``"matrix_exp"``, ``"cayley"`` or ``"householder"``; by default
            ``"matrix_exp"`` for square or complex matrices and ``"householder"`` otherwise (as PyTorch).
        use_trivialization: keep the initial orthogonal matrix in a ``base`` buffer and optimise around it
            (the original starts at zero); this is what makes assigning to ``module.<name>`` possible.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    if orthogonal_map == "householder" and weight.is_complex():
        raise ValueError("The householder parametrization does not support complex tensors.")
    parametrize.register_parametrization(module, name, _Orthogonal(weight, orthogonal_map, use_trivialization),
                                         unsafe=True)
    return module
