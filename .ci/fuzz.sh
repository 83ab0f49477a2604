#!/usr/bin/env bash
# Runs every Go fuzz target for FUZZTIME (default 5s): a smoke test, not a campaign.
set -euo pipefail
fuzztime=${FUZZTIME:-5s}
go=${GO:-go}

# `go test -list` prints a package's matching names, then "ok <package> <time>".
targets=$("$go" test -list '^Fuzz' ./... | awk '/^Fuzz/ { t[n++] = $1; next } /^ok/ { for (i = 0; i < n; i++) print $2, t[i]; n = 0 }')

count=0
while read -r pkg target; do
	[ -n "$target" ] || continue
	count=$((count + 1))
	echo "fuzz: $target in $pkg for $fuzztime"
	"$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
done <<<"$targets"
echo "fuzz: ran $count target(s)"
