"""Checks for constructor keywords and reset options, raising ``ValueError`` that names the problem.

Why strict about types: ``1.0 == 1`` and ``True == 1`` in Python, so a plain ``value in
choices`` lets a float seat or a boolean count through, to fail later inside the game. A
choice matches only a value of its own kind (numpy integers count as integers), and the
canonical choice is returned, so nothing odd is stored.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import operator
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, TypeVar

import numpy as np

Init = TypeVar("Init", bound=Callable[..., None])


def _integral(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _same_kind(value: Any, choice: Any) -> bool:
    if choice is None or isinstance(choice, bool):
        return value is choice
    if isinstance(choice, int):
        return _integral(value) and int(value) == choice
    if isinstance(choice, str):
        return isinstance(value, str) and value == choice
    return bool(type(value) is type(choice) and value == choice)


def check_choice(name: str, value: Any, choices: Collection[Any]) -> Any:
    """The choice ``value`` stands for, or a ``ValueError`` naming ``name`` and the choices."""
    for choice in choices:
        if _same_kind(value, choice):
            return choice
    raise ValueError(f"{name} must be one of {', '.join(sorted(map(repr, choices)))}, got {value!r:.80}")


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` as an ``int`` if it is integral and ``low <= value (<= high)``, else a ``ValueError``."""
    if not _integral(value):
        try:
            if isinstance(value, (bool, np.bool_, float, np.floating, str, bytes)):
                raise TypeError
            value = operator.index(value)
        except TypeError:
            raise ValueError(f"{name} must be an integer, got {value!r:.80}") from None
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def check_episode_steps(value: Any, longest: int, limit: str) -> int | None:
    """``max_episode_steps`` (which ``gym.make_vec`` passes from the spec), checked: ``None``, or an
    integer no smaller than ``longest``, the most steps an episode can take under ``limit``.

    Why no smaller: the batched envs end games by their own rules and limits only (``limit``
    names them); a shorter cut would have to be a TimeLimit of their own, which they lack.
    """
    if value is None:
        return None
    steps = check_int("max_episode_steps", value, 1)
    if steps < longest:
        raise ValueError(
            f"max_episode_steps={steps} would cut episodes the env plays (up to {longest} steps under {limit}); "
            f"pass at least {longest}, or None, and bound the game by its own limit"
        )
    return steps


def check_options(options: Any, allowed: Collection[str]) -> dict[str, Any]:
    """``options`` as a dict (``{}`` for ``None``) after rejecting unknown keys by name."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict, got {type(options).__name__}")
    unknown = sorted((key for key in options if key not in allowed), key=repr)
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; allowed: {sorted(allowed)}")
    return dict(options)


def did_you_mean(word: Any, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """``"did you mean 'x'?"`` for the choice nearest ``word`` (:func:`difflib.get_close_matches`), else ``""``."""
    if not isinstance(word, str):
        return ""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f"did you mean {near[0]!r}?" if near else ""


class UnknownKeywordError(ValueError, TypeError):
    """An unknown constructor keyword: a ``ValueError`` like every other bad keyword, and a ``TypeError``
    worded as Python words it (``"X.__init__() got an unexpected keyword argument 'k'"``).

    Why both: callers probe constructors by that ``TypeError`` and its words. TorchRL's ``GymEnv``
    passes ``frameskip=`` and drops it on ``"unexpected keyword argument 'frameskip'"``; gymnasium's
    ``make`` reads ``render_mode``'s. A plain ``ValueError`` would break those standard tools.
    (``gym.make`` re-raises a ``TypeError`` as its own type with the env id appended: gymnasium 1.4
    from the original, so both tracebacks say the keywords and the hint; 1.2 inside its
    ``except``, whose context this class leaves out, so one traceback shows.)
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.__suppress_context__ = True


def check_keywords(owner: str, given: Iterable[str], accepted: Collection[str]) -> None:
    """An :class:`UnknownKeywordError` naming ``owner``'s keywords when ``given`` holds one it does not take,
    with a "did you mean" for a near miss (``opponents=`` for Grid's ``opponent=``)."""
    unknown = [name for name in given if name not in accepted]
    if not unknown:
        return
    hint = did_you_mean(unknown[0], accepted)
    also = f" (also unknown: {', '.join(map(repr, unknown[1:]))})" if len(unknown) > 1 else ""
    raise UnknownKeywordError(
        f"{owner}.__init__() got an unexpected keyword argument {unknown[0]!r}{f' ({hint})' if hint else ''}{also}; "
        f"its keywords: {', '.join(accepted)}"
    )


def keywords_checked(init: Init) -> Init:
    """Decorate a constructor so that an unknown keyword is an :class:`UnknownKeywordError` listing its
    keywords (:func:`check_keywords`) instead of Python's bare ``TypeError``.

    Why: ``gym.make(id, **kwargs)`` passes its keywords to the constructor, and a user who
    misspells one deserves the list and a hint; the error stays a ``TypeError`` in Python's
    words too, for the tools that probe keywords with it. The signature stays the constructor's own
    (:func:`functools.wraps`: ``inspect.signature`` and the docs read it), without ``**kwargs``.
    """
    parameters = list(inspect.signature(init).parameters.values())[1:]  # without self
    accepted = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    owner = init.__qualname__.rpartition(".")[0] or init.__qualname__

    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        check_keywords(owner, kwargs, accepted)
        init(self, *args, **kwargs)

    return checked  # type: ignore[return-value]
