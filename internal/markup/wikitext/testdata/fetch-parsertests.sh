#!/bin/sh
# fetch-parsertests.sh downloads MediaWiki 1.39's parser test files from the
# Debian source package (bookworm) into the parserTests cache directory:
#
#   $WIKID_PARSERTESTS_DIR, default ${XDG_CACHE_HOME:-$HOME/.cache}/wikid-parsertests
#
# It leaves the machine's apt configuration alone: a deb-src list for bookworm
# lives in a temporary directory and apt-get reads it through
# -o Dir::Etc::SourceList / Dir::Etc::SourceParts, with its own lists and cache
# directories there too. The .orig tarball's SHA-256 is pinned below; the
# script fails if it differs. Only tests/parser/parserTests.txt and Cite's
# citeParserTests.txt are extracted; nothing is committed.
set -eu

VERSION='1:1.39.17-1+deb12u2'
UPSTREAM='1.39.17'
ORIG_SHA256='2c5853d034d0c3e75160e8104125226fab964d7ed37732f83e7204781fab07b9'

dest=${WIKID_PARSERTESTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/wikid-parsertests}
if [ -s "$dest/parserTests.txt" ] && [ -s "$dest/citeParserTests.txt" ]; then
	echo "parser tests already in $dest"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sources.list.d" "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/src"
cat >"$tmp/sources.list.d/wikid-src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC

# Lists and downloads go to the temporary directory; as root, apt would
# download as its _apt user, who cannot write there (APT::Sandbox::User).
apt_opts="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$tmp/sources.list.d -o Dir::State::Lists=$tmp/lists -o Dir::Cache=$tmp/cache -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
apt-get $apt_opts -qq update
# shellcheck disable=SC2086
(cd "$tmp/src" && apt-get $apt_opts -qq source --download-only "mediawiki=$VERSION")

orig="$tmp/src/mediawiki_$UPSTREAM.orig.tar.gz"
sum=$(sha256sum "$orig" | cut -d' ' -f1)
if [ "$sum" != "$ORIG_SHA256" ]; then
	echo "fetch-parsertests: $orig has SHA-256 $sum, want $ORIG_SHA256" >&2
	exit 1
fi

top="mediawiki-$UPSTREAM"
mkdir -p "$tmp/x"
tar -xzf "$orig" -C "$tmp/x" \
	"$top/tests/parser/parserTests.txt" \
	"$top/extensions/Cite/tests/parser/citeParserTests.txt"
mkdir -p "$dest"
cp "$tmp/x/$top/tests/parser/parserTests.txt" "$dest/parserTests.txt"
cp "$tmp/x/$top/extensions/Cite/tests/parser/citeParserTests.txt" "$dest/citeParserTests.txt"
echo "parser tests written to $dest"
