#!/usr/bin/env bash
# The README's Quick start, exactly as written, in a fresh virtual environment: the commands
# are read from the first ```bash block under "## Quick start", so CI runs what a new user
# copies. Afterwards the quick run must have written its report.
set -euo pipefail
cd "$(dirname "$0")/.."
commands=$(awk '/^## Quick start/{q=1} q&&/^```bash/{f=1;next} f&&/^```/{exit} f' README.md)
if [ -z "$commands" ]; then
  echo "quickstart: no \`\`\`bash block under '## Quick start' in README.md" >&2
  exit 1
fi
venv=$(mktemp -d)/venv
python -m venv "$venv"
# shellcheck disable=SC1091
source "$venv/bin/activate"
python -m pip install --quiet --upgrade pip
# only the `test` extra is installed here: its tests skip the other extras' tests, naming
# them, where CI=true would otherwise fail them (tests/conftest.py); a missing corpus still fails
export STYLO_EXTRAS_OPTIONAL=1
echo "quickstart: running in $venv:"
echo "$commands" | sed 's/^/  $ /'
bash -euo pipefail -c "$commands"
test -s results/REPORT.md || { echo "quickstart: no results/REPORT.md written" >&2; exit 1; }
deactivate
rm -rf "$(dirname "$venv")"
