"""Play Déjà Vu yourself in the terminal: ``python -m dejavu_agents.play grid|grab``.

:func:`dejavu_agents.play.__main__.main` takes ``argv``, ``input_fn`` and ``print_fn``, so a test or
another front end can drive a whole game with scripted lines.
"""
