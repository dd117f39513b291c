"""``flambeau demo``: a short, printed tour of what the installed packages can do."""
from __future__ import annotations

import sys
from typing import TextIO


def _section(out: TextIO, title: str) -> None:
    print(f"\n== {title} ==", file=out)


def _show(out: TextIO, label: str, value: object) -> None:
    text = repr(value)
    # Multi-line tensors start on their own line so that their columns stay aligned.
    sep = "\n" if "\n" in text else " "
    print(f"{label}:{sep}{text}", file=out)


def tensor_tour(out: TextIO) -> None:
    """Creation, broadcasting, reductions, matmul and views: every line runs through the dispatcher."""
    import flambeau as fb

    _section(out, "creation")
    a = fb.arange(6, dtype=fb.float32).reshape(2, 3)
    _show(out, "a = arange(6).reshape(2, 3)", a)
    _show(out, "ones(3, dtype=int64)", fb.ones(3, dtype=fb.int64))
    _show(out, "linspace(0, 1, 5)", fb.linspace(0, 1, 5))
    _show(out, "eye(2)", fb.eye(2))

    _section(out, "broadcasting arithmetic")
    row = fb.tensor([10.0, 20.0, 30.0])
    col = fb.tensor([[1.0], [2.0]])
    _show(out, "a + row  (2x3 + 3)", a + row)
    _show(out, "a * col  (2x3 * 2x1)", a * col)
    _show(out, "(a - 1) / 2", (a - 1) / 2)
    _show(out, "int tensor + 0.5 (promotes to float32)", fb.tensor([1, 2, 3]) + 0.5)
    _show(out, "a > 2", a > 2)

    _section(out, "reductions")
    _show(out, "a.sum()", a.sum())
    _show(out, "a.sum(dim=0)", a.sum(dim=0))
    _show(out, "a.mean(dim=1, keepdim=True)", a.mean(dim=1, keepdim=True))
    _show(out, "a.max(dim=1)", a.max(dim=1))
    _show(out, "a.argmin()", a.argmin())

    _section(out, "matmul")
    b = fb.arange(12, dtype=fb.float32).reshape(3, 4)
    _show(out, "a @ b  (2x3 @ 3x4)", a @ b)
    _show(out, "matmul(a, ones(3))", fb.matmul(a, fb.ones(3)))

    _section(out, "views share storage")
    t = a.t()
    _show(out, "a.t()", t)
    print(f"a.t().is_contiguous(): {t.is_contiguous()}, shape {tuple(t.shape)}, stride {t.stride()}", file=out)
    first_row = a[0]
    first_row.fill_(-1.0)
    _show(out, "after a[0].fill_(-1), a", a)
    _show(out, "a.view(3, 2)", a.view(3, 2))
    _show(out, "a.unsqueeze(0).shape", a.unsqueeze(0).shape)


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ModuleNotFoundError:
        return False
    return True


def _has_layers() -> bool:
    """Whether flambeau-nn is installed with the layers the demo uses."""
    if not _importable("flambeau.nn"):
        return False
    from flambeau import nn

    return hasattr(nn, "Linear") and hasattr(nn, "MSELoss")


def training_run(out: TextIO, steps: int = 100) -> float:
    """Fit ``y = 3x - 1`` by gradient descent with ``optim.SGD``; return the final loss.

    The model is an ``nn.Linear(1, 1)`` when ``flambeau-nn`` is installed, and otherwise a weight and
    a bias tensor with ``requires_grad=True`` (``flambeau-core-autograd`` and ``flambeau-optim`` only).
    """
    import flambeau as fb
    from flambeau import optim

    fb.manual_seed(0)
    x = fb.linspace(-1, 1, 32).reshape(32, 1)
    y = 3 * x - 1
    if _has_layers():
        from flambeau import nn

        _section(out, "training: fit y = 3x - 1 with nn.Linear(1, 1), MSELoss and SGD")
        linear = nn.Linear(1, 1)
        model, loss_fn, params = linear, nn.MSELoss(), list(linear.parameters())
        weight, bias = linear.weight, linear.bias
    else:
        _section(out, "training: fit y = 3x - 1 with autograd tensors and SGD")
        weight = fb.zeros(1, 1, requires_grad=True)
        bias = fb.zeros(1, requires_grad=True)
        params = [weight, bias]

        def model(inputs: fb.Tensor) -> fb.Tensor:
            return inputs @ weight.t() + bias

        def loss_fn(prediction: fb.Tensor, target: fb.Tensor) -> fb.Tensor:
            return ((prediction - target) ** 2).mean()

    optimizer = optim.SGD(params, lr=0.5)
    for step in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if step % (steps // 4) == 0:
            print(f"step {step:3d}  loss {loss.item():.6f}", file=out)
    final = loss_fn(model(x), y).item()
    print(f"final loss {final:.6f}", file=out)
    print(f"weight {weight.item():.4f} (want 3), bias {bias.item():.4f} (want -1)", file=out)
    return final


def run_demo(out: TextIO | None = None) -> int:
    """Print the tour to ``out`` (default stdout) and return 0."""
    out = sys.stdout if out is None else out
    import flambeau as fb

    print(f"flambeau {fb.__version__}, default device {fb.get_default_device()}", file=out)
    tensor_tour(out)
    if _importable("flambeau.autograd") and _importable("flambeau.optim"):
        training_run(out)
    else:
        print("\n(no training run: it needs flambeau-core-autograd and flambeau-optim)", file=out)
    return 0
