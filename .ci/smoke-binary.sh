#!/usr/bin/env bash
# Smoke test of the compiled binary, run from an empty temporary directory with no node_modules:
# it starts, answers /health with the expected database kind, refuses a second registry on the
# same data directory, serves the embedded web pages, answers MCP initialize + tools/list on stdio
# (market mcp), and exits 0 within 2 s of SIGTERM. Without a database URL it also runs `market dev`
# there (anvil on PATH only) and the paid call its banner prints.
#   usage: .ci/smoke-binary.sh dist/market [postgres-url]
set -euo pipefail
binary=$(realpath "$1")
anvil_dir=$(dirname "$(realpath node_modules/.bin/anvil)")
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
grep -q "\"status\":\"ok\"" <<<"$health" || { cat registry.log; echo "smoke: /health is not ok"; exit 1; }
grep -q "\"database\":\"$expected\"" <<<"$health" || { echo "smoke: expected database $expected"; exit 1; }

# The web pages are embedded: / is the marketplace page, and every script and stylesheet it
# names is served from the binary (no files on disk, no network).
page=$(curl -sf "http://127.0.0.1:$port/")
grep -q '<div id="app">' <<<"$page" || { echo "smoke: / is not the marketplace page"; exit 1; }
assets=$(echo "$page" | grep -oE '(src|href)="/[^"]+\.(js|css)"' | sed -E 's/^(src|href)="//; s/"$//')
[ -n "$assets" ] || { echo "smoke: the page names no script or stylesheet"; exit 1; }
for asset in $assets; do
  curl -sf -o /dev/null "http://127.0.0.1:$port$asset" || { echo "smoke: $asset is not served"; exit 1; }
done
echo "smoke($expected): / and its $(echo "$assets" | wc -w) assets served from the binary"
# Bodies are read whole before grep -q looks at them: grep quitting at the first match would cut
# curl off (SIGPIPE), which pipefail turns into a failure.
skills_body=$(curl -sf "http://127.0.0.1:$port/skills") || { echo "smoke: GET /skills failed"; exit 1; }
grep -q '^\[' <<<"$skills_body" || { echo "smoke: GET /skills is not the JSON list"; exit 1; }
# The identity provider's SDK is a bundle of its own (the sign-in page loads it): served too.
sdk_page=$(curl -sf "http://127.0.0.1:$port/web/identity-provider")
sdk_script=$(echo "$sdk_page" | grep -oE 'src="/[^"]+\.js"' | head -n 1 | sed -E 's/^src="//; s/"$//')
[ -n "$sdk_script" ] || { echo "smoke: /web/identity-provider names no script"; exit 1; }
sdk_body=$(curl -sf "http://127.0.0.1:$port$sdk_script") || { echo "smoke: $sdk_script is not served"; exit 1; }
grep -q 'auth.privy.io' <<<"$sdk_body" || { echo "smoke: the identity provider's SDK bundle is not the provider's SDK"; exit 1; }
# The API reference at /docs and its files come from the binary too (no CDN), with the security headers.
docs_headers=$(curl -sf -D - -o "$work/docs.html" "http://127.0.0.1:$port/docs") || { echo "smoke: /docs failed"; exit 1; }
grep -qi "^content-security-policy:.*frame-ancestors 'none'" <<<"$docs_headers" || { echo "smoke: /docs has no content policy header"; exit 1; }
docs_files=$(grep -oE '(src|href)="[^"]+\.(js|css)"' "$work/docs.html" | sed -E 's/^(src|href)="//; s/"$//')
[ -n "$docs_files" ] || { echo "smoke: /docs names no script or stylesheet"; exit 1; }
if grep -qE '(src|href)="https?:' "$work/docs.html"; then echo "smoke: /docs loads from another host"; exit 1; fi
for file in $docs_files; do
  curl -sf -o /dev/null "http://127.0.0.1:$port/${file#/}" || { echo "smoke: /docs file $file is not served"; exit 1; }
done
echo "smoke($expected): /docs and its $(echo "$docs_files" | wc -w) files served from the binary"

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

if [ "$expected" = embedded ]; then
  # market dev from the binary alone: the token's bytecode and the example skills are inside it.
  ports=$(python3 -c 'import socket
socks=[socket.socket() for _ in range(4)]
[s.bind(("127.0.0.1",0)) for s in socks]
print(" ".join(str(s.getsockname()[1]) for s in socks))')
  read -r rp fp sp cp <<<"$ports"
  start_ms=$(date +%s%3N)
  PATH="$anvil_dir:$PATH" ./market dev --port "$rp" --facilitator-port "$fp" --skills-port "$sp" --chain-port "$cp" >dev.log 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    grep -q "Pay for a skill" dev.log && break
    kill -0 $pid 2>/dev/null || { cat dev.log; echo "smoke: market dev exited before its banner"; exit 1; }
    sleep 0.1
  done
  grep -q "Pay for a skill" dev.log || { cat dev.log; echo "smoke: no market dev banner"; exit 1; }
  echo "smoke(dev): banner after $(( $(date +%s%3N) - start_ms )) ms"
  call=$(grep -A1 "Pay for a skill" dev.log | tail -n 1 | sed 's/^ *//')
  echo "smoke(dev): $call"
  result=$(sh -c "$call" 2>call.err) || { cat call.err dev.log; echo "smoke: the printed market call failed"; exit 1; }
  echo "$result" | tr -d ' \n' | grep -q '"words":6' || { echo "$result"; echo "smoke: unexpected result"; exit 1; }
  grep -q '"transaction":"0x' call.err || { cat call.err; echo "smoke: no receipt"; exit 1; }
  echo "smoke(dev): paid call answered: $(echo "$result" | tr -d ' \n')"
  kill -TERM $pid
  set +e
  wait $pid
  code=$?
  set -e
  [ $code -eq 0 ] || { cat dev.log; echo "smoke: market dev exited $code after SIGTERM"; exit 1; }
  if pgrep -f "$work/.market/dev" >/dev/null || pgrep -f -- "--port $sp " >/dev/null; then echo "smoke: market dev left processes behind"; exit 1; fi
  echo "smoke(dev): stopped, no process left"
fi
