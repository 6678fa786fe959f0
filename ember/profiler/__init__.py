"""Profiling, as ``torch.profiler``: time ops, backward nodes and labelled blocks."""
from ..autograd.profiler import record_function
from .profiler import (ProfilerAction, ProfilerActivity, profile, schedule, supported_activities,
                       tensorboard_trace_handler)

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]
