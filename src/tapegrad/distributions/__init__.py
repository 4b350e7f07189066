"""``torch.distributions``: probability distributions with sampling, reparameterized sampling
(gradients through the sample), log-densities, entropies and KL divergences.

Every random draw goes through tapegrad's generator with torch's algorithms, so after the same
``manual_seed`` a distribution's samples equal torch's. Read ``distribution.py`` (the base
class), then a family (``normal.py``), ``transforms.py`` + ``transformed_distribution.py`` (new
distributions by change of variables) and ``kl.py``.
"""

from __future__ import annotations

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .poisson import Poisson
from .relaxed import (
    ExpRelaxedCategorical,
    LogitRelaxedBernoulli,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution",
    "ExpRelaxedCategorical", "Exponential", "ExponentialFamily", "Gamma", "Independent",
    "Laplace", "LogNormal", "LogitRelaxedBernoulli", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "TransformedDistribution",
    "Uniform", "biject_to", "constraints", "kl_divergence", "register_kl", "transform_to",
    "transforms",
]
__all__.extend(transforms.__all__)
