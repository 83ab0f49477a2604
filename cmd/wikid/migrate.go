package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/wikid/wikid/internal/store/dump"
	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/sqlite"
)

const migrateCopyUsage = "usage: wikid migrate --from sqlite:PATH|postgres://… --to sqlite:PATH|postgres://… [--sessions] [--renders] [--verify-only]"

// copyFlags are the flags of wikid migrate --from --to.
type copyFlags struct {
	from, to   string
	sessions   bool // copy the sign-ins too
	renders    bool // copy the stored renders too
	verifyOnly bool // compare the two stores, copy nothing
}

// copyStore is a store a copy reads or writes.
type copyStore interface {
	dump.Store
	Close() error
}

// storeURL is a parsed --from or --to.
type storeURL struct {
	sqlite   string // the file's path, or
	postgres string // the connection string
}

// sameFile reports whether s and o are SQLite files that are one file
// (another path to it, a link).
func (s storeURL) sameFile(o storeURL) bool {
	if s.sqlite == "" || o.sqlite == "" {
		return false
	}
	a, err := os.Stat(s.sqlite)
	if err != nil {
		return false
	}
	b, err := os.Stat(o.sqlite)
	return err == nil && os.SameFile(a, b)
}

func (s storeURL) String() string {
	if s.sqlite != "" {
		return "the SQLite database " + s.sqlite
	}
	return "the PostgreSQL " + postgres.Describe(s.postgres)
}

// parseStoreURL reads sqlite:PATH (a wikid.db file, or the data directory
// holding one) or a postgres:// URL. A source file must exist: opening
// one that does not would create an empty wiki.
func parseStoreURL(flag, v string, source bool) (storeURL, error) {
	switch {
	case v == "":
		return storeURL{}, fmt.Errorf("--%s is missing; %s", flag, migrateCopyUsage)
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		return storeURL{postgres: v}, nil
	case strings.HasPrefix(v, "sqlite:"):
		path := strings.TrimPrefix(v, "sqlite:")
		if path == "" {
			return storeURL{}, fmt.Errorf("--%s sqlite: names no file; give sqlite:PATH/wikid.db or sqlite:DATADIR", flag)
		}
		fi, err := os.Stat(path)
		if (err == nil && fi.IsDir()) || strings.HasSuffix(path, string(filepath.Separator)) {
			path = filepath.Join(path, "wikid.db")
			_, err = os.Stat(path)
		}
		if source && err != nil {
			return storeURL{}, fmt.Errorf("--from %s: there is no wiki database at %s; give the wikid.db file or the data directory holding it", v, path)
		}
		return storeURL{sqlite: path}, nil
	}
	return storeURL{}, fmt.Errorf("--%s %q: want sqlite:PATH (a wikid.db file or the data directory holding it) or postgres://user:password@host:5432/name", flag, v)
}

// open opens the store, applying pending migrations (a store a newer
// wikid migrated is refused); it creates the folder of a new SQLite file.
func (s storeURL) open(ctx context.Context) (copyStore, error) {
	if s.postgres != "" {
		return postgres.Open(ctx, s.postgres)
	}
	if err := os.MkdirAll(filepath.Dir(s.sqlite), 0o750); err != nil {
		return nil, fmt.Errorf("create the folder of %s: %w", s.sqlite, err)
	}
	return sqlite.Open(ctx, s.sqlite)
}

// migrateCopy copies a wiki from one store to another and verifies the
// copy (see dump.Copy), or only verifies it.
func migrateCopy(ctx context.Context, log *slog.Logger, f copyFlags, stdout, stderr io.Writer) error {
	// An interrupted copy keeps the batches it committed; the next run
	// resumes after them.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	from, err := parseStoreURL("from", f.from, true)
	if err != nil {
		return err
	}
	to, err := parseStoreURL("to", f.to, false)
	if err != nil {
		return err
	}
	sameDB := errors.New("--from and --to name the same database; give the destination a database of its own")
	if from == to || from.sameFile(to) {
		return sameDB
	}
	src, err := from.open(ctx)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := to.open(ctx)
	if err != nil {
		return err
	}
	defer dst.Close()
	// Two spellings of one PostgreSQL database (another host name, user
	// or parameters): the same server, started at the same instant, and
	// the same database in it.
	if a, ok := src.(*postgres.DB); ok {
		if b, ok := dst.(*postgres.DB); ok {
			ia, err := a.Identity(ctx)
			if err != nil {
				return err
			}
			ib, err := b.Identity(ctx)
			if err != nil {
				return err
			}
			if ia == ib {
				return sameDB
			}
		}
	}

	opt := dump.Options{
		Tables:   dump.Selected(map[string]bool{dump.OptionSessions: f.sessions, dump.OptionRenders: f.renders}),
		Progress: newProgressLine(stderr).update,
	}
	if !f.verifyOnly {
		log.Warn("edits made to the source during the copy may be missed: stop every wikid using it (serve, jobs run) before copying; the verification at the end reports any difference",
			"source", from.String())
		start := time.Now()
		res, err := dump.Copy(ctx, src, dst, opt)
		if err != nil {
			return fmt.Errorf("copy from %s to %s: %w; run the same command again to resume", from, to, err)
		}
		how := "copied"
		if res.Resumed {
			how = "resumed an earlier copy:"
		}
		fmt.Fprintf(stdout, "%s %d rows from %s to %s in %s\n", how, res.Rows, from, to, time.Since(start).Round(time.Millisecond))
		fmt.Fprintf(stdout, "%d search jobs queued; run wikid serve or wikid jobs run to build the index\n", res.SearchJobs)
		if !f.sessions {
			fmt.Fprintln(stdout, "sessions were not copied (--sessions): users sign in again")
		}
	}
	checks, err := dump.Verify(ctx, src, dst, opt)
	if err != nil {
		return fmt.Errorf("verify the copy of %s in %s: %w", from, to, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "table\tsource rows\tdestination rows\tchecksum")
	var differ []string
	for _, c := range checks {
		sum := "match"
		if !c.Match() {
			sum = "DIFFER"
			differ = append(differ, c.Table)
		}
		fmt.Fprintf(tw, "%s\t%11d\t%16d\t%s\n", c.Table, c.SourceRows, c.DestRows, sum)
	}
	tw.Flush()
	if len(differ) > 0 {
		return &exitError{1, fmt.Errorf("the destination differs from the source in %s: if the source changed during the copy, copy again into an empty database with every wikid on the source stopped", strings.Join(differ, ", "))}
	}
	fmt.Fprintf(stdout, "the destination holds the same rows as the source in all %d tables\n", len(checks))
	return nil
}

// progressLine shows a copy's progress on one line of stderr, rewritten
// in place a few times a second on a terminal; elsewhere (a log file) it
// writes a plain line every few seconds and one when a table is done.
type progressLine struct {
	w     io.Writer
	tty   bool
	every time.Duration
	last  time.Time // of the last line written
	width int       // of the line on the terminal

	table     string
	start     time.Time // of the table
	startDone int64     // rows an earlier run had done
}

func newProgressLine(w io.Writer) *progressLine {
	p := &progressLine{w: w, every: 5 * time.Second}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty, p.every = true, 250*time.Millisecond
	}
	return p
}

func (p *progressLine) update(d dump.Progress) {
	now := time.Now()
	if d.Table != p.table {
		p.table, p.start, p.startDone = d.Table, now, d.Done
		if !p.tty {
			p.last = now // a log gets a table's line when it is done, or every few seconds
		}
	}
	if !d.Finished && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	line := fmt.Sprintf("%s %s: %d/%d rows", d.Verb, d.Table, d.Done, d.Total)
	if secs := now.Sub(p.start).Seconds(); secs > 0.1 && d.Done > p.startDone {
		line += fmt.Sprintf(", %.0f rows/s", float64(d.Done-p.startDone)/secs)
	}
	if !p.tty {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := max(0, p.width-len(line))
	p.width = len(line)
	fmt.Fprint(p.w, "\r"+line+strings.Repeat(" ", pad))
	if d.Finished {
		fmt.Fprintln(p.w)
		p.width = 0
	}
}
