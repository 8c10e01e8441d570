#!/usr/bin/env bash
# perf-peers.sh - Plexus beside another MCP gateway, in one run.
#
#   tools/perf-peers.sh PEER_BINARY [ROUNDS]
#
# PEER_BINARY is TBXark/mcp-proxy, built from its source outside this
# repository (this script builds nothing of it). A session-era client
# (MCP 2025-06-18, as editors are) calls `echo` on a go-sdk stdio server that
# also lists 200 tools (plexus-load --serve-tools 200), four ways:
#
#   direct       the client runs the server itself
#   plexus-http  through a Plexus daemon's HTTP face (/mcp)
#   plexus-mcp   through `plexus mcp` (stdio bridge to the same daemon)
#   plexus-25    through the HTTP face to a second copy of the server that
#                Plexus is told to speak MCP 2025-11-25 with (its
#                protocolVersion pin), as the peer does: by default Plexus
#                speaks the newest version the server supports, 2026-07-28,
#                and the go-sdk server spends more a call on that
#                era's per-request _meta (docs/performance.md)
#   plexus-mcp-25  through `plexus mcp` to that pinned copy
#   peer         through PEER_BINARY's streamable HTTP endpoint
#
# Each round measures every target with 1 caller (latency) and 16 callers
# (throughput); the table gives the medians over ROUNDS rounds (default 5):
# c1 added p50 over direct, c16 throughput as a ratio of direct, the
# daemon's / proxy's CPU per call at c1 and c16 (the bridge's own CPU is not
# in plexus-mcp's figure: it has a column of its own), and its idle RSS with the one 200-tool server,
# read before any call was made: settled, then 1 s and 2 s after a settings
# change (the table's column is the 2 s one). Raw JSON lines stay in the
# output dir.
#
# Environment: PERF_CALLS (calls per c1 run, default 2000; c16 runs 4×),
# PERF_OUT (output dir, default a new mktemp -d).
set -euo pipefail

PEER="${1:?usage: perf-peers.sh PEER_BINARY [ROUNDS]}"
ROUNDS="${2:-5}"
CALLS="${PERF_CALLS:-2000}"
[ -x "$PEER" ] || { echo "perf-peers.sh: $PEER is not an executable" >&2; exit 2; }
PEER="$(cd "$(dirname "$PEER")" && pwd)/$(basename "$PEER")"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${PERF_OUT:-$(mktemp -d /tmp/perf-peers.XXXXXX)}"
mkdir -p "$OUT/bin"
echo "perf-peers: results in $OUT" >&2

(cd "$ROOT" && go build -o "$OUT/bin/plexus" ./cmd/plexus && go build -o "$OUT/bin/plexus-load" ./cmd/plexus-load)
LOAD="$OUT/bin/plexus-load"
SERVER="$LOAD --serve-tools 200"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
wait_http() { # URL: until something answers there
  for _ in $(seq 200); do curl -s -o /dev/null "$1" && return 0; sleep 0.05; done
  echo "perf-peers.sh: nothing answers at $1" >&2; return 1
}

# The Plexus daemon, on a home of its own, with the one server.
export PLEXUS_HOME="$OUT/home"
"$OUT/bin/plexus" daemon --listen 127.0.0.1:0 >"$OUT/daemon.log" 2>&1 &
DAEMON=$!; pids+=("$DAEMON")
for _ in $(seq 200); do "$OUT/bin/plexus" status >/dev/null 2>&1 && break; sleep 0.05; done
"$OUT/bin/plexus" add wide -- $SERVER >/dev/null
sleep 3
SETTLED=$(rss_kib "$DAEMON")
# The daemon settles again a second after a change (internal/daemon/
# settle.go): its RSS is read 1 s and 2 s after one, a settings change.
"$OUT/bin/plexus" settings set face.allowExternalCall true >/dev/null
sleep 1
AFTER1=$(rss_kib "$DAEMON")
sleep 1
IDLE1=$(rss_kib "$DAEMON")
# The pinned copy is added after the one-server idle RSS is read; the RSS
# it adds, per tool, is what a catalog costs.
"$OUT/bin/plexus" add wide25 -- $SERVER >/dev/null
python3 - "$PLEXUS_HOME/extensions.json" <<'EOF'
import json, sys
p = sys.argv[1]
cfg = json.load(open(p))
def pin(o):
    if isinstance(o, dict):
        if isinstance(o.get("wide25"), dict):
            o["wide25"]["protocolVersion"] = "2025-11-25"
            return True
        return any(pin(v) for v in o.values())
    return False
assert pin(cfg), "no server wide25 in extensions.json"
json.dump(cfg, open(p, "w"), indent=2)
EOF
"$OUT/bin/plexus" reload >/dev/null
sleep 2
IDLE2=$(rss_kib "$DAEMON")
echo "{\"settledRssKiB\": $SETTLED, \"after1sRssKiB\": $AFTER1, \"idle1RssKiB\": $IDLE1, \"idle2RssKiB\": $IDLE2}" >"$OUT/idle.json"
ADDR=$("$OUT/bin/plexus" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["httpAddr"])')
TOKEN=$(cat "$PLEXUS_HOME/token")

# The peer, in front of the same server.
PORT=$(free_port)
cat >"$OUT/peer.json" <<EOF
{"mcpProxy": {"baseURL": "http://127.0.0.1:$PORT", "addr": "127.0.0.1:$PORT", "name": "peer", "version": "1", "type": "streamable-http"},
 "mcpServers": {"wide": {"command": "$LOAD", "args": ["--serve-tools", "200"]}}}
EOF
"$PEER" --config "$OUT/peer.json" >"$OUT/peer.log" 2>&1 &
PEERPID=$!; pids+=("$PEERPID")
wait_http "http://127.0.0.1:$PORT/"
sleep 1

load() { # NAME CONC CALLS PID ARGS…: one plexus-load run, its JSON line appended to results
  local name=$1 c=$2 n=$3 pid=$4; shift 4
  local line
  line=$("$LOAD" --tool echo "$@" --protocol 2025-06-18 --args '{"text":"x"}' -n "$n" -c "$c" ${pid:+--pid "$pid"} | tail -n 1)
  echo "{\"round\": $round, \"target\": \"$name\", \"c\": $c, \"idleRssKiB\": ${idle:-0}, \"run\": $line}" >>"$OUT/results.jsonl"
}

for round in $(seq "$ROUNDS"); do
  echo "perf-peers: round $round of $ROUNDS" >&2
  for c in 1 16; do
    n=$CALLS; [ "$c" = 16 ] && n=$((CALLS * 4))
    idle=""; load direct "$c" "$n" "" --stdio "$SERVER"
    idle=$IDLE1; load plexus-http "$c" "$n" "$DAEMON" --url "http://$ADDR/mcp" --header "Authorization: Bearer $TOKEN" --tool wide_echo
    idle=$IDLE1; load plexus-mcp "$c" "$n" "$DAEMON" --stdio "$OUT/bin/plexus mcp" --tool wide_echo
    idle=$IDLE1; load plexus-25 "$c" "$n" "$DAEMON" --url "http://$ADDR/mcp" --header "Authorization: Bearer $TOKEN" --tool wide25_echo
    idle=$IDLE1; load plexus-mcp-25 "$c" "$n" "$DAEMON" --stdio "$OUT/bin/plexus mcp" --tool wide25_echo
    idle=$(rss_kib "$PEERPID"); load peer "$c" "$n" "$PEERPID" --url "http://127.0.0.1:$PORT/wide/mcp"
  done
done

python3 - "$OUT/results.jsonl" "$OUT/idle.json" <<'EOF'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
idle = json.load(open(sys.argv[2]))
def runs(target, c):
    return [r for r in rows if r["target"] == target and r["c"] == c]
def med(xs):
    return st.median(xs) if xs else float("nan")
for r in rows:
    if r["run"].get("errors"):
        print(f"warning: {r['target']} c{r['c']} round {r['round']}: {r['run']['errors']} errors, first: {r['run'].get('firstError')}", file=sys.stderr)
direct_p50 = {r["round"]: r["run"]["p50Us"] for r in runs("direct", 1)}
direct_tput = {r["round"]: r["run"]["callsPerSec"] for r in runs("direct", 16)}
print(f"{'':14} {'c1 p50':>9} {'c1 added p50':>13} {'c16 calls/s':>12} {'c16 vs direct':>14} {'CPU/call c1':>12} {'CPU/call c16':>13} {'bridge c1, c16':>15} {'idle RSS':>10}")
for t in ["direct", "plexus-http", "plexus-mcp", "plexus-25", "plexus-mcp-25", "peer"]:
    c1, c16 = runs(t, 1), runs(t, 16)
    p50 = med([r["run"]["p50Us"] for r in c1])
    added = med([r["run"]["p50Us"] - direct_p50[r["round"]] for r in c1])
    tput = med([r["run"]["callsPerSec"] for r in c16])
    ratio = med([r["run"]["callsPerSec"] / direct_tput[r["round"]] for r in c16])
    cpu1 = med([r["run"]["proc"]["cpuPerCallUs"] for r in c1 if r["run"].get("proc")])
    cpu16 = med([r["run"]["proc"]["cpuPerCallUs"] for r in c16 if r["run"].get("proc")])
    # The bridge's own CPU a call (plexus mcp, the stdio command), which
    # the daemon's figure does not hold.
    b1 = med([r["run"]["stdioProc"]["cpuPerCallUs"] for r in c1 if r["run"].get("stdioProc")])
    b16 = med([r["run"]["stdioProc"]["cpuPerCallUs"] for r in c16 if r["run"].get("stdioProc")])
    bridge = f"{b1:.0f}, {b16:.0f} µs" if t.startswith("plexus-mcp") and b1 == b1 else "-"
    # Idle RSS: read before the first round's calls, before any load.
    rss = med([r["idleRssKiB"] / 1024 for r in c1 if r["idleRssKiB"] and r["round"] == 1])
    fmt = lambda x, u: "-" if x != x else f"{x:.0f} {u}" if u != "MiB" else f"{x:.1f} MiB"
    print(f"{t:14} {fmt(p50,'µs'):>9} {('+' if added >= 0 else '') + fmt(added,'µs') if t != 'direct' else '-':>13} {tput:>12.0f} {ratio:>13.2f}× {fmt(cpu1,'µs'):>12} {fmt(cpu16,'µs'):>13} {bridge:>15} {fmt(rss,'MiB'):>10}")
print(f"Plexus idle RSS with one 200-tool server: {idle['settledRssKiB'] / 1024:.1f} MiB settled, "
      f"{idle['after1sRssKiB'] / 1024:.1f} MiB 1 s after a settings change, {idle['idle1RssKiB'] / 1024:.1f} MiB 2 s after")
print(f"Plexus idle RSS: {idle['idle1RssKiB'] / 1024:.1f} MiB with one 200-tool server, "
      f"{idle['idle2RssKiB'] / 1024:.1f} MiB with two (the second server and its 200 tools: "
      f"{(idle['idle2RssKiB'] - idle['idle1RssKiB']) / 1024:.1f} MiB; a tool alone: docs/performance.md)")
EOF
