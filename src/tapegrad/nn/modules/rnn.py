"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional) and their one-step cells.

    nn.LSTM(input_size, hidden_size, num_layers, ...)(input, (h0, c0))
      input (T, B, I), or (B, T, I) with batch_first, or (T, I) unbatched, or a PackedSequence
      for each layer, for each direction:
          ops.rnn.lstm_layer(layer input, h0[k], c0[k], weights...)  one node over all steps
      a bidirectional layer's output is the two directions' outputs side by side (cat);
      dropout (training, p > 0) on every layer's output but the last;
      h_n, c_n: the final states of every layer and direction, stacked (StackBackward0)

Parameters are torch's: ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
``bias_hh_l{k}``, ``weight_hr_l{k}`` (LSTM with ``proj_size``), with ``_reverse`` for the second
direction, registered in that order and drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))
in that order, so ``manual_seed(s); nn.LSTM(...)`` has torch's exact values. Gates are stacked
in torch's order (LSTM: i, f, g, o; GRU: r, z, n).

The cells (``RNNCell``, ``LSTMCell``, ``GRUCell``) run the same entry for one step, so a loop
over time records one node per step.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

from ... import _creation
from ..._tensor import Tensor
from ...ops import rnn as K
from ...ops import shape as sh
from ...ops._registry import scalar_type_name
from .. import functional as F
from .. import init
from .._packed_sequence import PackedSequence
from ..parameter import Parameter
from . import rnn_stepwise as _stepwise
from .module import Module

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


def _check_dtypes(weight: Tensor, *tensors: Any) -> None:
    """torch's message when an input or a state meets weights of another dtype in a product."""
    for t in tensors:
        if t is not None and t.dtype != weight.dtype:
            raise RuntimeError(
                "mat1 and mat2 must have the same dtype, but got "
                f"{scalar_type_name(t.dtype)} and {scalar_type_name(weight.dtype)}")


class RNNBase(Module):
    """The layers' common part: parameters, checks, and the loop over layers and directions."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):  # type: ignore[operator]
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:  # type: ignore[operator]
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(
                f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gates is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = gates * hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                params: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    params += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    params += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for fmt, shape in params:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(_creation.empty(shape, device=device,
                                                                  dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self) -> None:
        self._flat_weights: list[Any] = [getattr(self, wn) if hasattr(self, wn) else None
                                         for wn in self._flat_weights_names]

    def __setattr__(self, attr: str, value: Any) -> None:
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        """A no-op: torch packs the weights into one buffer for cuDNN only."""

    def _apply(self, fn: Any, recurse: bool = True) -> Module:
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()
        return ret

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    # -- checks (torch's messages) ------------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Any) -> None:
        wdtype = self._flat_weights[0].dtype
        if input.dtype != wdtype and not _stepwise.any_autocast_on():
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({wdtype}). "
                f"Convert input: input.to({wdtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
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

    # -- the run over layers and directions ---------------------------------------------------

    def _zeros_state(self, input: Tensor, batch: int, size: int) -> Tensor:
        num_directions = 2 if self.bidirectional else 1
        return _creation.zeros(self.num_layers * num_directions, batch, size, dtype=input.dtype)

    def _direction_weights(self, k: int) -> tuple:
        """Layer-direction ``k``'s (w_ih, w_hh, b_ih, b_hh, w_hr); the absent ones are None."""
        per = len(self._all_weights[0])
        w = self._flat_weights[k * per:(k + 1) * per]
        b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
        return w[0], w[1], b_ih, b_hh, (w[-1] if self.proj_size > 0 else None)

    def _run(self, input: Tensor, h0: Tensor, c0: Tensor | None,
             batch_sizes: tuple | None) -> tuple:
        """All layers: (output, h_n, c_n or None). ``input`` is (T, B, I) time-major (after
        batch_first's transpose) or packed data (N, I) when ``batch_sizes`` is given."""
        entry = K.LAYERS[self.mode]
        lstm = self.mode == "LSTM"
        weights = self._flat_weights
        if batch_sizes is None and input.size(0) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if _stepwise.wanted(weights[0], input):  # autocast, float16, bfloat16: torch's steps
            if not _stepwise.autocast_on():
                _check_dtypes(weights[0], h0, c0)
            return _stepwise.run(self, input, h0, c0, batch_sizes)
        _check_dtypes(weights[0], h0, c0)

        def direction(layer_input: Tensor, k: int, reverse: bool) -> tuple:
            w_ih, w_hh, b_ih, b_hh, w_hr = self._direction_weights(k)
            c0_k = c0[k] if c0 is not None else None
            res = entry(layer_input, h0[k], c0_k, w_ih, w_hh, b_ih, b_hh, w_hr,
                        batch_sizes=batch_sizes, reverse=reverse, _cache={})
            return res[0], res[1:]  # the output; the final h (and c)

        output, finals = self._layers(input, direction)
        h_n = sh.stack([f[0] for f in finals], 0)
        c_n = sh.stack([f[1] for f in finals], 0) if lstm else None
        return output, h_n, c_n

    def _layers(self, input: Tensor,
                direction: Callable[[Tensor, int, bool], tuple[Tensor, Any]]) -> tuple:
        """Every layer in turn, each of its directions run by ``direction(layer_input, k,
        reverse)`` (k: the layer-direction's index) -> (output, final state); the directions'
        outputs are concatenated and, between layers, dropped out in training. Returns the last
        layer's output and the final states in layer-direction order."""
        num_directions = 2 if self.bidirectional else 1
        finals: list = []
        layer_input = input
        for layer in range(self.num_layers):
            outs = []
            for d in range(num_directions):
                out, final = direction(layer_input, layer * num_directions + d, d == 1)
                outs.append(out)
                finals.append(final)
            output = sh.cat(outs, -1) if num_directions == 2 else outs[0]
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                output = F.dropout(output, self.dropout, True)
            layer_input = output
        return layer_input, finals

    def _forward_tensor(self, input: Tensor, h0: Tensor, c0: Tensor | None) -> tuple:
        """Padded input (3-D, batch_first as set): output in the input's layout."""
        x = input.transpose(0, 1) if self.batch_first else input
        out, h_n, c_n = self._run(x, h0, c0, None)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, h_n, c_n


def _packed_args(packed: PackedSequence) -> tuple:
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    return data, tuple(int(b) for b in batch_sizes.tolist()), sorted_indices, unsorted_indices


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    Example:
        >>> import tapegrad as torch
        >>> rnn = torch.nn.RNN(10, 20, 2)
        >>> output, hn = rnn(torch.randn(5, 3, 10), torch.randn(2, 3, 20))
        >>> output.shape, hn.shape
        (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple:
        return _single_state_forward(self, "RNN", input, hx)


class GRU(RNNBase):
    """Gated recurrent unit: reset r, update z, candidate n; ``h' = (1 - z) n + z h``.

    Example:
        >>> import tapegrad as torch
        >>> gru = torch.nn.GRU(10, 20, 2)
        >>> output, hn = gru(torch.randn(5, 3, 10))
        >>> output.shape
        torch.Size([5, 3, 20])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple:
        return _single_state_forward(self, "GRU", input, hx)


def _single_state_forward(self: RNNBase, name: str, input: Any, hx: Tensor | None) -> tuple:
    """RNN's and GRU's forward (one state tensor), with torch's checks in torch's order."""
    num_directions = 2 if self.bidirectional else 1
    if isinstance(input, PackedSequence):
        data, batch_sizes, sorted_indices, unsorted_indices = _packed_args(input)
        if hx is None:
            hx = self._zeros_state(data, batch_sizes[0], self.hidden_size)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        out, h_n, _ = self._run(data, hx, None, batch_sizes)
        return (PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices),
                self.permute_hidden(h_n, unsorted_indices))
    if input.dim() not in (2, 3):
        what = " tensor" if name == "RNN" else ""
        raise ValueError(
            f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{what} instead")
    is_batched = input.dim() == 3
    batch_dim = 0 if self.batch_first else 1
    if not is_batched:
        input = input.unsqueeze(batch_dim)
        if hx is not None:
            if hx.dim() != 2:
                raise RuntimeError(
                    f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            hx = hx.unsqueeze(1)
    elif hx is not None and hx.dim() != 3:
        raise RuntimeError(
            f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
    if hx is None:
        batch = input.size(0) if self.batch_first else input.size(1)
        hx = _creation.zeros(self.num_layers * num_directions, batch, self.hidden_size,
                             dtype=input.dtype)
    self.check_forward_args(input, hx, None)
    out, h_n, _ = self._forward_tensor(input, hx, None)
    if not is_batched:
        out = out.squeeze(batch_dim)
        h_n = h_n.squeeze(1)
    return out, h_n


class LSTM(RNNBase):
    """Long short-term memory, with an optional projection of h (``proj_size``).

    Example:
        >>> import tapegrad as torch
        >>> lstm = torch.nn.LSTM(10, 20, 2)
        >>> output, (hn, cn) = lstm(torch.randn(5, 3, 10))
        >>> output.shape, cn.shape
        (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any,  # type: ignore[override]
                           batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:  # type: ignore[override]
        if permutation is None:
            return hx
        return (_apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation))

    def forward(self, input: Any, hx: Any = None) -> tuple:
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = _packed_args(input)
            if hx is None:
                hx = (self._zeros_state(data, batch_sizes[0], real_hidden_size),
                      self._zeros_state(data, batch_sizes[0], self.hidden_size))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            out, h_n, c_n = self._run(data, hx[0], hx[1], batch_sizes)
            return (PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden((h_n, c_n), unsorted_indices))
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        batch = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            hx = (_creation.zeros(self.num_layers * num_directions, batch, real_hidden_size,
                                  dtype=input.dtype),
                  _creation.zeros(self.num_layers * num_directions, batch, self.hidden_size,
                                  dtype=input.dtype))
            self.check_forward_args(input, hx, None)
        else:
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError(
                        "For batched 3-D input, hx and cx should also be 3-D but got "
                        f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError(
                        "For unbatched 2-D input, hx and cx should also be 2-D but got "
                        f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(input, hx, None)
        out, h_n, c_n = self._forward_tensor(input, hx[0], hx[1])
        if not is_batched:
            return out.squeeze(batch_dim), (h_n.squeeze(1), c_n.squeeze(1))
        return out, (h_n, c_n)


# ---------------------------------------------------------------------------------------------
# Cells: one step
# ---------------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """The cells' common part: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            _creation.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(
            _creation.empty((num_chunks * hidden_size, hidden_size), device=device,
                            dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, device=device,
                                                     dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, device=device,
                                                     dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, mode: str, input: Tensor, hx: tuple) -> tuple:
        """One step of the layer entry on (B, I) rows: torch's size checks first."""
        if input.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)} expected "
                f"{self.input_size}")
        for k, h in enumerate(hx):
            if input.size(0) != h.size(0):
                raise RuntimeError(
                    f"Input batch size {input.size(0)} doesn't match hidden{k} batch size "
                    f"{h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(
                    f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, expected "
                    f"{self.hidden_size}")
        if _stepwise.wanted(self.weight_ih, input):  # autocast, float16, bfloat16
            if not _stepwise.autocast_on():
                _check_dtypes(self.weight_ih, input, *hx)
            return _stepwise.cell_step(mode, input, hx, (self.weight_ih, self.weight_hh,
                                                         self.bias_ih, self.bias_hh, None))
        _check_dtypes(self.weight_ih, input, *hx)
        entry = K.LAYERS[mode]
        c0 = hx[1] if mode == "LSTM" else None
        res = entry(input, hx[0], c0, self.weight_ih, self.weight_hh, self.bias_ih,
                    self.bias_hh, None, batch_sizes=(input.size(0),), reverse=False, _cache={})
        return res[1:]


def _cell_state(name: str, input: Tensor, hx: Tensor | None, hidden_size: int,
                what: str = "hidden") -> tuple:
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
    if hx is not None and hx.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {hx.dim()}D instead")
    is_batched = input.dim() == 2
    if not is_batched:
        input = input.unsqueeze(0)
    if hx is None:
        hx = _creation.zeros(input.size(0), hidden_size, dtype=input.dtype)
    elif not is_batched:
        hx = hx.unsqueeze(0)
    return input, hx, is_batched


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    Example:
        >>> import tapegrad as torch
        >>> cell = torch.nn.RNNCell(10, 20)
        >>> cell(torch.randn(3, 10)).shape
        torch.Size([3, 20])
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, is_batched = _cell_state("RNNCell", input, hx, self.hidden_size)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        ret = self._step(mode, input, (hx,))[0]
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c')`` from ``x`` and ``(h, c)``.

    Example:
        >>> import tapegrad as torch
        >>> cell = torch.nn.LSTMCell(10, 20)
        >>> h, c = cell(torch.randn(3, 10))
        >>> h.shape
        torch.Size([3, 20])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        if input.dim() not in (1, 2):
            raise ValueError(
                f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D "
                        "instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = self._step("LSTM", input, tuple(hx))
        if not is_batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step: ``h'`` from ``x`` and ``h``.

    Example:
        >>> import tapegrad as torch
        >>> cell = torch.nn.GRUCell(10, 20)
        >>> cell(torch.randn(3, 10)).shape
        torch.Size([3, 20])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, is_batched = _cell_state("GRUCell", input, hx, self.hidden_size)
        ret = self._step("GRU", input, (hx,))[0]
        return ret if is_batched else ret.squeeze(0)
