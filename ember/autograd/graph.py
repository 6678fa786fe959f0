"""Graph inspection, as ``torch.autograd.graph``: the Node type, gradient edges, version bumps."""
from abc import ABC
from typing import NamedTuple

from . import function as _fn


class Node(ABC):
    """The type of every backward node: ``tensor.grad_fn`` and the AccumulateGrad nodes of leaves."""

    def name(self):
        raise NotImplementedError


Node.register(_fn.Function)
Node.register(_fn.AccumulateGrad)


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: a node and which of its outputs."""

    node: object
    output_nr: int


def get_gradient_edge(tensor):
    """The GradientEdge of ``tensor``: its grad_fn and output number, or its AccumulateGrad for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    if tensor.grad_fn is None:
        return GradientEdge(_fn._accumulate_grad_node(tensor), 0)
    return GradientEdge(tensor.grad_fn, tensor._output_nr)


def increment_version(tensor):
    """Marks ``tensor`` as modified in place (for writes autograd cannot see)."""
    for t in tensor if isinstance(tensor, (list, tuple)) else (tensor,):
        t._vc[0] += 1
