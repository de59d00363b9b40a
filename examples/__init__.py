"""Short runnable scripts: run each from the clone's root, e.g. ``python -m examples.random_masks``."""
