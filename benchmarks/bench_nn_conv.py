"""Convolutions, flambeau vs PyTorch, interleaved in one run (issue 15's CNN bars).

Cases (float32, default thread settings; both libraries start from the same weights and data):
  cnn_step        the issue's CNN training step (bar: at most 1.0x PyTorch): input (64, 1, 28, 28),
                  Conv2d(1, 32, 3, padding=1), ReLU, MaxPool2d(2), Conv2d(32, 64, 3, padding=1), ReLU,
                  MaxPool2d(2), Flatten, Linear(3136, 128), ReLU, Linear(128, 10), cross-entropy, Adam:
                  ``zero_grad``, forward, loss, ``backward``, ``step``.
  resnet18_fwd    a ResNet-18-shaped network's forward in eval mode under no_grad (bar: at most 1.2x):
                  batch 8 of 3x64x64, torchvision's resnet18 layout (7x7/2 stem, BatchNorm, ReLU, 3x3/2
                  max pool, four stages of two BasicBlocks with 64-128-256-512 channels, 1x1/2
                  downsampling shortcuts, global average pool, Linear(512, 1000)), written out here.
  conv2d_fwd      one Conv2d(32, 64, 3, padding=1) forward on (64, 32, 14, 14).
  conv2d_fwd_bwd  the same layer, forward and backward (input and parameter gradients).
  gemm_short_m    ``(64, 12544) @ (12544, 288)``, the shape of that layer's weight gradient as
                  ``grad_rows @ cols^T``: few rows, a long inner dimension (not run by default).
  gemm_short_n    the same product transposed, ``(288, 12544) @ (12544, 64)``, as the kernel computes
                  it (not run by default). numpy's OpenBLAS splits the first one's rows between its
                  threads, which then trade packed blocks once per block of the inner dimension;
                  the second one's columns, which need no trading (docs/performance.md).

Usage: python benchmarks/bench_nn_conv.py [--rounds N] [--block S] [--threads T] [--only NAME,...]
(unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE in the command; needs torch for the comparison).
"""
from __future__ import annotations

import argparse

import numpy as np

import _harness as H


def _copy_params(mod, model, rng):
    """Same values in both libraries: every parameter drawn from one seeded generator, in order."""
    with mod.no_grad():
        for p in model.parameters():
            fan_in = int(np.prod(p.shape[1:])) if p.ndim > 1 else int(p.shape[0])
            bound = 1.0 / np.sqrt(max(fan_in, 1))
            p.copy_(mod.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def _cnn_step(mod, nn, optim, F):
    rng = np.random.default_rng(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))
    _copy_params(mod, model, rng)
    opt = optim.Adam(model.parameters(), lr=1e-3)
    x = mod.from_numpy(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    y = mod.from_numpy(rng.integers(0, 10, 64).astype(np.int64))

    def run():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return run


def _resnet18(nn):
    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers)


def _resnet_fwd(mod, nn):
    rng = np.random.default_rng(1)
    model = _resnet18(nn)
    _copy_params(mod, model, rng)
    model.eval()
    x = mod.from_numpy(rng.standard_normal((8, 3, 64, 64)).astype(np.float32))

    def run():
        with mod.no_grad():
            return model(x)

    return run


def _conv_layer(mod, nn, backward):
    rng = np.random.default_rng(2)
    conv = nn.Conv2d(32, 64, 3, padding=1)
    _copy_params(mod, conv, rng)
    x = mod.from_numpy(rng.standard_normal((64, 32, 14, 14)).astype(np.float32))
    if not backward:
        def fwd():
            with mod.no_grad():
                return conv(x)
        return fwd
    x.requires_grad_(True)

    def fwd_bwd():
        x.grad = None
        conv.zero_grad()
        conv(x).sum().backward()
        return x.grad

    return fwd_bwd


def _gemm(mod, rows, cols):
    rng = np.random.default_rng(3)
    a = mod.from_numpy(rng.standard_normal((rows, 12544)).astype(np.float32))
    b = mod.from_numpy(rng.standard_normal((12544, cols)).astype(np.float32))
    return lambda: mod.matmul(a, b)


CASES = {
    "cnn_step": lambda mod, nn, optim, F: _cnn_step(mod, nn, optim, F),
    "resnet18_fwd": lambda mod, nn, optim, F: _resnet_fwd(mod, nn),
    "conv2d_fwd": lambda mod, nn, optim, F: _conv_layer(mod, nn, False),
    "conv2d_fwd_bwd": lambda mod, nn, optim, F: _conv_layer(mod, nn, True),
    "gemm_short_m": lambda mod, nn, optim, F: _gemm(mod, 64, 288),
    "gemm_short_n": lambda mod, nn, optim, F: _gemm(mod, 288, 64),
}
DEFAULT_CASES = ("cnn_step", "resnet18_fwd", "conv2d_fwd", "conv2d_fwd_bwd")


def _modules(lib):
    if lib.name == "torch":
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
    else:
        import flambeau.nn as nn
        import flambeau.nn.functional as F
        import flambeau.optim as optim
    return nn, optim, F


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    parser.add_argument("--only", default=",".join(DEFAULT_CASES), help="comma-separated cases")
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s")
    for case in args.only.split(","):
        work = {}
        for lib in libs:
            nn, optim, F = _modules(lib)
            work[lib.name] = CASES[case](lib.module, nn, optim, F)
        results = H.interleave(work, args.rounds, args.block)
        print(H.format_rows(H.rows_from(case, results, "ms", lambda t: t * 1e3, higher_is_better=False)))


if __name__ == "__main__":
    main()
