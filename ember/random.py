"""``torch.random``: seeding and the state of the default generator."""
from ._random import (Generator, default_generator, fork_rng, get_rng_state, initial_seed, manual_seed, seed,
                      set_rng_state)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state", "thread_safe_generator"]


def thread_safe_generator():
    """The generator for random draws in DataLoader workers: ``None`` (the default generator), as every worker is
    a process with its own seeded generators."""
    return None
