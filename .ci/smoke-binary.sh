#!/usr/bin/env bash
# Smoke test of the compiled binary, run from an empty temporary directory with no node_modules:
# it starts, answers /health with the expected database kind, refuses a second registry on the
# same data directory, answers MCP initialize + tools/list on stdio (market mcp), and exits 0
# within 2 s of SIGTERM.
#   usage: .ci/smoke-binary.sh dist/market [postgres-url]
set -euo pipefail
binary=$(realpath "$1")
database_url=${2:-}
expected=embedded
[ -n "$database_url" ] && expected=postgres

work=$(mktemp -d)
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$work"' EXIT
cp "$binary" "$work/market"
cd "$work"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

start_ms=$(date +%s%3N)
PORT=$port HOST=127.0.0.1 DATABASE_URL=$database_url ./market registry >registry.log 2>&1 &
pid=$!
health=""
for _ in $(seq 1 200); do
  health=$(curl -sf "http://127.0.0.1:$port/health" || true)
  [ -n "$health" ] && break
  kill -0 $pid 2>/dev/null || { cat registry.log; echo "smoke: the binary exited before answering /health"; exit 1; }
  sleep 0.05
done
echo "smoke($expected): /health after $(( $(date +%s%3N) - start_ms )) ms: $health"
echo "$health" | grep -q "\"status\":\"ok\"" || { cat registry.log; echo "smoke: /health is not ok"; exit 1; }
echo "$health" | grep -q "\"database\":\"$expected\"" || { echo "smoke: expected database $expected"; exit 1; }

if [ "$expected" = embedded ]; then
  other=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  set +e
  PORT=$other timeout 20 ./market registry >second.log 2>&1
  code=$?
  set -e
  [ $code -ne 0 ] && [ $code -ne 124 ] || { cat second.log; echo "smoke: a second registry on the same data directory did not fail (exit $code)"; exit 1; }
  grep -q "already in use" second.log || { cat second.log; echo "smoke: the second registry gave no clear message"; exit 1; }
  echo "smoke(embedded): second registry on the same directory exited $code: $(head -c 120 second.log)"
  curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "smoke: the first registry stopped serving"; exit 1; }
fi

# The MCP server for agents, on stdio: initialize, then tools/list, answered on stdout with protocol
# messages only (discovery-only: no wallet), pointed at the registry above.
mcp_out=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
  HOME="$work" MARKET_API_URL="http://127.0.0.1:$port" timeout 20 ./market mcp 2>mcp.log)
echo "$mcp_out" | python3 -c '
import json, sys
lines = [l for l in sys.stdin.read().splitlines() if l]
answers = [json.loads(l) for l in lines]
assert [a.get("id") for a in answers] == [1, 2], answers
names = sorted(t["name"] for t in answers[1]["result"]["tools"])
assert "call_skill" in names and "search_skills" in names, names
print("smoke(mcp): stdio initialize + tools/list:", ", ".join(names))
' || { cat mcp.log; echo "smoke: market mcp did not answer initialize and tools/list on stdout"; exit 1; }

stop_ms=$(date +%s%3N)
kill -TERM $pid
set +e
wait $pid
code=$?
set -e
elapsed=$(( $(date +%s%3N) - stop_ms ))
echo "smoke($expected): exit $code $elapsed ms after SIGTERM"
[ $code -eq 0 ] || { cat registry.log; echo "smoke: exit code $code after SIGTERM"; exit 1; }
[ $elapsed -lt 2000 ] || { echo "smoke: shutdown took $elapsed ms"; exit 1; }
