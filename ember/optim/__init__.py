"""Optimizers (one per file) and learning-rate schedulers."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .asgd import ASGD
from .rprop import Rprop
from .lbfgs import LBFGS
from .adafactor import Adafactor
from .muon import Muon
from . import lr_scheduler
from . import swa_utils
