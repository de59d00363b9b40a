"""The terminal play mode, driven by scripted lines through ``main(argv, input_fn, print_fn)``."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from dejavu_agents.play.__main__ import main
from dejavu_agents.play.moves import LIST, Command, describe_grid_moves, parse_grab, parse_grid
from dejavu_env.grab.cards import object_names

NAMES = object_names()


class Script:
    """Feeds lines to ``main`` and records everything it prints and every prompt it shows."""

    def __init__(self, lines=(), then=None) -> None:
        self.lines = list(lines)
        self.then = then
        self.prompts: list[str] = []
        self.printed: list[str] = []

    def input(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if self.lines:
            return self.lines.pop(0)
        if self.then is None:
            raise EOFError
        return self.then(prompt)

    def print(self, *args: object) -> None:
        self.printed.append(" ".join(map(str, args)))

    @property
    def text(self) -> str:
        return "\n".join(self.printed)

    def run(self, argv: list[str]) -> int:
        return main(argv, self.input, self.print)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("look 3", 3), ("l3", 3), ("  LOOK   0 ", 0), ("reveal 5", 13), ("r 7", 15),
        ("stop", 16), ("s", 16), ("take", 17), ("end", 18), ("e", 18),
        ("help", Command.HELP), ("?", Command.HELP), ("quit", Command.QUIT), ("q", Command.QUIT),
    ],
)  # fmt: skip
def test_parse_grid_reads_every_move(text: str, expected: object) -> None:
    assert parse_grid(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [("look 8", "no slot 8"), ("reveal -1", "no slot -1"), ("look", "look which slot"), ("", "type a move"),
     ("jump 3", "don't understand 'jump 3'")],
)  # fmt: skip
def test_parse_grid_explains_nonsense(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_grid(text)


def test_describe_grid_moves_groups_slots() -> None:
    assert describe_grid_moves([0, 2, 8, 10, 16, 18]) == "look 0 2, reveal 0 2, stop, end"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("pass", 0), ("2", 3), ("teapot", 3), ("TEA", 3), ("mug", 1), ("list", LIST), ("?", Command.HELP),
     ("q", Command.QUIT)],
)  # fmt: skip
def test_parse_grab_reads_names_numbers_and_commands(text: str, expected: object) -> None:
    assert parse_grab(text, NAMES) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("t", "could be teapot, toothbrush, towel, traffic cone, toaster"),
        ("99", "numbered 0 to 35"),
        ("xyz", "no object"),
    ],
)
def test_parse_grab_explains_nonsense(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_grab(text, NAMES)


def test_grid_session_rejects_bad_input_and_reprompts() -> None:
    script = Script(["help", "foo", "look 9", "stop", "look 3", "look 3", "quit"])
    assert script.run(["grid", "--opponent", "random", "--seed", "1"]) == 0
    text = script.text
    assert "turn 1, you are seat 0, turn start" in text  # the env's ansi render
    assert "reveal N  (r N)" in text
    assert "I don't understand 'foo'" in text
    assert "there is no slot 9" in text
    assert "you can't stop now: there is no reveal to stop." in text
    assert "Legal now: look 0 1 2 3 4 5 6 7, reveal 0 1 2 3 4 5 6 7" in text
    assert text.endswith("Bye.")
    assert script.prompts[0] == "your move (look 0 1 2 3 4 5 6 7, reveal 0 1 2 3 4 5 6 7)> "
    assert script.prompts[-1].endswith("end)> ")  # after a Look, ending the turn is legal


def first_legal_grid_move(prompt: str) -> str:
    """A scripted person: take the End card when possible, else end the turn, else the first move listed."""
    moves = re.search(r"\((.*)\)> $", prompt).group(1).split(", ")
    for wanted in ("take", "end"):
        if wanted in moves:
            return wanted
    word, *slots = moves[0].split()
    return f"{word} {slots[0]}" if slots else word


def test_grid_session_plays_a_whole_game() -> None:
    script = Script(then=first_legal_grid_move)
    assert script.run(["grid", "--opponent", "random", "--seed", "2", "--seat", "1"]) == 0
    assert "you are seat 1" in script.text
    assert "random played:" in script.text
    assert re.search(r"(You win!|random wins\.|A draw\.|Turn limit reached\.).* Scores: you \d", script.printed[-1])


def test_grid_session_announces_a_mistake() -> None:
    script = Script(["reveal 0", "reveal 1", "quit"])
    script.run(["grid", "--seed", "1"])
    assert "Mistake! The revealed cards go back face down" in script.text


def test_grab_session_rejects_bad_input_and_lists_the_middle() -> None:
    script = Script(["xyz", "t", "list", "mug", "mug", "quit"])
    assert script.run(["grab", "--opponents", "human-casual,perfect", "--seed", "3"]) == 0
    text = script.text
    assert "Grab game: P0 you, P1 human-casual, P2 perfect" in text
    assert "round 1/3, 32 of 33 cards left, flipping" in text  # the env's ansi render
    assert "no object is called 'xyz'" in text
    assert "'t' could be teapot, toothbrush, towel, traffic cone, toaster" in text
    assert "middle: 0 mug, 1 fork, 2 teapot" in text
    assert "You grabbed the mug" in text
    assert "the mug is not in the middle any more" in text


def test_grab_session_plays_a_whole_game() -> None:
    script = Script(then=lambda prompt: "")
    assert script.run(["grab", "--opponents", "perfect", "--seed", "0"]) == 0
    text = script.text
    for r in (1, 2, 3):
        assert f"Round {r} is over. Points this round: you 0, P1 (perfect) " in text
    assert "P1 (perfect) grabbed the" in text
    assert script.printed[-1].startswith("Game over. Totals: you 0, P1 (perfect) ")
    assert script.printed[-1].endswith("P1 (perfect) wins.")


def test_grab_session_says_when_you_are_out() -> None:
    script = Script(["mug"], then=lambda prompt: "")
    script.run(["grab", "--opponents", "human-expert", "--seed", "0"])
    assert "Points this round: you out" in script.text
    assert "You were out of that round" in script.text


def test_unknown_players_and_end_of_input_are_handled(capsys: pytest.CaptureFixture[str]) -> None:
    script = Script()
    assert script.run(["grid", "--opponent", "nobody"]) == 2
    assert "error: unknown grid player 'nobody'" in capsys.readouterr().err
    script = Script()
    assert script.run(["grab", "--seed", "0"]) == 0  # input ends at once: leave politely
    assert script.text.endswith("Bye.")


def test_play_runs_from_the_shell_with_real_stdin() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dejavu_agents.play", "grid", "--seed", "4"],
        input="look 2\nend\nquit\n", capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "counting played:" in done.stdout and done.stdout.rstrip().endswith("Bye.")


def interrupt(prompt: str) -> str:
    raise KeyboardInterrupt


@pytest.mark.parametrize("argv", [["grid", "--seed", "1"], ["grab", "--opponents", "perfect", "--seed", "0"]])
def test_ctrl_c_leaves_with_status_130_and_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    script = Script(["look 3"] if argv[0] == "grid" else [""], then=interrupt)
    assert script.run(argv) == 130
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"python -m dejavu_agents.play {argv[0]}: interrupted: the game was left unfinished"]


def test_grab_news_comes_before_the_board_of_the_next_flip() -> None:
    """What the person's grab did is said above the next card's board, not under it."""
    script = Script(["mug", "quit"])
    script.run(["grab", "--opponents", "human-casual,perfect", "--seed", "3"])
    index = next(i for i, line in enumerate(script.printed) if "You grabbed the mug" in line)
    assert script.printed[index + 1].startswith("round 1/3, 31 of 33 cards left"), script.printed[index + 1]
    assert "round 1/3, 32 of 33 cards left" in script.printed[index - 1]  # the board the grab was made on


def test_grid_game_over_screen_has_no_next_move_hints() -> None:
    for seed in range(6):
        script = Script(then=first_legal_grid_move)
        script.run(["grid", "--opponent", "random", "--seed", str(seed)])
        final_board = script.printed[-2]
        assert "game over" in final_board or "turn limit" in final_board, final_board
        assert "costs a token" not in final_board and "reveal:" not in final_board
