"""What a Grid slot holds, as the agent can work it out: the card tables and the deduction.

Both Grid networks that reason like ``counting`` (the SB3 slot-relational extractor of
:mod:`dejavu_agents.grid.features` and the batched learner's :class:`dejavu_agents.learners.features.GridFacts`)
read each slot's card the same way, so the tables and the deduction live here once. Torch
only: nothing here needs stable-baselines3.
"""

from __future__ import annotations

import numpy as np
import torch

from dejavu_env.grid.cards import BLUE, MIN_BLUE, N_BLUES, N_CARDS, N_NUMBERS, SHOWS

DEDUCTION_ROUNDS = 2
"""Rounds of "a blue number with one unaccounted card left gives the face"; a second round
catches the faces freed by the first, more are rare."""


TABLES = ("shows", "has", "codes", "powers", "blue_cards")
"""The names of :func:`card_tables`' entries, which the networks register as buffers."""


def card_tables() -> dict[str, torch.Tensor]:
    """The constant tables the deduction and the facts read, by buffer name.

    - ``shows`` ``(32, 8)``: how often each card shows each number; ``has``: whether it does;
    - ``powers`` ``(8,)`` and ``codes`` ``(32,)``: a card's faces read as base-3 digits, so a
      slot's known faces match exactly one card code;
    - ``blue_cards`` ``(N_BLUES, 32)``: the cards of each blue number.
    """
    shows = np.array(SHOWS, dtype=np.float32)
    blue_of = np.zeros((N_BLUES, N_CARDS), dtype=np.float32)
    blue_of[np.array(BLUE) - MIN_BLUE, np.arange(N_CARDS)] = 1
    return {
        "shows": torch.as_tensor(shows),
        "has": torch.as_tensor((shows > 0).astype(np.float32)),
        "codes": torch.as_tensor(shows @ 3.0 ** np.arange(N_NUMBERS)),
        "powers": torch.as_tensor(3.0 ** np.arange(N_NUMBERS, dtype=np.float32)),
        "blue_cards": torch.as_tensor(blue_of),
    }


def deduce_cards(
    blue: torch.Tensor,
    known: torch.Tensor,
    faces: torch.Tensor,
    kept: torch.Tensor,
    tables: dict[str, torch.Tensor],
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(cards (B, 8, 32), certain (B, 8))``: each slot's card distribution and whether it is certain.

    ``blue`` ``(B, 8, N_BLUES)``: each slot's blue number; ``known`` ``(B, 8)``: the faces the
    agent has seen; ``faces`` ``(B, 8, 8)``: those faces; ``kept`` ``(B, 32)``: the cards out of
    play in piles. A slot whose blue number has one unaccounted card left is deduced; the rest
    spread uniformly over their blue number's unaccounted cards. Empty slots are zero rows.
    """
    code = faces @ tables["powers"]
    card = (code.unsqueeze(-1) == tables["codes"]).float() * known.unsqueeze(-1)
    same_blue = blue @ tables["blue_cards"]
    same_count = same_blue.sum(-1, keepdim=True)
    occupied = blue.sum(-1)
    certain = known
    for _ in range(DEDUCTION_ROUNDS + 1):
        pool = (1 - (kept + card.sum(1)).clamp(max=1)).unsqueeze(1)
        options = same_blue * pool
        n_options = options.sum(-1, keepdim=True)
        # No unaccounted card left (an inconsistent view): fall back on every card of the blue number.
        # Counts are small whole numbers, so adding instead of selecting gives the same floats.
        none_left = (n_options == 0).to(options.dtype)
        options = options + none_left * same_blue
        n_options = (n_options + none_left * same_count).clamp(min=1)
        deduced = (1 - certain) * occupied * (n_options.squeeze(-1) == 1).to(options.dtype)
        card = card + deduced.unsqueeze(-1) * options
        certain = certain + deduced
    spread = options / n_options * ((1 - certain) * occupied).unsqueeze(-1)
    return card + spread, certain
