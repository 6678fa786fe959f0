"""The examples in the docstrings of ember.distributions run as written."""
import doctest
import math
import importlib

import pytest

import ember
import ember.distributions as D

MODULES = ["ember.distributions"] + [f"ember.distributions.{m}" for m in (
    "normal", "uniform", "bernoulli", "categorical", "one_hot_categorical", "multivariate_normal", "independent",
    "beta", "gamma", "exponential", "laplace", "poisson", "binomial", "log_normal", "dirichlet", "cauchy", "geometric", "transformed_distribution", "studentT",
    "half_normal", "multinomial", "mixture_same_family", "gumbel", "weibull", "pareto", "half_cauchy", "chi2",
    "fishersnedecor", "kumaraswamy", "logistic_normal", "continuous_bernoulli", "negative_binomial", "von_mises",
    "relaxed_bernoulli", "relaxed_categorical", "lowrank_multivariate_normal", "constraint_registry")]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    globs = {"ember": ember, "D": D, "math": math, **{k: getattr(D, k) for k in D.__all__}}
    result = doctest.testmod(module, globs=globs, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
