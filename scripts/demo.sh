#!/usr/bin/env bash
# The README's first command: set up, build, and run leakgate on its bundled default, the
# 4.6.1 decorator shape from the incident (a finding: exit 1 is the expected outcome).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
status=0
build/leakgate scan -- fixtures/scan/leak_dsl_decorator_self_frame.py || status=$?
echo "leakgate exited with $status (1: a finding, as expected for this fixture)"
[ "$status" -eq 1 ]
