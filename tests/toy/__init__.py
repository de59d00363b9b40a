"""A toy third game, built by the steps of ``docs/new_game.md`` to prove the page right (``test_toy.py``).

``game/`` is the game's package, ``checks.py`` its checks module and ``plugin.py`` its registration:
where a real game has ``dejavu_env/<game>/``, ``dejavu_env/testing/<game>_checks.py`` and a
``register(...)`` call in ``dejavu_env/__init__.py``. Nothing here registers the toy on import: only
``plugin.py``, loaded into a pytest run of the cross-game suites, does.
"""
