#!/usr/bin/env bash
# The scaling of a team's replicas (docs/team.md, "Scaling"): 1, 2 and 3
# plexus daemons behind HAProxy, each connected to the same streamable
# HTTP upstream itself, driven by the load tool with MCP 2026-07-28
# requests. Prints calls/s and p50 per replica count and the ratio to one
# replica, the first replica's RSS and CPU per call it served, and its
# idle CPU. Everything runs on this machine's loopback (haproxy from
# Debian: apt-get install haproxy).
#
#   tools/team-scale.sh [CALLS [CALLERS]]     (default 20000 calls, 16 callers)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-20000}
callers=${2:-16}
go test -count=1 -run '^TestTeamScaling$' -v -timeout 30m ./internal/e2e \
  -args -scale.calls="$calls" -scale.c="$callers" -scale.idle=10s 2>&1 |
  grep -E 'teamscale_test|^(--- |ok|FAIL)' | sed -E 's/^ +teamscale_test.go:[0-9]+: //'
