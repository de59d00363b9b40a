"""A scripted deal: the grid rulebook's worked example, step by step.

Run it either way from the clone's root: ``python examples/scripted_deck.py`` or
``python -m examples.scripted_deck``. Needs only ``dejavu_env``.

``reset(options={"deck": [...]})`` fixes the deal: 32 ``(a, b)`` pairs, slots 0..7 first, then
the deck from the top. Here the grid holds the example's cards, and Alex (the agent, seat 0)
plays the example's moves (docs/rules.md#grid-worked-example).
"""

from __future__ import annotations

import gymnasium as gym

import dejavu_env  # noqa: F401
from dejavu_env.grid import CARDS, action_name, decode
from dejavu_env.grid.rules import END_TURN, LOOK, REVEAL, STOP

GRID = [(2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2)]
REST = [pair for pair in CARDS if pair not in GRID]  # the deck, from the top
ALEX = [REVEAL + 0, REVEAL + 1, REVEAL + 2, STOP, REVEAL + 3, REVEAL + 4, REVEAL + 5]


class LookThenEnd:
    """An opponent that looks at slot 6, then ends its turn (any callable(obs, mask) -> int will do)."""

    def __call__(self, observation: dict, action_mask) -> int:
        return END_TURN if action_mask[END_TURN] else LOOK + 6


def main() -> None:
    env = gym.make("DejaVuGrid-v0", opponent=LookThenEnd())
    obs, info = env.reset(seed=0, options={"deck": GRID + REST, "agent_seat": 0})
    print(f"start: tokens (Alex, opponent) = {info['tokens'].tolist()}")
    for action in ALEX:
        obs, _, _, _, info = env.step(action)
        view = decode(obs["observation"], "info_state")
        candidates = [n for n in range(8) if view["candidates"][n]]
        played = [action_name(int(a)) for a in info["opponent_actions"] if a >= 0]  # padded with -1
        print(
            f"{action_name(action):9s} tokens {info['tokens'].tolist()}  candidates {candidates}"
            f"  count {int(view['candidate_count'][0])}  opponent played {played}"
        )
    assert info["tokens"].tolist() == [2, 5], "as in the rulebook: +1 for the stop, -1 to pay, -1 for the mistake"


if __name__ == "__main__":
    main()
