"""The learner's memory cores: what sits between the encoder and the heads, and what it remembers.

Every core maps rows of encoder output to rows of the heads' input and keeps a state per row:

- ``mlp``: no memory (the identity; a state of width 0);
- ``stack``: a frame stack, the last ``frames`` encoder outputs side by side through one ReLU layer
  (Mnih et al. 2015's remedy for partial observability, and POPGym's "Frame stack" baseline);
- ``gru``: a GRU cell (Cho et al. 2014);
- ``lstm``: an LSTM cell (Hochreiter and Schmidhuber 1997), its state the hidden and the cell vectors;
- ``mingru``: a minimal GRU (Feng et al. 2024, *Were RNNs all we needed?*), a linear recurrent
  model with an input-dependent gate, as Mamba's selective state spaces have:
  ``h_t = (1 - z_t) * h_{t-1} + z_t * c_t`` where ``z_t`` and ``c_t`` depend on the input only,
  then a ReLU readout of ``[h_t, x_t]``. Why this one as the modern core: its gates and readout
  are matrix products over the whole segment at once, so the only step-by-step work of an update
  is one multiply-add per step, where a GRU runs two matrix products per step forwards and
  backwards; and what Grab asks (count each object's sightings, forget them at a new round) is a
  gated sum.

``step`` advances one decision, ``unroll`` a segment ``(T, R, width)``; ``keep (T, R, 1)`` is 0
where an episode starts (the state is cleared first). A recurrent core's ``unroll`` gives the same
outputs as ``T`` calls of ``step`` (a test checks it). The loops walk ``unbind(0)``'s slices, not
``x[t]``: the gradient of ``x[t]`` is a zero tensor of the whole segment's size per step, which made
the backward pass quadratic in ``T`` (most of a recurrent update's time before this module).
"""

from __future__ import annotations

import torch
from torch import nn

CORES = ("mlp", "stack", "gru", "lstm", "mingru")
GATE_BIAS = -3.0
"""The minimal GRU's update-gate bias at initialisation (see :class:`MinGRU`)."""


def _orthogonal(module: nn.Module, gain: float = 1.0) -> None:
    """Orthogonal weights, zero biases: CleanRL's initialisation for recurrent cells."""
    for name, param in module.named_parameters():
        if "bias" in name:
            nn.init.zeros_(param)
        else:
            nn.init.orthogonal_(param, gain)


class Core(nn.Module):
    """A memory core (see the module docstring): ``state_size`` floats per row, ``out`` outputs."""

    state_size: int
    out: int

    def step(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One decision: ``x (R, width)``, ``state (R, state_size)`` already cleared where an episode starts."""
        raise NotImplementedError

    def unroll(self, x: torch.Tensor, state: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """A segment: ``x (T, R, width)``, the state before it, ``keep (T, R, 1)``; ``(outputs (T, R, out), state)``."""
        outputs = []
        for x_t, keep_t in zip(x.unbind(0), keep.unbind(0), strict=True):
            y, state = self.step(x_t, state * keep_t)
            outputs.append(y)
        return torch.stack(outputs), state


class Identity(Core):
    """``mlp``: no memory."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.state_size, self.out = 0, width

    def step(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x, state

    def unroll(self, x: torch.Tensor, state: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x, state


class GRU(Core):
    """``gru``: a GRU cell of ``size`` units."""

    def __init__(self, width: int, size: int) -> None:
        super().__init__()
        self.cell = nn.GRUCell(width, size)
        _orthogonal(self.cell)
        self.state_size = self.out = size

    def step(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        state = self.cell(x, state)
        return state, state


class LSTM(Core):
    """``lstm``: an LSTM cell of ``size`` units; the state is ``[h, c]``."""

    def __init__(self, width: int, size: int) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(width, size)
        _orthogonal(self.cell)
        self.size = size
        self.state_size, self.out = 2 * size, size

    def step(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h, c = self.cell(x, (state[:, : self.size], state[:, self.size :]))
        return h, torch.cat([h, c], dim=-1)


class Stack(Core):
    """``stack``: the last ``frames`` inputs (zeros before the episode's first) through a ReLU layer of ``size``."""

    def __init__(self, width: int, size: int, frames: int) -> None:
        super().__init__()
        self.width, self.frames = width, frames
        self.layer = nn.Linear(frames * width, size)
        nn.init.orthogonal_(self.layer.weight, 2**0.5)
        nn.init.zeros_(self.layer.bias)
        self.state_size, self.out = (frames - 1) * width, size

    def step(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        window = torch.cat([state, x], dim=-1)
        return torch.relu(self.layer(window)), window[:, self.width :]

    def unroll(self, x: torch.Tensor, state: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        windows = []
        for x_t, keep_t in zip(x.unbind(0), keep.unbind(0), strict=True):  # the layer runs once, after
            window = torch.cat([state * keep_t, x_t], dim=-1)
            windows.append(window)
            state = window[:, self.width :]
        return torch.relu(self.layer(torch.stack(windows))), state


class MinGRU(Core):
    """``mingru``: a gated linear recurrence of ``size`` units and a ReLU readout of ``size`` (module docstring)."""

    def __init__(self, width: int, size: int) -> None:
        super().__init__()
        self.gates = nn.Linear(width, 2 * size)
        # The readout of [h, x] as two products summed: no concatenated copy of the segment.
        self.read_state = nn.Linear(size, size)
        self.read_input = nn.Linear(width, size, bias=False)
        for layer, gain in ((self.gates, 1.0), (self.read_state, 2**0.5), (self.read_input, 2**0.5)):
            nn.init.orthogonal_(layer.weight, gain)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)
        # The update gate starts nearly shut (z = sigmoid(-3) = 0.05): the memory keeps what it holds
        # unless the input says otherwise, as an LSTM's forget-gate bias of 1 does (Jozefowicz et al.
        # 2015). Opened halfway (bias 0), a state halves every step and a round's first cards are
        # forgotten before the learner can find them worth keeping.
        nn.init.constant_(self.gates.bias[:size], GATE_BIAS)
        self.size = size
        self.state_size = self.out = size

    def _gates(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z, candidate = self.gates(x).split(self.size, dim=-1)
        return torch.sigmoid(z), candidate

    def step(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z, candidate = self._gates(x)
        state = torch.lerp(state, candidate, z)
        return self._read(state, x), state

    def _read(self, state: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.read_state(state) + self.read_input(x))

    def unroll(self, x: torch.Tensor, state: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z, candidate = self._gates(x)  # the whole segment at once
        states = []
        for keep_t, candidate_t, z_t in zip(keep.unbind(0), candidate.unbind(0), z.unbind(0), strict=True):
            state = torch.lerp(state * keep_t, candidate_t, z_t)
            states.append(state)
        return self._read(torch.stack(states), x), state


def make_core(core: str, width: int, size: int, frames: int) -> Core:
    """The core named ``core`` over inputs of ``width`` (``size`` units; ``frames`` for ``stack``)."""
    if core == "mlp":
        return Identity(width)
    if core == "gru":
        return GRU(width, size)
    if core == "lstm":
        return LSTM(width, size)
    if core == "stack":
        return Stack(width, size, frames)
    if core == "mingru":
        return MinGRU(width, size)
    raise ValueError(f"core must be one of {CORES}, got {core!r}")
