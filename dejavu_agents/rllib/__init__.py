"""Multi-agent self-play on Ray RLlib (the ``distributed`` extra): envs, RLModules, the league, export.

Nothing else in :mod:`agents` or :mod:`dejavu_env` imports this package; it needs Ray. Its
modules: :mod:`~dejavu_agents.rllib.games` (each game adapter's self-play facts), :mod:`~dejavu_agents.rllib.env` (RLlib
envs over the PettingZoo front ends), :mod:`~dejavu_agents.rllib.module` (the masked PPO module and
heuristics as frozen modules), :mod:`~dejavu_agents.rllib.league` (opponent mapping, snapshots,
periodic evaluation), :mod:`~dejavu_agents.rllib.training` (config -> ``PPOConfig``) and
:mod:`~dejavu_agents.rllib.export` (checkpoint -> Ray-free player, :mod:`dejavu_agents.learned.exported`).
The command line is ``python -m experiments.rllib``; docs/distributed.md says how to run it.
"""
