"""What both games share: the game facts and observation layouts, the player contract, option and seed
checks, raster drawing, the single-env and vector-env bases (``env``, ``vector``), and, for the batched
engines, the packed state (``batch``), per-game random streams (``streams``) and batch players
(``batch_players``)."""
