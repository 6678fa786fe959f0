"""Datasets: MNIST, Fashion-MNIST, CIFAR-10/100 (torchvision's layouts and arguments) and text windows for
language models."""
from .cifar import CIFAR10, CIFAR100
from .mnist import MNIST, FashionMNIST
from .text import CharDataset, TinyShakespeare, TokenDataset

__all__ = ["CIFAR10", "CIFAR100", "CharDataset", "FashionMNIST", "MNIST", "TinyShakespeare", "TokenDataset"]
