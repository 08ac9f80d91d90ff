#!/usr/bin/env bash
# The README's first command: set up, build, and run the gate on its bundled default target, the
# 4.6.1 decorator shape from the incident (a finding: exit 1 is the expected outcome).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
status=0
build/leakgate gate || status=$?
echo "leakgate exited with $status (1: a finding, as expected for the 4.6.1 model)"
[ "$status" -eq 1 ]
