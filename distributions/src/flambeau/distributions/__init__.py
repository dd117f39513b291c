r"""flambeau.distributions: parameterizable probability distributions and sampling functions, with
``torch.distributions``' API.

Score-function (REINFORCE) estimator::

    probs = policy_network(state)
    m = Categorical(probs)
    action = m.sample()
    next_state, reward = env.step(action)
    loss = -m.log_prob(action) * reward
    loss.backward()

Pathwise derivative (reparameterisation)::

    params = policy_network(state)
    m = Normal(*params)
    action = m.rsample()
    next_state, reward = env.step(action)
    loss = -reward
    loss.backward()
"""
from __future__ import annotations

from ._version import __version__

# `import flambeau` imports this package (its op plugin is flambeau.distributions._ops), and the ~50
# modules below were ~9% of that import with every distribution installed: they load on the first
# use of any name of the package (all of them at once, as the eager import did), not before.

_ALL = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
    "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
    "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
    "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart",
    "biject_to", "constraints", "kl_divergence", "register_kl", "transform_to", "transforms",
    "__version__",
]
_loaded = False


def _load() -> None:
    """Import every module of the package and bind its public names here, as the eager
    ``__init__`` did (once; a recursive call during it returns at once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from . import constraints, transforms
    from .bernoulli import Bernoulli
    from .beta import Beta
    from .binomial import Binomial
    from .categorical import Categorical
    from .cauchy import Cauchy
    from .chi2 import Chi2
    from .constraint_registry import biject_to, transform_to
    from .continuous_bernoulli import ContinuousBernoulli
    from .dirichlet import Dirichlet
    from .distribution import Distribution
    from .exp_family import ExponentialFamily
    from .exponential import Exponential
    from .fishersnedecor import FisherSnedecor
    from .gamma import Gamma
    from .generalized_pareto import GeneralizedPareto
    from .geometric import Geometric
    from .gumbel import Gumbel
    from .half_cauchy import HalfCauchy
    from .half_normal import HalfNormal
    from .independent import Independent
    from .inverse_gamma import InverseGamma
    from .kl import kl_divergence, register_kl
    from .kumaraswamy import Kumaraswamy
    from .laplace import Laplace
    from .lkj_cholesky import LKJCholesky
    from .log_normal import LogNormal
    from .logistic_normal import LogisticNormal
    from .lowrank_multivariate_normal import LowRankMultivariateNormal
    from .mixture_same_family import MixtureSameFamily
    from .multinomial import Multinomial
    from .multivariate_normal import MultivariateNormal
    from .negative_binomial import NegativeBinomial
    from .normal import Normal
    from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
    from .pareto import Pareto
    from .poisson import Poisson
    from .relaxed_bernoulli import RelaxedBernoulli
    from .relaxed_categorical import RelaxedOneHotCategorical
    from .student_t import StudentT
    from .transformed_distribution import TransformedDistribution
    from .uniform import Uniform
    from .von_mises import VonMises
    from .weibull import Weibull
    from .wishart import Wishart

    names = dict(locals())
    globals().update(names)
    globals().update({name: getattr(transforms, name) for name in transforms.__all__})
    globals()["__all__"] = _ALL + list(transforms.__all__)


def __getattr__(name: str) -> object:
    # A private name is never a reason to load: `from . import _samplers` (the op plugin's own
    # import) asks for the attribute first, and dunder probes come from the import system.
    if name.startswith("_") and name != "__all__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _submodules():
        # A submodule's own `from . import constraints` comes here too (the import system asks for
        # the attribute first), possibly while another submodule is half-imported: import just it.
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    _load()
    try:
        return globals()[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


_SUBMODULES: frozenset[str] | None = None


def _submodules() -> frozenset[str]:
    """The names of the package's modules and subpackages (read from its folder once)."""
    global _SUBMODULES
    if _SUBMODULES is None:
        import os

        folder = os.path.dirname(__file__)
        _SUBMODULES = frozenset(
            name[:-3] if name.endswith(".py") else name for name in os.listdir(folder)
            if name.endswith(".py") or os.path.isfile(os.path.join(folder, name, "__init__.py")))
    return _SUBMODULES


def __dir__() -> list[str]:
    _load()
    return sorted(globals())
