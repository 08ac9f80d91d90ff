#!/usr/bin/env bash
# docs/notes/releases.md: the whole nvidia-cutlass-dsl history, pre-releases included, as leakgate's
# bisect measures it (plain install, then with the [cu13] extra), with every transition.
#   scripts/releases.sh [BUILD_DIR] [FROM] [TO]     (default build, 4.2.0, the latest release)
# Needs PyPI (a few GB of wheels on the first run, kept in leakgate's cache).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
from=${2:-4.2.0}
to=${3:-}
selection=(--versions ">=$from")
[ -n "$to" ] && selection=(--versions ">=$from,<=$to")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/leakgate" bisect --package nvidia-cutlass-dsl "${selection[@]}" --pre -j 4 -q --json "$out/plain.json" || { rc=$?; [ $rc = 1 ] || [ $rc = 3 ]; }
"$build/leakgate" bisect --package nvidia-cutlass-dsl "${selection[@]}" --pre -j 4 -q --extra cu13 \
    --json "$out/cu13.json" || { rc=$?; [ $rc = 1 ] || [ $rc = 3 ]; }
python3 scripts/release_table.py --command "scripts/releases.sh $*" "$out/plain.json" "$out/cu13.json" \
    > docs/notes/releases.md.tmp
mv docs/notes/releases.md.tmp docs/notes/releases.md
echo "wrote docs/notes/releases.md"
