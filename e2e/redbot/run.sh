#!/usr/bin/env bash
# Runs REDbot (PyPI redbot, pinned) against a fresh wikid on loopback: an
# article, an asset, RecentChanges and the REST page and html endpoints,
# anonymous and logged in. Fails on any BAD finding.
# Usage: e2e/redbot/run.sh WIKID_BINARY
set -euo pipefail
bin=${1:?usage: run.sh WIKID_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
venv=${REDBOT_VENV:-$here/.venv}
if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"

data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
"$bin" serve --addr "127.0.0.1:$port" --data "$data" --log-level warn &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
echo 'redbot-pass-123' | "$bin" user add Redbot --data "$data" >/dev/null

# Log in through the form, as a browser does, and keep the session cookie.
jar=$data/cookies
csrf=$(curl -s -c "$jar" "$base/wiki/Special:UserLogin" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -1)
curl -s -b "$jar" -c "$jar" -o /dev/null --data-urlencode "csrf=$csrf" --data-urlencode username=Redbot \
	--data-urlencode password=redbot-pass-123 "$base/wiki/Special:UserLogin"
session=$(awk '$6 == "wikid_session" { print $7 }' "$jar")
[ -n "$session" ] || { echo "redbot: login failed" >&2; exit 1; }

"$venv/bin/python" "$here/check.py" "$base" --cookie "wikid_session=$session" --json "${REDBOT_JSON:-$data/redbot.json}"
