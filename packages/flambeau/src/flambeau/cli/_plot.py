"""The PNG of ``flambeau train``: training loss and test accuracy per epoch (matplotlib, Agg backend)."""
from __future__ import annotations

from typing import Any


def plot_history(history: Any, path: str, title: str = "") -> None:
    """Write ``history.train_loss`` and ``history.test_acc`` per epoch, side by side, to the PNG ``path``."""
    # A bare Figure renders through Agg without pyplot: no display, no window, no global backend change.
    from matplotlib.figure import Figure

    epochs = list(range(1, len(history.train_loss) + 1))
    fig = Figure(figsize=(9, 3.5), dpi=100)
    loss_ax, acc_ax = fig.subplots(1, 2)
    loss_ax.plot(epochs, history.train_loss, marker="o", markersize=3)
    loss_ax.set(xlabel="epoch", ylabel="training loss (cross-entropy)", title="training loss")
    acc_ax.plot(epochs, [100 * a for a in history.test_acc], marker="o", markersize=3, color="tab:green")
    acc_ax.set(xlabel="epoch", ylabel="test accuracy (%)", title="test accuracy")
    for ax in (loss_ax, acc_ax):
        ax.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, format="png")
