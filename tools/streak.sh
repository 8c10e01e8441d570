#!/usr/bin/env bash
# streak.sh - run CI on N clean clones in a row, as "twenty clean-clone runs
# of .ci/run pass" is checked.
#
#   tools/streak.sh N [COMMIT]
#
# Each run clones this repository (COMMIT, default HEAD: what is committed,
# not the work tree) into a new temporary folder, runs its .ci/run there and
# prints a line with the run's number, its time in seconds and its result,
# then one line a step with the seconds .ci/run took for it (its "== Ns:"
# lines), so that a slow step shows beside the others. A
# clean clone has no .cache/bin, so every run builds the binaries the tests
# run afresh; the go build cache and the npm cache are the machine's, as in
# CI. The log of each run is kept (its path is printed); the clone is
# removed. The last line gives how many runs passed and the median time of
# a run; the exit status is 0 only if every run did.
set -uo pipefail

n=${1:?usage: tools/streak.sh N [COMMIT]}
case "$n" in '' | *[!0-9]*) echo "streak.sh: N must be a number, not $n" >&2; exit 2 ;; esac
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || exit 2
commit=$(git -C "$repo" rev-parse --verify "${2:-HEAD}^{commit}") || exit 2
logs=$(mktemp -d "${TMPDIR:-/tmp}/plexus-streak.XXXXXX")
echo "streak: $n runs of .ci/run at $commit; logs in $logs"

passed=0
times=()
for i in $(seq 1 "$n"); do
  clone=$(mktemp -d "${TMPDIR:-/tmp}/plexus-ci.XXXXXX")
  log="$logs/run-$i.log"
  start=$SECONDS
  if git clone -q --no-checkout "$repo" "$clone" && git -C "$clone" checkout -q "$commit" &&
    (cd "$clone" && ./.ci/run) >"$log" 2>&1; then
    result=pass
    passed=$((passed + 1))
  else
    result="FAIL ($(grep -m1 -E '^(--- FAIL|FAIL|failed:)' "$log" 2>/dev/null || echo "see $log"))"
  fi
  times+=($((SECONDS - start)))
  printf 'run %d: %ds %s\n' "$i" "${times[-1]}" "$result"
  sed -nE 's/^== ([0-9]+s): (.*)$/  \1 \2/p' "$log"
  rm -rf "$clone"
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{t[NR] = $1} END {print (NR % 2) ? t[(NR + 1) / 2] : int((t[NR / 2] + t[NR / 2 + 1]) / 2)}')
echo "streak: $passed of $n passed; median run ${median}s"
[ "$passed" -eq "$n" ]
