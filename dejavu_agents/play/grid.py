"""Playing the grid game in the terminal against a registered player."""

from __future__ import annotations

from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.play.moves import GRID_HELP, describe_grid_moves, grid_move_name, parse_grid
from dejavu_agents.play.session import Prompt, Terminal, rendered
from dejavu_env.core.game import reason_name
from dejavu_env.grid.env import DejaVuGridEnv
from dejavu_env.grid.observation import decode
from dejavu_env.grid.rules import PHASE_REVEAL, REVEAL, STOP


def played(info: dict[str, Any]) -> list[int]:
    """The opponent's moves since the person's last one (``info["opponent_actions"]`` without its padding)."""
    return [int(a) for a in info["opponent_actions"] if a >= 0]


def _why_not(env: DejaVuGridEnv, mask: np.ndarray, action: int) -> str:
    """Empty if ``action`` is legal, else what is wrong and what is legal instead."""
    if mask[action]:
        return ""
    reason = env.game_state.illegal_reason(action).split(" is illegal: ", 1)[-1]
    legal = [a for a in range(len(mask)) if mask[a]]
    return f"you can't {grid_move_name(action)} now: {reason}.\n  Legal now: {describe_grid_moves(legal)}"


def play_grid(opponent: Player, opponent_name: str, seat: int, seed: int | None, terminal: Terminal) -> None:
    """One game against ``opponent`` (called ``opponent_name``), the person at ``seat``; raises ``Quit`` to leave early.

    The person's moves are checked before they are played, so the env raises on an illegal
    one (it never happens) rather than ending the game.
    """
    env = DejaVuGridEnv(
        opponent=opponent, agent_seat=seat, obs_mode="info_state", illegal_action="raise", render_mode="ansi"
    )
    observation, info = env.reset(seed=seed)
    terminal.say(f"Grid game against {opponent_name}; you are seat {seat}. Type 'help' for the moves.\n")
    while True:
        if played(info):
            terminal.say(f"{opponent_name} played: {', '.join(grid_move_name(a) for a in played(info))}")
        terminal.say(rendered(env))
        mask = observation["action_mask"]
        legal = [a for a in range(len(mask)) if mask[a]]

        def check(action: int, mask: np.ndarray = mask) -> str:
            return _why_not(env, mask, action)

        prompt = Prompt(
            text=f"your move ({describe_grid_moves(legal)})> ", parse=parse_grid, check=check, help_text=GRID_HELP
        )
        action = prompt.ask(terminal)
        observation, _, terminated, truncated, info = env.step(action)
        phase = int(decode(observation["observation"], env.obs_mode)["phase"].argmax())
        if REVEAL <= action < STOP and (phase != PHASE_REVEAL or terminated):
            terminal.say(
                "Mistake! The revealed cards go back face down, you give the opponent a token "
                "(if you have one), and your turn is over."
            )
        if terminated or truncated:
            break
    if played(info):
        terminal.say(f"{opponent_name} played: {', '.join(grid_move_name(a) for a in played(info))}")
    terminal.say(rendered(env))
    mine, theirs = info["scores"]
    reason = reason_name(info["reason"])
    if reason == "truncated":
        verdict = "Turn limit reached."
    else:
        verdict = {0: "You win!", 1: f"{opponent_name} wins.", -1: "A draw."}[info["winner"]]
    how = {"hunches": " (all 7 hunch tokens)"}.get(reason, "")
    terminal.say(f"{verdict}{how} Scores: you {mine:g}, {opponent_name} {theirs:g}.")
