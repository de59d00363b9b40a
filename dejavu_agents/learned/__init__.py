"""Learned players: a checkpoint and its model card in, a :class:`~dejavu_agents.base.Player` out.

Why one subpackage: loading, building, saving and running a network as a player is one job,
and a new kind of learned player touches all of it (its card, its loader, the checks on its
file). Gathered here it is one folder to read and to edit, apart from the heuristics beside it
and from the training stacks that write checkpoints (:mod:`dejavu_agents.learners`,
:mod:`dejavu_agents.rllib`, :mod:`dejavu_agents.cloning`), which import this package and are
never imported by it.

- :mod:`~dejavu_agents.learned.models`: where a checkpoint may be loaded from (a shipped name
  in ``dejavu_agents/checkpoints``, or an explicit path; a checkpoint is code), its model card,
  and what the file holds;
- :mod:`~dejavu_agents.learned.loaders`: which player plays a checkpoint, one table from
  algorithm to player class;
- :mod:`~dejavu_agents.learned.ppo`: stable-baselines3 models as players;
- :mod:`~dejavu_agents.learned.exported`, :mod:`~dejavu_agents.learned.policy_net`,
  :mod:`~dejavu_agents.learned.net_spec`: exported torch networks (RLlib's, CleanRL-style
  loops'), their network and its shape as plain data;
- :mod:`~dejavu_agents.learned.weights`, :mod:`~dejavu_agents.learned.sb3_spaces`: reading a
  file's tensors, and an SB3 save's spaces, without running its pickles.

Importing the package, or reading a card, imports neither torch nor stable-baselines3: they are
imported when a player is built.
"""
