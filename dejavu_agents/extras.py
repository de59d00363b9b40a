"""Which extra each command needs, and the one line that names it when it is missing.

The wheel installs the library (``dejavu_env``) and its players (``dejavu_agents``), whose
commands need the extras of ``pyproject.toml``; the workbench (``experiments/``) runs from a
clone with them. Started on an install without its extra, a command would die on a
``ModuleNotFoundError`` traceback deep in some import. So the two packages' ``__init__``
(which Python runs before the command's own module) call :func:`check_command_extras`: under
``python -m dejavu_agents...`` or ``python -m experiments...`` it checks that the command's
extra is installed, and if not prints one line naming the extra and the command that installs
it, and exits with status 2; it also makes a Ctrl-C during the command's imports one line. A
plain ``import dejavu_agents`` is never stopped: the registry and the heuristic players need
only the core install.
"""

from __future__ import annotations

import importlib.util
import sys

EXTRAS: dict[str, tuple[str, ...]] = {
    "agents": ("openskill", "matplotlib", "tqdm", "rich", "pandas"),
    "train": ("torch", "stable_baselines3", "sb3_contrib", "yaml", "rliable"),
    "distributed": ("ray",),
}
"""The import names each extra of ``pyproject.toml`` brings (beside the extras it includes)."""

INCLUDES: dict[str, tuple[str, ...]] = {
    "agents": ("agents",),
    "train": ("agents", "train"),
    "distributed": ("agents", "train", "distributed"),
}

COMMANDS: dict[str, str | None] = {
    "experiments.benchmark": None,
    "experiments.train": "train",
    "experiments.train_batched": "train",
    "experiments.benchmark_training": "train",
    "experiments.profile_learner": "train",
    "experiments.seeds": "train",
    "experiments.rllib": "distributed",
    "experiments.rllib_throughput": "distributed",
}
"""The extra of each command that needs more than ``agents``; ``None``: the core install is enough."""

HELP_WITHOUT: dict[str, tuple[str, ...]] = {
    "experiments.rllib_throughput": ("ray",),
}
"""Modules a command imports only to run, not to build its parser: without them ``--help`` still
prints the options (a newcomer reads them before installing Ray); a real run stops as usual. The
commands of :data:`CHECKS_WITHOUT` print their help without them too."""

CHECKS_WITHOUT: dict[str, tuple[str, ...]] = {
    "experiments.rllib": ("ray",),
}
"""Modules a command imports only after checking its arguments and config file: without them a
run still reports those mistakes (a newcomer checks a config before installing Ray), then stops
with the usual line where the command calls :func:`require_extra`, before its first such import."""


def command_module() -> str | None:
    """The module that ``python -m <module>`` runs in this process, if it was started so."""
    argv = list(getattr(sys, "orig_argv", []))
    if "-m" in argv[:-1]:
        return argv[argv.index("-m") + 1]
    return None


def missing_modules(extra: str) -> list[str]:
    """The import names of ``extra`` (and of the extras it includes) that are not installed."""
    return [name for part in INCLUDES[extra] for name in EXTRAS[part] if importlib.util.find_spec(name) is None]


def asks_for_help() -> bool:
    """Whether the command line after ``-m <module>`` asks for ``-h`` / ``--help``."""
    argv = list(getattr(sys, "orig_argv", []))
    return "-m" in argv[:-1] and bool({"-h", "--help"} & set(argv[argv.index("-m") + 2:]))


def check_command_extras() -> None:
    """Exit (status 2) with one line on stderr if the workbench command being run lacks its extra.

    It also makes a Ctrl-C during the command's imports one line, not a traceback
    (:func:`dejavu_agents.cli.one_line_interrupts`): this runs before those imports.
    """
    module = command_module()
    if module is None or module.split(".")[0] not in ("dejavu_agents", "experiments"):
        return
    from dejavu_agents.cli import one_line_interrupts

    one_line_interrupts(f"python -m {module}")
    extra = COMMANDS.get(module, "agents")
    if extra is None:
        return
    absent = missing_modules(extra)
    if absent and asks_for_help() and set(absent) <= set(HELP_WITHOUT.get(module, ())):
        return
    if absent and set(absent) <= set(CHECKS_WITHOUT.get(module, ())):
        return
    if absent:
        _stop(module, extra, absent)


def require_extra(module: str) -> None:
    """Exit (status 2) with the one line of :func:`check_command_extras` if ``module``'s extra is missing.

    The commands of :data:`CHECKS_WITHOUT` call it once their arguments and config are checked.
    """
    extra = COMMANDS.get(module, "agents")
    absent = missing_modules(extra) if extra is not None else []
    if absent:
        _stop(module, extra or "agents", absent)


def _stop(module: str, extra: str, absent: list[str]) -> None:
    torch_first = "pip install torch==2.13.0 && " if extra != "agents" else ""
    print(
        f"python -m {module}: error: needs the {extra!r} extra ({', '.join(absent)} not installed); "
        f'from the clone: {torch_first}pip install -e ".[{extra}]"',
        file=sys.stderr,
    )
    raise SystemExit(2)
