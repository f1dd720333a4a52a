#!/usr/bin/env bash
# peers-bench.sh: multidoc and its peers, Yrs (pycrdt) and Loro (loro), measured in one run on
# the same traces and save-at-size cases, as JSON rows (one object a line) for
# Docs/PERFORMANCE.md's side-by-side table.
#
#   Tools/peers-bench.sh [--venv DIR] [--traces DIR] [--multidoc BIN_DIR] [--saves N] [--text-only]
#
#   --venv DIR       the Python virtual environment to make or reuse (default: $TMPDIR/multidoc-peers-venv)
#   --traces DIR     the editing traces (default: ../shared/traces beside the package)
#   --multidoc DIR   a folder of release binaries (default: .build-release/release, then
#                    .build/release); multidoc's rows are skipped when none is there
#   --saves N        one-character saves per document length for multidoc's save rows (default 30)
#   --text-only      the traces in memory only (peers' trace rows, multidoc-text-bench): no save
#                    rows and no multidoc-trace, for the snapshot and load figures in minutes
#
# Rows: {"id", "peer", "value", "unit"} from Tools/peers-bench.py for yrs and loro; multidoc's
# own come from multidoc-text-bench --json (in memory), multidoc-bench --only save --json (a
# durable save at each length) and multidoc-trace --json (end to end, peak memory), each
# printed as its tool prints it, after a line {"id": "multidoc.<tool>", ...} naming the tool.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$(dirname "$here")"
venv="${TMPDIR:-/tmp}/multidoc-peers-venv"
traces="$package/../shared/traces"
bin=""
saves=30
text_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --venv) venv="$2"; shift 2 ;;
        --traces) traces="$2"; shift 2 ;;
        --multidoc) bin="$2"; shift 2 ;;
        --saves) saves="$2"; shift 2 ;;
        --text-only) text_only=1; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "peers-bench.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done
if [ -z "$bin" ]; then
    for candidate in "$package/.build-release/release" "$package/.build/release"; do
        needed="$candidate/multidoc-trace"
        [ "$text_only" = 1 ] && needed="$candidate/multidoc-text-bench"
        if [ -x "$needed" ]; then bin="$candidate"; break; fi
    done
fi
[ -d "$traces" ] || { echo "peers-bench.sh: no traces at $traces (--traces DIR)" >&2; exit 66; }

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check pycrdt loro >&2

mapfile -t files < <(find "$traces" -name '*.json.gz' -o -name '*.json' | sort)
[ ${#files[@]} -gt 0 ] || { echo "peers-bench.sh: no trace files in $traces" >&2; exit 66; }

echo "{\"id\": \"run\", \"peer\": \"all\", \"value\": \"$(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores\", \"unit\": \"text\"}"
if [ "$text_only" = 1 ]; then
    "$venv/bin/python" "$here/peers-bench.py" --text-only "${files[@]}"
else
    "$venv/bin/python" "$here/peers-bench.py" "${files[@]}"
fi

if [ -z "$bin" ]; then
    echo "peers-bench.sh: no release build of multidoc found (swift build -c release --scratch-path .build-release); its rows are left out" >&2
    exit 0
fi
echo "{\"id\": \"multidoc.text-bench\", \"peer\": \"multidoc\", \"value\": \"$bin/multidoc-text-bench --traces $traces --json\", \"unit\": \"command\"}"
"$bin/multidoc-text-bench" --traces "$traces" --json
[ "$text_only" = 1 ] && exit 0
echo "{\"id\": \"multidoc.bench-save\", \"peer\": \"multidoc\", \"value\": \"$bin/multidoc-bench --only save --saves $saves --json\", \"unit\": \"command\"}"
"$bin/multidoc-bench" --only save --saves "$saves" --json
for file in "${files[@]}"; do
    echo "{\"id\": \"multidoc.trace\", \"peer\": \"multidoc\", \"value\": \"/usr/bin/time -v $bin/multidoc-trace $file --json\", \"unit\": \"command\"}"
    /usr/bin/time -f '{"id": "multidoc.trace.max_rss", "peer": "multidoc", "value": %M, "unit": "KB"}' "$bin/multidoc-trace" "$file" --json 2>&1
done
