#!/usr/bin/env bash
# The README's first command: set up, build the CLI alone (no tests), and run the gate on the model
# of both of nvidia-cutlass-dsl 4.6.1's defects (fixtures/targets/incidents_461.py): its decorators
# bind their own frame, and its launch path leaves ctypes cycles per scalar per launch. Both are
# findings, each with its fix: exit 1 is the expected outcome.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh "" build cli
status=0
# A short soak and value stream: the defaults (30 s, 10^6 values) are for release gates.
build/leakgate gate --target fixtures/targets/incidents_461.py --soak-seconds 1 --distinct-values 200000 || status=$?
echo "leakgate exited with $status (1: findings, as expected for the 4.6.1 model)"
[ "$status" -eq 1 ]
