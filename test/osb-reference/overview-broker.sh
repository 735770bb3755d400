#!/usr/bin/env bash
# Runs `provider-kit check --osb` against cloudfoundry/overview-broker, a Node broker written by
# others (not part of this repository): its dependencies come from the npm registry, it runs on
# loopback, and the kit's report is printed. Usage:
#
#   test/osb-reference/overview-broker.sh <overview-broker checkout> [port] [-- extra check flags]
#
# Exit code: the kit's (0 passed, 1 a MUST failed, 2 the broker could not be checked).
set -euo pipefail
checkout=${1:?give the path of an overview-broker checkout (git clone https://github.com/cloudfoundry/overview-broker)}
port=${2:-43210}
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
root=$(cd "$(dirname "$0")/../.." && pwd)

[ -d "$checkout/node_modules" ] || (cd "$checkout" && npm install --omit=dev --no-audit --no-fund)
log=$(mktemp)
(cd "$checkout" && PORT=$port BROKER_USERNAME=admin BROKER_PASSWORD=password exec node index.js >"$log" 2>&1) &
broker=$!
trap 'kill "$broker" 2>/dev/null || true; wait "$broker" 2>/dev/null || true; rm -f "$log"' EXIT

# It answers once it listens: wait up to 60 s (a loaded machine starts Node slowly).
for _ in $(seq 1 120); do
  curl -s -o /dev/null -u admin:password -H 'X-Broker-API-Version: 2.17' "http://127.0.0.1:$port/v2/catalog" && break
  kill -0 "$broker" 2>/dev/null || { cat "$log"; echo "overview-broker exited before it listened" >&2; exit 2; }
  sleep 0.5
done

cd "$root"
status=0
node --conditions=source --import tsx packages/provider-kit/src/cli/main.ts check --osb \
  --url "http://127.0.0.1:$port" --username admin --password password --timeout 60 "$@" || status=$?
exit "$status"
