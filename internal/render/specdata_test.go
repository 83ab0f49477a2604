package render

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The spec examples are other projects' data: they are fetched from a
// package registry when the tests run, pinned by version and SHA-256, and
// kept in a cache outside the repository ($WIKID_SPEC_CACHE, else the
// user's cache directory under wikid-spec). Without network access the
// conformance tests skip, unless WIKID_REQUIRE_SPEC=1 (set by .ci/run).

// specArchive is a registry package that carries spec files.
type specArchive struct {
	pkg    string // registry, name and version, for messages
	url    string // the registry's download URL for that version
	sha256 string // of the archive as downloaded
}

var (
	// commonmarkSpec is npm's commonmark-spec 0.31.2: the CommonMark spec's
	// own spec.txt (652 examples), as its maintainers publish it.
	commonmarkSpec = specArchive{
		pkg:    "npm commonmark-spec@0.31.2",
		url:    "https://registry.npmjs.org/commonmark-spec/-/commonmark-spec-0.31.2.tgz",
		sha256: "588280df96c211f7ce9db0b7943ded34ac4b8ba321e2fdf9c03d188ec0f01fea",
	}
	// gfmSpec is the crate cmark-gfm-sys 0.29.0, which vendors GitHub's
	// cmark-gfm with its test directory: test/spec.txt is the GFM spec
	// 0.29-gfm (2019-04-06), the latest GFM spec, and test/extensions.txt
	// cmark-gfm's own extension tests.
	gfmSpec = specArchive{
		pkg:    "crates.io cmark-gfm-sys@0.29.0",
		url:    "https://static.crates.io/crates/cmark-gfm-sys/cmark-gfm-sys-0.29.0.crate",
		sha256: "ed6e817288b1d95f9751a977112c73a0d551fa92b3a0aa5d18106db35265d3d3",
	}
)

const (
	commonmarkSpecFile = "package/spec.txt"
	gfmSpecFile        = "cmark-gfm-sys-0.29.0/cmark-gfm/test/spec.txt"
	gfmExtensionsFile  = "cmark-gfm-sys-0.29.0/cmark-gfm/test/extensions.txt"
)

// specFile returns the file name from the archive a, downloading the
// archive into the cache first if needed. It skips the test when the
// archive cannot be had, unless WIKID_REQUIRE_SPEC=1.
func specFile(t *testing.T, a specArchive, name string) []byte {
	t.Helper()
	archive, err := specArchiveBytes(a)
	if err != nil {
		if os.Getenv("WIKID_REQUIRE_SPEC") == "1" {
			t.Fatalf("%s: %v (WIKID_REQUIRE_SPEC=1)", a.pkg, err)
		}
		t.Skipf("%s not available, skipping (set WIKID_REQUIRE_SPEC=1 to make this a failure): %v", a.pkg, err)
	}
	b, err := tarGzMember(archive, name)
	if err != nil {
		t.Fatalf("%s: %v", a.pkg, err)
	}
	return b
}

// specCacheDir is where downloaded archives are kept.
func specCacheDir() (string, error) {
	if d := os.Getenv("WIKID_SPEC_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "wikid-spec"), nil
}

// specArchiveBytes returns the archive from the cache, or downloads it and
// caches it. The checksum is checked either way; the cache file is named
// by it, so that another pin never reads a stale file.
func specArchiveBytes(a specArchive) ([]byte, error) {
	dir, err := specCacheDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, a.sha256+filepath.Ext(a.url))
	if b, err := os.ReadFile(path); err == nil && checksum(b) == a.sha256 {
		return b, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "wikid-conformance-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", a.url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", a.url, err)
	}
	if sum := checksum(b); sum != a.sha256 {
		// Not a network problem: the pin is wrong or the registry serves
		// other bytes. Either way the test must not run on them.
		return nil, fmt.Errorf("GET %s: sha256 %s, want %s", a.url, sum, a.sha256)
	}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		tmp, err := os.CreateTemp(dir, ".download-*")
		if err == nil {
			_, werr := tmp.Write(b)
			cerr := tmp.Close()
			if werr == nil && cerr == nil {
				_ = os.Rename(tmp.Name(), path)
			}
			_ = os.Remove(tmp.Name())
		}
	}
	return b, nil
}

func checksum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// tarGzMember returns the regular file name from a gzipped tar archive.
func tarGzMember(archive []byte, name string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s not in the archive", name)
		}
		if err != nil {
			return nil, err
		}
		if h.Name == name && h.Typeflag == tar.TypeReg {
			return io.ReadAll(io.LimitReader(tr, 16<<20))
		}
	}
}

// specExample is one example of a spec file.
type specExample struct {
	Number    int      // 1-based, counted over every example in the file
	Section   string   // the heading above it
	Extension []string // words after "example": "table", "autolink", …
	Markdown  string
	HTML      string
	Line      int // where the example starts in the file
}

// parseSpec reads the examples of a spec file the way the spec's own test
// runner (test/spec_tests.py) does: an example is a block fenced by 32
// backticks and "example", its Markdown and HTML separated by a line with
// a single dot; → stands for a tab; the section is the latest heading
// outside an example.
func parseSpec(b []byte) []specExample {
	const fence = "````````````````````````````````"
	var (
		out      []specExample
		cur      specExample
		md, html strings.Builder
		state    int // 0 text, 1 Markdown, 2 HTML
		section  string
		number   int
		lineNo   int
	)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lineNo++
		line := sc.Text() + "\n"
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, fence+" example"):
			state = 1
			cur = specExample{Section: section, Extension: strings.Fields(l[len(fence+" example"):]), Line: lineNo}
			md.Reset()
			html.Reset()
		case l == fence:
			if state == 0 {
				continue
			}
			number++
			cur.Number = number
			cur.Markdown = strings.ReplaceAll(md.String(), "→", "\t")
			cur.HTML = strings.ReplaceAll(html.String(), "→", "\t")
			out = append(out, cur)
			state = 0
		case state == 1 && l == ".":
			state = 2
		case state == 1:
			md.WriteString(line)
		case state == 2:
			html.WriteString(line)
		case state == 0 && strings.HasPrefix(line, "#"):
			if h := strings.TrimLeft(line, "#"); strings.HasPrefix(h, " ") {
				section = strings.TrimSpace(h)
			}
		}
	}
	return out
}
