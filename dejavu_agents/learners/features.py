"""Parameter-free facts computed from a Grid ``info_state`` vector, appended to the network's input.

Why: the moves that win at Grid are relations between slots ("these three cards I know all
show a 4"), and a plain MLP on the flat vector has to discover each relation for every
slot and number from reward alone. :class:`GridFacts` computes the relations once, the way
``counting`` and the decoding stage of :class:`dejavu_agents.grid.features.GridSlotExtractor`
reason, and hands them over as extra inputs, at the cost of a few small tensor products
(no learning, no per-game Python):

- per slot, a belief over the 32 cards: the known face, else uniform over the cards of the
  slot's public blue number that are neither kept nor known elsewhere on the grid, with two
  rounds of "a blue number with one such card left gives the face";
- from it, per slot and number, the expected shows and the chance to show it (64 + 64),
  and whether the slot's card is certain (8);
- per number, the sure, expected and opponent-known shows on the grid and the shows still
  unaccounted for (4 x 8);
- per slot, whether it belongs to a sure triple (a number the certain cards show three or
  more times), a sure four, and during a reveal its expected shows of, and chance to
  show, the candidate numbers (4 x 8).

Every fact is a function of the agent's own view. On the current view (``observation``),
:func:`as_info_state` fills the info_state pieces from what is visible now: the faces shown now
are the known ones, the cards kept since the agent's previous decision stand for the piles, and
the pile sizes read 0 (the rulebook forbids counting piles). The facts are then deductions from
the current view alone; whatever else a face seen earlier tells is the memory core's to keep
(:class:`GridSlots` runs it per slot, before the slots see each other).
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from typing import Any

import numpy as np
import torch
from torch import nn

from dejavu_agents.grid.beliefs import TABLES, card_tables, deduce_cards
from dejavu_agents.learners.nets import MASKED, Encoder
from dejavu_agents.learners.targets import FACE_CLASSES
from dejavu_env.grid.cards import BLUE, CARD_ID, MIN_BLUE, N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS
from dejavu_env.grid.observation import LAYOUTS
from dejavu_env.grid.rules import END_TURN, LOOK, N_ACTIONS, REVEAL, STOP, TOTAL_TOKENS, tally

INFO_SIZE = LAYOUTS["info_state"].size
_VIEWS = {LAYOUTS[mode].size: mode for mode in ("info_state", "observation")}


def as_info_state(observation: np.ndarray) -> np.ndarray:
    """``(B, 280)`` current views -> ``(B, 282)`` vectors in the info_state layout (the module docstring):
    every shared piece copied, ``pile_me``/``pile_opp`` from ``kept_me``/``kept_opp``, ``pile_sizes`` 0."""
    info, current = LAYOUTS["info_state"], LAYOUTS["observation"]
    out = np.zeros((len(observation), info.size), dtype=np.float32)
    renamed = {"pile_me": "kept_me", "pile_opp": "kept_opp"}
    for piece in info.pieces:
        source = renamed.get(piece.name, piece.name)
        if source in current.slices:
            out[:, info.slices[piece.name]] = observation[:, current.slices[source]]
    return out


FACTS = 2 * N_SLOTS * N_NUMBERS + N_SLOTS + 4 * N_NUMBERS + 4 * N_SLOTS
"""How many numbers :class:`GridFacts` appends (192)."""


class GridFacts(nn.Module):
    """``(B, 282)`` info_state vectors -> ``(B, FACTS)`` float facts (see the module docstring)."""

    size = FACTS
    shows: torch.Tensor
    has: torch.Tensor
    codes: torch.Tensor
    powers: torch.Tensor
    blue_cards: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self._slices = LAYOUTS["info_state"].slices
        self._shapes = {p.name: p.shape for p in LAYOUTS["info_state"].pieces}
        for name, table in card_tables().items():
            self.register_buffer(name, table, persistent=False)

    def _piece(self, vector: torch.Tensor, name: str) -> torch.Tensor:
        return vector[:, self._slices[name]].reshape(-1, *self._shapes[name])

    def beliefs(self, vector: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(cards (B, 8, 32), certain (B, 8))``: each slot's card distribution and whether it is certain."""
        kept = self._piece(vector, "pile_me") + self._piece(vector, "pile_opp")
        tables = {name: getattr(self, name) for name in TABLES}
        blue, known, faces = (self._piece(vector, name) for name in ("slot_blue", "known_me", "faces"))
        return deduce_cards(blue, known, faces, kept, tables)

    def facts(self, vector: torch.Tensor) -> dict[str, torch.Tensor]:
        """The named facts, per slot ``(B, 8, ...)`` or per number ``(B, 8)``."""
        cards, certain = self.beliefs(vector)
        expected = cards @ self.shows
        chance = cards @ self.has
        sure = expected * certain.unsqueeze(-1)
        sure_total = sure.sum(1)
        opp_known = (expected * self._piece(vector, "known_opp").unsqueeze(-1)).sum(1)
        kept = self._piece(vector, "pile_me") + self._piece(vector, "pile_opp")
        unaccounted = (1 - kept) @ self.shows - expected.sum(1)
        showing = sure > 0
        triple = (showing & (sure_total >= 3).unsqueeze(1)).any(-1).float()
        four = (showing & (sure_total >= 4).unsqueeze(1)).any(-1).float()
        candidates = self._piece(vector, "candidates").unsqueeze(1)
        return {
            "expected": expected,
            "chance": chance,
            "certain": certain,
            "sure": sure,
            "sure_total": sure_total,
            "expected_total": expected.sum(1),
            "opp_known": opp_known,
            "unaccounted": unaccounted,
            "triple": triple,
            "four": four,
            "candidate_expected": (expected * candidates).sum(-1),
            "candidate_chance": (chance * candidates).amax(-1),
        }

    def forward(self, vector: torch.Tensor) -> torch.Tensor:
        f = self.facts(vector)
        return torch.cat(
            [
                (f["expected"] / 2).flatten(1),
                f["chance"].flatten(1),
                f["certain"],
                f["sure_total"] / 4,
                f["expected_total"] / 4,
                f["opp_known"] / 4,
                f["unaccounted"] / 8,
                f["triple"],
                f["four"],
                f["candidate_expected"] / 2,
                f["candidate_chance"],
            ],
            dim=-1,
        )


SLOT_INPUTS = N_BLUES + 4 + 3 * N_NUMBERS + 1 + 2 + 2 + 2 + 2 * N_NUMBERS
"""Per-slot inputs of :class:`GridSlots` (see :meth:`GridSlots.slot_inputs`)."""
GLOBAL_INPUTS = 2 * (TOTAL_TOKENS + 1) + 1 + N_BLUES + 4 + 1 + 3 + N_NUMBERS + 1 + 1 + 2 + 1 + 3 + 4 * N_NUMBERS
"""Table inputs of :class:`GridSlots` (see :meth:`GridSlots.table_inputs`)."""


FACT_INPUTS = N_SLOTS * SLOT_INPUTS + GLOBAL_INPUTS
"""The facts :class:`GridSlots` reads per decision (the kernel's output)."""
_INFO_SLICES = LAYOUTS["info_state"].slices


def _face_tables() -> tuple[torch.Tensor, torch.Tensor]:
    """``(shows (FACE_CLASSES, 8), blues (FACE_CLASSES, 11))``: how often each number shows on a face of each
    class, and the blue number of the card with that face (class 0, unknown, and the pairs no card has: none)."""
    shows = np.zeros((FACE_CLASSES, N_NUMBERS), dtype=np.float32)
    blues = np.zeros((FACE_CLASSES, N_BLUES), dtype=np.float32)
    for k, (a, b) in enumerate(combinations_with_replacement(range(N_NUMBERS), 2), start=1):
        shows[k, a] += 1
        shows[k, b] += 1
        if (a, b) in CARD_ID:
            blues[k, BLUE[CARD_ID[a, b]] - MIN_BLUE] = 1
    return torch.from_numpy(shows), torch.from_numpy(blues)


def _kernel_facts(info: np.ndarray, legal: np.ndarray, out: np.ndarray) -> None:
    """The compiled facts of ``info`` (info_state layout) and ``legal`` into ``out[:, :FACT_INPUTS]``."""
    from dejavu_agents.learners.slot_kernel import slot_features

    facts = np.empty((len(info), FACT_INPUTS), dtype=np.float32) if out.shape[1] != FACT_INPUTS else out
    slot_features(info, legal, facts)
    if facts is not out:
        out[:, :FACT_INPUTS] = facts


def _layer(inputs: int, outputs: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    layer = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


class GridSlots(Encoder):
    """A slot-equivariant encoder over :class:`GridFacts`, with per-slot action logits.

    Each slot's facts (its blue number and flags, known faces, beliefs, whether it is part of
    a sure triple, its stake in each number beside the other slots' shows, whether Look and
    Reveal of it are legal) go through one shared MLP together with an embedding of the
    table's facts (tokens, phase, candidates, deck, End card, scores, per-number totals);
    one round of DeepSets mixing (each slot sees the mean and max of all) follows. The Look
    and Reveal logits of slot ``s`` are read from slot ``s``'s embedding with weights shared
    by all slots, so what is learnt about one slot holds for every slot. The pooled slots and
    the table's embedding make the output (``out`` wide) that the value and the other
    actions read.

    :meth:`featurize` (no parameters) gives ``8 * SLOT_INPUTS + GLOBAL_INPUTS`` numbers per
    decision; :meth:`forward` returns ``(h, logits)`` with the slot actions' logits in place
    (zeros for Stop, Take the End card and End turn). The table's embedding enters each
    slot's first layer as a term computed once, not once per slot.

    ``obs_size`` says the view: info_state (282) or the current view (280, read through
    :func:`as_info_state`). A memory core goes between :meth:`rows` and :meth:`readout`, one state
    per slot with shared weights (``tokens``), so that the slots mix what each remembers;
    ``memory`` is then the core's output width, which the mixing layers read (``None``: no core,
    the rows keep ``width``). ``faces`` (:data:`~dejavu_agents.learners.targets.FACE_CLASSES`, or 0
    for none) adds the face head: it predicts from each slot's row the face the agent saw of the
    card there (the learner's auxiliary head, trained on :class:`~dejavu_agents.learners.targets.GridMemory`),
    and :meth:`readout` reasons with its recall as the twin does with its perfect recall.
    """

    tokens = N_SLOTS
    pools = True
    """The core's rows are pooled here (:meth:`readout`): the heads read ``out``, not a row each."""

    face_shows: torch.Tensor
    face_blues: torch.Tensor

    def __init__(
        self, width: int = 64, context: int = 128, memory: int | None = None, obs_size: int = INFO_SIZE,
        faces: int = 0,
    ) -> None:  # fmt: skip
        super().__init__()
        if obs_size not in _VIEWS:
            raise ValueError(f"grid_slots reads Grid observation vectors ({sorted(_VIEWS)} floats), got {obs_size}")
        self.view = _VIEWS[obs_size]
        self.facts = GridFacts()
        self.size = FACT_INPUTS + (INFO_SIZE + N_ACTIONS if faces else 0)
        self.out = context
        self.row_width = width
        rows = width if memory is None else memory
        self.table = nn.Sequential(_layer(GLOBAL_INPUTS, context), nn.ReLU())
        self.slot_in = _layer(SLOT_INPUTS, width)
        self.table_in = _layer(context, width)
        self.slot_hidden = _layer(width, width)
        self.face: nn.Linear | None = None
        if faces:
            if faces != FACE_CLASSES:
                raise ValueError(f"grid_slots predicts a slot's face among {FACE_CLASSES} classes, got {faces}")
            self.face = _layer(rows, faces, std=0.01)
            shows, blues = _face_tables()
            self.register_buffer("face_shows", shows, persistent=False)
            self.register_buffer("face_blues", blues, persistent=False)
        self.mix_self = _layer(rows + (width if faces else 0), rows)
        self.mix_pooled = _layer(2 * rows, rows)
        self.pool_out = nn.Sequential(_layer(2 * rows + context, context), nn.ReLU())
        self.slot_actions = _layer(rows, 2, std=0.01)

    def featurize(self, vector: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """The inputs of :meth:`forward`, computed by the compiled kernel of :mod:`dejavu_agents.learners.slot_kernel`
        (a third of the time of :meth:`reference_inputs`, whose floats it gives bit for bit), on the CPU
        whatever the device; the result goes to the encoder's device. With the face head, the view (in the
        info_state layout) and the mask follow, for the second reading (:meth:`readout`)."""
        info = np.ascontiguousarray(vector.detach().cpu().numpy(), dtype=np.float32)
        if self.view == "observation":
            info = as_info_state(info)
        legal = np.ascontiguousarray(masks.detach().cpu().numpy(), dtype=bool)
        out = np.empty((len(info), self.size), dtype=np.float32)
        _kernel_facts(info, legal, out)
        if self.face is not None:
            out[:, FACT_INPUTS : FACT_INPUTS + INFO_SIZE] = info
            out[:, FACT_INPUTS + INFO_SIZE :] = legal
        return torch.from_numpy(out).to(self.slot_in.weight.device)

    def reference_inputs(self, vector: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """:meth:`featurize` written with torch operations over the facts of :class:`GridFacts`: the readable
        statement of the inputs, which the kernel is tested against."""
        if self.view == "observation":
            vector = torch.from_numpy(as_info_state(vector.detach().cpu().numpy().astype(np.float32)))
        f = self.facts.facts(vector)
        parts = [self.slot_inputs(vector, masks, f).flatten(1), self.table_inputs(vector, masks, f)]
        if self.face is not None:
            parts += [vector, masks.float()]
        return torch.cat(parts, dim=-1)

    def _embed(self, facts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(slots (B, 8, width), table (B, context))`` from the fact inputs."""
        slots = facts[:, : N_SLOTS * SLOT_INPUTS].reshape(-1, N_SLOTS, SLOT_INPUTS)
        table = self.table(facts[:, N_SLOTS * SLOT_INPUTS : FACT_INPUTS])
        h = torch.relu(self.slot_in(slots) + self.table_in(table).unsqueeze(1))
        return torch.relu(self.slot_hidden(h)), table

    def rows(self, inputs: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """``(slots (B, 8, width), (table (B, context), inputs))``: each slot's embedding, before the slots see
        each other (where a memory core keeps a state per slot), and what :meth:`readout` reads beside it."""
        h, table = self._embed(inputs)
        return h, (table, inputs)

    def readout(self, h: torch.Tensor, context: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``(out, logits)`` from the slots' rows (after the core, if any): one round of mixing, the pooled
        output and the per-slot Look and Reveal logits.

        With the face head, the view is read a second time: the face each slot's row recalls (the most
        likely of the faces its blue number allows, or none) takes the place of an unknown one, the
        facts are deduced again from it (no gradient: a deduction, not a learnt step), and each slot's
        second embedding (the same weights) joins its row in the mixing; the table's facts are the
        second reading's. So the memory's output is reasoned with as the twin's perfect recall is."""
        table, inputs = context
        relu = torch.relu
        mixed = h
        if self.face is not None:
            recalled = self._recall(inputs, self.face(h))
            again, table = self._embed(recalled)
            mixed = torch.cat([h, again], dim=-1)
        pooled = torch.cat([h.mean(1), h.amax(1)], dim=-1)
        h = h + relu(self.mix_self(mixed) + self.mix_pooled(pooled).unsqueeze(1))
        out = self.pool_out(torch.cat([h.mean(1), h.amax(1), table], dim=-1))
        per_slot = self.slot_actions(h)
        logits = torch.cat(
            [per_slot[..., 0], per_slot[..., 1], per_slot.new_zeros(per_slot.shape[0], N_ACTIONS - 2 * N_SLOTS)], dim=-1
        )
        return out, logits

    def _recall(self, inputs: torch.Tensor, face_logits: torch.Tensor) -> torch.Tensor:
        """The fact inputs of the view with each unknown face replaced by the one recalled (see :meth:`readout`)."""
        with torch.no_grad():
            info = inputs[:, FACT_INPUTS : FACT_INPUTS + INFO_SIZE].clone()
            legal = inputs[:, FACT_INPUTS + INFO_SIZE :] > 0.5
            blue = info[:, _INFO_SLICES["slot_blue"]].reshape(-1, N_SLOTS, N_BLUES)
            allowed = (blue @ self.face_blues.T) > 0  # (B, 8, classes): the faces of the slot's blue number
            allowed[..., 0] = True
            recalled = face_logits.masked_fill(~allowed, MASKED).argmax(-1)
            known = info[:, _INFO_SLICES["known_me"]]
            fresh = (recalled > 0) & (known == 0)
            faces = info[:, _INFO_SLICES["faces"]].reshape(-1, N_SLOTS, N_NUMBERS)
            faces = torch.where(fresh.unsqueeze(-1), self.face_shows[recalled], faces)
            info[:, _INFO_SLICES["faces"]] = faces.flatten(1)
            info[:, _INFO_SLICES["known_me"]] = torch.where(fresh, 1.0, known)
            out = np.empty((len(info), FACT_INPUTS), dtype=np.float32)
            _kernel_facts(np.ascontiguousarray(info.cpu().numpy()), np.ascontiguousarray(legal.cpu().numpy()), out)
            return torch.from_numpy(out).to(inputs.device)

    def slot_inputs(self, vector: torch.Tensor, masks: torch.Tensor, f: dict[str, torch.Tensor]) -> torch.Tensor:
        """``(B, 8, SLOT_INPUTS)``."""
        piece = self.facts._piece
        sure_other = f["sure_total"].unsqueeze(1) - f["sure"]
        expected_other = f["expected_total"].unsqueeze(1) - f["expected"]
        legal = masks.float()
        return torch.cat(
            [
                piece(vector, "slot_blue"),
                piece(vector, "slot_empty").unsqueeze(-1),
                piece(vector, "face_up").unsqueeze(-1),
                piece(vector, "known_me").unsqueeze(-1),
                piece(vector, "known_opp").unsqueeze(-1),
                piece(vector, "faces") / 2,
                f["expected"] / 2,
                f["chance"],
                f["certain"].unsqueeze(-1),
                f["triple"].unsqueeze(-1),
                f["four"].unsqueeze(-1),
                f["candidate_expected"].unsqueeze(-1) / 2,
                f["candidate_chance"].unsqueeze(-1),
                legal[:, LOOK : LOOK + N_SLOTS].unsqueeze(-1),
                legal[:, REVEAL : REVEAL + N_SLOTS].unsqueeze(-1),
                f["expected"] * sure_other / 4,
                f["expected"] * expected_other / 4,
            ],
            dim=-1,
        )

    def table_inputs(self, vector: torch.Tensor, masks: torch.Tensor, f: dict[str, torch.Tensor]) -> torch.Tensor:
        """``(B, GLOBAL_INPUTS)``."""
        piece = self.facts._piece
        tokens = piece(vector, "tokens")
        levels = torch.arange(TOTAL_TOKENS + 1, dtype=vector.dtype)
        piles = piece(vector, "pile_sizes")
        end = piece(vector, "end_card")
        tallies = tally(piles, end[:, 2:4], tokens)
        return torch.cat(
            [
                (tokens.unsqueeze(-1) == levels).float().flatten(1),
                piece(vector, "deck_size") / (N_CARDS - N_SLOTS),
                piece(vector, "deck_top_blue"),
                end,
                piece(vector, "last_turn"),
                piece(vector, "phase"),
                piece(vector, "candidates"),
                piece(vector, "candidate_count") / 4,
                piece(vector, "costs_token"),
                piles / 8,
                (tallies[:, :1] - tallies[:, 1:]) / 8,
                masks[:, STOP : END_TURN + 1].float(),
                f["sure_total"] / 4,
                f["expected_total"] / 4,
                f["opp_known"] / 4,
                f["unaccounted"] / 8,
            ],
            dim=-1,
        )
