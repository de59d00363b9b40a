"""Play Déjà Vu in the browser and record human games: ``python -m dejavu_agents.web``.

Modules, one job each: :mod:`~dejavu_agents.web.links` (a shareable link, checked),
:mod:`~dejavu_agents.web.grid_table` and :mod:`~dejavu_agents.web.grab_table` (the games,
driven through the engine), :mod:`~dejavu_agents.web.grid_view` and
:mod:`~dejavu_agents.web.grab_view` (the board as HTML, from the person's observation),
:mod:`~dejavu_agents.web.games` (consent, versions, Grab's clock), :mod:`~dejavu_agents.web.sessions`
(tokens and bounds), :mod:`~dejavu_agents.web.guards` (time and connection limits, the body's
deadline), :mod:`~dejavu_agents.web.serve` (uvicorn with those limits),
:mod:`~dejavu_agents.web.records` (the log's schema),
:mod:`~dejavu_agents.web.recorder` (finished tables as records), :mod:`~dejavu_agents.web.replay`
(records played back through the engine) and :mod:`~dejavu_agents.web.app` (the routes).
Needs the ``web`` extra (starlette, uvicorn); docs/web.md describes it, docs/robustness.md its
threat model.
"""
