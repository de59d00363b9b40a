"""Masked PPO in one file, in the style of CleanRL's ``ppo.py``, on 512 batched Grid games through a Box wrapper.

Run it from the clone's root (needs the ``train`` extra for torch)::

    python examples/cleanrl_ppo.py                       # 1M env steps against greedy: about 1 min on 2 cores
    python examples/cleanrl_ppo.py --total-timesteps 20000 --out runs/cleanrl/try

What a learner that reads one array needs, and nothing else:

- ``BoxObservationVector`` (``dejavu_env.wrappers``) gives the observation vector alone as a
  ``Box`` and keeps the mask in ``info["action_mask"]``: the policy never samples an illegal action
  (gymnasium's ``FlattenObservation`` would put the mask first among the features, docs/training.md).
- ``gym.make_vec(..., vectorization_mode="vector_entry_point")`` steps all games as numpy arrays in
  one call, with the opponent (``greedy``) inside the batch; ``autoreset_mode="SameStep"`` keeps
  CleanRL's loop as written (an ended game's last vector is ``info["final_obs"]``).
- The network is ``dejavu_agents.learned.policy_net.PolicyNet``: by default the slot-equivariant encoder
  of ``grid-scratch`` (``--encoder learner``), whose logits are masked. ``--encoder mlp`` is a
  plain MLP on the vector (CleanRL's own ``Agent``), which beats ``random`` but not ``greedy`` at
  this budget (docs/training.md says why).
- The reward is the win (+1/-1, a game cut by the turn limit is a draw: 0) plus a shaping term,
  0.1 x the growth of the agent's own tally (``dejavu_agents.learners.targets.grid_tally``),
  annealed to 0, minus 0.002 a decision; ``gamma = 1``. These are ``grid-scratch``'s choices
  (docs/training.md has the runs that found them).

At the end it plays ``--eval-games`` games against ``random`` and ``greedy`` (greedy moves, one
line each, in the form of the project's training commands) and saves the network the documented
way: a plain ``state_dict`` (``<out>.pt``) and a small JSON card (``<out>.json``), which the
project's commands load as a path::

    python -m dejavu_agents.scorecard --game grid --player mine=<out>.pt
    python -m dejavu_agents.tournament --game grid --players mine=<out>.pt,greedy --games 200
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass, fields
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn, optim
from torch.distributions import Categorical

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.learned.exported import save_export
from dejavu_agents.learned.models import ExportCard
from dejavu_agents.learned.net_spec import NetSpec
from dejavu_agents.learned.policy_net import PolicyNet
from dejavu_agents.learners.targets import grid_tally
from dejavu_agents.stats import WinDrawLoss
from dejavu_env.wrappers import BoxObservationVector

ENV_ID = "DejaVuGrid-v0"
ENCODERS: dict[str, dict[str, Any]] = {
    "learner": {"encoder": "learner", "encoder_kwargs": {"features": "grid_slots", "hidden": [128], "slot_width": 32}},
    "mlp": {"encoder": "mlp", "hiddens": [256, 256]},
}


@dataclass
class Args:
    """Every flag (``--total-timesteps`` for ``total_timesteps``); the defaults are the documented run."""

    seed: int = 0
    total_timesteps: int = 1_000_000
    num_envs: int = 512
    num_steps: int = 8
    learning_rate: float = 3e-4
    update_epochs: int = 2
    minibatch_size: int = 512
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    shaping_coef: float = 0.1
    step_cost: float = 0.002
    opponent: str = "greedy"
    encoder: str = "learner"
    eval_games: int = 200
    log_every: int = 50
    out: str = "runs/cleanrl/grid"


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field in fields(Args):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default), default=field.default)
    args = Args(**vars(parser.parse_args()))
    if args.encoder not in ENCODERS:
        parser.error(f"--encoder must be one of {', '.join(ENCODERS)}, got {args.encoder!r}")
    if args.total_timesteps < args.num_envs * args.num_steps:
        parser.error("--total-timesteps must cover one rollout (num_envs x num_steps)")
    return args


def make_envs(num_envs: int, opponent: str) -> BoxObservationVector:
    vector = gym.make_vec(
        ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", opponent=opponent,
        autoreset_mode="SameStep", obs_mode="info_state", reward="win",
    )  # fmt: skip
    return BoxObservationVector(vector)


def make_agent(envs: BoxObservationVector, encoder: str) -> PolicyNet:
    space = envs.single_observation_space
    assert isinstance(space, gym.spaces.Box) and space.shape is not None
    high = [float(h) if h > 0 else 1.0 for h in space.high.reshape(-1)]
    n_actions = int(envs.single_action_space.n)  # type: ignore[attr-defined]
    return PolicyNet(NetSpec(obs_size=space.shape[0], n_actions=n_actions, obs_high=high, **ENCODERS[encoder]))


def evaluate(agent: PolicyNet, args: Args, opponent: str) -> WinDrawLoss:
    """``eval_games`` games, the first of each env, the agent's most likely legal move."""
    envs = make_envs(args.eval_games, opponent)
    vectors, info = envs.reset(seed=args.seed + 10_000)
    outcome = np.zeros(args.eval_games)
    done = np.zeros(args.eval_games, dtype=bool)
    while not done.all():
        with torch.no_grad():
            logits, _ = agent(torch.from_numpy(vectors), torch.from_numpy(info["action_mask"]))
        actions = logits.argmax(dim=1).numpy()  # an env whose first game ended plays on, uncounted
        vectors, rewards, terminated, truncated, info = envs.step(actions)
        ended = (terminated | truncated) & ~done
        outcome[ended] = rewards[ended]
        done |= ended
    envs.close()
    return WinDrawLoss.from_results(np.sign(outcome).astype(int).tolist())


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    envs = make_envs(args.num_envs, args.opponent)
    agent = make_agent(envs, args.encoder)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    batch_size = args.num_envs * args.num_steps
    num_updates = args.total_timesteps // batch_size
    n, t = args.num_envs, args.num_steps
    obs = torch.zeros((t, n, agent.spec.obs_size))
    masks = torch.zeros((t, n, int(envs.single_action_space.n)), dtype=torch.bool)  # type: ignore[attr-defined]
    actions, logprobs, rewards, dones, values = (torch.zeros((t, n)) for _ in range(5))

    start = time.perf_counter()
    next_vectors, info = envs.reset(seed=args.seed)
    next_obs, next_mask = torch.from_numpy(next_vectors), torch.from_numpy(info["action_mask"].astype(bool))
    next_done = torch.zeros(n)
    results: list[float] = []
    for update in range(1, num_updates + 1):
        progress = (update - 1) / num_updates
        optimizer.param_groups[0]["lr"] = (1.0 - progress) * args.learning_rate
        shaping = (1.0 - progress) * args.shaping_coef
        for step in range(t):
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                logits, value = agent(next_obs, next_mask)
            dist = Categorical(logits=logits)
            action = dist.sample()
            actions[step], logprobs[step], values[step] = action, dist.log_prob(action), value
            before = next_obs.numpy()
            next_vectors, reward, terminated, truncated, info = envs.step(action.numpy())
            ended = terminated | truncated  # the turn limit ends a game as a draw, as the tournament counts it
            after = next_vectors.copy()
            for env in np.flatnonzero(ended).tolist():
                after[env] = info["final_obs"][env]
            shaped = reward - args.step_cost + shaping * (grid_tally(after) - grid_tally(before))
            rewards[step] = torch.as_tensor(shaped, dtype=torch.float32)
            results.extend(reward[ended].tolist())
            next_obs = torch.from_numpy(next_vectors)
            next_mask = torch.from_numpy(info["action_mask"].astype(bool))
            next_done = torch.as_tensor(ended, dtype=torch.float32)

        with torch.no_grad():  # generalised advantage estimation, as CleanRL writes it
            _, next_value = agent(next_obs, next_mask)
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(n)
            for step in reversed(range(t)):
                following = (next_value, next_done) if step == t - 1 else (values[step + 1], dones[step + 1])
                nonterminal = 1.0 - following[1]
                delta = rewards[step] + args.gamma * following[0] * nonterminal - values[step]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                advantages[step] = last
            returns = advantages + values

        b_obs, b_masks = obs.reshape(batch_size, -1), masks.reshape(batch_size, -1)
        b_actions, b_logprobs = actions.reshape(-1).long(), logprobs.reshape(-1)
        b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
        for _ in range(args.update_epochs):
            order = torch.randperm(batch_size)
            for begin in range(0, batch_size, args.minibatch_size):
                mb = order[begin : begin + args.minibatch_size]
                logits, new_value = agent(b_obs[mb], b_masks[mb])
                dist = Categorical(logits=logits)
                ratio = (dist.log_prob(b_actions[mb]) - b_logprobs[mb]).exp()
                adv = b_advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((new_value - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * dist.entropy().mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        if update % args.log_every == 0 or update == num_updates:
            steps, wall = update * batch_size, time.perf_counter() - start
            won = np.mean(np.asarray(results) > 0) if results else float("nan")
            print(f"{steps:>10,} steps  {steps / wall:>7,.0f} steps/s  training games won {won:.3f} "
                  f"(last {len(results)}, vs {args.opponent})  wall {wall:.0f} s", flush=True)  # fmt: skip
            results = []

    agent.eval()
    for opponent in ("random", "greedy"):  # one line each, as the project's training commands print them
        record = evaluate(agent, args, opponent)
        low, high = record.interval()
        print(f"eval  {num_updates * batch_size:,} steps  vs {opponent}  win {record.win_rate:.3f} [{low:.3f}, "
              f"{high:.3f}]  ({record.games} games: {record.wins} won, {record.draws} drawn, {record.losses} lost)  "
              f"wall {time.perf_counter() - start:,.1f} s", flush=True)  # fmt: skip
    card = ExportCard(
        game="grid", obs_mode="info_state", net=agent.spec.to_dict(), env={"reward": "win"},
        training={"algorithm": "examples/cleanrl_ppo.py", **asdict(args), "wall_s": round(time.perf_counter() - start)},
    )  # fmt: skip
    path = save_export(agent, card, args.out)
    print(f"saved {path} and {path.with_suffix('.json').name}; score it with: "
          f"python -m dejavu_agents.scorecard --game grid --player mine={path}")  # fmt: skip
    envs.close()


if __name__ == "__main__":
    main()
