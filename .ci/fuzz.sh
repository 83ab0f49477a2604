#!/usr/bin/env bash
# Runs every Go fuzz target for FUZZTIME (default 5s): a smoke test, not a campaign.
set -euo pipefail
fuzztime=${FUZZTIME:-5s}
go=${GO:-go}

# `go test -list` prints a package's matching names, then "ok <package> <time>".
targets=$("$go" test -list '^Fuzz' ./... | awk '/^Fuzz/ { t[n++] = $1; next } /^ok/ { for (i = 0; i < n; i++) print $2, t[i]; n = 0 }')

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# fuzz runs one target. Go 1.26's fuzz coordinator can fail a target with a
# bare "context deadline exceeded" when -fuzztime ends while a worker is busy
# (go.dev/issue/75804, fixed in Go 1.27): nothing was found and no crasher is
# written. That one failure is run again once; any other failure, or the same
# one twice, fails the smoke run.
fuzz() {
	local pkg=$1 target=$2 try
	for try in 1 2; do
		if "$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$out"; then
			return 0
		fi
		if [ "$try" = 1 ] && grep -qx '    context deadline exceeded' "$out" && ! grep -q 'Failing input written to' "$out"; then
			echo "fuzz: $target hit Go's fuzz-deadline race (no failing input); running it again"
			continue
		fi
		return 1
	done
}

count=0
while read -r pkg target; do
	[ -n "$target" ] || continue
	count=$((count + 1))
	echo "fuzz: $target in $pkg for $fuzztime"
	fuzz "$pkg" "$target"
done <<<"$targets"
echo "fuzz: ran $count target(s)"
