"""Playing the grab game in the terminal against registered players.

One prompt per tick: first what the last tick did (who grabbed what, who is out), then the
env's text render of the card just flipped, the middle and the table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.play.moves import GRAB_HELP, LIST, describe_objects, parse_grab
from dejavu_agents.play.session import Prompt, Terminal, rendered
from dejavu_env.grab.env import DejaVuGrabEnv
from dejavu_env.grab.observation import decode
from dejavu_env.grab.rules import DEFAULT_REACTION_TIME


def _seat_name(seat: int, labels: Sequence[str]) -> str:
    return "you" if seat == 0 else f"P{seat} ({labels[seat]})"


def _events(before: dict[str, np.ndarray], after: dict[str, np.ndarray], tried: int, labels, names) -> list[str]:
    """Readable news between two observations of the same round."""
    lines = []
    n = len(labels)
    for seat in range(n):
        for k in np.flatnonzero(after["holdings"][seat] > before["holdings"][seat]).tolist():
            lines.append(f"{_seat_name(seat, labels)} grabbed the {names[k]}".replace("you grabbed", "You grabbed"))
    if tried and not after["holdings"][0][tried - 1]:
        holder = [s for s in range(1, n) if after["holdings"][s][tried - 1]]
        faster = _seat_name(holder[0], labels) if holder else "someone"
        lines.append(f"You reached for the {names[tried - 1]}, but {faster} was faster.")
    for seat in range(n):
        if after["eliminated"][seat] and not before["eliminated"][seat]:
            who = "You are" if seat == 0 else f"{_seat_name(seat, labels)} is"
            lines.append(f"{who} out of this round: a card showed an object already held.")
    return lines


def _round_summaries(env: DejaVuGrabEnv, first: int, labels: Sequence[str]) -> list[str]:
    """What each round finished since round ``first`` scored, and who was out of it.

    Reads only public facts of the state (round scores and eliminations, announced at the
    end of each round).
    """
    lines = []
    for r in range(first, len(env.game_state.round_points)):
        scores = ", ".join(
            f"{_seat_name(s, labels)} {'out' if out else points}"
            for s, (points, out) in enumerate(zip(env.game_state.round_points[r], env.game_state.round_eliminated[r]))
        )
        lines.append(f"Round {r + 1} is over. Points this round: {scores}.")
        if env.game_state.round_eliminated[r][0]:
            lines.append("You were out of that round: a card showed an object you held, or it was on a card set aside.")
    return lines


def play_grab(
    opponents: Sequence[Player], opponent_names: Sequence[str], reaction_time: float, seed: int | None,
    terminal: Terminal,
) -> None:  # fmt: skip
    """One 3-round game, the person at seat 0 against ``opponents`` (called ``opponent_names``);
    raises ``Quit`` to leave early.

    The person's grabs are checked before they are played, so the env raises on an illegal
    one (it never happens) rather than passing for them.
    """
    labels = ["you", *opponent_names]
    times = [reaction_time, *(getattr(o, "reaction_time", None) or DEFAULT_REACTION_TIME for o in opponents)]
    env = DejaVuGrabEnv(
        n_players=len(labels), opponents=list(opponents), reaction_times=times, obs_mode="observation",
        illegal_action="raise", render_mode="ansi",
    )  # fmt: skip
    observation, info = env.reset(seed=seed)
    names = env.game_state.deck.names
    seats = ", ".join(f"P{s} {'you' if s == 0 else labels[s]}" for s in range(len(labels)))
    terminal.say(f"Grab game: {seats}. Your reaction time: {reaction_time:g} s. Type 'help' for how to play.\n")
    news: list[str] = []
    while True:
        for line in news:  # what the last tick did, before the board of the card it flipped next
            terminal.say(f"  {line}")
        terminal.say(rendered(env))
        view = {k: v.copy() for k, v in decode(observation["observation"], "observation").items()}
        mask = observation["action_mask"]
        middle = [k for k in range(len(names)) if mask[1 + k]]

        def show_list(move: int | str, middle: list[int] = middle) -> bool:
            if move != LIST:
                return False
            terminal.say(f"  middle: {describe_objects(middle, names)}")
            return True

        def check(action: int | str, mask: np.ndarray = mask) -> str:
            if isinstance(action, str) or mask[action]:
                return ""
            return f"the {names[action - 1]} is not in the middle any more; type 'list' to see what is"

        prompt: Prompt[int | str] = Prompt(
            text="grab (name or number, Enter to pass)> ",
            parse=lambda text: parse_grab(text, names),
            check=check,
            help_text=GRAB_HELP,
            extra=show_list,
        )
        action = prompt.ask(terminal)
        assert isinstance(action, int), "'list' is answered by show_list, never returned as a move"
        rounds_done = len(env.game_state.round_points)
        observation, _, terminated, _, info = env.step(action)
        if len(env.game_state.round_points) > rounds_done:
            news = _round_summaries(env, rounds_done, labels)
        else:
            news = _events(view, decode(observation["observation"], "observation"), action, labels, names)
        if terminated:
            break
    for line in news:
        terminal.say(line)
    totals = ", ".join(f"{_seat_name(s, labels)} {p}" for s, p in enumerate(info["points"]))
    winners = np.flatnonzero(info["winners"]).tolist()
    if winners == [0]:
        verdict = "You win!"
    elif 0 in winners:
        verdict = "You share the win."
    else:
        verdict = " and ".join(_seat_name(s, labels) for s in winners) + (" wins." if len(winners) == 1 else " win.")
    terminal.say(f"Game over. Totals: {totals}. {verdict}")
