"""Running replicas on their inputs concurrently (parallel_apply)."""
from __future__ import annotations

import threading
from typing import Any, Sequence

import flambeau

__all__ = ["parallel_apply"]


def parallel_apply(modules: Sequence[Any], inputs: Sequence[Any], kwargs_tup: Sequence[dict] | None = None,
                   devices: Sequence[Any] | None = None) -> list:
    r"""Call ``modules[i](*inputs[i], **kwargs_tup[i])`` for every ``i``, one thread each; the outputs.

    An input that is not a tuple or list is passed as the one argument. The grad mode of the calling
    thread applies in every thread. An exception in any call is raised again here, naming the replica.
    """
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    if len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs "
                             f"{len(kwargs_tup)}")
    if devices is not None and len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of devices "
                             f"{len(devices)}")
    grad_enabled = flambeau.is_grad_enabled()
    results: dict[int, Any] = {}
    errors: dict[int, Exception] = {}

    def worker(i: int, module: Any, input: Any, kwargs: dict) -> None:
        try:
            with flambeau.set_grad_enabled(grad_enabled):
                if not isinstance(input, (list, tuple)):
                    input = (input,)
                results[i] = module(*input, **kwargs)
        except Exception as exc:
            errors[i] = exc

    if len(modules) > 1:
        threads = [threading.Thread(target=worker, args=(i, m, x, k))
                   for i, (m, x, k) in enumerate(zip(modules, inputs, kwargs_tup))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    elif modules:
        worker(0, modules[0], inputs[0], kwargs_tup[0])
    for i in sorted(errors):
        where = f" on device {devices[i]}" if devices is not None else ""
        raise RuntimeError(f"Caught {type(errors[i]).__name__} in replica {i}{where}: {errors[i]}") from errors[i]
    return [results[i] for i in range(len(inputs))]
