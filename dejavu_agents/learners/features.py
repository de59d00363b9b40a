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

Every fact is a function of the agent's own view. Only ``info_state`` is supported: the
current view forgets faces, and what it would need is the memory learner's job.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from dejavu_agents.grid.beliefs import TABLES, card_tables, deduce_cards
from dejavu_env.grid.cards import N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS
from dejavu_env.grid.observation import LAYOUTS
from dejavu_env.grid.rules import END_TURN, LOOK, N_ACTIONS, REVEAL, STOP, TOTAL_TOKENS

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


def _layer(inputs: int, outputs: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    layer = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


class GridSlots(nn.Module):
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
    """

    def __init__(self, width: int = 64, context: int = 128) -> None:
        super().__init__()
        self.facts = GridFacts()
        self.size = N_SLOTS * SLOT_INPUTS + GLOBAL_INPUTS
        self.out = context
        self.table = nn.Sequential(_layer(GLOBAL_INPUTS, context), nn.ReLU())
        self.slot_in = _layer(SLOT_INPUTS, width)
        self.table_in = _layer(context, width)
        self.slot_hidden = _layer(width, width)
        self.mix_self = _layer(width, width)
        self.mix_pooled = _layer(2 * width, width)
        self.pool_out = nn.Sequential(_layer(2 * width + context, context), nn.ReLU())
        self.slot_actions = _layer(width, 2, std=0.01)

    def featurize(self, vector: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """The inputs of :meth:`forward`, computed by the compiled kernel of :mod:`dejavu_agents.learners.slot_kernel`
        (a third of the time of :meth:`reference_inputs`, whose floats it gives bit for bit), on the CPU
        whatever the device; the result goes to the encoder's device."""
        from dejavu_agents.learners.slot_kernel import slot_features

        rows = np.ascontiguousarray(vector.detach().cpu().numpy(), dtype=np.float32)
        legal = np.ascontiguousarray(masks.detach().cpu().numpy(), dtype=bool)
        out = np.empty((len(rows), self.size), dtype=np.float32)
        slot_features(rows, legal, out)
        return torch.from_numpy(out).to(self.slot_in.weight.device)

    def reference_inputs(self, vector: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """:meth:`featurize` written with torch operations over the facts of :class:`GridFacts`: the readable
        statement of the inputs, which the kernel is tested against."""
        f = self.facts.facts(vector)
        return torch.cat([self.slot_inputs(vector, masks, f).flatten(1), self.table_inputs(vector, masks, f)], dim=-1)

    def forward(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        slots = inputs[:, : N_SLOTS * SLOT_INPUTS].reshape(-1, N_SLOTS, SLOT_INPUTS)
        table = self.table(inputs[:, N_SLOTS * SLOT_INPUTS :])
        relu = torch.relu
        h = relu(self.slot_in(slots) + self.table_in(table).unsqueeze(1))
        h = relu(self.slot_hidden(h))
        pooled = torch.cat([h.mean(1), h.amax(1)], dim=-1)
        h = h + relu(self.mix_self(h) + self.mix_pooled(pooled).unsqueeze(1))
        out = self.pool_out(torch.cat([h.mean(1), h.amax(1), table], dim=-1))
        per_slot = self.slot_actions(h)
        logits = torch.cat(
            [per_slot[..., 0], per_slot[..., 1], per_slot.new_zeros(per_slot.shape[0], N_ACTIONS - 2 * N_SLOTS)], dim=-1
        )
        return out, logits

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
        tallies = piles + 0.5 * tokens + end[:, 2:4]
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
