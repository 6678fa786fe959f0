"""``torch.quasirandom``: the Sobol low-discrepancy sequence.

The direction numbers are Joe and Kuo's (new-joe-kuo-6.21201), read from the table SciPy ships; points come in Gray
code order with 30 bits each, so unscrambled draws are exact and deterministic.
"""
import functools
import importlib.resources

import numpy as np

from . import _dtype
from ._device import CPU
from ._ops.shape import cat
from ._random import Generator, randint
from ._tensor import Tensor

__all__ = ["SobolEngine"]


@functools.lru_cache(maxsize=None)
def _direction_table():
    with importlib.resources.as_file(importlib.resources.files("scipy.stats") / "_sobol_direction_numbers.npz") as f:
        data = np.load(f)
        return data["poly"], data["vinit"]


def _direction_numbers(dimension, maxbit):
    """(dimension, maxbit) int64: column j of dimension d is its j-th direction number scaled to ``maxbit`` bits."""
    poly, vinit = _direction_table()
    poly = poly[:dimension]
    deg = np.array([int(p).bit_length() - 1 for p in poly])
    v = np.zeros((dimension, maxbit), np.int64)
    v[:, :vinit.shape[1]] = np.where(np.arange(vinit.shape[1]) < deg[:, None], vinit[:dimension], 0)
    v[0] = 1
    for j in range(1, maxbit):  # v_j = v_{j-m} ^ 2^m v_{j-m} ^ XOR_k a_k 2^k v_{j-k}, for the rows of degree m <= j
        rows = np.flatnonzero((deg <= j) & (deg > 0))
        m = deg[rows]
        new = v[rows, j - m]
        for k in range(int(m.max(initial=0))):
            use = (k < m) & ((poly[rows] >> np.maximum(m - 1 - k, 0)) & 1).astype(bool)
            new = np.where(use, new ^ (v[rows, np.maximum(j - k - 1, 0)] << (k + 1)), new)
        v[rows, j] = new
    return v << np.arange(maxbit - 1, -1, -1)


def _parity(x):
    if hasattr(np, "bitwise_count"):  # NumPy >= 2
        return np.bitwise_count(x) & 1
    for s in (32, 16, 8, 4, 2, 1):
        x = x ^ (x >> s)
    return x & 1


def _lowest_zero_bits(start, n):
    """The index of the lowest zero bit of each of ``start, ..., start + n - 1``: the Gray code step to take."""
    i = np.arange(start, start + n, dtype=np.int64)
    return np.log2((~i & (i + 1)).astype(np.float64)).astype(np.int64)


class SobolEngine:
    r"""Draws points of the (optionally scrambled) Sobol sequence in ``[0, 1)^dimension``.

    Args:
        dimension (int): the dimension of the points, in ``[1, 21201]``.
        scramble (bool): apply a random linear matrix scramble and digital shift. Default: ``False``
        seed (int, optional): the seed of the scrambling. Default: ``None``

    Example::

        >>> ember.quasirandom.SobolEngine(dimension=2).draw(3)
        tensor([[0.0000, 0.0000],
                [0.5000, 0.5000],
                [0.7500, 0.2500]])
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self.sobolstate = Tensor._make(_direction_numbers(dimension, self.MAXBIT), _dtype.int64, CPU)
        if not self.scramble:
            self.shift = Tensor._make(np.zeros(dimension, np.int64), _dtype.int64, CPU)
        else:
            self._scramble()
        self.quasi = self.shift.clone()
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scramble(self):
        g = Generator()
        if self.seed is not None:
            g.manual_seed(self.seed)
        bits = self.MAXBIT
        shift_bits = randint(2, (self.dimension, bits), generator=g)._data
        self.shift = Tensor._make(shift_bits @ (1 << np.arange(bits, dtype=np.int64)), _dtype.int64, CPU)
        # lower triangular binary matrices with a unit diagonal, one per dimension, rows packed as integers
        ltm = np.tril(randint(2, (self.dimension, bits, bits), generator=g)._data)
        ltm[:, np.arange(bits), np.arange(bits)] = 1
        rows = ltm @ (1 << np.arange(bits - 1, -1, -1, dtype=np.int64))  # (dimension, bits)
        v = self.sobolstate._data
        prod = _parity(rows[:, None, :] & v[:, :, None])  # (dimension, j, p): bit p of the scrambled v_j
        self.sobolstate._data[...] = prod @ (1 << np.arange(bits - 1, -1, -1, dtype=np.int64))

    def _advance(self, n, start, dtype=None):
        """``n`` Gray code steps from point ``start``: the points as ``dtype`` (None: no points), updating quasi."""
        if dtype is not None and dtype not in (_dtype.float32, _dtype.float64):
            raise NotImplementedError(f"\"_sobol_engine_draw\" not implemented for '{_dtype.scalar_name(dtype)}'")
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}, {self.dimension}]")
        steps = self.sobolstate._data[:, _lowest_zero_bits(start, n)].T  # (n, dimension)
        if dtype is None:
            if n:
                self.quasi._data[...] ^= np.bitwise_xor.reduce(steps, axis=0)
            return None
        points = np.bitwise_xor.accumulate(steps, axis=0) ^ self.quasi._data
        if n:
            self.quasi._data[...] = points[-1]
        return Tensor._make((points * 2.0 ** -self.MAXBIT).astype(dtype.np), dtype, CPU)

    def draw(self, n=1, out=None, dtype=None):
        """Draws the next ``n`` points, as an ``(n, dimension)`` tensor of ``dtype`` (default: the default
        dtype)."""
        if dtype is None:
            dtype = _dtype.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                result = self._advance(n - 1, 0, dtype)
                result = cat((self._first_point.to(dtype), result), dim=-2)
        else:
            result = self._advance(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """Draws the next ``2**m`` points; the total drawn must stay a power of 2, which keeps the sequence's
        balance properties."""
        n = 2 ** m
        total_n = self.num_generated + n
        if total_n & (total_n - 1):
            raise ValueError(f"The balance properties of Sobol' points require n to be a power of 2. "
                             f"{self.num_generated} points have been previously generated, then: "
                             f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, please use "
                             f"'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Goes back to the first point; returns the engine."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skips the next ``n`` points; returns the engine."""
        self._advance(max(n - 1, 0) if self.num_generated == 0 else n, max(self.num_generated - 1, 0))
        self.num_generated += n
        return self

    def __repr__(self):
        fmt = [f"dimension={self.dimension}"] + (["scramble=True"] if self.scramble else []) + \
            ([f"seed={self.seed}"] if self.seed is not None else [])
        return f"{type(self).__name__}({', '.join(fmt)})"
