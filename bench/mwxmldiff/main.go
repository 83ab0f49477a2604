// Command mwxmldiff checks that every revision of one MediaWiki dump is in
// another: the same title, time and text (trailing white space aside,
// which MediaWiki and Wikid each trim their way). It prints both dumps'
// page and revision counts and what is missing, and exits 1 when
// something is.
//
//	mwxmldiff FROM.xml TO.xml
package main

import (
	"crypto/sha1"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/mwxml"
)

type rev struct {
	at   time.Time
	sha1 [20]byte
}

// read returns the revisions of the dump at path by title, and its
// revision count.
func read(path string) (map[string][]rev, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r, _, err := mwxml.Decompress(f)
	if err != nil {
		return nil, 0, err
	}
	rd, err := mwxml.NewReader(r, mwxml.Limits{MaxTextBytes: 16 << 20})
	if err != nil {
		return nil, 0, err
	}
	out := map[string][]rev{}
	title, n := "", 0
	for {
		it, err := rd.Next()
		if err == io.EOF {
			return out, n, nil
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		switch v := it.(type) {
		case *mwxml.Page:
			title = v.Title
			out[title] = out[title][:0:0]
		case *mwxml.Revision:
			out[title] = append(out[title], rev{v.Timestamp, sha1.Sum([]byte(strings.TrimRight(v.Text, " \t\n")))})
			n++
		}
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mwxmldiff FROM.xml TO.xml")
		os.Exit(2)
	}
	from, nf, err := read(os.Args[1])
	if err == nil {
		var to map[string][]rev
		var nt int
		to, nt, err = read(os.Args[2])
		if err == nil {
			fmt.Printf("%s: %d pages, %d revisions\n%s: %d pages, %d revisions\n", os.Args[1], len(from), nf, os.Args[2], len(to), nt)
			missing := 0
			titles := make([]string, 0, len(from))
			for t := range from {
				titles = append(titles, t)
			}
			slices.Sort(titles)
			for _, t := range titles {
				have, ok := to[t]
				if !ok {
					fmt.Printf("missing page %q (%d revisions)\n", t, len(from[t]))
					missing += len(from[t])
					continue
				}
				for _, r := range from[t] {
					if !slices.Contains(have, r) {
						fmt.Printf("missing revision of %q at %s (or its text differs)\n", t, r.at.Format(time.RFC3339))
						missing++
					}
				}
			}
			if missing > 0 {
				fmt.Printf("%d revisions of %s are not in %s\n", missing, os.Args[1], os.Args[2])
				os.Exit(1)
			}
			fmt.Printf("every revision of %s is in %s\n", os.Args[1], os.Args[2])
			return
		}
	}
	fmt.Fprintln(os.Stderr, "mwxmldiff:", err)
	os.Exit(2)
}
