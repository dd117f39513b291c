"""``flambeau.nn.utils.prune``: pruning a module's tensors by masking them (torch.nn.utils.prune's API).

Pruning the tensor ``name`` of a module moves the original to the parameter ``name + "_orig"``,
adds the buffer ``name + "_mask"`` (1 = kept, 0 = pruned) and registers the pruning method as a
forward pre-hook that recomputes ``name = name_orig * name_mask`` before every forward (a plain
attribute, so the gradient reaches ``name_orig`` through the mask). Pruning the same tensor again
stacks the methods in a :class:`PruningContainer`, each new one acting on what the previous left.
:func:`remove` makes the pruning permanent.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from typing import Any, Iterable, Iterator

import flambeau
from flambeau import Tensor

from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


class BasePruningMethod(ABC):
    r"""Base of the pruning methods: subclasses define ``PRUNING_TYPE`` (``"unstructured"``,
    ``"structured"`` or ``"global"``) and :meth:`compute_mask`."""

    _tensor_name: str | None
    PRUNING_TYPE: str

    def __call__(self, module: Any, inputs: Any) -> None:
        """The forward pre-hook: recompute the pruned tensor from its original and its mask."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask of ``t``, given the mask of earlier prunings (``default_mask``)."""

    def apply_mask(self, module: Any) -> Tensor:
        """``name_orig * name_mask``, the pruned tensor."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> "BasePruningMethod":
        """Prune ``module``'s tensor ``name`` with a new ``cls(*args, **kwargs)`` on the fly.

        Args:
            module: the module holding the tensor.
            name: the parameter's name.
            importance_scores: what the mask is computed from (the tensor itself by default).
        """
        old_method = None
        found = 0
        stale = []
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                stale.append(k)
                found += 1
        if found > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                                 "Use a PruningContainer.")
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:
            container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}")
        else:
            importance_scores = orig
        if old_method is None:
            default_mask = flambeau.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        # the mask first: a bad amount fails before the module changes
        mask = method.compute_mask(importance_scores, default_mask=default_mask)
        for k in stale:
            del module._forward_pre_hooks[k]
        if old_method is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None) -> Tensor:
        """The pruned version of ``t`` (not in place; no module involved)."""
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(t.shape):
            raise AssertionError("importance_scores should have the same shape as tensor t")
        scores = importance_scores if importance_scores is not None else t
        default_mask = default_mask if default_mask is not None else flambeau.ones_like(t)
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Make the pruning permanent: ``name`` becomes a parameter again holding the pruned values;
        ``name_orig`` and ``name_mask`` go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        with flambeau.no_grad():
            orig.copy_(weight)
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods applied one after the other to the same tensor.

    Each method's mask acts on what the earlier ones kept: an unstructured one on the kept entries,
    a structured one on the kept channels.
    """

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        self._tensor_name = None
        if len(args) == 1:  # one method (a container too: it nests, as PyTorch's does)
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod | None) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on the slice the earlier masks left."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype).clone()
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            keep = default_mask == 1
            partial = method.compute_mask(t[keep], default_mask=default_mask[keep])
            new_mask[keep] = partial.to(dtype=new_mask.dtype)
            return new_mask
        if kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            n_dims = t.dim()
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            others = [d for d in range(n_dims) if d != dim]
            channels = (default_mask.sum(dim=others) != 0).nonzero().reshape(-1)
            kept_t, kept_mask = t.index_select(dim, channels), default_mask.index_select(dim, channels)
            partial = method.compute_mask(kept_t, default_mask=kept_mask).to(dtype=new_mask.dtype)
            return new_mask.index_copy(dim, channels, partial)
        if kind == "global":
            return method.compute_mask(t, default_mask=default_mask).to(dtype=new_mask.dtype)
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (a pruning method to start from)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> "Identity":  # type: ignore[override]
        return super().apply(module, name)


def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real) or isinstance(amount, bool):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {t.dim()} dims")


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _zero_flat(mask: Tensor, indices: Tensor) -> Tensor:
    """``mask`` with the entries at ``indices`` of its flattened view set to 0."""
    flat = mask.reshape(-1).clone()
    flat[indices] = 0
    return flat.reshape(mask.shape)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries chosen uniformly at random (an int: how many; a float: the fraction)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        size = t.numel()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone()
        if k != 0:
            prob = flambeau.rand_like(t)
            mask = _zero_flat(mask, flambeau.topk(prob.reshape(-1), k).indices)
        return mask

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float) -> "RandomUnstructured":  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value (importance score)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        size = t.numel()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone()
        if k != 0:
            mask = _zero_flat(mask, flambeau.topk(t.abs().reshape(-1), k, largest=False).indices)
        return mask

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> "L1Unstructured":
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t: Tensor, dim: int, channels: Tensor) -> Tensor:
    """Zeros like ``t`` with ones in the given channels (indices along ``dim``)."""
    mask = flambeau.zeros_like(t)
    shape = [1] * t.dim()
    shape[dim] = t.shape[dim]
    keep = flambeau.zeros(t.shape[dim], dtype=t.dtype, device=t.device)
    keep[channels] = 1
    return mask + keep.reshape(shape)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        if k == 0:
            return default_mask
        prob = flambeau.rand(size, device=t.device)
        kept = flambeau.topk(prob, size - k).indices
        return _channel_mask(t, self.dim, kept) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float, dim: int = -1) -> "RandomStructured":  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        if k == 0:
            return default_mask
        dim = self.dim % t.dim()
        others = [d for d in range(t.dim()) if d != dim]
        norm = flambeau.linalg.vector_norm(t, ord=self.n, dim=others)
        kept = flambeau.topk(norm, size - k, largest=True).indices
        return _channel_mask(t, dim, kept) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> "LnStructured":
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (combined with any earlier one)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError(f"mask of shape {tuple(self.mask.shape)} does not match the tensor's "
                                 f"{tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor) -> "CustomFromMask":  # type: ignore[override]
        return super().apply(module, name, mask=mask)


# -- the functional forms ----------------------------------------------------------------------------

def identity(module: Any, name: str) -> Any:
    """Attach a mask of ones to ``module.name`` (pruning nothing); returns the module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: int | float) -> Any:
    """Prune ``amount`` random entries of ``module.name``; returns the module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: int | float, importance_scores: Tensor | None = None) -> Any:
    """Prune the ``amount`` entries of ``module.name`` of smallest magnitude; returns the module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: int | float, dim: int) -> Any:
    """Prune ``amount`` random channels of ``module.name`` along ``dim``; returns the module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Any:
    """Prune the ``amount`` channels along ``dim`` of smallest L``n`` norm; returns the module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Any, str]], pruning_type: Any,
                        importance_scores: dict | None = None, **kwargs: Any) -> None:
    """Prune the tensors ``(module, name)`` together: the scores of all of them are pooled, and
    ``pruning_type(**kwargs)`` (an unstructured method) picks the entries to prune among them."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    method = pruning_type(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_type`. Found method '
                        f"{pruning_type} of type {method.PRUNING_TYPE}")
    with flambeau.no_grad():
        scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
        default_mask = parameters_to_vector([getattr(m, n + "_mask", flambeau.ones_like(getattr(m, n)))
                                             for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + count].reshape(param.shape))
        pointer += count


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    """Prune ``module.name`` with ``mask`` (0 = pruned); returns the module."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Make the pruning of ``module.name`` permanent (drop ``name_orig``, ``name_mask`` and the hook)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Any) -> bool:
    """Whether ``module`` or any submodule has a pruning hook."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
