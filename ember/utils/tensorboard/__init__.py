"""TensorBoard logging: ``SummaryWriter`` writes event files that ``tensorboard --logdir`` reads.

Needs the ``tensorboard`` package: ``pip install ember[tensorboard]``."""
try:
    from tensorboard.summary.writer.record_writer import RecordWriter
except ImportError as e:
    raise ImportError("ember.utils.tensorboard needs the tensorboard package: "
                      "pip install 'ember[tensorboard]' (or pip install tensorboard)") from e

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
