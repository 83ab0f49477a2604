package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

func TestStatsAndCompact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	path := filepath.Join(data, "wikid.db")
	// The store stays open, as a running server's would.
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	text := strings.Repeat("A page of the wiki with [[Links]] and words that repeat. ", 30)
	for i := range 10 {
		res, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %d", i)), Text: text, UserName: "U", Time: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.UpdateSearchIndex(ctx, res.Page.ID, func(s string, _ wiki.ContentModel) string { return s }); err != nil {
			t.Fatal(err)
		}
	}
	// Three texts as written before compression.
	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `UPDATE revisions SET text = ? WHERE id <= 3`, text); err != nil {
		t.Fatal(err)
	}

	t.Run("stats prints sizes, counts and every table with its indexes, per live page", func(t *testing.T) {
		out, _, err := wikid(t, "", nil, "stats", "--data", data)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^database +` + regexp.QuoteMeta(path) + `$`),
			regexp.MustCompile(`(?m)^on disk +[\d.]+ [KM]B \(file [\d.]+ [KM]B, WAL [\d.]+ (B|KB|MB)\)$`),
			regexp.MustCompile(`(?m)^pages +10 live, 10 in all$`),
			regexp.MustCompile(`(?m)^revisions +10 \(3 stored uncompressed\)$`),
			regexp.MustCompile(`(?m)^renders +0 \(0 stored uncompressed\)$`),
			regexp.MustCompile(`(?m)^table or index +bytes +per live page$`),
			regexp.MustCompile(`(?m)^revisions +[\d.]+ KB +[\d.]+ (B|KB)$`),
			regexp.MustCompile(`(?m)^search_blocks +[\d.]+ KB +[\d.]+ (B|KB)$`),
			regexp.MustCompile(`(?m)^  search_blocks_key +[\d.]+ KB +[\d.]+ (B|KB)$`),
			regexp.MustCompile(`(?m)^  revisions_page +[\d.]+ KB +[\d.]+ (B|KB)$`),
			regexp.MustCompile(`(?m)^free pages +[\d.]+ (B|KB) +[\d.]+ (B|KB)$`),
			regexp.MustCompile(`(?m)^total +[\d.]+ [KM]B +[\d.]+ KB$`),
			regexp.MustCompile(`wikid compact compresses the former`),
		} {
			if !want.MatchString(out) {
				t.Errorf("no line matching %s in:\n%s", want, out)
			}
		}
		if regexp.MustCompile(`(?m)^(search_blocks_key|revisions_page) `).MatchString(out) {
			t.Errorf("an index is listed as a table of its own:\n%s", out)
		}
	})

	t.Run("stats of a missing database says where it looked and creates nothing", func(t *testing.T) {
		empty := t.TempDir()
		_, _, err := wikid(t, "", nil, "stats", "--data", empty)
		if err == nil || !strings.Contains(err.Error(), "there is no wiki database at") {
			t.Fatalf("err %v", err)
		}
		if fileSize(filepath.Join(empty, "wikid.db")) != 0 {
			t.Fatal("stats created a database")
		}
	})

	t.Run("compact compresses the old rows beside an open store, then vacuums", func(t *testing.T) {
		out, _, err := wikid(t, "", nil, "compact", "--data", data)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(out, "compressed 3 revisions and 0 renders: ") || !strings.Contains(out, "vacuumed: the database (with its WAL) went from ") {
			t.Fatalf("output:\n%s", out)
		}
		out, _, err = wikid(t, "", nil, "stats", "--data", data)
		if err != nil || !strings.Contains(out, "revisions  10 (0 stored uncompressed)") {
			t.Fatalf("stats after compact: %v\n%s", err, out)
		}
		for id := int64(1); id <= 10; id++ {
			if r, err := db.FindRevision(ctx, id); err != nil || r.Text != text {
				t.Fatalf("revision %d after compact: %v", id, err)
			}
		}
	})

	t.Run("bad usage is an error", func(t *testing.T) {
		for _, args := range [][]string{{"stats", "extra"}, {"compact", "extra"}} {
			if _, _, err := wikid(t, "", nil, append(args, "--data", data)...); err == nil || !strings.Contains(err.Error(), "usage: wikid "+args[0]) {
				t.Errorf("wikid %v: %v", args, err)
			}
		}
	})
}
