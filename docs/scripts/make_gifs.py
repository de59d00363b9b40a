"""Write one GIF per game, drawn by the env's own ``render_mode="rgb_array"`` renderer.

Run from the clone's root after a change to a renderer (the GIFs are committed; the docs and
the README show them)::

    python docs/scripts/make_gifs.py            # writes docs/_static/gifs/{grid,grab}.gif

Each GIF is one game between the project's own players, from the agent's seat, with a fixed
seed, so the same code gives the same file; each file stays well under 1 MB.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents import Player, make_player

ROOT = Path(__file__).resolve().parents[2]

OUT = ROOT / "docs" / "_static" / "gifs"


@dataclass(frozen=True)
class Movie:
    """Who plays the filmed game, and how the film is cut."""

    env_id: str
    agent: str
    opponents: tuple[str, ...]
    seed: int
    frame_ms: int
    max_frames: int = 300
    env_kwargs: dict = field(default_factory=dict)


MOVIES = {
    "grid": Movie("DejaVuGrid-v0", "counting", ("counting",), seed=3, frame_ms=700),
    "grab": Movie("DejaVuGrab-v0", "human-expert", ("perfect", "human-casual", "human-child"), seed=1, frame_ms=350),
}


def _make_env(game: str, movie: Movie) -> tuple[gym.Env, Player]:
    agent = make_player(game, movie.agent, seed=movie.seed)
    opponents = [make_player(game, name, seed=movie.seed + 1 + i) for i, name in enumerate(movie.opponents)]
    kwargs = {"opponent": opponents[0]} if len(opponents) == 1 else {
        "opponents": opponents, "n_players": len(opponents) + 1,
    }
    env = gym.make(movie.env_id, render_mode="rgb_array", obs_mode=agent.obs_mode, **kwargs, **movie.env_kwargs)
    return env, agent


def frames_of(game: str, movie: Movie) -> list[np.ndarray]:
    """The pictures of one game: after the reset and after every agent step, up to ``max_frames``."""
    env, agent = _make_env(game, movie)
    obs, info = env.reset(seed=movie.seed)
    agent.reset(movie.seed)
    frames = [_picture(env)]
    done = False
    while not done and len(frames) < movie.max_frames:
        obs, _, terminated, truncated, info = env.step(agent(obs, info["action_mask"]))
        done = terminated or truncated
        frames.append(_picture(env))
    env.close()
    return frames


def _picture(env: gym.Env) -> np.ndarray:
    frame = env.render()
    assert isinstance(frame, np.ndarray), "the env was made with render_mode='rgb_array'"
    return frame


def write_gif(frames: list[np.ndarray], path: Path, frame_ms: int) -> int:
    """Write the frames as an endlessly looping GIF; return its size in bytes.

    The renderers paint flat colours, so one exact palette serves every frame: pixels that
    did not change keep their index, and Pillow stores each frame as the small rectangle that
    changed (a 111-frame Grab game takes 0.4 MB instead of 1.1 MB with a palette per frame).
    """
    colors = np.unique(np.concatenate([frame.reshape(-1, 3) for frame in frames]), axis=0)
    if len(colors) > 256:
        raise ValueError(f"the frames use {len(colors)} colours; a GIF palette holds 256")
    palette = Image.new("P", (1, 1))
    palette.putpalette(colors.astype(np.uint8).ravel().tolist())
    images = [Image.fromarray(frame).quantize(palette=palette, dither=Image.Dither.NONE) for frame in frames]
    durations = [frame_ms] * len(images)
    durations[-1] = frame_ms * 6  # linger on the final position
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0, optimize=True)
    return path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help=f"games to film, of {', '.join(MOVIES)} (default: all)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for <game>.gif (default: %(default)s)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.games) - set(MOVIES))
    if unknown:
        parser.error(f"unknown game {unknown[0]!r}; known: {', '.join(MOVIES)}")
    for game in args.games or list(MOVIES):
        movie = MOVIES[game]
        frames = frames_of(game, movie)
        size = write_gif(frames, args.out / f"{game}.gif", movie.frame_ms)
        print(f"{args.out / f'{game}.gif'}: {len(frames)} frames, {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
