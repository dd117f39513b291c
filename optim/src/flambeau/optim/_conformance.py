"""Conformance cases for flambeau-optim's update ops (entry point ``flambeau.testing: optim``).

The backend conformance kit (``pytest --pyargs flambeau.testing --flambeau-backend NAME``) runs
every declared op against a numpy reference. Each ``optim_<name>`` op updates its tensor-list
arguments in place and returns nothing, so each case lists those arguments in ``mutates`` and its
reference applies the algorithm's published update rule to its numpy copies of them, one
parameter at a time (the rules written out again here, independently of the composites).

Samples mix layouts (contiguous, transposed, step-sliced), a 0-d parameter and states of given
values (the step counts), so that a backend's fused kernel meets strided inputs and outputs.

Most algorithms read a step count or another scalar state with ``.item()``: their samples are
marked ``data_dependent``, because a backend that computes no data (``meta``) cannot run them.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_DTYPES = ("float16", "bfloat16", "float32", "float64")
#: The parameters every sample updates: (shape, layout).
_SHAPES: tuple[tuple[tuple[int, ...], str], ...] = (((3,), "contiguous"), ((2, 3), "transposed"),
                                                    ((4,), "sliced"), ((), "contiguous"))
_READS_VALUES = "reads a scalar state with .item()"


def _args(dtype: str, layouts: Sequence[str] | None = None, low: float = -4.0, high: float = 4.0,
          shapes: Sequence[tuple[tuple[int, ...], str]] = _SHAPES) -> list[Arg]:
    """One tensor per parameter: the parameters' own layouts, or ``layouts`` where given."""
    return [Arg(shape, dtype, (layouts[i] if layouts else layout) if shape else "contiguous", low=low, high=high)
            for i, (shape, layout) in enumerate(shapes)]


def _grads(dtype: str, shapes: Sequence[tuple[tuple[int, ...], str]] = _SHAPES) -> list[Arg]:
    # Laid out differently from their parameters, so that no kernel may assume matching strides.
    return _args(dtype, ["sliced", "contiguous", "contiguous", "contiguous"][:len(shapes)], shapes=shapes)


def _state(dtype: str, low: float = -4.0, high: float = 4.0) -> list[Arg]:
    """A state list (moments, buffers): contiguous but for one transposed tensor (a strided write)."""
    return _args(dtype, ["contiguous", "transposed", "contiguous", "contiguous"], low=low, high=high)


def _scalars(value: float, count: int = len(_SHAPES)) -> list[Arg]:
    """Per-parameter scalar states (step counts, ASGD's eta and mu): float32, as the optimizers keep them."""
    return [Arg((), "float32", values=value) for _ in range(count)]


def _no_result(sample: Sample) -> tuple:
    return ()


def _grad(g: np.ndarray, maximize: bool) -> np.ndarray:
    return -g if maximize else g


def _length_error(n_lists: int, tail: tuple, message: str, state_index: int = 2) -> ErrorCase:
    """A state list one tensor short: the op's argument check raises before anything is written."""
    lists: list[Any] = [[Arg((2,), "float32"), Arg((3,), "float32")] for _ in range(n_lists)]
    lists[state_index] = lists[state_index][:1]
    return ErrorCase((*lists, *tail), ValueError, message)


# -- SGD ------------------------------------------------------------------------------------

def _sgd_ref(params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov, maximize,
             is_first_step):
    for i, p in enumerate(params):
        d = _grad(grads[i], maximize) + weight_decay * p
        if momentum != 0:
            buf = momentum_buffers[i]
            buf[...] = d if is_first_step else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p -= lr * d


def _sgd_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, [], 0.0, 0.0, 0.1, 0.0, False, False, True), note="plain"),
        Sample((p, g, _state(dtype), 0.01, 0.9, 0.1, 0.1, False, False, False), note="momentum"),
        Sample((p, g, _state(dtype), 0.0, 0.9, 0.1, 0.0, True, True, False), note="nesterov, maximize"),
        Sample((p, g, _state(dtype), 0.1, 0.5, 0.05, 0.0, False, False, True), note="first step"),
    ]


# -- Adam / AdamW -----------------------------------------------------------------------------

def _adam_ref(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad, beta1, beta2, lr,
              weight_decay, eps, maximize, decoupled_weight_decay):
    for i, p in enumerate(params):
        g = _grad(grads[i], maximize)
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * p
        state_steps[i] += 1
        t = float(state_steps[i])
        m, v = exp_avgs[i], exp_avg_sqs[i]
        m[...] = beta1 * m + (1 - beta1) * g
        v[...] = beta2 * v + (1 - beta2) * g * g
        if amsgrad:
            np.maximum(max_exp_avg_sqs[i], v, out=max_exp_avg_sqs[i])
            v = max_exp_avg_sqs[i]
        denom = np.sqrt(v) / math.sqrt(1 - beta2 ** t) + eps
        p -= lr / (1 - beta1 ** t) * m / denom


def _adam_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), [], _scalars(0.0), False, 0.9, 0.999, 0.01, 0.0, 1e-8,
                False, False), note="first step", data_dependent=True),
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), [], _scalars(4.0), False, 0.8, 0.99, 0.01, 0.1, 1e-8,
                True, False), note="weight decay, maximize", data_dependent=True),
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _state(dtype, 0, 4), _scalars(2.0), True, 0.9, 0.999,
                0.01, 0.1, 1e-6, False, True), note="amsgrad, decoupled weight decay (AdamW)",
               data_dependent=True),
    ]


# -- Adamax -----------------------------------------------------------------------------------

def _adamax_ref(params, grads, exp_avgs, exp_infs, state_steps, eps, beta1, beta2, lr, weight_decay, maximize):
    for i, p in enumerate(params):
        g = _grad(grads[i], maximize) + weight_decay * p
        state_steps[i] += 1
        t = float(state_steps[i])
        m, u = exp_avgs[i], exp_infs[i]
        m[...] = beta1 * m + (1 - beta1) * g
        u[...] = np.maximum(beta2 * u, np.abs(g) + eps)
        p -= lr / (1 - beta1 ** t) * m / u


def _adamax_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _scalars(0.0), 1e-8, 0.9, 0.999, 0.002, 0.0, False),
               note="first step", data_dependent=True),
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _scalars(5.0), 1e-6, 0.8, 0.99, 0.01, 0.1, True),
               note="weight decay, maximize", data_dependent=True),
    ]


# -- NAdam ------------------------------------------------------------------------------------

def _nadam_ref(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1, beta2, lr, weight_decay,
               momentum_decay, eps, decoupled_weight_decay, maximize):
    for i, p in enumerate(params):
        g = _grad(grads[i], maximize)
        state_steps[i] += 1
        t = float(state_steps[i])
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * p
        mu = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_products[i] *= mu
        # The op reads the product back from its float32 state before using it.
        mu_product = float(np.float32(mu_products[i]))
        m, v = exp_avgs[i], exp_avg_sqs[i]
        m[...] = beta1 * m + (1 - beta1) * g
        v[...] = beta2 * v + (1 - beta2) * g * g
        denom = np.sqrt(v / (1 - beta2 ** t)) + eps
        p -= lr * (1 - mu) / (1 - mu_product) * g / denom
        p -= lr * mu_next / (1 - mu_product * mu_next) * m / denom


def _nadam_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _scalars(1.0), _scalars(0.0), 0.9, 0.999, 0.002, 0.0,
                4e-3, 1e-8, False, False), note="first step", data_dependent=True),
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _scalars(0.5), _scalars(3.0), 0.9, 0.99, 0.01, 0.1,
                4e-3, 1e-8, False, True), note="weight decay, maximize", data_dependent=True),
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _scalars(0.5), _scalars(3.0), 0.9, 0.99, 0.01, 0.1,
                4e-3, 1e-8, True, False), note="decoupled weight decay", data_dependent=True),
    ]


# -- RAdam ------------------------------------------------------------------------------------

def _radam_ref(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1, beta2, lr, weight_decay, eps,
               decoupled_weight_decay, maximize):
    for i, p in enumerate(params):
        g = _grad(grads[i], maximize)
        state_steps[i] += 1
        t = float(state_steps[i])
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * p
        m, v = exp_avgs[i], exp_avg_sqs[i]
        m[...] = beta1 * m + (1 - beta1) * g
        v[...] = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t)
        if rho_t > 5:  # the variance is tractable: rectified adaptive step
            r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p -= lr * m_hat * r * math.sqrt(1 - beta2 ** t) / (np.sqrt(v) + eps)
        else:  # early steps: plain momentum
            p -= lr * m_hat


def _radam_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _scalars(0.0), 0.9, 0.999, 0.001, 0.0, 1e-8, False,
                False), note="first step (unrectified)", data_dependent=True),
        # rho_t at step 10 with beta2 = 0.999 is ~9 > 5: the rectified branch.
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _scalars(9.0), 0.9, 0.999, 0.01, 0.1, 1e-8, False,
                True), note="rectified, weight decay, maximize", data_dependent=True),
        Sample((p, g, _state(dtype), _state(dtype, 0, 4), _scalars(9.0), 0.9, 0.999, 0.01, 0.1, 1e-8, True,
                False), note="rectified, decoupled weight decay", data_dependent=True),
    ]


# -- Adadelta ---------------------------------------------------------------------------------

def _adadelta_ref(params, grads, square_avgs, acc_deltas, state_steps, lr, rho, eps, weight_decay, maximize):
    for i, p in enumerate(params):
        state_steps[i] += 1
        g = _grad(grads[i], maximize) + weight_decay * p
        v, u = square_avgs[i], acc_deltas[i]
        v[...] = rho * v + (1 - rho) * g * g
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u[...] = rho * u + (1 - rho) * delta * delta
        p -= lr * delta


def _adadelta_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype, 0, 4), _state(dtype, 0, 4), _scalars(0.0), 1.0, 0.9, 1e-6, 0.0, False)),
        Sample((p, g, _state(dtype, 0, 4), _state(dtype, 0, 4), _scalars(3.0), 0.5, 0.8, 1e-4, 0.1, True),
               note="weight decay, maximize"),
    ]


# -- Adagrad ----------------------------------------------------------------------------------

def _adagrad_ref(params, grads, state_sums, state_steps, lr, weight_decay, lr_decay, eps, maximize):
    for i, p in enumerate(params):
        state_steps[i] += 1
        t = float(state_steps[i])
        g = _grad(grads[i], maximize) + weight_decay * p
        s = state_sums[i]
        s += g * g
        p -= lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)


def _adagrad_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype, 0, 4), _scalars(0.0), 0.01, 0.0, 0.0, 1e-10, False), note="first step",
               data_dependent=True),
        Sample((p, g, _state(dtype, 0, 4), _scalars(6.0), 0.1, 0.1, 0.01, 1e-10, True),
               note="lr decay, weight decay, maximize", data_dependent=True),
    ]


# -- RMSprop ----------------------------------------------------------------------------------

def _rmsprop_ref(params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, lr, alpha, eps,
                 weight_decay, momentum, centered, maximize):
    for i, p in enumerate(params):
        state_steps[i] += 1
        g = _grad(grads[i], maximize) + weight_decay * p
        v = square_avgs[i]
        v[...] = alpha * v + (1 - alpha) * g * g
        if centered:
            gbar = grad_avgs[i]
            gbar[...] = alpha * gbar + (1 - alpha) * g
            avg = np.sqrt(v - gbar * gbar) + eps
        else:
            avg = np.sqrt(v) + eps
        if momentum > 0:
            buf = momentum_buffers[i]
            buf[...] = momentum * buf + g / avg
            p -= lr * buf
        else:
            p -= lr * g / avg


def _rmsprop_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype, 0, 4), [], [], _scalars(0.0), 0.01, 0.99, 1e-8, 0.0, 0.0, False, False),
               note="plain"),
        Sample((p, g, _state(dtype, 0, 4), [], _state(dtype), _scalars(2.0), 0.01, 0.9, 1e-8, 0.1, 0.5, False,
                True), note="momentum, weight decay, maximize"),
        # square averages well above the squared gradient averages: the centered variance stays positive.
        Sample((p, g, _state(dtype, 1, 4), _state(dtype, -0.5, 0.5), _state(dtype), _scalars(2.0), 0.01, 0.9,
                1e-8, 0.1, 0.9, True, False), note="centered, momentum"),
    ]


# -- Rprop ------------------------------------------------------------------------------------

def _rprop_ref(params, grads, prevs, step_sizes, state_steps, step_size_min, step_size_max, etaminus, etaplus,
               maximize):
    for i, p in enumerate(params):
        g = _grad(grads[i], maximize)
        state_steps[i] += 1
        prev, eta = prevs[i], step_sizes[i]
        sign = np.sign(g * prev)
        eta[...] = np.clip(eta * np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0)),
                           step_size_min, step_size_max)
        # A sign change: no move this step, and the next step starts afresh.
        g = np.where(sign < 0, 0.0, g)
        p -= np.sign(g) * eta
        prev[...] = g


def _rprop_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype), _state(dtype, 0.001, 0.1), _scalars(3.0), 1e-6, 50.0, 0.5, 1.2, False)),
        # Narrow bounds, so that both clamps bind.
        Sample((p, g, _state(dtype), _state(dtype, 0.001, 0.1), _scalars(3.0), 0.01, 0.05, 0.5, 1.2, True),
               note="clamped, maximize"),
    ]


# -- ASGD -------------------------------------------------------------------------------------

def _asgd_ref(params, grads, axs, mus, etas, state_steps, lambd, lr, t0, alpha, weight_decay, maximize):
    for i, p in enumerate(params):
        g = _grad(grads[i], maximize)
        state_steps[i] += 1
        t = float(state_steps[i])
        g = g + weight_decay * p
        eta, mu, ax = float(etas[i]), float(mus[i]), axs[i]
        p *= 1 - lambd * eta
        p -= eta * g
        if mu != 1:
            ax += (p - ax) * mu
        else:
            ax[...] = p
        etas[i][...] = lr / (1 + lambd * lr * t) ** alpha
        mus[i][...] = 1 / max(1, t - t0)


def _asgd_samples(dtype: str) -> list[Sample]:
    p, g = _args(dtype), _grads(dtype)
    return [
        Sample((p, g, _state(dtype), _scalars(1.0), _scalars(0.01), _scalars(0.0), 1e-4, 0.01, 1e6, 0.75, 0.0,
                False), note="first step (the average starts at the parameter)", data_dependent=True),
        Sample((p, g, _state(dtype), _scalars(0.25), _scalars(0.05), _scalars(7.0), 1e-2, 0.05, 4.0, 0.75, 0.1,
                True), note="averaging, weight decay, maximize", data_dependent=True),
    ]


# -- Adafactor --------------------------------------------------------------------------------

#: Adafactor factors the second moment of parameters with two or more dims: a vector, a matrix
#: (transposed), a 0-d parameter and a batch of matrices.
_FACTOR_SHAPES: tuple[tuple[tuple[int, ...], str], ...] = (((5,), "sliced"), ((3, 4), "transposed"),
                                                           ((), "contiguous"), ((2, 3, 2), "contiguous"))


def _rms(a: np.ndarray) -> float:
    return float(np.sqrt(np.mean(a * a)))


def _adafactor_ref(params, grads, row_vars, col_vars, variances, state_steps, d, lr, beta2_decay, weight_decay,
                   eps1, eps2, maximize):
    # eps1=None means the parameter's machine epsilon; the samples keep every second-moment
    # estimate far above it, so that the clamps it sets never bind and float64's serves.
    e1 = np.finfo(np.float64).eps if eps1 is None else eps1
    factored = iter(zip(row_vars, col_vars))
    whole = iter(variances)
    for i, p in enumerate(params):
        g = _grad(grads[i], maximize)
        state_steps[i] += 1
        t = float(state_steps[i])
        w = t ** beta2_decay  # the weight of the new squared gradient, 1 - beta2_t
        alpha = max(eps2, _rms(p)) * min(lr, 1 / math.sqrt(t))
        p *= 1 - lr * weight_decay
        if g.ndim > 1:
            row, col = next(factored)
            row += w * (np.mean(g * g, axis=-1, keepdims=True) - row)
            col += w * (np.mean(g * g, axis=-2, keepdims=True) - col)
            v = row @ col / np.maximum(np.mean(row, axis=-2, keepdims=True), e1)
        else:
            var = next(whole)
            var += w * (g * g - var)
            v = var
        u = g / np.sqrt(np.maximum(v, e1 * e1))
        p -= alpha / max(1.0, _rms(u) / d) * u


def _adafactor_samples(dtype: str) -> list[Sample]:
    shapes = _FACTOR_SHAPES
    p, g = _args(dtype, shapes=shapes), _grads(dtype, shapes=shapes)
    rows = [Arg((3, 1), dtype, low=0.5, high=4), Arg((2, 3, 1), dtype, low=0.5, high=4)]
    cols = [Arg((1, 4), dtype, "transposed", low=0.5, high=4), Arg((2, 1, 2), dtype, low=0.5, high=4)]
    whole = [Arg((5,), dtype, low=0.5, high=4), Arg((), dtype, low=0.5, high=4)]
    return [
        Sample((p, g, rows, cols, whole, _scalars(0.0), 1.0, 0.01, -0.8, 0.0, None, 1e-3, False),
               note="first step", data_dependent=True),
        Sample((p, g, rows, cols, whole, _scalars(2.0), 0.5, 0.05, -0.8, 0.1, 1e-30, 1e-3, True),
               note="clipped update, weight decay, maximize", data_dependent=True),
    ]


def _adafactor_errors() -> list[ErrorCase]:
    one = [Arg((2,), "float32")]
    two = [Arg((2,), "float32"), Arg((3,), "float32")]
    return [ErrorCase((two, one, [], [], two, _scalars(0.0, 2), 1.0, 0.01, -0.8, 0.0, None, 1e-3, False),
                      ValueError, "expected 2 gradients, got 1")]


def cases() -> list[OpCase]:
    """flambeau-optim's conformance cases, one per update op (the ``flambeau.testing`` entry point)."""
    short = "expected 2 tensors in every list, got 1"

    def case(op: str, samples: Any, ref: Any, mutates: tuple[int, ...], errors: list[ErrorCase]) -> OpCase:
        return OpCase(op, _DTYPES, samples, ref, result_dtype=_no_result, errors=lambda: errors, mutates=mutates)

    return [
        case("optim_sgd", _sgd_samples, _sgd_ref, (0, 2),
             [_length_error(3, (0.0, 0.9, 0.1, 0.0, False, False, False), short)]),
        case("optim_adam", _adam_samples, _adam_ref, (0, 2, 3, 4, 5),
             [_length_error(6, (False, 0.9, 0.999, 0.01, 0.0, 1e-8, False, False), short, state_index=3)]),
        case("optim_adamax", _adamax_samples, _adamax_ref, (0, 2, 3, 4),
             [_length_error(5, (1e-8, 0.9, 0.999, 0.002, 0.0, False), short, state_index=4)]),
        case("optim_nadam", _nadam_samples, _nadam_ref, (0, 2, 3, 4, 5),
             [_length_error(6, (0.9, 0.999, 0.002, 0.0, 4e-3, 1e-8, False, False), short, state_index=4)]),
        case("optim_radam", _radam_samples, _radam_ref, (0, 2, 3, 4),
             [_length_error(5, (0.9, 0.999, 0.001, 0.0, 1e-8, False, False), short)]),
        case("optim_adadelta", _adadelta_samples, _adadelta_ref, (0, 2, 3, 4),
             [_length_error(5, (1.0, 0.9, 1e-6, 0.0, False), short, state_index=3)]),
        case("optim_adagrad", _adagrad_samples, _adagrad_ref, (0, 2, 3),
             [_length_error(4, (0.01, 0.0, 0.0, 1e-10, False), short, state_index=1)]),
        case("optim_rmsprop", _rmsprop_samples, _rmsprop_ref, (0, 2, 3, 4, 5),
             [_length_error(6, (0.01, 0.99, 1e-8, 0.0, 0.0, False, False), short, state_index=5)]),
        case("optim_rprop", _rprop_samples, _rprop_ref, (0, 2, 3, 4),
             [_length_error(5, (1e-6, 50.0, 0.5, 1.2, False), short)]),
        case("optim_asgd", _asgd_samples, _asgd_ref, (0, 2, 3, 4, 5),
             [_length_error(6, (1e-4, 0.01, 1e6, 0.75, 0.0, False), short, state_index=3)]),
        case("optim_adafactor", _adafactor_samples, _adafactor_ref, (0, 2, 3, 4, 5), _adafactor_errors()),
    ]
