#!/usr/bin/env bash
# Packaging check: the wheel is the library and its players (two namespaced packages), and the
# workbench (experiments, tests, examples, notebooks) runs from a clone.
#  1. build the sdist and the wheel;
#  2. install the wheel into a clean venv: `import dejavu_env` and both ids work, and no
#     `agents` or `experiments` package was installed; from the clone's root, a workbench
#     command names the extra it lacks in one line;
#  (the clone installed non-editable, training from the clone's root, is checked in .ci/ray.sh's venv).
# Venvs and artefacts go to a temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)

# pip's output goes to a log, shown only when it fails.
pip_quiet() {
    local venv=$1; shift
    "$venv/bin/pip" install --quiet "$@" > "$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log"; exit 1; }
}

python3 -m venv "$WORK/build-venv"
pip_quiet "$WORK/build-venv" build
"$WORK/build-venv/bin/python" -m build --outdir "$WORK/dist" . > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
echo "built: $(cd "$WORK/dist" && ls | tr '\n' ' ')"
wheel=$(ls "$WORK"/dist/*.whl)
python3 - "$wheel" <<'PY'
import re
import sys
import zipfile

names = zipfile.ZipFile(sys.argv[1]).namelist()
outside = [n for n in names if not re.match(r"dejavu_env/|dejavu_agents/|dejavu_env-[^/]*\.dist-info/", n)]
assert not outside, f"the wheel holds files outside dejavu_env and dejavu_agents: {outside}"
assert "dejavu_env/grab/data/canonical_deck.json" in names, "the canonical deck (package data) is missing"
shipped = {"ppo-grid.zip", "ppo-grid-scratch.zip", "ppo-grab.zip", "ppo-grab-scratch.zip", "rllib-grid.pt"}
missing = shipped - {n.rsplit("/", 1)[-1] for n in names if n.startswith("dejavu_agents/checkpoints/")}
assert not missing, f"the shipped checkpoints (package data) are missing: {sorted(missing)}"
print(f"wheel: {len(names)} files, all in dejavu_env and dejavu_agents, checkpoints included")
PY

python3 -m venv "$WORK/wheel-venv"
pip_quiet "$WORK/wheel-venv" "$wheel"
(cd "$WORK" && "$WORK/wheel-venv/bin/python" - <<'PY'
import importlib.util
import sys

import gymnasium as gym

import dejavu_env

for name in ("agents", "experiments", "tests", "notebooks", "examples"):
    assert importlib.util.find_spec(name) is None, f"the wheel installed a top-level {name!r}"
for env_id in ("DejaVuGrid-v0", "DejaVuGrab-v0"):
    env = gym.make(env_id)
    obs, info = env.reset(seed=0)
    env.step(env.action_space.sample(mask=obs["action_mask"]))
assert "numba" not in sys.modules, "import dejavu_env or a single env loaded numba"
for env_id in ("DejaVuGrid-v0", "DejaVuGrab-v0"):
    batch = gym.make_vec(env_id, num_envs=4)
    obs, info = batch.reset(seed=0)
    batch.step(obs["action_mask"].argmax(axis=1))
assert "numba" in sys.modules, "the batched envs step with the compiled kernels"
# Every heuristic of both ladders by name, from this folder outside the clone (no torch here).
from dejavu_agents.registry import PLAYERS
from dejavu_env.core.providers import provided_names

NEEDS_EXTRA = {"openspiel-ismcts": "openspiel"}  # OpenSpiel's own bot: its extra, not the core install
for name, extra in NEEDS_EXTRA.items():
    try:
        gym.make("DejaVuGrid-v0", opponent=name)
    except ValueError as err:
        assert f"needs the {extra!r} extra" in str(err) and "\n" not in str(err), err
    else:
        raise AssertionError(f"{name} was seated without the {extra} extra")
for env_id, game, key in (("DejaVuGrid-v0", "grid", "opponent"), ("DejaVuGrab-v0", "grab", "opponents")):
    heuristics = [
        name for name in provided_names(game) if "checkpoint" not in PLAYERS[game][name].kwargs and name not in NEEDS_EXTRA
    ]
    assert len(heuristics) >= 4, heuristics
    for name in heuristics:
        env = gym.make(env_id, **{key: name if game == "grid" else [name] * 3})
        obs, info = env.reset(seed=0)
        for _ in range(20):
            obs, _, terminated, truncated, info = env.step(int(obs["action_mask"].argmax()))
            if terminated or truncated:
                obs, info = env.reset()
    print(f"wheel: {game} opponents by name from outside the clone: {', '.join(heuristics)}")
assert "torch" not in sys.modules, "a heuristic opponent imported torch"
print(f"wheel: dejavu_env {dejavu_env.__version__} imports and plays both ids, batched with numba; no workbench packages")
PY
)

# The core install, run from the clone: a workbench command names its missing extra in one line.
status=0
"$WORK/wheel-venv/bin/python" -m dejavu_agents.tournament --help > /dev/null 2> "$WORK/err.txt" || status=$?
test "$status" = 2 && test "$(wc -l < "$WORK/err.txt")" = 1 && grep -q "needs the 'agents' extra" "$WORK/err.txt" \
    || { echo "core install: dejavu_agents.tournament did not name its extra (status $status):"; cat "$WORK/err.txt"; exit 1; }
echo "core install: $(cat "$WORK/err.txt")"

echo "wheel.sh done in $(( $(date +%s) - start )) s"
