#!/usr/bin/env bash
# rss-per-tool.sh - the daemon's RSS a tool, apart from what a server costs.
#
#   tools/rss-per-tool.sh [ROUNDS]
#
# Builds plexus and plexus-load, starts a daemon on a temporary home, and
# adds, ROUNDS times (default 3), a server of 1 tool and a server of 481
# tools (plexus-load --serve-tools), reading VmRSS three seconds after each
# add (the daemon settles a second after every change). A tool costs the
# difference between the two adds over 480; the 1-tool add is what a
# server itself costs. Prints one line per round and the median.
set -euo pipefail
ROUNDS="${1:-3}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(mktemp -d /tmp/rss-per-tool.XXXXXX)"
trap 'kill "$D" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$OUT"' EXIT
(cd "$ROOT" && go build -o "$OUT/bin/" ./cmd/plexus ./cmd/plexus-load)
B="$OUT/bin"
export PLEXUS_HOME="$OUT/home"
"$B/plexus" daemon --listen 127.0.0.1:0 >"$OUT/daemon.log" 2>&1 &
D=$!
for _ in $(seq 200); do "$B/plexus" status >/dev/null 2>&1 && break; sleep 0.05; done
rss() { awk '/^VmRSS/ {print $2}' "/proc/$D/status"; }
add() { "$B/plexus" add "$1" -- "$B/plexus-load" --serve-tools "$2" >/dev/null; sleep 3; }
add warmup 1
per=()
for i in $(seq "$ROUNDS"); do
  r0=$(rss); add "one$i" 1; r1=$(rss); add "wide$i" 481; r2=$(rss)
  one=$((r1 - r0)); wide=$((r2 - r1))
  p=$(python3 -c "print(round(($wide - $one) / 480, 2))")
  per+=("$p")
  echo "round $i: a 1-tool server +$one KiB, a 481-tool server +$wide KiB: $p KiB a tool"
done
echo "median: $(printf '%s\n' "${per[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') KiB a tool; RSS with $((ROUNDS * 482 + 1)) tools $(rss) KiB"
