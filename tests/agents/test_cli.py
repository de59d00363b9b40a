"""Every command line's ordinary mistakes: one line on stderr, exit status 2, no traceback, before any work.

Each case runs the real command in a fresh interpreter, as a user would; the property tests
then throw argument lists at each command's ``main`` (or, for training, at everything it
does before training starts).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dejavu_agents.learned.models import CHECKPOINTS

TOURNAMENT = "dejavu_agents.tournament"

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Paths the cases name: a file, a run folder with a grid checkpoint, a folder that holds a run, bad configs."""
    root = tmp_path_factory.mktemp("cli")
    (root / "file.txt").write_text("not a folder\n")
    run = root / "run"
    run.mkdir()
    shutil.copy(CHECKPOINTS / "ppo-grid.zip", run / "best.zip")
    shutil.copy(CHECKPOINTS / "ppo-grid.json", run / "best.json")
    (root / "broken.yaml").write_text("game: [grid\n")
    (root / "odd.yaml").write_text("game: grid\nalgo: maskable_ppo\nstages: []\ncolour: blue\n")
    (root / "list.yaml").write_text("- 1\n- 2\n")
    done = root / "done"
    done.mkdir()
    for name in ("players.md", "gauntlet.csv"):
        (done / name).write_text("an earlier run's results\n")
    return {"file": str(root / "file.txt"), "run": str(run), "root": str(root), "done": str(done), "long": "a" * 300}


# (module, argv with {file}/{run}/{root} placeholders, text the error line holds)
CASES = [
    (TOURNAMENT, [], "the following arguments are required: --game"),
    (TOURNAMENT, ["--game", "chess"], "argument --game: invalid choice: 'chess'"),
    (TOURNAMENT, ["--game", "grid", "--players", ","], "no players given"),
    (TOURNAMENT, ["--game", "grid", "--players", "random,nobody"], "unknown grid player 'nobody'"),
    (TOURNAMENT, ["--game", "grid", "--players", "random,random"], "each player may enter once"),
    (TOURNAMENT, ["--game", "grid", "--games", "0"], "argument --games: must be a whole number >= 1, got 0"),
    (TOURNAMENT, ["--game", "grid", "--games", "-5"], "argument --games: must be a whole number >= 1, got -5"),
    (TOURNAMENT, ["--game", "grid", "--games", "many"], "argument --games: must be a whole number >= 1"),
    (TOURNAMENT, ["--game", "grid", "--seed", "-1"], "argument --seed: must be a whole number >= 0, got -1"),
    (TOURNAMENT, ["--game", "grid", "--workers", "0"], "argument --workers: must be a whole number >= 1"),
    (TOURNAMENT, ["--game", "grid", "--workers", "-3"], "argument --workers: must be a whole number >= 1"),
    (TOURNAMENT, ["--game", "grab", "--table-size", "7"], "grab seats 2 to 6 players, not a table of 7"),
    (TOURNAMENT, ["--game", "grid", "--table-size", "3"], "grid seats exactly 2 players, not a table of 3"),
    (TOURNAMENT, ["--game", "grab", "--players", "random,perfect"],
     "a grab table seats 4 players, but only 2 players entered"),
    (TOURNAMENT, ["--game", "grid", "--out", "{file}"], "argument --out: {file} is a file, not a folder"),
    (TOURNAMENT, ["--game", "grid", "--out", "{file}/results"], "cannot make the folder"),
    (TOURNAMENT, ["--game", "grab", "--players", "random,{run}/best.zip"], "trained for grid, not grab"),
    (TOURNAMENT, ["--game", "grid", "--players", "random,{long}.zip"], "has a name of 304 characters"),
    (TOURNAMENT, ["--game", "grid", "--players", "random,mine={long}.zip"], "file systems take at most 255"),
    (TOURNAMENT, ["--game", "grid", "--out", "{root}/{long}"], "argument --out: the path"),
    (TOURNAMENT, ["--game", "grid", "--out", ""], "argument --out: an empty path"),
    (TOURNAMENT, ["--game", "grid", "--out", "{done}"], "{done} already holds players.md (an earlier run?)"),
    (TOURNAMENT, ["--game", "grid", "--games", str(10**30)], "more than this machine's free memory holds"),
    (TOURNAMENT, ["--game", "grid", "--workers", "100000"], "100,000 worker processes is more than the"),
    ("dejavu_agents.play", [], "the following arguments are required: {{grid,grab}}"),
    ("dejavu_agents.play", ["grid", "--opponent", "x={long}.zip"], "has a name of 304 characters"),
    ("dejavu_agents.play", ["chess"], "invalid choice: 'chess'"),
    ("dejavu_agents.play", ["grid", "--seed", "-1"], "argument --seed: must be a whole number >= 0, got -1"),
    ("dejavu_agents.play", ["grid", "--opponent", "nobody"], "unknown grid player 'nobody'"),
    ("dejavu_agents.play", ["grid", "--opponent", "ppo-grab"], "unknown grid player 'ppo-grab'"),
    ("dejavu_agents.play", ["grab", "--opponents", ","], "no players given"),
    ("dejavu_agents.play", ["grab", "--opponents", "random,random,random,random,random,random"],
     "grab seats 1 to 5 opponents beside you, got 6"),
    ("dejavu_agents.play", ["grab", "--reaction-time", "0"], "argument --reaction-time: must be a finite number > 0"),
    ("dejavu_agents.play", ["grab", "--reaction-time", "nan"], "argument --reaction-time: must be a finite number > 0"),
    ("experiments.evaluate", ["--game", "grab"], "the following arguments are required: --players, --opponents"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--table-size", "0"],
     "argument --table-size: must be a whole number >= 1, got 0"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--table-size", "9"],
     "grab seats 2 to 6 players, not a table of 9"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--games", "0"],
     "argument --games: must be a whole number >= 1, got 0"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--workers", "-3"],
     "argument --workers: must be a whole number >= 1, got -3"),
    ("experiments.evaluate", ["--game", "grab", "--players", ",", "--opponents", "random"], "no players given"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--reference", "x"],
     "--reference 'x' must be one of --players (perfect)"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--out", "{file}"],
     "is a file, not a folder"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--out", "{done}"],
     "{done} already holds gauntlet.csv (an earlier run?); give a new --out, or --overwrite"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--out", ""],
     "argument --out: an empty path"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect,{long}.zip", "--opponents", "random"],
     "has a name of 304 characters"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--games",
                              str(10**30)], "more than this machine's free memory holds"),
    ("experiments.evaluate", ["--game", "grab", "--players", "perfect", "--opponents", "random", "--workers",
                              "100000"], "100,000 worker processes is more than the"),
    ("experiments.train", [], "the following arguments are required: config"),
    ("experiments.train", ["grid", "--out", ""], "argument --out: an empty path"),
    ("experiments.train", ["grid", "--out", "{root}/{long}"], "has a name of 300 characters"),
    ("experiments.train", ["nosuch"],
     "no config 'nosuch'; known: grab, grab-batched, grab-scratch, grab-scratch-core16, grab-scratch-gru, "
     "grab-scratch-human, grab-stack,"),
    ("experiments.train", ["rllib-grid"], "rllib-grid is a config of python -m experiments.rllib"),
    ("experiments.train", ["{root}"], "is a folder, not a config file"),
    ("experiments.train", ["{file}"], "is not a YAML config (.yaml or .yml)"),
    ("experiments.train", ["{root}/missing.yaml"], "no config file"),
    ("experiments.train", ["{root}/broken.yaml"], "is not valid YAML"),
    ("experiments.train", ["{root}/odd.yaml"], "unknown config keys ['colour']"),
    ("experiments.train", ["{root}/list.yaml"], "a config is a mapping of keys to values, got list"),
    ("experiments.train", ["grid", "--timesteps", "0"], "argument --timesteps: must be a whole number >= 1, got 0"),
    ("experiments.train", ["grid", "--timesteps", "-5"], "argument --timesteps: must be a whole number >= 1, got -5"),
    ("experiments.train", ["grid", "--n-envs", "-1"], "argument --n-envs: must be a whole number >= 1, got -1"),
    ("experiments.train", ["grid", "--out", "{run}"], "already holds files (an earlier run?)"),
    ("experiments.train", ["grid", "--out", "{file}"], "is a file, not a folder"),
    ("experiments.benchmark", ["--steps", "0"], "argument --steps: must be a whole number >= 1, got 0"),
    ("experiments.benchmark", ["--seed", "-2"], "argument --seed: must be a whole number >= 0, got -2"),
    ("experiments.benchmark", ["--rounds", "0"], "argument --rounds: must be a whole number >= 1, got 0"),
    ("experiments.benchmark", ["--rounds", "10**20"], "argument --rounds: must be a whole number >= 1, got '10**20'"),
    ("experiments.benchmark", ["--rounds", str(10**20)], f"argument --rounds: must be at most 20, got {10**20}"),
    ("experiments.benchmark_training", ["--seconds", "-1"], "argument --seconds: must be a finite number > 0"),
    ("experiments.benchmark_training", ["--seconds", "nan"], "argument --seconds: must be a finite number > 0"),
    ("experiments.benchmark_training", ["--only", "nosuch"], "--only 'nosuch' matches no case"),
    ("experiments.benchmark_training", ["--seed", "x"], "argument --seed: must be a whole number >= 0"),
    ("experiments.profile_learner", ["grid"], "grid.yaml is not a compact_ppo config"),
    ("experiments.profile_learner", ["grid-scratch", "--set", "ppo"], "--set wants key=value"),
    ("experiments.profile_learner", ["grid-scratch", "--set", "ppo.n_epochs=0"], "n_epochs must be >= 1"),
    ("experiments.profile_learner", ["grid-scratch", "--stage", "7"], "--stage must be from 0 to 1"),
    ("experiments.profile_learner", ["grid-scratch", "--iterations", "0"], "argument --iterations: must be a whole"),
    ("experiments.human_recovery", ["--games", "0"], "argument --games: must be a whole number >= 1, got 0"),
    ("experiments.human_recovery", ["--seed", "-1"], "argument --seed: must be a whole number >= 0, got -1"),
    ("experiments.ismcts_timing", ["--games", "0"], "argument --games: must be a whole number >= 1, got 0"),
    ("experiments.ismcts_timing", ["--simulations", "-1"], "argument --simulations: must be a whole number >= 1"),
    ("experiments.action_mix", [], "the following arguments are required: --player"),
    ("experiments.action_mix", ["--player", "greedy", "--games", "0"], "argument --games: must be a whole number >= 1"),
    ("experiments.action_mix", ["--player", "greedy", "--seed", "-1"], "argument --seed: must be a whole number >= 0"),
    ("experiments.action_mix", ["--player", "nobody"], "unknown grid player 'nobody'"),
    ("experiments.action_mix", ["--player", "random"], "reads 'observation'; this script reads info_state views"),
    ("dejavu_agents.web", ["--port", "0"], "argument --port: must be a whole number >= 1, got 0"),
    ("dejavu_agents.web", ["--checkpoint", "grid:mine"], "write a checkpoint as GAME:NAME=PATH"),
]  # fmt: skip


def _fill(argv: Sequence[str], places: dict[str, str]) -> list[str]:
    return [arg.format(**places) for arg in argv]


@pytest.mark.slow
@pytest.mark.parametrize(("module", "argv", "message"), CASES, ids=[f"{m}:{' '.join(a)}" for m, a, _ in CASES])
def test_a_mistake_is_one_line_on_stderr_and_status_2(
    module: str, argv: list[str], message: str, places: dict[str, str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, *_fill(argv, places)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"python -m {module}"), lines[0]
    assert message.format(**places) in lines[0]
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.parametrize("module", sorted({m for m, _, _ in CASES}))
def test_help_shows_the_defaults_and_an_example(module: str, capsys: pytest.CaptureFixture[str]) -> None:
    main = __import__(f"{module}.__main__" if module.startswith("dejavu_agents") else module, fromlist=["main"]).main
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    text = capsys.readouterr().out
    assert stop.value.code == 0
    assert f"example:\n  python -m {module}" in text
    words = " ".join(text.split())
    if module in ("dejavu_agents.tournament", "experiments.evaluate"):
        assert "--games GAMES games per" in words and "(default: 2000)" in words
        assert "--seed SEED" in words and "(default: 0)" in words


# ---------------------------------------------------------------- property tests over argument lists


def _outcome(call: Callable[[], object]) -> tuple[int, str]:
    """Run ``call`` (a CLI entry point) capturing stderr: ``(status, stderr)``; any other exception propagates."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            result = call()
            status = result if isinstance(result, int) else 0
        except SystemExit as stop:
            status = int(stop.code or 0)
    return status, err.getvalue()


def _check(status: int, err: str, prog: str) -> None:
    event(f"exit status {status}")
    assert status in (0, 2), (status, err)
    if status == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{prog}"), err
    assert "Traceback" not in err


def _option(name: str, values: Sequence[str]) -> st.SearchStrategy[list[str]]:
    """``[]`` or ``[name, value]``."""
    return st.one_of(st.just([]), st.sampled_from(values).map(lambda v: [name, v]))


def _argv(*parts: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    return st.tuples(*parts).map(lambda lists: [arg for part in lists for arg in part])


# Valid values come more often than mistakes, so that the lists also reach the commands' real work.
COUNTS = ["1", "2", "1", "2", "0", "-5", "x", "1.5", ""]
SEEDS = ["0", "7", "-1", "x"]
PLAYERS = ["random,greedy", "random,perfect", "random,perfect,human-child,human-casual", "random,greedy,counting",
           "human-casual,perfect,random", ",", "", "nobody", "random,random", "random", "a=", "=b.zip",
           "runs/none.zip"]  # fmt: skip
GAME = st.sampled_from(["grid", "grab"] * 3 + ["chess"]).map(lambda v: ["--game", v])
JUNK = st.sampled_from([[]] * 6 + [["--bogus"], ["extra"]])
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(
    _argv(
        GAME,
        st.sampled_from(PLAYERS).map(lambda v: ["--players", v]),
        st.sampled_from(COUNTS).map(lambda v: ["--games", v]),
        _option("--seed", SEEDS),
        _option("--table-size", ["2", "3", "2", "0", "7", "x"]),
        _option("--workers", ["1", "1", "2", "0", "-3", "x"]),
        st.just(["--no-progress"]),
        JUNK,
    )
)
def test_the_tournament_never_fails_obscurely(argv: list[str]) -> None:
    from dejavu_agents.tournament.__main__ import main

    _check(*_outcome(lambda: main(argv)), "python -m dejavu_agents.tournament")


@SETTINGS
@given(
    _argv(
        GAME,
        st.sampled_from(PLAYERS).map(lambda v: ["--players", v]),
        st.sampled_from(["random", "random,human-child", "greedy", ",", "nobody"]).map(lambda v: ["--opponents", v]),
        st.sampled_from(COUNTS).map(lambda v: ["--games", v]),
        _option("--table-size", ["2", "3", "0", "9"]),
        _option("--reference", ["random", "perfect", "x"]),
        _option("--workers", ["1", "1", "2", "0", "-1"]),
        st.just(["--no-progress"]),
        JUNK,
    )
)
def test_the_gauntlet_never_fails_obscurely(argv: list[str]) -> None:
    from experiments.evaluate import main

    _check(*_outcome(lambda: main(argv)), "python -m experiments.evaluate")


@SETTINGS
@given(
    st.one_of(
        _argv(st.just(["grid"]), _option("--opponent", ["random", "nobody", ",", "ppo-grab", "x=y.zip"]),
              _option("--seat", ["0", "1", "2", "x"]), _option("--seed", SEEDS), JUNK),
        _argv(st.just(["grab"]), _option("--opponents", PLAYERS), _option("--reaction-time", ["0", "-1", "0.5", "inf"]),
              _option("--seed", SEEDS), JUNK),
        _argv(_option("chess", [""]), JUNK),
    )
)  # fmt: skip
def test_the_play_mode_never_fails_obscurely(argv: list[str]) -> None:
    from dejavu_agents.play.__main__ import main

    def no_input(prompt: str) -> str:
        raise EOFError  # the person leaves at once

    _check(*_outcome(lambda: main(argv, no_input, lambda *args: None)), "python -m dejavu_agents.play")


@pytest.mark.slow
@SETTINGS
@given(_argv(st.sampled_from(["0", "-1", "x", "1"]).map(lambda v: ["--steps", v]), _option("--seed", SEEDS), JUNK))
def test_the_benchmark_never_fails_obscurely(argv: list[str]) -> None:
    from experiments.benchmark import main

    _check(*_outcome(lambda: main(argv)), "python -m experiments.benchmark")


@SETTINGS
@given(
    argv=_argv(
        st.sampled_from(
            [
                "grid",
                "grab",
                "grab-stack",
                "nosuch",
                "{file}",
                "{root}",
                "{root}/broken.yaml",
                "{root}/odd.yaml",
                "{root}/list.yaml",
            ]
        ).map(lambda v: [v]),
        _option("--timesteps", COUNTS),
        _option("--n-envs", ["0", "-1", "1", "2"]),
        _option("--eval-games", ["0", "3"]),
        _option("--seed", ["-1", "x", "0", "7"]),
        _option("--out", ["{run}", "{file}", "{root}/new"]),
        JUNK,
    )
)
def test_training_checks_its_arguments_before_it_starts(argv: list[str], places: dict[str, str]) -> None:
    from experiments.train import plan

    _check(*_outcome(lambda: plan(_fill(argv, places))), "python -m experiments.train")


# ---------------------------------------------------------------- results are never silently replaced


def test_overwrite_replaces_an_earlier_runs_files_only_when_asked(tmp_path: Path) -> None:
    from dejavu_agents.tournament.__main__ import main

    argv = ["--game", "grid", "--players", "random,greedy", "--games", "2", "--workers", "1", "--no-progress",
            "--out", str(tmp_path)]  # fmt: skip
    assert _outcome(lambda: main(argv))[0] == 0
    first = (tmp_path / "players.md").read_text()
    status, err = _outcome(lambda: main(argv))
    assert status == 2 and "already holds pairs.csv, pairs.md, players.csv, players.md, heatmap.png" in err
    assert (tmp_path / "players.md").read_text() == first
    assert _outcome(lambda: main([*argv, "--overwrite"]))[0] == 0


def test_the_gauntlet_refuses_to_replace_its_files_without_overwrite(tmp_path: Path) -> None:
    from experiments.evaluate import main

    argv = ["--game", "grid", "--players", "greedy", "--opponents", "random", "--games", "2", "--workers", "1",
            "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    assert _outcome(lambda: main(argv))[0] == 0
    status, err = _outcome(lambda: main(argv))
    assert status == 2 and "already holds gauntlet.csv, gauntlet.md" in err
    assert _outcome(lambda: main([*argv, "--overwrite"]))[0] == 0


# ---------------------------------------------------------------- sizes against the machine


def test_sizes_are_checked_against_the_machine_before_anything_is_allocated() -> None:
    from dejavu_agents import machine
    from dejavu_agents.tournament import run_tournament
    from experiments.evaluate import gauntlet

    assert machine.usable_cores() >= 1
    assert machine.check_workers(machine.usable_cores()) == machine.usable_cores()
    with pytest.raises(ValueError, match="cores this process may use"):
        machine.check_workers(machine.usable_cores() + 1)
    free = machine.available_memory()
    if free is None:
        pytest.skip("this system does not say how much memory is free")
    assert free > 0
    with pytest.raises(ValueError, match="free memory"):
        run_tournament("grid", ["random", "greedy"], games=10**30)
    with pytest.raises(ValueError, match="free memory"):
        gauntlet("grid", ["greedy"], ["random"], games=10**30)


# ---------------------------------------------------------------- Ctrl-C while a command saves


@pytest.fixture
def sigint_restored():
    """Each test starts with Python's own Ctrl-C handler and leaves Ctrl-C as it found it, whatever the
    command under test did to it.

    Why install the handler: a suite started in the background (``nohup ... &``, some CI runners)
    inherits SIGINT ignored, and Python then installs no ``KeyboardInterrupt`` handler at all.
    """
    import signal

    from dejavu_agents import cli

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
    cli._held.clear()
    cli._stopping.pressed = False


def test_a_shielded_save_runs_to_its_end_and_then_stops(sigint_restored) -> None:
    import signal

    from dejavu_agents.cli import shielded

    done = []
    with pytest.raises(KeyboardInterrupt):
        with shielded():
            signal.raise_signal(signal.SIGINT)
            done.append("saved")
    assert done == ["saved"]
    with shielded(reraise=False) as deferred:
        signal.raise_signal(signal.SIGINT)
        done.append("saved again")
    assert deferred.pressed and done[-1] == "saved again"
    with pytest.raises(KeyboardInterrupt):  # outside any shield Ctrl-C is Ctrl-C again
        signal.raise_signal(signal.SIGINT)


def test_after_the_first_ctrl_c_a_command_holds_the_others(sigint_restored) -> None:
    import signal

    from dejavu_agents.cli import shielded, stops_once

    steps = []
    with stops_once() as later:
        try:
            signal.raise_signal(signal.SIGINT)
            steps.append("not reached")
        except KeyboardInterrupt:
            steps.append("stopping")
            with shielded():  # a save while stopping: the outer holder decides, nothing is raised
                signal.raise_signal(signal.SIGINT)
                steps.append("saved")
            signal.raise_signal(signal.SIGINT)
            steps.append("reported")
    assert steps == ["stopping", "saved", "reported"] and later.pressed


def test_a_command_never_interrupted_gives_ctrl_c_back(sigint_restored) -> None:
    import signal

    from dejavu_agents.cli import stops_once

    before = signal.getsignal(signal.SIGINT)
    with stops_once():
        pass
    assert signal.getsignal(signal.SIGINT) is before
