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
from .cauchy import Cauchy, HalfCauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .logistic_normal import LogisticNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .relaxed import (
    ExpRelaxedCategorical,
    LogitRelaxedBernoulli,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from .student_t import StudentT
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform
from .weibull import Weibull

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution",
    "ExpRelaxedCategorical", "Exponential", "ExponentialFamily", "Gamma", "Independent",
    "Laplace", "LogNormal", "LogitRelaxedBernoulli", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "TransformedDistribution",
    "Uniform", "biject_to", "constraints", "kl_divergence", "register_kl", "transform_to",
    "transforms", "Cauchy", "HalfCauchy", "Chi2", "Geometric", "Gumbel", "HalfNormal",
    "InverseGamma", "Kumaraswamy", "LogisticNormal", "NegativeBinomial", "Pareto", "StudentT",
    "Weibull",
]
__all__.extend(transforms.__all__)
