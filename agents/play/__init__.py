"""Play Déjà Vu yourself in the terminal: ``python -m agents.play grid|grab``.

:func:`agents.play.__main__.main` takes ``argv``, ``input_fn`` and ``print_fn``, so a test or
another front end can drive a whole game with scripted lines.
"""
