"""``flambeau train``: train a classifier on the bundled digits (or MNIST-format IDX files), save and plot it.

Written against PyTorch's API (``nn.Sequential``, ``nn.Linear``, ``nn.ReLU``,
``nn.functional.cross_entropy``, ``optim.*``, ``utils.data.DataLoader``), so the same loop reads
the same in both frameworks.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from ._datasets import DataError, Split

CHECKPOINT = "checkpoint.safetensors"
PLOT = "training.png"
MODELS = ("mlp", "cnn")
OPTIMIZERS = ("sgd", "adam", "adamw")


@dataclass
class Options:
    model: str = "mlp"
    epochs: int = 20
    batch_size: int = 32
    lr: float = 1e-3
    optimizer: str = "adam"
    seed: int = 0
    hidden: int = 128
    out: str = "flambeau-train"
    data: str | None = None
    resume: str | None = None
    progress: bool = True
    plot: bool = True
    nproc_per_node: int = 1


@dataclass
class History:
    train_loss: list[float] = field(default_factory=list)
    train_acc: list[float] = field(default_factory=list)
    test_acc: list[float] = field(default_factory=list)
    epoch_seconds: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[float]]:
        return {"train_loss": self.train_loss, "train_acc": self.train_acc, "test_acc": self.test_acc,
                "epoch_seconds": self.epoch_seconds}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = Options()
    parser.add_argument("--model", choices=MODELS, default=d.model,
                        help="the classifier: mlp, a multi-layer perceptron (default), or cnn, two 3x3 convolutions "
                             "(32 and 64 channels, each with ReLU and 2x2 max pooling) then a dense layer")
    parser.add_argument("--epochs", type=_positive_int, default=d.epochs,
                        help=f"passes over the data (default {d.epochs})")
    parser.add_argument("--batch-size", type=_positive_int, default=d.batch_size,
                        help=f"images per step (default {d.batch_size})")
    parser.add_argument("--lr", type=_positive_float, default=d.lr, help=f"learning rate (default {d.lr})")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default=d.optimizer, help=f"default {d.optimizer}")
    parser.add_argument("--seed", type=int, default=d.seed, help="the same seed gives the same run (default 0)")
    parser.add_argument("--hidden", type=_positive_int, default=d.hidden,
                        help=f"width of the hidden dense layer, the MLP's or the CNN's (default {d.hidden})")
    parser.add_argument("--out", default=d.out,
                        help=f"folder for {CHECKPOINT} and {PLOT} (default ./{d.out})")
    parser.add_argument("--data", metavar="PATH", default=None,
                        help="a folder with MNIST-format IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                             "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, optionally .gz) instead of the "
                             "bundled 8x8 digits")
    parser.add_argument("--resume", metavar="CHECKPOINT", default=None,
                        help="continue the run saved in this checkpoint, up to --epochs epochs in all")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    parser.add_argument("--no-plot", dest="plot", action="store_false", help=f"do not write {PLOT}")
    parser.add_argument("--nproc-per-node", type=_positive_int, default=d.nproc_per_node,
                        help="train data-parallel in this many processes (DistributedDataParallel; needs "
                             "flambeau-distributed and mpi4py): --batch-size is split among them, so the run "
                             "takes the same steps as in one process")


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def options_from(args: argparse.Namespace) -> Options:
    return Options(**{k: getattr(args, k) for k in Options.__dataclass_fields__})


def build_model(num_features: int, hidden: int, num_classes: int, model: str = "mlp",
                image_shape: tuple[int, int] | None = None) -> Any:
    """The classifier.

    ``mlp``: ``Linear(num_features, hidden)``, ReLU, ``Linear(hidden, num_classes)``.
    ``cnn`` (images of ``image_shape``, one channel): ``Conv2d(1, 32, 3, padding=1)``, ReLU,
    ``MaxPool2d(2)``, ``Conv2d(32, 64, 3, padding=1)``, ReLU, ``MaxPool2d(2)``, ``Flatten``,
    ``Linear(64 * (H // 4) * (W // 4), hidden)``, ReLU, ``Linear(hidden, num_classes)``: for 28x28
    images the network of PyTorch's MNIST example, ``Linear(3136, 128)``.
    """
    from flambeau import nn

    if model == "cnn":
        if image_shape is None or len(image_shape) != 2 or min(image_shape) < 4:
            raise ValueError(f"the CNN needs images of at least 4x4 pixels, got shape {image_shape}")
        h, w = image_shape
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * (h // 4) * (w // 4), hidden), nn.ReLU(), nn.Linear(hidden, num_classes))
    return nn.Sequential(nn.Linear(num_features, hidden), _relu(nn), nn.Linear(hidden, num_classes))


def _image_shape(split: Split) -> tuple[int, int] | None:
    shape = tuple(split.train_x.shape[1:])
    return (int(shape[0]), int(shape[1])) if len(shape) == 2 else None


def _describe(opts: Options, split: Split) -> str:
    if opts.model == "cnn":
        h, w = _image_shape(split) or (0, 0)
        return f"CNN {h}x{w} conv32-pool-conv64-pool-{opts.hidden}-{split.num_classes}"
    return f"MLP {split.num_features}-{opts.hidden}-{split.num_classes}"


def _relu(nn: Any) -> Any:
    if hasattr(nn, "ReLU"):
        return nn.ReLU()

    # flambeau.nn's activations land separately; until then, max(x, 0) as a parameterless module
    # (the state_dict is the same: ReLU has no parameters).
    class ReLU(nn.Module):
        def forward(self, x: Any) -> Any:
            return x.clamp(min=0)

    return ReLU()


def build_optimizer(name: str, params: Any, lr: float) -> Any:
    from flambeau import optim

    if name == "sgd":
        return optim.SGD(params, lr=lr, momentum=0.9)
    if name == "adam":
        return optim.Adam(params, lr=lr)
    return optim.AdamW(params, lr=lr)


def load_data(opts: Options) -> Split:
    from . import _datasets

    return _datasets.digits() if opts.data is None else _datasets.idx_folder(opts.data)


def _tensors(split: Split, model: str = "mlp") -> tuple[Any, Any, Any, Any]:
    """Images as rows of features (the MLP) or as one-channel images ``(N, 1, H, W)`` (the CNN)."""
    import flambeau as fb

    shape: tuple[int, ...] = (-1, split.num_features)
    if model == "cnn":
        image = _image_shape(split)
        if image is None:
            raise DataError(f"{split.name}: the CNN needs 2-D images, got samples of shape {split.train_x.shape[1:]}")
        shape = (-1, 1) + image
    return (fb.from_numpy(split.train_x.reshape(shape)), fb.from_numpy(split.train_y),
            fb.from_numpy(split.test_x.reshape(shape)), fb.from_numpy(split.test_y))


def evaluate(model: Any, x: Any, y: Any, batch_size: int = 1024) -> float:
    """Accuracy of ``model`` on ``(x, y)``, in [0, 1]."""
    import flambeau as fb

    model.eval()
    correct = 0
    with fb.no_grad():
        for start in range(0, len(y), batch_size):
            logits = model(x[start:start + batch_size])
            correct += int((logits.argmax(dim=1) == y[start:start + batch_size]).sum().item())
    return correct / max(len(y), 1)


class CheckpointMismatch(ValueError):
    """A checkpoint that does not belong to this run's model, data or optimizer."""


def _run_config(opts: Options, split: Split) -> dict[str, Any]:
    # what must match for --resume to make sense
    return {"model": opts.model, "hidden": opts.hidden, "optimizer": opts.optimizer,
            "num_features": split.num_features, "num_classes": split.num_classes, "data": split.name}


def _restore(path: str, opts: Options, split: Split, model: Any, optimizer: Any, shuffle: Any) -> tuple[int, History]:
    import flambeau as fb

    ckpt = fb.load(path, map_location="cpu")
    if not isinstance(ckpt, dict) or not {"model", "optimizer", "epoch", "config"} <= set(ckpt):
        raise CheckpointMismatch(f"{path}: not a checkpoint of flambeau train (it needs model, optimizer, epoch and "
                                 "config entries)")
    want = _run_config(opts, split)
    diff = {k: (ckpt["config"].get(k), v) for k, v in want.items() if ckpt["config"].get(k) != v}
    if diff:
        detail = "; ".join(f"{k}: checkpoint {a!r}, this run {b!r}" for k, (a, b) in diff.items())
        raise CheckpointMismatch(f"{path}: a checkpoint of another model or data set ({detail})")
    try:
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
    except (KeyError, RuntimeError, ValueError) as e:
        raise CheckpointMismatch(f"{path}: its weights do not fit this model: {e}") from None
    if "shuffle_state" in ckpt:
        shuffle.set_state(ckpt["shuffle_state"])
    if "rng_state" in ckpt:
        fb.set_rng_state(ckpt["rng_state"])
    h = ckpt.get("history", {})
    history = History(*(list(h.get(k, [])) for k in ("train_loss", "train_acc", "test_acc", "epoch_seconds")))
    return int(ckpt["epoch"]), history


def train(opts: Options, out: TextIO | None = None) -> History:
    """Run the training described by ``opts``, printing to ``out`` (default: stdout); return the history."""
    out = sys.stdout if out is None else out
    import flambeau as fb
    from flambeau.nn import functional as F
    from flambeau.utils.data import DataLoader, TensorDataset

    split = load_data(opts)
    train_x, train_y, test_x, test_y = _tensors(split, opts.model)
    fb.manual_seed(opts.seed)
    model = build_model(split.num_features, opts.hidden, split.num_classes, opts.model, _image_shape(split))
    shuffle = fb.Generator().manual_seed(opts.seed)
    dataset = TensorDataset(train_x, train_y)
    par = _Parallel.start() if _Parallel.wanted() else None
    if par is None:
        loader = DataLoader(dataset, batch_size=opts.batch_size, shuffle=True, generator=shuffle)
        net = model
    else:
        loader = DataLoader(dataset, batch_size=max(1, opts.batch_size // par.world_size),
                            sampler=par.sampler(dataset, opts.seed))
        if par.rank != 0:  # one process prints, saves and plots
            out, opts = open(os.devnull, "w"), Options(**{**opts.__dict__, "progress": False, "plot": False})
    optimizer = build_optimizer(opts.optimizer, model.parameters(), opts.lr)

    start_epoch, history = 0, History()
    if opts.resume is not None:
        start_epoch, history = _restore(opts.resume, opts, split, model, optimizer, shuffle)
    print(f"flambeau train: {split.name}: {len(train_y)} training and {len(test_y)} test images, "
          f"{split.num_classes} classes; {_describe(opts, split)}, "
          f"{opts.optimizer} lr={opts.lr}, batch {opts.batch_size}, seed {opts.seed}"
          + (f"; resuming after epoch {start_epoch}" if opts.resume else ""), file=out)
    os.makedirs(opts.out, exist_ok=True)
    checkpoint = os.path.join(opts.out, CHECKPOINT)

    if par is not None:
        net = par.wrap(model)  # after --resume: rank 0's restored weights go to every process
        print(f"data-parallel: {par.world_size} processes, {loader.batch_size} images per process and step",
              file=out)
    for epoch in range(start_epoch, opts.epochs):
        began = time.perf_counter()
        if par is not None:
            loader.sampler.set_epoch(epoch)
        total_loss, correct, seen = run_epoch(net, optimizer, _progress(loader, epoch, opts, out), F.cross_entropy)
        if par is not None:
            total_loss, correct, seen = par.sum(total_loss, correct, seen)
        history.train_loss.append(total_loss / seen)
        history.train_acc.append(correct / seen)
        history.test_acc.append(evaluate(model, test_x, test_y))
        history.epoch_seconds.append(time.perf_counter() - began)
        print(f"epoch {epoch + 1}/{opts.epochs}: loss {history.train_loss[-1]:.4f}, "
              f"train accuracy {history.train_acc[-1]:.2%}, test accuracy {history.test_acc[-1]:.2%}", file=out)
        fb.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1,
                 "seed": opts.seed, "config": _run_config(opts, split), "history": history.as_dict(),
                 "shuffle_state": shuffle.get_state(), "rng_state": fb.get_rng_state()}, checkpoint)

    if history.test_acc:
        print(f"test accuracy: {history.test_acc[-1]:.2%}", file=out)
    print(f"checkpoint: {checkpoint}", file=out)
    if opts.plot and history.test_acc:
        from ._plot import plot_history

        png = os.path.join(opts.out, PLOT)
        plot_history(history, png, title=split.name)
        print(f"plot: {png}", file=out)
    if par is not None:
        par.stop()
    return history


def run_epoch(model: Any, optimizer: Any, batches: Any, loss_fn: Any) -> tuple[float, int, int]:
    """One pass of training over ``batches``: ``(summed loss, correct predictions, samples)``.

    Framework-neutral (PyTorch's API only), so benchmarks/bench_train.py runs this very loop with
    PyTorch's modules for the comparison.
    """
    model.train()
    total_loss, correct, seen = 0.0, 0, 0
    for x, y in batches:
        optimizer.zero_grad()
        logits = model(x)
        loss = loss_fn(logits, y)
        loss.backward()
        optimizer.step()
        n = len(y)
        total_loss += loss.item() * n
        correct += int((logits.argmax(dim=1) == y).sum().item())
        seen += n
        if hasattr(batches, "set_postfix"):
            batches.set_postfix(loss=f"{total_loss / seen:.4f}", acc=f"{correct / seen:.3f}", refresh=False)
    return total_loss, correct, seen


def _progress(loader: Any, epoch: int, opts: Options, out: TextIO) -> Any:
    if not opts.progress:
        return loader
    from tqdm import tqdm

    return tqdm(loader, desc=f"epoch {epoch + 1}/{opts.epochs}", unit="batch", file=sys.stderr, leave=False,
                dynamic_ncols=True)


class _Parallel:
    """Data-parallel training under ``flambeau run`` (``flambeau train --nproc-per-node N`` starts it)."""

    ENV = "FLAMBEAU_TRAIN_DATA_PARALLEL"

    def __init__(self, dist: Any) -> None:
        self.dist = dist
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()

    @classmethod
    def wanted(cls) -> bool:
        return os.environ.get(cls.ENV) == "1"

    @classmethod
    def start(cls) -> "_Parallel":
        import flambeau.distributed as dist

        dist.init_process_group()
        return cls(dist)

    def sampler(self, dataset: Any, seed: int) -> Any:
        from flambeau.utils.data import DistributedSampler

        return DistributedSampler(dataset, num_replicas=self.world_size, rank=self.rank, shuffle=True, seed=seed)

    def wrap(self, model: Any) -> Any:
        return self.dist.DistributedDataParallel(model)

    def sum(self, *values: float) -> tuple:
        import flambeau as fb

        t = fb.tensor([float(v) for v in values], dtype=fb.float64)
        self.dist.all_reduce(t)
        return tuple(t.tolist())

    def stop(self) -> None:
        self.dist.destroy_process_group()


def _launch_data_parallel(opts: Options) -> int:
    """Start ``flambeau train`` again in ``opts.nproc_per_node`` processes under flambeau.distributed's launcher."""
    try:
        from flambeau.distributed.run import main as run_main
    except ImportError:
        print("flambeau train: --nproc-per-node needs flambeau-distributed (pip install flambeau-distributed "
              "mpi4py mpich)", file=sys.stderr)
        return 2
    argv = ["--model", opts.model, "--epochs", str(opts.epochs), "--batch-size", str(opts.batch_size),
            "--lr", str(opts.lr), "--optimizer", opts.optimizer, "--seed", str(opts.seed), "--hidden",
            str(opts.hidden), "--out", opts.out]
    argv += ["--data", opts.data] if opts.data else []
    argv += ["--resume", opts.resume] if opts.resume else []
    argv += [] if opts.progress else ["--no-progress"]
    argv += [] if opts.plot else ["--no-plot"]
    os.environ[_Parallel.ENV] = "1"
    try:
        return run_main(["--nproc-per-node", str(opts.nproc_per_node), "-m", "flambeau.cli", "train", *argv])
    finally:
        del os.environ[_Parallel.ENV]


def run_train(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """The ``flambeau train`` subcommand: 0 on success, 2 on bad data or checkpoint (message on stderr)."""
    opts = options_from(args)
    if opts.nproc_per_node > 1 and not _Parallel.wanted():
        return _launch_data_parallel(opts)
    try:
        train(opts, out)
    except (DataError, CheckpointMismatch) as e:
        print(f"flambeau train: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        from flambeau.serialization import CheckpointError

        if isinstance(e, CheckpointError):
            print(f"flambeau train: error: {e}", file=sys.stderr)
            return 2
        raise
    except OSError as e:
        print(f"flambeau train: error: {e}", file=sys.stderr)
        return 2
    return 0
