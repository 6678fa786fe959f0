"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, with torch's parameter names and initialisation.

Each layer and direction projects the inputs of all time steps in one GEMM, then runs ``ember._ops.rnn.Recurrence``
(the hidden GEMM and fused gate math per step, with a hand-written backward); inputs are handled time-major and
packed, which makes padded batches, PackedSequences and single cell steps one code path.
"""
import math
import numbers
import warnings

from ... import _autocast
from ..._autocast import lower_precision_inputs
from ..._creation import empty, zeros
from ..._dtype import scalar_name
from ..._ops.matmul import addmm
from ..._ops.rnn import GATES, recurrence
from ..._ops.shape import cat, stack
from ..._tensor import Tensor
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def apply_permutation(tensor, permutation, dim=1):
    """Deprecated: ``tensor.index_select(dim, permutation)``."""
    warnings.warn("`apply_permutation` is deprecated, please use `tensor.index_select(dim, permutation)` instead",
                  FutureWarning, stacklevel=2)
    return tensor.index_select(dim, permutation)


def _project(x, w, b):
    """``x @ w^T + b`` for a 2-D ``x``: one GEMM (the input projection of every time step at once)."""
    return x @ w.mT if b is None else addmm(b, x, w.mT)


@lower_precision_inputs
def _lstm_states(h0, c0):
    """The states an LSTM layer starts from: in autocast's lower precision, as its fused CPU kernel takes them."""
    return h0, c0


def _check_state_dtype(h, dtype):
    """The error for a state whose dtype is not the input's and weights' (autocast casts them instead)."""
    if h.dtype is not dtype and _autocast.ACTIVE.get() is None:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {scalar_name(h.dtype)} and "
                           f"{scalar_name(dtype)}")


def _permute(hx, permutation):
    if permutation is None or hx is None:
        return hx
    if isinstance(hx, tuple):
        return tuple(h.index_select(1, permutation) for h in hx)
    return hx.index_select(1, permutation)


class RNNBase(Module):
    """Base of RNN, LSTM and GRU: the per-layer, per-direction parameters (``weight_ih_l{k}[_reverse]``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``, ``weight_hr_l{k}``) and the shared forward."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = {"weight_ih": (gate_size, layer_input), "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """A no-op (kept for API compatibility: there is no fused weight buffer to rebuild)."""

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in names] for names in self._all_weights]

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- argument checks (torch's messages) ------------------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        w = self._flat_weights[0]
        if input.dtype is not w.dtype and _autocast.ACTIVE.get() is None:  # autocast casts the input instead
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")

    def _mini_batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.shape[0] if self.batch_first else input.shape[1]

    def get_expected_hidden_size(self, input, batch_sizes):
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), self._mini_batch(input, batch_sizes), size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        return _permute(hx, permutation)

    # -- forward ---------------------------------------------------------------------------------------------------
    def _zeros(self, input, batch, size):
        return zeros(self.num_layers * (2 if self.bidirectional else 1), batch, size, dtype=input.dtype,
                     device=input.device)

    def _prepare(self, input, hx):
        """``(x (N, I) packed time-major, batch_sizes, hx, how to restore the output layout)`` with torch's checks."""
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            bs = tuple(int(b) for b in batch_sizes.tolist())
            self.check_input(data, batch_sizes)
            return data, bs, _permute(hx, sorted_indices), ("packed", input, unsorted_indices)
        if input.ndim not in (2, 3):
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D{tail}")
        batched = input.ndim == 3
        if hx is not None:
            hs = hx if isinstance(hx, tuple) else (hx,)
            want = 3 if batched else 2
            if any(h.ndim != want for h in hs):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if isinstance(hx, tuple):
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                       f"({hs[0].ndim}-D, {hs[1].ndim}-D) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.ndim}-D tensor")
            if not batched:
                hx = tuple(h.unsqueeze(1) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(1)
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if self.batch_first:
            input = input.transpose(0, 1)
        steps, batch = input.shape[0], input.shape[1]
        if steps == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        self.check_input(input, None)
        return input.reshape(steps * batch, input.shape[2]), (batch,) * steps, hx, ("padded", batched, steps)

    def _run(self, input, hx):
        x, batch_sizes, hx, layout = self._prepare(input, hx)
        batch = batch_sizes[0]
        lstm = self.mode == "LSTM"
        h0 = hx[0] if lstm and hx is not None else hx
        c0 = hx[1] if lstm and hx is not None else None
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        expected = (self.num_layers * (2 if self.bidirectional else 1), batch, real_hidden)
        if h0 is None:
            h0 = self._zeros(x, batch, real_hidden)
        else:
            self.check_hidden_size(h0, expected, "Expected hidden[0] size {}, got {}" if lstm else
                                   "Expected hidden size {}, got {}")
        if lstm:
            if c0 is None:
                c0 = self._zeros(x, batch, self.hidden_size)
            else:
                self.check_hidden_size(c0, expected[:2] + (self.hidden_size,), "Expected hidden[1] size {}, got {}")
        for h in (h0, c0) if lstm else (h0,):
            _check_state_dtype(h, x.dtype)
        if lstm and self.proj_size == 0:
            h0, c0 = _lstm_states(h0, c0)
        out, hn, cn = self._layers(x, batch_sizes, h0, c0)
        hidden = (hn, cn) if lstm else hn
        if layout[0] == "packed":
            _, packed, unsorted = layout
            return PackedSequence(out, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices), \
                _permute(hidden, unsorted)
        _, batched, steps = layout
        out = out.reshape(steps, batch, out.shape[-1])
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            hidden = (hn.squeeze(1), cn.squeeze(1)) if lstm else hn.squeeze(1)
        return out, hidden

    def _layers(self, x, batch_sizes, h0, c0):
        """All layers and directions on packed ``x``: ``(output (N, D*P), h_n, c_n or None)``."""
        directions = 2 if self.bidirectional else 1
        hs, cs = [], []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                from ..functional import dropout
                x = dropout(x, self.dropout, True)
            outs = []
            for d in range(directions):
                k = layer * directions + d
                params = dict(zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"), [None] * 5))
                for name in self._all_weights[k]:
                    params[name.rsplit("_l", 1)[0]] = getattr(self, name)
                xg = _project(x, params["weight_ih"], params["bias_ih"])
                res = recurrence(xg, h0[k], None if c0 is None else c0[k], params["weight_hh"], params["bias_hh"],
                                 params["weight_hr"], self.mode, batch_sizes, reverse=d == 1)
                outs.append(res[0])
                hs.append(res[1])
                if c0 is not None:
                    cs.append(res[2])
            x = outs[0] if directions == 1 else cat(outs, 1)
        return x, stack(hs), (stack(cs) if cs else None)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu), stacked ``num_layers`` deep.

    Args:
        input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0,
        bidirectional=False

    Shape:
        input ``(L, N, H_in)`` (``(N, L, H_in)`` if batch_first, ``(L, H_in)`` unbatched) or a PackedSequence;
        h_0 ``(D * num_layers, N, H_out)``. Returns ``(output (L, N, D * H_out), h_n)``.

    Example::

        >>> rnn = ember.nn.RNN(4, 8, num_layers=2)
        >>> out, h = rnn(ember.randn(5, 3, 4))
        >>> out.shape, h.shape
        (ember.Size([5, 3, 8]), ember.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return self._run(input, hx)


class LSTM(RNNBase):
    """Long short-term memory: gates ``i, f, g, o`` (in this order in the weights), ``c_t = f c_{t-1} + i g``,
    ``h_t = o tanh(c_t)``, projected by ``weight_hr`` to ``proj_size`` when it is non-zero.

    Args:
        input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False,
        proj_size=0

    Shape:
        input as RNN; ``(h_0, c_0)`` with h ``(D * num_layers, N, proj_size or hidden_size)`` and c
        ``(D * num_layers, N, hidden_size)``. Returns ``(output, (h_n, c_n))``.

    Example::

        >>> lstm = ember.nn.LSTM(4, 8, batch_first=True)
        >>> out, (h, c) = lstm(ember.randn(3, 5, 4))
        >>> out.shape
        ember.Size([3, 5, 8])
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        return (self.num_layers * (2 if self.bidirectional else 1), self._mini_batch(input, batch_sizes),
                self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        if hx is not None:
            if not isinstance(hx, Tensor) and len(hx) != 2:
                raise RuntimeError("lstm expects two hidden states")
            hx = (hx[0], hx[1])
        return self._run(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit: ``r, z = sigmoid(...)``, ``n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn))``,
    ``h_t = (1 - z) n + z h_{t-1}``; gates ``r, z, n`` in this order in the weights.

    Example::

        >>> gru = ember.nn.GRU(4, 8, bidirectional=True)
        >>> gru(ember.randn(5, 3, 4))[0].shape
        ember.Size([5, 3, 16])
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx)


# -- cells ---------------------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """Base of the single-step cells: ``weight_ih (G*H, I)``, ``weight_hh (G*H, H)``, ``bias_ih``, ``bias_hh``."""

    _mode = None

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, name, input, hx, mode):
        """One step through the fused recurrence: returns ``(h', c' or None)``; ``hx`` a tuple for LSTM."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        states = hx if isinstance(hx, tuple) else (hx,)
        for i, h in enumerate(states):
            if h is not None and h.ndim not in (1, 2):
                what = f"hx[{i}]" if isinstance(hx, tuple) else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
            states = tuple(None if h is None else h.unsqueeze(0) for h in states)
        batch = input.shape[0]
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        if input.dtype is not self.weight_ih.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {scalar_name(input.dtype)} and "
                               f"{scalar_name(self.weight_ih.dtype)}")
        full = []
        for i, h in enumerate(states):
            if h is None:
                h = zeros(batch, self.hidden_size, dtype=input.dtype, device=input.device)
            elif h.shape[0] != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden{i} batch size {h.shape[0]}")
            elif h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, expected "
                                   f"{self.hidden_size}")
            full.append(h)
        _check_state_dtype(full[0], input.dtype)
        xg = _project(input, self.weight_ih, self.bias_ih)
        res = recurrence(xg, full[0], full[1] if mode == "LSTM" else None, self.weight_hh, self.bias_hh, None, mode,
                         (batch,))
        h, c = res[1], (res[2] if mode == "LSTM" else None)
        if not batched:
            h = h.squeeze(0)
            c = None if c is None else c.squeeze(0)
        return h, c


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    Example::

        >>> cell = ember.nn.RNNCell(4, 8)
        >>> cell(ember.randn(3, 4)).shape
        ember.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step("RNNCell", input, hx, "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU")[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')``; ``hx`` is ``(h, c)`` (zeros if None).

    Example::

        >>> cell = ember.nn.LSTMCell(4, 8)
        >>> h, c = cell(ember.randn(3, 4))
        >>> h.shape
        ember.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if isinstance(hx, Tensor):
            raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not Tensor")
        if hx is not None and len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        return self._step("LSTMCell", input, tuple(hx) if hx is not None else (None, None), "LSTM")


class GRUCell(RNNCellBase):
    """One GRU step.

    Example::

        >>> cell = ember.nn.GRUCell(4, 8)
        >>> cell(ember.randn(3, 4)).shape
        ember.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._step("GRUCell", input, hx, "GRU")[0]
