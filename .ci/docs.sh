#!/usr/bin/env bash
# Build the documentation site with warnings as errors into build/docs, and print the build time.
# Needs the `docs` extra (in `all`): pip install -e ".[docs]".
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python -c "import sphinx, furo, myst_parser" 2>/dev/null; then
    echo "docs.sh: sphinx, furo or myst-parser is missing; install the docs extra: pip install -e \".[docs]\"" >&2
    exit 1
fi
rm -rf build/docs
start=$(date +%s)
python -m sphinx -W --keep-going -E -q -b html docs build/docs
echo "docs built in $(( $(date +%s) - start )) s: build/docs/index.html"
