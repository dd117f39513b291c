"""``gradcheck`` and ``gradgradcheck``: analytical gradients against central finite differences."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from flambeau._tensor import Tensor

from ._api import grad as autograd_grad


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when the gradients do not match."""


def _as_tuple(x: Any) -> tuple:
    return (x,) if isinstance(x, Tensor) or not isinstance(x, (tuple, list)) else tuple(x)


def _differentiable_outputs(out: Any) -> tuple:
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor) and o._requires_grad)


def _float_outputs(out: Any) -> tuple:
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor) and (o._dtype.is_floating_point
                                                                          or o._dtype.is_complex))


def _numel(t: Tensor) -> int:
    return int(np.prod(t.shape)) if len(t.shape) else 1


def _indices(t: Tensor) -> list:
    return list(np.ndindex(*tuple(t.shape))) if len(t.shape) else [()]


def _numerical_jacobian(func: Callable, inputs: tuple, outputs: tuple, eps: float) -> list:
    """``jac[i][j]``: d output j / d input i, shaped (numel input, numel output), float64 numpy."""
    jac = []
    for x in inputs:
        if not (isinstance(x, Tensor) and x._requires_grad):
            jac.append(None)
            continue
        per_out = [np.zeros((_numel(x), _numel(o))) for o in outputs]
        data = x.data  # its own version counter: perturbing it does not invalidate saved tensors
        for k, idx in enumerate(_indices(x)):
            orig = data[idx].item()
            data[idx] = orig - eps
            minus = [np.array(o.detach(), dtype=np.float64).reshape(-1) for o in _float_outputs(func(*inputs))]
            data[idx] = orig + eps
            plus = [np.array(o.detach(), dtype=np.float64).reshape(-1) for o in _float_outputs(func(*inputs))]
            data[idx] = orig
            for j in range(len(outputs)):
                per_out[j][k] = (plus[j] - minus[j]) / (2 * eps)
        jac.append(per_out)
    return jac


def _analytical_jacobian(inputs: tuple, outputs: tuple) -> list:
    import flambeau

    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x._requires_grad]
    jac = [[np.zeros((_numel(x), _numel(o))) for o in outputs] for x in diff_inputs]
    for j, o in enumerate(outputs):
        if not o._requires_grad:
            continue
        for k, idx in enumerate(_indices(o)):
            seed = flambeau.zeros(tuple(o.shape), dtype=o._dtype, device=o._device)
            seed[idx] = 1.0
            grads = autograd_grad(o, diff_inputs, seed, retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    jac[i][j][:, k] = np.array(g.detach(), dtype=np.float64).reshape(-1)
    return jac


def _real_view(func: Callable, inputs: tuple) -> tuple[Callable, tuple] | None:
    """``func`` seen as a function of real tensors with real outputs, or None when it is one.

    A complex input that requires grad becomes two float inputs (its real and imaginary parts),
    a complex output two outputs. The real Jacobian of that function is what PyTorch's convention
    for complex gradients (``grad = dL/dRe + i dL/dIm`` for a real ``L``) is equivalent to, so
    checking it checks the complex backward formulas, through ``complex``/``real``/``imag``.
    """
    import flambeau

    complex_in = [isinstance(x, Tensor) and x._requires_grad and x._dtype.is_complex for x in inputs]
    if not any(complex_in) and not any(o._dtype.is_complex for o in _float_outputs(func(*inputs))):
        return None
    flat: list = []
    for x, is_c in zip(inputs, complex_in):
        if is_c:
            with flambeau.no_grad():
                parts = (x.real.clone(), x.imag.clone())
            flat += [p.requires_grad_(True) for p in parts]
        else:
            flat.append(x)

    def real_func(*args: Any) -> tuple:
        rebuilt, k = [], 0
        for is_c in complex_in:
            if is_c:
                rebuilt.append(flambeau.complex(args[k], args[k + 1]))
                k += 2
            else:
                rebuilt.append(args[k])
                k += 1
        outs: list = []
        for o in _float_outputs(func(*rebuilt)):
            outs += [o.real, o.imag] if o._dtype.is_complex else [o]
        return tuple(outs)

    return real_func, tuple(flat)


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: Any = None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Each input that requires grad is perturbed by ``±eps`` element by element; the resulting
    numerical Jacobian must match the one backward computes: ``|a - n| <= atol + rtol * |n|``.
    Use float64 or complex128 inputs: complex inputs and outputs are checked through their real and
    imaginary parts (PyTorch's convention: the gradient of a real ``L`` is ``dL/dRe + i dL/dIm``).

    Args:
        func: a function of ``inputs`` returning a Tensor or a tuple of Tensors.
        inputs (tuple of Tensor or Tensor): the point to check at.
        eps (float): the perturbation. Default: 1e-6.
        atol (float): absolute tolerance. Default: 1e-5.
        rtol (float): relative tolerance. Default: 1e-3.
        raise_exception (bool): raise ``GradcheckError`` on failure (else return False).

    Returns:
        bool: True when the gradients match.

    Example::

        >>> x = flambeau.randn(3, dtype=flambeau.float64, requires_grad=True)
        >>> flambeau.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
        True
    """
    tupled = _as_tuple(inputs)
    if not any(isinstance(x, Tensor) and x._requires_grad for x in tupled):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, x in enumerate(tupled):
        if isinstance(x, Tensor) and x._requires_grad and x._dtype.name not in ("float64", "complex128"):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or "
                "complex. ", UserWarning, stacklevel=2)
    split = _real_view(func, tupled)
    if split is not None:  # complex inputs/outputs: their real and imaginary parts are checked apart
        func, tupled = split
    out = func(*tupled)
    outputs = _float_outputs(out)
    if not outputs:
        return _fail("gradcheck: func returned no floating-point tensor output", raise_exception)
    analytical = _analytical_jacobian(tupled, outputs)
    numerical = _numerical_jacobian(func, tupled, outputs, eps)
    diff_index = [i for i, x in enumerate(tupled) if isinstance(x, Tensor) and x._requires_grad]
    for a_rows, i in zip(analytical, diff_index):
        for j, (a, n) in enumerate(zip(a_rows, numerical[i])):
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                return _fail(
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n", raise_exception)
    if nondet_tol == 0.0:
        again = _analytical_jacobian(tupled, outputs)
        for rows_a, rows_b in zip(analytical, again):
            for a, b in zip(rows_a, rows_b):
                if not np.array_equal(a, b):
                    return _fail(
                        "Backward is not reentrant, i.e., running backward with same input and grad_output "
                        "multiple times gives different values, although analytical gradient matches numerical "
                        f"gradient.The tolerance for nondeterminism was {nondet_tol}.", raise_exception)
    return True


def _fmt(a: np.ndarray) -> str:
    import flambeau

    return repr(flambeau.tensor(a, dtype=flambeau.float64))


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """Check second derivatives: ``gradcheck`` of the vector-Jacobian product of ``func``.

    ``grad_outputs`` (random float64 tensors when not given) become inputs that require grad
    too, and the gradients of ``func`` with ``create_graph=True`` are checked.

    Args:
        func, inputs, eps, atol, rtol, raise_exception: as for :func:`gradcheck`.
        grad_outputs (tuple of Tensor or Tensor, optional): the vectors of the product.
        gen_non_contig_grad_outputs (bool): make the generated ``grad_outputs`` non-contiguous.

    Returns:
        bool: True when the second derivatives match.
    """
    import flambeau

    tupled = _as_tuple(inputs)
    outputs = _differentiable_outputs(func(*tupled))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        made = []
        for o in outputs:
            data = rng.standard_normal(tuple(o.shape)) if len(o.shape) else np.array(rng.standard_normal())
            if o._dtype.is_complex:
                data = data + 1j * (rng.standard_normal(tuple(o.shape)) if len(o.shape)
                                    else np.array(rng.standard_normal()))
            if gen_non_contig_grad_outputs and len(o.shape):
                wide = np.zeros(tuple(o.shape) + (2,), dtype=data.dtype)
                wide[..., 0] = data
                t = flambeau.tensor(wide, dtype=o._dtype, device=o._device).select(-1, 0)
            else:
                t = flambeau.tensor(data, dtype=o._dtype, device=o._device)
            made.append(t.requires_grad_(True))
        grad_outputs = tuple(made)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(tupled)

    def vjp_fn(*all_inputs: Any) -> tuple:
        ins, gos = all_inputs[:n_in], all_inputs[n_in:]
        outs = _differentiable_outputs(func(*ins))
        diff = [x for x in ins if isinstance(x, Tensor) and x._requires_grad]
        grads = autograd_grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp_fn, tupled + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol)
