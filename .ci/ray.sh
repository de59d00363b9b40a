#!/usr/bin/env bash
# CI for the distributed extra: a second venv with Ray RLlib (which pins gymnasium 1.2.x, where the
# main venv has 1.4), the Ray tests on a real local Ray instance, then the rest of the suite (all but the
# slow tests, which the main venv runs) under gymnasium 1.2. Called from .ci/run after the main suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-ray
. .venv-ray/bin/activate
pip install --upgrade pip
pip install torch==2.13.0
pip install -e ".[all,distributed]"
python -c "import gymnasium, ray; print('gymnasium', gymnasium.__version__, 'ray', ray.__version__)"
python -m pytest tests/rllib -m ray -p no:cacheprovider
python -m pytest -n 2 -m "not slow" --ignore=tests/rllib -p no:cacheprovider
