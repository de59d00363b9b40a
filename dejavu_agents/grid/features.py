"""A slot-relational features extractor for grid policies (stable-baselines3, torch).

Why not the flat vector: the grid's good moves are relations between slots, such as
"reveal the cards whose face shows the number that shows three times", "this unknown
card can only be one of two cards, since the others of its blue number are kept". A
plain MLP on the flat observation has to learn each relation separately for every slot
and number, and in practice it does not (a clone of ``counting`` reached 62% accuracy).
This extractor builds those relations in:

1. **Decoding** (no learning): the observation is cut into its pieces
   (:func:`dejavu_env.grid.observation.decode`'s layout) and turned into per-slot card
   *beliefs*, as ``counting`` reasons: a face this seat knows is its card; an unknown face
   is, uniformly, one of the cards of the slot's public blue number that are neither kept
   nor seen on the grid, and a blue number with a single such card left gives the face for
   free (two rounds of that deduction). From the beliefs come, per slot, the expected shows
   of each number 0..7 and the chance to show it, and per number the sure, expected and
   opponent-known shows on the grid.
2. **Slot x number** pairs: a small shared MLP sees, for each slot and number, what the
   slot shows of that number next to the number's totals elsewhere and the reveal's
   candidates, then is summed and maxed over the numbers. This is where "my 4 plus two more
   known 4s" becomes one feature.
3. **Slots**: a shared MLP encodes each slot's own facts (blue number, flags, faces,
   beliefs, whether Look / Reveal of it is legal) with the pair summary and the global
   context (tokens, phase, reveal, deck, End card, scores, per-number totals); then
   ``rounds`` of DeepSets message passing (each slot sees the mean and max of all slots).
4. **Output**: the per-slot embeddings concatenated in slot order, then a pooled context.

Every slot goes through the same weights and the only cross-slot operations are sums,
means and maxima, so permuting the slots of an observation permutes the per-slot
embeddings the same way and leaves the pooled context unchanged (tested). With
``net_arch=dict(pi=[], vf=[...])`` the policy's action layer reads the slot embeddings
directly, so the Look and Reveal logits of slot ``s`` come mostly from embedding ``s``.

The module imports torch and stable-baselines3 at import time, so nothing in
:mod:`agents` imports it; SB3 loads it by name when a checkpoint that uses it is loaded.
"""

from __future__ import annotations

from itertools import pairwise

import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from dejavu_agents.grid.beliefs import TABLES, card_tables, deduce_cards
from dejavu_env.grid.cards import N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS
from dejavu_env.grid.observation import LAYOUTS, MAX_CANDIDATE_COUNT, OBS_MODES
from dejavu_env.grid.rules import END_TURN, LOOK, N_ACTIONS, REVEAL, STOP, TOTAL_TOKENS, tally

SLOT_FACTS = N_BLUES + 5 + 3 * N_NUMBERS + 2
"""Per-slot inputs: blue one-hot, 5 flags, known faces, expected shows, chance to show, 2 legal bits."""
PAIR_FACTS = 9
"""Per (slot, number) inputs, see :meth:`GridSlotExtractor._pairs`."""
GLOBAL_FACTS = 2 * (TOTAL_TOKENS + 1) + 2 + 1 + N_BLUES + 4 + 1 + 3 + N_NUMBERS + MAX_CANDIDATE_COUNT + 1 + 1 + 1
GLOBAL_FACTS += 2 + 2 + 3 + 4 * N_NUMBERS + 2


def _mlp(sizes: list[int]) -> nn.Sequential:
    """Linear layers with ReLU between them and after the last (its output feeds other layers)."""
    layers: list[nn.Module] = []
    for a, b in pairwise(sizes):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class GridSlotExtractor(BaseFeaturesExtractor):
    """Per-slot embeddings (in slot order) plus a pooled context from a grid observation.

    ``observation_space``: the env's ``Dict`` space (``"observation"`` of either obs_mode,
    ``"action_mask"``). ``obs_mode``: the view the observations are in, given explicitly (the
    training script fills it from the config's ``env_kwargs``, the loader from the model
    card), never guessed from the vector's length. ``slot_dim``: size of each slot's
    embedding; ``context_dim``: size of the pooled context; ``hidden``: width of the inner
    layers; ``pair_dim``: output of the slot x number MLP; ``rounds``: DeepSets
    message-passing rounds between slots.
    ``features_dim`` is ``8 * slot_dim + context_dim``.
    """

    shows: torch.Tensor
    has: torch.Tensor
    codes: torch.Tensor
    powers: torch.Tensor
    blue_cards: torch.Tensor

    def __init__(
        self,
        observation_space: spaces.Dict,
        obs_mode: str,
        slot_dim: int = 32,
        context_dim: int = 64,
        hidden: int = 128,
        pair_dim: int = 32,
        rounds: int = 2,
    ) -> None:
        super().__init__(observation_space, features_dim=N_SLOTS * slot_dim + context_dim)
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {list(OBS_MODES)}, got {obs_mode!r}")
        layout = LAYOUTS[obs_mode]
        size = observation_space["observation"].shape
        if size != (layout.size,):
            raise ValueError(f"a grid {obs_mode} observation has {layout.size} entries, the space has shape {size}")
        self.obs_mode = obs_mode
        self.slot_dim = slot_dim
        self._slices = layout.slices
        self._shapes = {piece.name: piece.shape for piece in layout.pieces}
        for name, table in card_tables().items():  # persistent: the shipped checkpoints hold them
            self.register_buffer(name, table)
        self.pair_net = _mlp([PAIR_FACTS, hidden // 2, pair_dim])
        self.global_net = _mlp([GLOBAL_FACTS, hidden, hidden])
        self.slot_net = _mlp([SLOT_FACTS + 2 * pair_dim + hidden, hidden, hidden])
        self.mix = nn.ModuleList(_mlp([3 * hidden + hidden, hidden, hidden]) for _ in range(rounds))
        self.slot_out = nn.Linear(hidden, slot_dim)
        self.context_out = _mlp([3 * hidden, hidden, context_dim])

    def _piece(self, vector: torch.Tensor, name: str) -> torch.Tensor:
        return vector[:, self._slices[name]].reshape((-1, *self._shapes[name]))

    def beliefs(self, vector: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(cards, certain)``: per slot a distribution over the 32 card ids (``(B, 8, 32)``,
        zero rows for empty slots) and whether the card is known or deduced (``(B, 8)``)."""
        kept = self._piece(vector, "pile_me" if self.obs_mode == "info_state" else "kept_me")
        kept = kept + self._piece(vector, "pile_opp" if self.obs_mode == "info_state" else "kept_opp")
        tables = {name: getattr(self, name) for name in TABLES}
        blue, known, faces = (self._piece(vector, name) for name in ("slot_blue", "known_me", "faces"))
        return deduce_cards(blue, known, faces, kept, tables)

    def _pairs(
        self, expected: torch.Tensor, chance: torch.Tensor, certain: torch.Tensor, vector: torch.Tensor
    ) -> torch.Tensor:
        """``(B, 8 slots, 8 numbers, PAIR_FACTS)``: a slot's stake in a number beside the number's totals.

        Per pair: the slot's expected shows and chance to show the number, whether that is
        certain, the sure / expected / opponent-known shows of the number on the *other*
        slots, the shows on the reveal's face-up cards, whether the number is a candidate,
        and whether the slot is face up.
        """
        sure = expected * certain.unsqueeze(-1)
        opp = expected * self._piece(vector, "known_opp").unsqueeze(-1)
        face_up = self._piece(vector, "face_up")
        up = (expected * face_up.unsqueeze(-1)).sum(1, keepdim=True)
        candidates = self._piece(vector, "candidates").unsqueeze(1)
        size = expected.shape
        return torch.stack(
            [
                expected,
                chance,
                certain.unsqueeze(-1).expand(size),
                sure.sum(1, keepdim=True) - sure,
                expected.sum(1, keepdim=True) - expected,
                opp.sum(1, keepdim=True) - opp,
                up.expand(size),
                candidates.expand(size),
                face_up.unsqueeze(-1).expand(size),
            ],
            dim=-1,
        )

    def _globals(
        self, vector: torch.Tensor, mask: torch.Tensor, expected: torch.Tensor, certain: torch.Tensor
    ) -> torch.Tensor:
        tokens = self._piece(vector, "tokens")
        levels = torch.arange(TOTAL_TOKENS + 1, device=vector.device, dtype=vector.dtype)
        token_hot = (tokens.unsqueeze(-1) == levels).float().flatten(1)
        count = self._piece(vector, "candidate_count")
        count_hot = (count == torch.arange(MAX_CANDIDATE_COUNT + 1, device=vector.device, dtype=vector.dtype)).float()
        end = self._piece(vector, "end_card")
        if self.obs_mode == "info_state":
            piles = self._piece(vector, "pile_sizes")
        else:
            piles = torch.zeros_like(tokens)
        scores = tally(piles, end[:, 2:4], tokens)
        known_opp = self._piece(vector, "known_opp").unsqueeze(-1)
        kept = self._piece(vector, "pile_me" if self.obs_mode == "info_state" else "kept_me")
        kept = kept + self._piece(vector, "pile_opp" if self.obs_mode == "info_state" else "kept_opp")
        return torch.cat(
            [
                token_hot,
                tokens / TOTAL_TOKENS,
                self._piece(vector, "deck_size") / (N_CARDS - N_SLOTS),
                self._piece(vector, "deck_top_blue"),
                end,
                self._piece(vector, "last_turn"),
                self._piece(vector, "phase"),
                self._piece(vector, "candidates"),
                count_hot,
                count / 4,
                self._piece(vector, "costs_token"),
                piles / 8,
                scores / 8,
                mask[:, STOP : END_TURN + 1],
                (expected * certain.unsqueeze(-1)).sum(1) / 4,
                expected.sum(1) / 4,
                (expected * known_opp).sum(1) / 4,
                (1 - kept) @ self.shows / 8,
                certain.sum(-1, keepdim=True) / N_SLOTS,
                self._piece(vector, "slot_empty").sum(-1, keepdim=True) / N_SLOTS,
            ],
            dim=-1,
        )

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        vector = observations["observation"].float()
        mask = observations["action_mask"].float().reshape(-1, N_ACTIONS)
        cards, certain = self.beliefs(vector)
        expected = cards @ self.shows
        chance = cards @ self.has
        pairs = self.pair_net(self._pairs(expected, chance, certain, vector))
        slot_facts = torch.cat(
            [
                self._piece(vector, "slot_blue"),
                self._piece(vector, "slot_empty").unsqueeze(-1),
                self._piece(vector, "face_up").unsqueeze(-1),
                self._piece(vector, "known_me").unsqueeze(-1),
                self._piece(vector, "known_opp").unsqueeze(-1),
                certain.unsqueeze(-1),
                self._piece(vector, "faces") / 2,
                expected / 2,
                chance,
                mask[:, LOOK : LOOK + N_SLOTS].unsqueeze(-1),
                mask[:, REVEAL : REVEAL + N_SLOTS].unsqueeze(-1),
                pairs.sum(2) / N_NUMBERS,
                pairs.amax(2),
            ],
            dim=-1,
        )
        context = self.global_net(self._globals(vector, mask, expected, certain))
        wide = context.unsqueeze(1).expand(-1, N_SLOTS, -1)
        h = self.slot_net(torch.cat([slot_facts, wide], dim=-1))
        for layer in self.mix:
            pooled = torch.cat([h.mean(1, keepdim=True), h.amax(1, keepdim=True)], dim=-1).expand(-1, N_SLOTS, -1)
            h = h + layer(torch.cat([h, pooled, wide], dim=-1))
        slots = self.slot_out(h).flatten(1)
        summary = self.context_out(torch.cat([h.mean(1), h.amax(1), context], dim=-1))
        return torch.cat([slots, summary], dim=-1)
