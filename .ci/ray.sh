#!/usr/bin/env bash
# CI for the distributed extra: a second venv with Ray RLlib (which pins gymnasium 1.2.x, where the
# main venv has 1.4), with the clone installed non-editable (`pip install ".[all,distributed]"`):
# training from the clone's root, where dejavu_agents/ and experiments/ are found; the Ray tests on
# a real local Ray instance; then the suite under gymnasium 1.2, but for the slow tests (the main
# venv runs them) and the parts that never reach gymnasium's API (the web server, OpenSpiel, lint).
# Called from .ci/run after the main suite.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv .venv-ray
. .venv-ray/bin/activate
pip install --upgrade pip
pip install torch==2.13.0
rm -rf build/lib  # setuptools stages a non-editable install here: a stale copy would slip into it
pip install ".[all,distributed]"
rm -rf build/lib
python -c "import gymnasium, ray; print('gymnasium', gymnasium.__version__, 'ray', ray.__version__)"
python -m experiments.train grid --timesteps 256 --eval-games 2 --n-envs 1 --no-progress --out "$WORK/run"
test -f "$WORK/run/best.zip"
(cd "$WORK" && python -c "
import sys, gymnasium as gym, dejavu_env
assert 'site-packages' in dejavu_env.__file__, dejavu_env.__file__
batch = gym.make_vec('DejaVuGrid-v0', num_envs=4)
obs, _ = batch.reset(seed=0)
batch.step(obs['action_mask'].argmax(axis=1))
assert 'numba' in sys.modules
print('clone: the non-editable [all] install steps the batched envs with the compiled kernels')
")
echo "clone: a non-editable install trains from the clone's root"
python -m pytest tests/rllib -m ray -p no:cacheprovider
python -m pytest -n 2 -m "not slow" --ignore=tests/rllib --ignore=tests/web --ignore=tests/test_openspiel.py \
    --ignore=tests/test_lint.py -p no:cacheprovider
