package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// PostgreSQL's limits on a tsvector: positions run to 16383 (later words
// share the last), a lexeme keeps at most 256 of them, and the lexemes'
// bytes total less than 1 MiB.
const (
	maxPos         = 16383
	maxPosPerTerm  = 256
	maxVectorBytes = 1<<20 - 64<<10
)

// tsvector returns terms (store.IndexText's output: analyzer terms
// separated by spaces) as a tsvector literal, each term with its
// positions, for $n::tsvector. It is built here rather than by
// to_tsvector so that the database's parser, which depends on its
// locale, never splits or folds the terms differently from queries.
func tsvector(terms string) string {
	type entry struct {
		term string
		pos  []int
	}
	byTerm := map[string]*entry{}
	var order []*entry
	size := 0
	pos := 0
	for t := range strings.FieldsSeq(terms) {
		pos = min(pos+1, maxPos)
		e := byTerm[t]
		if e == nil {
			if size+len(t) > maxVectorBytes {
				continue
			}
			size += len(t)
			e = &entry{term: t}
			byTerm[t] = e
			order = append(order, e)
		}
		if len(e.pos) < maxPosPerTerm && (len(e.pos) == 0 || e.pos[len(e.pos)-1] != pos) {
			e.pos = append(e.pos, pos)
		}
	}
	slices.SortFunc(order, func(a, b *entry) int { return strings.Compare(a.term, b.term) })
	var b strings.Builder
	b.Grow(len(terms) + len(order)*8)
	for i, e := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		writeLexeme(&b, e.term)
		b.WriteByte(':')
		for j, p := range e.pos {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
	}
	return b.String()
}

// writeLexeme writes t quoted for a tsvector or tsquery literal.
func writeLexeme(b *strings.Builder, t string) {
	b.WriteByte('\'')
	for _, r := range t {
		switch r {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
}

// tsquery returns q as a tsquery literal, for $n::tsquery: every term
// required (&), a phrase's words in order (<->), a prefix term's last
// word with :*. "" if q has no terms.
func tsquery(q store.Query) string {
	var b strings.Builder
	for i, t := range q.Terms {
		if i > 0 {
			b.WriteString(" & ")
		}
		if len(t.Words) > 1 {
			b.WriteByte('(')
		}
		for j, w := range t.Words {
			if j > 0 {
				b.WriteString(" <-> ")
			}
			writeLexeme(&b, w)
			if t.Prefix && j == len(t.Words)-1 {
				b.WriteString(":*")
			}
		}
		if len(t.Words) > 1 {
			b.WriteByte(')')
		}
	}
	return b.String()
}

// searchEntry is a page's search entry to write: title and terms (the
// page's text as readers see it, through store.IndexText, made before the
// transaction).
type searchEntry struct {
	pageID, revID int64
	title         wiki.Title
	terms         string
}

// writeSearch writes entries in tx (replacing any entry a page has) and
// records on each page the revision its entry was made from and its
// folded title.
func writeSearch(ctx context.Context, tx pgx.Tx, entries []searchEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, e := range entries {
		b.Queue(`UPDATE pages SET search_rev = $1, title_fold = $2 WHERE id = $3`, e.revID, store.Fold(string(e.title)), e.pageID)
		b.Queue(`INSERT INTO search (page_id, title, body) VALUES ($1, $2::tsvector, $3::tsvector)
			ON CONFLICT (page_id) DO UPDATE SET title = excluded.title, body = excluded.body`,
			e.pageID, tsvector(store.IndexText(string(e.title))), tsvector(e.terms))
	}
	return tx.SendBatch(ctx, &b).Close()
}

// unindexPage drops the page's search entry.
func unindexPage(ctx context.Context, tx pgx.Tx, pageID int64) error {
	if _, err := tx.Exec(ctx, `DELETE FROM search WHERE page_id = $1`, pageID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE pages SET search_rev = 0 WHERE id = $1`, pageID)
	return err
}
