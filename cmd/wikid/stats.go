package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/sqlite"
)

const (
	statsUsage   = "usage: wikid stats"
	compactUsage = "usage: wikid compact [--no-vacuum]"
)

// stats prints how the database uses the disk. It opens the database
// read-only, so it runs beside a serving wikid.
func stats(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) != 0 {
		return errors.New(statsUsage)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Postgres() {
		return postgresStats(ctx, cfg, stdout)
	}
	path := cfg.DBPath()
	db, err := sqlite.OpenReadOnly(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("there is no wiki database at %s; give the data directory with --data or WIKID_DATA", path)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.Counts(ctx)
	if err != nil {
		return err
	}
	sp, err := db.Space(ctx)
	if err != nil {
		return err
	}
	file, wal := fileSize(path), fileSize(path+"-wal")

	fmt.Fprintf(stdout, "database   %s\n", path)
	fmt.Fprintf(stdout, "on disk    %s (file %s, WAL %s)\n", fmtBytes(file+wal), fmtBytes(file), fmtBytes(wal))
	fmt.Fprintf(stdout, "pages      %d live, %d in all\n", c.LivePages, c.Pages)
	fmt.Fprintf(stdout, "revisions  %d (%d stored uncompressed)\n", c.Revisions, c.PlainRevisions)
	fmt.Fprintf(stdout, "renders    %d (%d stored uncompressed)\n", c.Renders, c.PlainRenders)

	// A table's indexes or shadow tables are listed under it when it
	// holds a noticeable share of the file.
	type line struct {
		name  string
		bytes int64
	}
	var lines []line
	for _, t := range sp.Tables {
		name := t.Name
		if t.Virtual {
			name += " (virtual)"
		}
		lines = append(lines, line{name, t.Total()})
		if len(t.Parts) == 0 || t.Total() < sp.Total()/100 {
			continue
		}
		if !t.Virtual {
			lines = append(lines, line{"  (rows)", t.Bytes})
		}
		for _, p := range t.Parts {
			lines = append(lines, line{"  " + p.Name, p.Bytes})
		}
	}
	lines = append(lines, line{"free pages", sp.FreeBytes}, line{"total", sp.Total()})
	width := len("table or index")
	for _, l := range lines {
		width = max(width, len(l.name))
	}
	per := func(n int64) string {
		if c.LivePages == 0 {
			return "-"
		}
		return fmtBytes(n / c.LivePages)
	}
	fmt.Fprintf(stdout, "\n%-*s  %9s  %13s\n", width, "table or index", "bytes", "per live page")
	for _, l := range lines {
		fmt.Fprintf(stdout, "%-*s  %9s  %13s\n", width, l.name, fmtBytes(l.bytes), per(l.bytes))
	}

	if c.PlainRevisions+c.PlainRenders > 0 {
		fmt.Fprintln(stdout, "\nRows stored uncompressed were written before wikid compressed them, or do not get")
		fmt.Fprintln(stdout, "smaller compressed; wikid compact compresses the former.")
	}
	if sp.FreeBytes > sp.Total()/10 {
		fmt.Fprintln(stdout, "\nwikid compact gives the free pages back to the file system (VACUUM).")
	}
	return nil
}

// compact compresses the rows stored before compression, then (unless
// noVacuum) rebuilds the file without its free pages.
func compact(ctx context.Context, cfg config.Config, args []string, noVacuum bool, stdout io.Writer) error {
	if len(args) != 0 {
		return errors.New(compactUsage)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Postgres() {
		return errors.New("wikid compact is for the embedded SQLite file: PostgreSQL compresses large rows itself (TOAST) and autovacuum reuses the space; run VACUUM FULL there to give it back to the file system")
	}
	path := cfg.DBPath()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	before := fileSize(path) + fileSize(path+"-wal")
	last := time.Now()
	res, err := db.CompressOld(ctx, func(r sqlite.CompressResult) {
		if time.Since(last) >= 2*time.Second {
			last = time.Now()
			fmt.Fprintf(stdout, "compressed %d revisions, %d renders so far\n", r.Revisions, r.Renders)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "compressed %d revisions and %d renders: %s of their data became %s\n",
		res.Revisions, res.Renders, fmtBytes(res.Before), fmtBytes(res.After))
	if noVacuum {
		fmt.Fprintln(stdout, "skipped VACUUM: the space freed is reused by later writes; the file keeps its size")
		return nil
	}
	truncated, err := db.Vacuum(ctx)
	if err != nil {
		return err
	}
	after := fileSize(path) + fileSize(path+"-wal")
	fmt.Fprintf(stdout, "vacuumed: the database (with its WAL) went from %s to %s\n", fmtBytes(before), fmtBytes(after))
	if !truncated {
		fmt.Fprintln(stdout, "the WAL could not be truncated while another process was reading; it is emptied when the wiki next stops")
	}
	return nil
}

// fileSize is the size of the file at path, 0 if there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// fmtBytes writes n in B, KB, MB or GB (powers of 1024), three digits.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KB"
	for _, s := range []string{"MB", "GB", "TB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f %s", v, suffix)
	case v < 100:
		return fmt.Sprintf("%.1f %s", v, suffix)
	}
	return fmt.Sprintf("%.0f %s", v, suffix)
}

// postgresStats prints the counts of a PostgreSQL store and the bytes of
// each table (rows, indexes and TOAST).
func postgresStats(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	db, err := postgres.Open(ctx, cfg.Database)
	if err != nil {
		return err
	}
	defer db.Close()
	live, err := db.PageCount(ctx)
	if err != nil {
		return err
	}
	tables, err := db.Space(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database   %s\n", postgres.Describe(cfg.Database))
	fmt.Fprintf(stdout, "pages      %d live\n", live)
	width := len("table")
	var total postgres.TableSpace
	for _, t := range tables {
		width = max(width, len(t.Name))
		total.Rows += t.Rows
		total.Indexes += t.Indexes
		total.Toast += t.Toast
	}
	total.Name = "total"
	per := func(n int64) string {
		if live == 0 {
			return "-"
		}
		return fmtBytes(n / int64(live))
	}
	fmt.Fprintf(stdout, "\n%-*s  %9s  %9s  %9s  %9s  %13s\n", width, "table", "rows", "TOAST", "indexes", "total", "per live page")
	for _, t := range append(tables, total) {
		fmt.Fprintf(stdout, "%-*s  %9s  %9s  %9s  %9s  %13s\n", width, t.Name, fmtBytes(t.Rows), fmtBytes(t.Toast),
			fmtBytes(t.Indexes), fmtBytes(t.Total()), per(t.Total()))
	}
	return nil
}
