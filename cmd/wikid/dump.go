package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/mwxml"
	"github.com/wikid/wikid/internal/wiki"
)

// dumpFlags are the flags of an import of a MediaWiki dump.
type dumpFlags struct {
	files        string // directory of the uploads' files
	noLocalUsers bool
	userPrefix   string
}

// countingFile counts the bytes read from an input, for the progress
// line (the compressed bytes, which the file's size is in).
type countingFile struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingFile) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// sniffDump reads r's first bytes, decompressed: xml is true when they
// are an XML document (a MediaWiki dump), and body reads the whole input
// decompressed. A compressed input that is not XML is an error.
func sniffDump(r io.Reader) (body *bufio.Reader, xml bool, err error) {
	dec, c, err := mwxml.Decompress(r)
	if err != nil {
		return nil, false, err
	}
	br := bufio.NewReaderSize(dec, 64<<10)
	head, err := br.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, false, fmt.Errorf("%s: %w", c, err)
	}
	xml = mwxml.LooksLikeXML(head)
	if !xml && c != mwxml.Plain {
		return nil, false, fmt.Errorf("the %s file holds no XML: only MediaWiki dumps may be compressed; decompress JSON lines first", c)
	}
	return br, xml, nil
}

// importDump imports a MediaWiki dump read from in (size bytes, 0 when
// unknown), with a progress line on stderr about every second and a
// summary on stdout.
func importDump(ctx context.Context, cfg config.Config, log *slog.Logger, in *countingFile, body io.Reader, size int64, summary, user string, df dumpFlags, stdout, stderr io.Writer) error {
	a, ed, err := openAs(ctx, cfg, log, "import", user)
	if err != nil {
		return err
	}
	defer a.Close()
	opts := engine.DumpOptions{Editor: ed, Log: summary, UserPrefix: df.userPrefix, LocalUsers: !df.noLocalUsers}
	if opts.Log == "" {
		opts.Log = "Imported from a MediaWiki dump"
	}
	if df.files != "" {
		if info, err := os.Stat(df.files); err != nil || !info.IsDir() {
			return fmt.Errorf("import: --files %s: not a directory (want the directory of dumpUploads.php's files)", df.files)
		}
		opts.File = filesIn(df.files)
	}
	t0 := time.Now()
	var mu sync.Mutex
	var last engine.DumpStats
	opts.Progress = func(st engine.DumpStats) {
		mu.Lock()
		last = st
		mu.Unlock()
	}
	tty := isTerminal(stderr)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if tty {
					fmt.Fprint(stderr, "\n")
				}
				return
			case <-tick.C:
			}
			mu.Lock()
			st := last
			mu.Unlock()
			read := in.n.Load()
			secs := time.Since(t0).Seconds()
			line := fmt.Sprintf("import: %d pages, %d revisions (%.0f/s), %.1f MB/s", st.Pages, st.Revisions,
				float64(st.Revisions)/secs, float64(read)/secs/1e6)
			if size > 0 && read > 0 {
				eta := time.Duration(float64(time.Since(t0)) * float64(size-read) / float64(read))
				line += fmt.Sprintf(", %.0f%%, about %v left", 100*float64(read)/float64(size), eta.Round(time.Second))
			}
			if tty {
				fmt.Fprintf(stderr, "\r%-100s", line)
			} else {
				fmt.Fprintln(stderr, line)
			}
		}
	})
	st, err := a.Engine.ImportDump(ctx, body, opts)
	close(done)
	wg.Wait()
	mergeSearch(ctx, a.Store, log, err)
	took := time.Since(t0)
	fmt.Fprintf(stdout, "imported %d pages (%d created, %d updated), %d revisions in %v, %.0f revisions/s: %d added, %d skipped, already present\n",
		st.Pages, st.Created, st.Updated, st.Revisions, took.Round(time.Millisecond), float64(st.Revisions)/max(took.Seconds(), 1e-9), st.Added, st.Skipped)
	if st.Hidden > 0 {
		fmt.Fprintf(stdout, "%d revisions not imported: their text is hidden (deleted) in the dump\n", st.Hidden)
	}
	for _, m := range slices.Sorted(maps.Keys(st.Unsupported)) {
		fmt.Fprintf(stdout, "%d revisions not imported: content model %q (Wikid has wikitext and markdown)\n", st.Unsupported[m], m)
	}
	for _, ns := range slices.Sorted(maps.Keys(st.ForeignNS)) {
		fmt.Fprintf(stdout, "%d pages of namespace %q, which this wiki has not, imported into the main namespace as \"%s:…\"\n", st.ForeignNS[ns], ns, ns)
	}
	if df.files != "" {
		fmt.Fprintf(stdout, "files: %d uploaded, %d present already, %d not found in %s\n", st.Files, st.FilesSkipped, st.FilesMissing, df.files)
	}
	if err != nil {
		return fmt.Errorf("import stopped (the pages before this one are imported; run the import again once the dump is fixed, it skips them): %w", err)
	}
	return nil
}

// filesIn finds an upload's file in dir by its name, spaces or
// underscores (dumpUploads.php writes underscores).
func filesIn(dir string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		for _, n := range []string{name, strings.ReplaceAll(name, " ", "_")} {
			if n == "" || n != filepath.Base(n) || n == ".." {
				return nil, fmt.Errorf("the file name %q is not a plain name", name)
			}
			b, err := os.ReadFile(filepath.Join(dir, n))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return b, err
		}
		return nil, wiki.ErrNotFound
	}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// exportFlags are the flags of wikid export.
type exportFlags struct {
	full, all bool
	category  string
	markdown  bool
}

const exportUsage = "usage: wikid export [--full] [--all] [--category NAME] [--markdown-model] [TITLE…] > dump.xml"

// exportCommand writes a MediaWiki dump of the pages named to stdout.
func exportCommand(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, ef exportFlags, stdout io.Writer) error {
	if len(args) == 0 && !ef.all && ef.category == "" {
		return errors.New(exportUsage)
	}
	rules := cfg.TitleRules()
	base := strings.TrimRight(cfg.CanonicalURL, "/")
	if base == "" {
		base = "http://localhost" // the siteinfo needs one; importers do not read it
	}
	req := engine.ExportRequest{All: ef.all, Full: ef.full, MarkdownModel: ef.markdown, SiteName: cfg.SiteName, Base: base + "/wiki/Main_Page"}
	for _, a := range args {
		t, err := rules.Parse(a)
		if err != nil {
			return fmt.Errorf("export: title %q: %s", a, wiki.Message(err))
		}
		req.Titles = append(req.Titles, t)
	}
	if ef.category != "" {
		name := ef.category
		if !strings.Contains(name, ":") {
			name = wiki.NSCategory + ":" + name
		}
		t, err := rules.Parse(name)
		if err != nil || t.Namespace() != wiki.NSCategory {
			return fmt.Errorf("export: --category %q is not a category's name", ef.category)
		}
		req.Category = t
	}
	cfg.JobWorkers = 0
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	st, err := a.Engine.Export(ctx, stdout, req)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	log.Info("export", "pages", st.Pages, "revisions", st.Revisions)
	return nil
}
