#!/usr/bin/env bash
# Measures what docs/performance.md quotes: each plexus-load run RUNS times
# (default 5), one JSON line per run in OUT (default ./perf-out), then the
# median, min and max of each target's number. Needs jq.
#
#   go build -o bin/ ./cmd/plexus ./cmd/plexus-load && tools/perf.sh bin
set -euo pipefail
bin=$(cd "${1:?usage: tools/perf.sh DIR-WITH-plexus-AND-plexus-load}" && pwd)
out=${OUT:-perf-out}
runs=${RUNS:-5}
mkdir -p "$out"
load="$bin/plexus-load --plexus $bin/plexus"

if [ -z "${SUMMARY_ONLY:-}" ]; then
  rm -f "$out"/*.jsonl
  for _ in $(seq "$runs"); do
    $load --compare -n 2000 --client raw --idle-sessions 100 | tail -1 >>"$out/compare-http-raw.jsonl"
    $load --compare -n 2000 --idle-sessions 100 | tail -1 >>"$out/compare-http.jsonl"
    $load --compare -n 2000 --protocol 2025-11-25 | tail -1 >>"$out/compare-http-2025.jsonl"
    $load --compare -n 200 --servers 10 | tail -1 >>"$out/compare-10servers.jsonl"
    $load --startup --servers 20 | tail -1 >>"$out/startup-20.jsonl"
    $load --compare -n 200 --server "$bin/plexus-load --serve-tools 200" --servers 25 | tail -1 >>"$out/compare-5000tools.jsonl"
    $load --compare -n 200 --client raw --server "$bin/plexus-load --serve-tools 200" --servers 25 | tail -1 >>"$out/compare-5000tools-raw.jsonl"
    $load --compare -n 1000 --via stdio | tail -1 >>"$out/compare-stdio.jsonl"
  done
fi

# stat FILE LABEL JQ-PATH [SCALE]: "LABEL  median (min – max)" over the runs.
stat() {
  jq -rs --arg name "$2" --argjson scale "${4:-1}" "
    map($3 * \$scale) | sort as \$v | (\$v | length) as \$n
    | (if \$n % 2 == 1 then \$v[(\$n / 2 | floor)] else (\$v[\$n / 2 - 1] + \$v[\$n / 2]) / 2 end) as \$med
    | \"\(\$name)\t\(\$med * 100 | round / 100)\t(\(\$v[0] * 100 | round / 100) – \(\$v[-1] * 100 | round / 100), n=\(\$n))\"" "$out/$1"
}
mib=$(echo "1 / 1048576" | awk '{print 1/1048576}')
{
  for f in compare-http-raw compare-http compare-http-2025 compare-stdio; do
    [ -s "$out/$f.jsonl" ] || continue
    echo "== $f"
    stat $f.jsonl "direct p50 µs, 1 caller" .direct.latency.p50Us
    stat $f.jsonl "plexus p50 µs, 1 caller" .plexus.latency.p50Us
    stat $f.jsonl "added p50 µs" .ratios.addedP50Us
    stat $f.jsonl "added p99 µs" .ratios.addedP99Us
    stat $f.jsonl "direct calls/s, 16 callers" .direct.throughput.callsPerSec
    stat $f.jsonl "plexus calls/s, 16 callers" .plexus.throughput.callsPerSec
    stat $f.jsonl "throughput ratio, 16 callers" .ratios.throughput
    stat $f.jsonl "daemon CPU µs per call" .daemon.cpuPerCallUs
    stat $f.jsonl "  of which at 1 caller" .plexus.latency.proc.cpuPerCallUs
    stat $f.jsonl "  of which at 16 callers" .plexus.throughput.proc.cpuPerCallUs
    stat $f.jsonl "longest plexus call ms" .ratios.plexusMaxCallMs
    stat $f.jsonl "plexus errors" .ratios.plexusErrors
    stat $f.jsonl "idle RSS MiB, 1 server" .daemon.idleRssBytes "$mib"
    stat $f.jsonl "+RSS MiB, idle sessions" '(.daemon.sessionsRssBytes // 0)' "$mib"
  done
  if [ -s "$out/compare-10servers.jsonl" ]; then
    echo "== compare-10servers"
    stat compare-10servers.jsonl "idle RSS MiB, 10 servers" .daemon.idleRssBytes "$mib"
  fi
  if [ -s "$out/startup-20.jsonl" ]; then
    echo "== startup-20"
    stat startup-20.jsonl "cold start to ready ms" .coldReadyMs
    stat startup-20.jsonl "cold RSS MiB" .coldRssBytes "$mib"
    stat startup-20.jsonl "20 servers ready ms" .serversReadyMs
    stat startup-20.jsonl "20 direct, slowest ms" .directSlowestMs
    stat startup-20.jsonl "over slowest ms" .overSlowestMs
  fi
  for f in compare-5000tools compare-5000tools-raw; do
    [ -s "$out/$f.jsonl" ] || continue
    echo "== $f"
    stat $f.jsonl "tools listed" .plexus.latency.tools
    stat $f.jsonl "tools/list ms, 1 session" .plexus.latency.listUs 0.001
    stat $f.jsonl "servers ready ms" .daemon.serversReadyMs
    stat $f.jsonl "idle RSS MiB, 25 servers" .daemon.idleRssBytes "$mib"
  done
} | column -t -s $'\t'
