"""capturable=True on CPU parameters and differentiable=True on leaves raise as torch's optimizers do."""
import pytest
import torch

import ember
from tests.autograd.common import same_error

NAMES = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adadelta", "ASGD", "Rprop"]


def _step(lib, name, **flags):
    p = lib.nn.Parameter(lib.ones(3))
    opt = getattr(lib.optim, name)([p], lr=0.1, **flags)
    p.grad = lib.ones(3)
    opt.step()


@pytest.mark.parametrize("name", NAMES)
def test_capturable_on_cpu_raises(name):
    same_error(lambda lib: _step(lib, name, capturable=True))


@pytest.mark.parametrize("name", NAMES + ["SGD", "Adagrad"])
def test_differentiable_with_leaf_raises(name):
    same_error(lambda lib: _step(lib, name, differentiable=True))


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_no_grad_steps_unaffected(name):
    p = ember.nn.Parameter(ember.ones(3))
    opt = getattr(ember.optim, name)([p], lr=0.1)
    p.grad = ember.ones(3)
    opt.step()
    tp = torch.nn.Parameter(torch.ones(3))
    topt = getattr(torch.optim, name)([tp], lr=0.1)
    tp.grad = torch.ones(3)
    topt.step()
    assert p.tolist() == pytest.approx(tp.tolist())
