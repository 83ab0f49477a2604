package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Space is how the database file's bytes are used, from SQLite's dbstat
// table: every b-tree's pages, and the free pages.
type Space struct {
	PageSize  int64
	FreeBytes int64        // free pages: reused by later writes, returned by a VACUUM
	Tables    []TableSpace // largest first
}

// TableSpace is a table's b-tree and those that belong to it: its indexes
// or, for a virtual table (an FTS5 index, say), its shadow tables and
// their indexes.
type TableSpace struct {
	Name    string
	Virtual bool
	Bytes   int64       // the table's own b-tree; 0 for a virtual table
	Parts   []NameBytes // its indexes, or its shadow tables, largest first
}

// NameBytes is one b-tree's size.
type NameBytes struct {
	Name  string
	Bytes int64
}

// Total is the table's bytes with its parts'.
func (t TableSpace) Total() int64 {
	n := t.Bytes
	for _, p := range t.Parts {
		n += p.Bytes
	}
	return n
}

// Total is the bytes of every b-tree and the free pages: the file's size
// once the WAL is checkpointed.
func (s Space) Total() int64 {
	n := s.FreeBytes
	for _, t := range s.Tables {
		n += t.Total()
	}
	return n
}

// Space reads the size of every table and index. It reads every page of
// the database (in one read transaction, beside a running server), so it
// takes about as long as reading the file.
func (db *DB) Space(ctx context.Context) (Space, error) {
	var sp Space
	// One snapshot for every query below.
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return sp, fmt.Errorf("sqlite: space: %w", err)
	}
	defer tx.Rollback()
	var free int64
	if err := tx.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&sp.PageSize); err != nil {
		return sp, fmt.Errorf("sqlite: space: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return sp, fmt.Errorf("sqlite: space: %w", err)
	}
	sp.FreeBytes = free * sp.PageSize

	// Which table each b-tree belongs to.
	owner := map[string]string{} // index or shadow table → its table
	virtual := map[string]bool{}
	shadow := map[string]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT name, type FROM pragma_table_list WHERE schema = 'main'`)
	if err != nil {
		return sp, fmt.Errorf("sqlite: space: %w", err)
	}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return sp, fmt.Errorf("sqlite: space: %w", err)
		}
		switch typ {
		case "virtual":
			virtual[name] = true
		case "shadow":
			shadow[name] = true
		}
	}
	if err := rows.Close(); err != nil {
		return sp, fmt.Errorf("sqlite: space: %w", err)
	}
	// A shadow table is named after its virtual table: search_data is
	// search's. The longest virtual table name that prefixes it wins.
	for s := range shadow {
		best := ""
		for v := range virtual {
			if strings.HasPrefix(s, v+"_") && len(v) > len(best) {
				best = v
			}
		}
		if best != "" {
			owner[s] = best
		}
	}
	rows, err = tx.QueryContext(ctx, `SELECT name, tbl_name FROM sqlite_schema WHERE type = 'index'`)
	if err != nil {
		return sp, fmt.Errorf("sqlite: space: %w", err)
	}
	for rows.Next() {
		var name, table string
		if err := rows.Scan(&name, &table); err != nil {
			rows.Close()
			return sp, fmt.Errorf("sqlite: space: %w", err)
		}
		if o, ok := owner[table]; ok {
			table = o
		}
		owner[name] = table
	}
	if err := rows.Close(); err != nil {
		return sp, fmt.Errorf("sqlite: space: %w", err)
	}

	tables := map[string]*TableSpace{}
	table := func(name string) *TableSpace {
		t, ok := tables[name]
		if !ok {
			t = &TableSpace{Name: name, Virtual: virtual[name]}
			tables[name] = t
		}
		return t
	}
	for v := range virtual {
		table(v)
	}
	rows, err = tx.QueryContext(ctx, `SELECT name, sum(pgsize) FROM dbstat GROUP BY name`)
	if err != nil {
		return sp, fmt.Errorf("sqlite: space (dbstat): %w", err)
	}
	for rows.Next() {
		var nb NameBytes
		if err := rows.Scan(&nb.Name, &nb.Bytes); err != nil {
			rows.Close()
			return sp, fmt.Errorf("sqlite: space (dbstat): %w", err)
		}
		if o, ok := owner[nb.Name]; ok {
			t := table(o)
			t.Parts = append(t.Parts, nb)
		} else {
			table(nb.Name).Bytes += nb.Bytes
		}
	}
	if err := rows.Close(); err != nil {
		return sp, fmt.Errorf("sqlite: space (dbstat): %w", err)
	}
	for _, t := range tables {
		slices.SortFunc(t.Parts, func(a, b NameBytes) int { return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Name, b.Name)) })
		sp.Tables = append(sp.Tables, *t)
	}
	slices.SortFunc(sp.Tables, func(a, b TableSpace) int {
		return cmp.Or(cmp.Compare(b.Total(), a.Total()), cmp.Compare(a.Name, b.Name))
	})
	return sp, nil
}

// Counts are the numbers of rows that matter for sizes, and how many are
// still stored uncompressed (codec.go).
type Counts struct {
	Pages, LivePages          int64
	Revisions, PlainRevisions int64 // PlainRevisions: texts of minCompress bytes or more stored as is
	Renders, PlainRenders     int64
}

// Counts counts pages, revisions and renders. It reads the revisions and
// renders tables through (not the texts themselves).
func (db *DB) Counts(ctx context.Context) (Counts, error) {
	var c Counts
	err := db.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM pages),
		(SELECT count(*) FROM pages WHERE deleted = 0),
		(SELECT count(*) FROM revisions),
		(SELECT count(*) FROM revisions WHERE typeof(text) = 'text' AND size >= ?),
		(SELECT count(*) FROM renders),
		(SELECT count(*) FROM renders WHERE codec = 0 AND length(data) >= ?)`, minCompress, minCompress).
		Scan(&c.Pages, &c.LivePages, &c.Revisions, &c.PlainRevisions, &c.Renders, &c.PlainRenders)
	if err != nil {
		return c, fmt.Errorf("sqlite: counts: %w", err)
	}
	return c, nil
}
