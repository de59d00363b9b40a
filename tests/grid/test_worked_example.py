"""The rulebook's worked example, played through the env as a scripted game.

Alex (the agent, seat 0) reveals 2+4, 4+4 (the 4 shows 3 times), goes on with 0+4, stops
and takes a token; then pays a token for an extra reveal of 4+6, 5+6, 4+5: a mistake.
"""

import gymnasium as gym
import numpy as np

from dejavu_env.grid.cards import card_id
from dejavu_env.grid.observation import decode
from dejavu_env.grid.rules import END_TURN, LOOK, REVEAL, STOP
from dejavu_env.testing.grid_checks import ScriptedPlayer, deck_starting_with

GRID = [(2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2)]
REFILL = [(3, 3), (1, 3), (2, 3)]


def test_alex_reveals_as_in_the_rulebook():
    opponent = ScriptedPlayer([LOOK + 6, END_TURN])
    env = gym.make("DejaVuGrid-v0", opponent=opponent)
    obs, info = env.reset(seed=0, options={"deck": deck_starting_with(*GRID, *REFILL), "agent_seat": 0})
    assert info["tokens"].tolist() == [3, 4]

    obs, *_ = env.step(REVEAL + 0)  # 2+4
    obs, _, _, _, info = env.step(REVEAL + 1)  # 4+4: the 4 shows 3 times
    v = decode(obs["observation"])
    assert v["candidates"].tolist() == [0, 0, 0, 0, 1, 0, 0, 0] and v["candidate_count"][0] == 3
    assert info["action_mask"][STOP] == 1, "Alex could stop now"
    obs, *_ = env.step(REVEAL + 2)  # 0+4: four times
    assert decode(obs["observation"])["candidate_count"][0] == 4
    obs, _, _, _, info = env.step(STOP)
    assert info["tokens"].tolist() == [4, 3], "keeping with a count of 4 takes a token from the opponent"
    v = decode(obs["observation"])
    assert np.flatnonzero(v["pile_me"]).tolist() == sorted(card_id(p) for p in GRID[:3])
    assert v["slot_blue"][:3].argmax(axis=1).tolist() == [6 - 2, 4 - 2, 5 - 2], "gaps filled from the deck"

    obs, _, _, _, info = env.step(REVEAL + 3)  # the extra action is paid first
    assert info["tokens"].tolist() == [3, 4]
    obs, *_ = env.step(REVEAL + 4)  # 5+6: the 6 shows twice
    v = decode(obs["observation"])
    assert v["candidates"].tolist() == [0, 0, 0, 0, 0, 0, 1, 0] and v["candidate_count"][0] == 2
    obs, reward, terminated, truncated, info = env.step(REVEAL + 5)  # 4+5: no 6, a mistake
    assert info["tokens"].tolist() == [2, 5], "the mistake costs Alex another token"
    assert info["opponent_actions"][:3].tolist() == [LOOK + 6, END_TURN, -1], "the turn ended and the opponent played"
    assert (reward, terminated, truncated) == (0.0, False, False)
    v = decode(obs["observation"])
    assert v["pile_sizes"].tolist() == [3, 0]
    assert v["known_me"][3:6].tolist() == [1, 1, 1] and v["face_up"].sum() == 0, "flipped back, remembered"
    assert v["phase"].tolist() == [1, 0, 0]
