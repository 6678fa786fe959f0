"""The examples in the docstrings of the data-loading, dataset, transform and nn.utils modules run as written."""
import doctest
import importlib

import numpy as np
import pytest

import ember

MODULES = ["ember.utils.data.dataset", "ember.utils.data.sampler", "ember.utils.data.collate",
           "ember.utils.data.dataloader", "ember.datasets.text", "ember.transforms", "ember.nn.utils.clip_grad",
           "ember.nn.utils.convert_parameters"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    globs = {"ember": ember, "np": np, "numpy": np, **{k: getattr(module, k) for k in dir(module)}}
    result = doctest.testmod(module, globs=globs, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
