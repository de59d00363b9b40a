#!/usr/bin/env bash
# Packaging check: the wheel is the library alone, and the workbench runs from a clone.
#  1. build the sdist and the wheel;
#  2. install the wheel into a clean venv: `import dejavu_env` and both ids work, and no
#     `agents` or `experiments` package was installed;
#  3. install the clone non-editable (`pip install ".[all]"`) into another clean venv and
#     train for a few steps from the clone's root, where agents/ and experiments/ are found.
# Venvs and artefacts go to a temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)

python3 -m venv "$WORK/build-venv"
"$WORK/build-venv/bin/pip" install --quiet build
"$WORK/build-venv/bin/python" -m build --outdir "$WORK/dist" . > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
ls "$WORK/dist"
wheel=$(ls "$WORK"/dist/*.whl)
if unzip -Z1 "$wheel" | grep -v -E '^(dejavu_env/|dejavu_env-[^/]*\.dist-info/)'; then
    echo "wheel.sh: the wheel holds files outside dejavu_env (listed above)" >&2
    exit 1
fi

python3 -m venv "$WORK/wheel-venv"
"$WORK/wheel-venv/bin/pip" install --quiet "$wheel"
(cd "$WORK" && "$WORK/wheel-venv/bin/python" - <<'PY'
import importlib.util

import gymnasium as gym

import dejavu_env

for name in ("agents", "experiments", "tests", "notebooks", "examples"):
    assert importlib.util.find_spec(name) is None, f"the wheel installed a top-level {name!r}"
for env_id in ("DejaVuGrid-v0", "DejaVuGrab-v0"):
    env = gym.make(env_id)
    obs, info = env.reset(seed=0)
    env.step(env.action_space.sample(mask=obs["action_mask"]))
print(f"wheel: dejavu_env {dejavu_env.__version__} imports and plays both ids; no workbench packages installed")
PY
)

python3 -m venv "$WORK/clone-venv"
"$WORK/clone-venv/bin/pip" install --quiet torch==2.13.0
"$WORK/clone-venv/bin/pip" install --quiet ".[all]"
rm -rf build/lib  # setuptools' staging folder of the non-editable install
"$WORK/clone-venv/bin/python" -m experiments.train grid --timesteps 256 --eval-games 2 --no-progress --out "$WORK/run"
test -f "$WORK/run/best.zip"
echo "clone: a non-editable install trains from the clone's root"
echo "wheel.sh done in $(( $(date +%s) - start )) s"
