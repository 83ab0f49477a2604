// Command mwxmlgen writes a MediaWiki XML dump of generated wikitext, the
// corpus of the import benchmark:
//
//	go run ./bench/mwxmlgen -pages 2000 -revisions 10 > dump.xml
//	time wikid import dump.xml --data /tmp/bench-data
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/wikid/wikid/internal/mwxml"
)

func main() {
	pages := flag.Int("pages", 2000, "pages in the dump")
	revs := flag.Int("revisions", 10, "revisions per page")
	seed := flag.Uint64("seed", 1, "seed of the text generator: the same seed makes the same dump")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if err := mwxml.Generate(w, *pages, *revs, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "mwxmlgen:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "mwxmlgen:", err)
		os.Exit(1)
	}
}
