"""The ``flambeau`` command line: demo and info."""
from __future__ import annotations

import io
import subprocess
import sys
from importlib import metadata

import pytest

from flambeau.cli import main
from flambeau.cli._demo import run_demo, tensor_tour


def test_tensor_tour_prints_computed_results():
    out = io.StringIO()
    tensor_tour(out)
    text = out.getvalue()
    for section in ("creation", "broadcasting arithmetic", "reductions", "matmul", "views share storage"):
        assert f"== {section} ==" in text
    # Results the tour must have computed (arange(6).reshape(2, 3) = [[0, 1, 2], [3, 4, 5]]).
    assert "a.sum(): tensor(15.)" in text
    assert "a.sum(dim=0): tensor([3., 5., 7.])" in text
    assert "[56., 68., 80., 92.]" in text  # second row of a @ arange(12).reshape(3, 4)
    assert "matmul(a, ones(3)): tensor([ 3., 12.])" in text
    # a[0] is a view: filling it changes a.
    assert "tensor([[-1., -1., -1.],\n        [ 3.,  4.,  5.]])" in text


def test_main_demo_returns_zero(capsys):
    assert main(["demo"]) == 0
    assert "== matmul ==" in capsys.readouterr().out


def test_run_demo_writes_to_given_stream(capsys):
    out = io.StringIO()
    assert run_demo(out) == 0
    assert out.getvalue().startswith("flambeau ")
    assert capsys.readouterr().out == ""


def test_demo_rejects_unknown_arguments(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--bogus"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "usage: flambeau" in capsys.readouterr().err


def test_version_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"flambeau {metadata.version('flambeau')}"


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flambeau.cli", *args], capture_output=True, text=True, timeout=120)


def test_info_forwards_to_python_m_flambeau_info():
    forwarded = _run_cli("info")
    direct = subprocess.run(
        [sys.executable, "-m", "flambeau", "info"], capture_output=True, text=True, timeout=120
    )
    assert forwarded.returncode == 0, forwarded.stderr
    assert "flambeau-core-tensor" in forwarded.stdout
    assert "Backends:" in forwarded.stdout
    assert forwarded.stdout == direct.stdout


def test_info_forwards_options_and_exit_status():
    with_ops = _run_cli("info", "--ops")
    assert with_ops.returncode == 0, with_ops.stderr
    bad = _run_cli("info", "--no-such-option")
    assert bad.returncode == 2
    assert "python -m flambeau" in bad.stderr  # the error comes from flambeau's own parser


def test_demo_subprocess():
    result = _run_cli("demo")
    assert result.returncode == 0, result.stderr
    assert "a.sum(dim=0): tensor([3., 5., 7.])" in result.stdout


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ModuleNotFoundError:
        return False
    return True


@pytest.mark.skipif(
    not (_importable("flambeau.autograd") and _importable("flambeau.optim")),
    reason="the training run needs flambeau-core-autograd and flambeau-optim",
)
def test_training_run_fits_the_line():
    from flambeau.cli._demo import training_run

    out = io.StringIO()
    loss = training_run(out)
    assert loss < 1e-6
    assert "weight 3.0000 (want 3), bias -1.0000 (want -1)" in out.getvalue()


def test_run_without_flambeau_distributed_names_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "flambeau.distributed.run", None)  # import raises ImportError
    assert main(["run", "--nproc-per-node", "2", "train.py"]) == 2
    assert "pip install flambeau-distributed" in capsys.readouterr().err


def test_train_nproc_per_node_without_flambeau_distributed(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "flambeau.distributed.run", None)
    monkeypatch.delenv("FLAMBEAU_TRAIN_DATA_PARALLEL", raising=False)
    assert main(["train", "--nproc-per-node", "2", "--out", str(tmp_path)]) == 2
    assert "--nproc-per-node needs flambeau-distributed" in capsys.readouterr().err


def test_run_forwards_its_options():
    pytest.importorskip("flambeau.distributed")
    result = subprocess.run([sys.executable, "-m", "flambeau.cli", "run", "--help"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and "--nproc-per-node" in result.stdout, result.stderr
