#!/usr/bin/env bash
# Plays DaysOfUseTests (Tests/MultidocCLITests/DaysOfUseTests.swift): whole days of use with real
# processes on 3-5 devices, then heals and checks every device agrees. Build first
# (`swift build --build-tests`); this only runs the already built tests.
#
#   Tools/soak-days.sh                   # the default run: 3 random days of 110 steps
#   Tools/soak-days.sh --days 50         # a soak: 50 random days
#   Tools/soak-days.sh --seed 1234       # replay one day (its seed is printed by every run)
#   Tools/soak-days.sh --steps 300       # longer days
#   Tools/soak-days.sh --keep            # keep each day's folder (roots, container, daemon logs)
#
# Output goes to stdout and to $TMPDIR/multidoc-days-<date>.log; a failing day prints its seed and its steps.
set -euo pipefail
cd "$(dirname "$0")/.."

while [ $# -gt 0 ]; do
    case "$1" in
        --days) export MULTIDOC_DAYS_SEEDS="$2"; shift 2 ;;
        --seed) export MULTIDOC_DAYS_SEED="$2"; shift 2 ;;
        --steps) export MULTIDOC_DAYS_STEPS="$2"; shift 2 ;;
        --keep) export MULTIDOC_DAYS_KEEP=1; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "soak-days.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done

log="${TMPDIR:-/tmp}/multidoc-days-$(date +%Y%m%d-%H%M%S).log"
status=0
swift test --skip-build --filter DaysOfUse 2>&1 | tee "$log" || status=$?
echo "soak-days.sh: seeds played:"
grep -o 'DaysOfUse: seed [0-9]*:' "$log" | sort -u | sed 's/DaysOfUse: /  /; s/:$//' || true
echo "soak-days.sh: full output in $log"
exit "$status"
