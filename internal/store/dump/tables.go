// Package dump copies a wiki from one store to another (wikid migrate
// --from --to): the tables both schemas share, described in neutral
// terms; rows read and written in key order, a batch per transaction, so
// that an interrupted copy resumes after the destination's largest key;
// and a verification that compares both sides by row count and checksum.
//
// Each engine reads and writes the neutral rows (Store) and converts them
// to its own storage form: SQLite keeps booleans as 0/1 integers, log
// params as JSON text and revision texts and renders zstd-compressed,
// PostgreSQL has booleans, jsonb and uncompressed values.
package dump

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Kind is a column's neutral type, and the Go type of its values in a Row.
type Kind int

const (
	Int   Kind = iota // int64
	Text              // string
	Bool              // bool
	Bytes             // []byte
	JSON              // string in canonical form (CanonicalJSON)
)

// Column is one column of a table, named alike in both schemas.
type Column struct {
	Name string
	Kind Kind
}

// Table describes a table both schemas have. Its key (the primary key) is
// its first Key columns, in their order.
type Table struct {
	Name    string
	Columns []Column
	Key     int
	// Where selects the rows copied (SQL both engines accept; "" for all).
	Where string
	// Option names the flag that copies the table ("" for always).
	Option string
	// Appended tables get rows of the destination's own after the copy
	// (the search jobs FinishCopy queues), with keys above the source's:
	// the copy resumes, and verification compares, only up to the
	// source's largest key.
	Appended bool
	// MaxBatch, if not 0, caps the rows read or written at once: rows of
	// page texts or renders may be megabytes each.
	MaxBatch int
}

// bigBatch is the batch of the tables whose rows hold whole page texts or
// renders: at most 50 × max_page_bytes (100 MiB with the default) in
// memory at once, where 1,000 rows could be gigabytes.
const bigBatch = 50

// chunkBatch is the batch of blob chunks: 16 MiB in memory at once
// (store.ChunkSize each).
const chunkBatch = 16

// batchOf is the batch of t for a copy of batch rows per transaction.
func (t *Table) batchOf(batch int) int {
	if t.MaxBatch > 0 {
		return min(batch, t.MaxBatch)
	}
	return batch
}

// Row is one row: a value per column, of the column's Kind's Go type.
type Row []any

// Key is the values of a table's key columns.
type Key []any

// KeyOf returns the key of row r of t.
func (t *Table) KeyOf(r Row) Key { return Key(r[:t.Key]) }

// Options of the copy.
const (
	OptionSessions = "sessions" // sign-ins: without them users log in again
	OptionRenders  = "renders"  // stored renders: without them pages render again when first read
)

func cols(spec string) []Column {
	kinds := map[string]Kind{"i": Int, "t": Text, "b": Bool, "y": Bytes, "j": JSON}
	var out []Column
	for _, f := range strings.Fields(spec) {
		name, k, _ := strings.Cut(f, ":")
		out = append(out, Column{Name: name, Kind: kinds[k]})
	}
	return out
}

// Tables are the tables a copy holds, in an order that respects the
// foreign keys (users and pages before what refers to them, blobs before
// their chunks, file versions and thumbnails). Not copied: the search
// index (the destination's is rebuilt by jobs, so pages.search_rev is
// left out and starts at 0), the purge log (the destination's processes
// start a new one) and finished jobs.
var Tables = []*Table{
	{Name: "users", Key: 1, Columns: cols(`id:i name:t name_key:t skeleton:t password_hash:t grp:t created:i
		time_zone:t date_format:t minor_default:b no_autowatch:b signature:t watchlist_token:t`)},
	{Name: "pages", Key: 1, Columns: cols(`id:i title:t ns:t latest_rev:i redirect:t deleted:b touched:i size:i title_fold:t model:t`)},
	{Name: "revisions", Key: 1, MaxBatch: bigBatch, Columns: cols(`id:i page_id:i parent_id:i user_id:i user_name:t ts:i summary:t text:t
		size:i sha1:t minor:b deleted:b tags:t model:t`)},
	{Name: "links", Key: 3, Columns: cols(`from_page:i kind:t target_title:t sortkey:t subcat:b`)},
	{Name: "category_added", Key: 2, Columns: cols(`category:t page_id:i added:i`)},
	{Name: "blobs", Key: 1, Columns: cols(`sha256:t size:i created:i`)},
	{Name: "blob_chunks", Key: 2, MaxBatch: chunkBatch, Columns: cols(`sha256:t n:i data:y`)},
	{Name: "file_versions", Key: 1, Columns: cols(`id:i page_id:i sha256:t size:i mime:t width:i height:i
		user_id:i user_name:t comment:t ts:i hidden:b`)},
	{Name: "thumbnails", Key: 2, Columns: cols(`source:t width:i sha256:t mime:t height:i`)},
	{Name: "changes", Key: 1, Columns: cols(`id:i kind:t title:t new_title:t page_id:i rev_id:i old_rev_id:i user_id:i
		user_name:t ts:i summary:t size:i old_size:i minor:b tags:t`)},
	{Name: "log", Key: 1, Columns: cols(`id:i type:t action:t ts:i user_id:i user_name:t target:t page_id:i comment:t params:j`)},
	{Name: "watchlist", Key: 2, Columns: cols(`user_id:i title:t expires:i`)},
	{Name: "notifications", Key: 1, Columns: cols(`id:i user_id:i kind:t title:t rev_id:i agent:t ts:i seen:b`)},
	{Name: "protection", Key: 1, Columns: cols(`title:t edit_level:t move_level:t expiry:i user_id:i user_name:t reason:t ts:i`)},
	{Name: "blocks", Key: 1, Columns: cols(`id:i user_id:i by_id:i by_name:t reason:t created:i expires:i`)},
	{Name: "tokens", Key: 1, Columns: cols(`id:t user_id:i name:t created:i expires:i last_used:i`)},
	{Name: "password_resets", Key: 1, Columns: cols(`id:t user_id:i created:i expires:i`)},
	{Name: "sessions", Key: 1, Option: OptionSessions, Columns: cols(`id:t user_id:i csrf:t created:i expires:i token_id:t`)},
	{Name: "renders", Key: 2, Option: OptionRenders, MaxBatch: bigBatch, Columns: cols(`rev_id:i version:i data:y`)},
	{Name: "jobs", Key: 1, Where: "state <> 'done'", Appended: true, Columns: cols(`id:i kind:t payload:t dedupe_key:t state:t
		attempts:i max_attempts:i run_at:i leased_until:i owner:t last_error:t created:i updated:i`)},
}

// Selected returns the tables a copy with the given options holds.
func Selected(options map[string]bool) []*Table {
	var out []*Table
	for _, t := range Tables {
		if t.Option == "" || options[t.Option] {
			out = append(out, t)
		}
	}
	return out
}

// ColumnNames returns the table's column names separated by commas.
func (t *Table) ColumnNames() string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// keyNames returns the key's column names separated by commas.
func (t *Table) keyNames() string {
	names := make([]string, t.Key)
	for i := range names {
		names[i] = t.Columns[i].Name
	}
	return strings.Join(names, ", ")
}

// Query is a SELECT of a table's rows in key order.
type Query struct {
	Columns string // the SELECT list
	After   Key    // rows whose key is above After (nil: from the first)
	Until   Key    // rows whose key is not above Until (nil: to the last)
	Desc    bool   // largest key first
	Limit   int    // 0: no limit
}

// SQL returns q on t as SQL both engines accept, placeholders written by
// ph (given 1, 2, …), and its arguments. Keys are compared as row values,
// which both engines answer from the primary key's index; text keys
// compare as bytes in both (SQLite's BINARY, PostgreSQL's COLLATE "C").
func (t *Table) SQL(q Query, ph func(int) string) (string, []any) {
	var where []string
	var args []any
	if t.Where != "" {
		where = append(where, t.Where)
	}
	cmp := func(op string, k Key) {
		marks := make([]string, len(k))
		for i, v := range k {
			args = append(args, v)
			marks[i] = ph(len(args))
		}
		if len(k) == 1 {
			where = append(where, t.Columns[0].Name+" "+op+" "+marks[0])
		} else {
			where = append(where, "("+t.keyNames()+") "+op+" ("+strings.Join(marks, ", ")+")")
		}
	}
	if q.After != nil {
		cmp(">", q.After)
	}
	if q.Until != nil {
		cmp("<=", q.Until)
	}
	var b strings.Builder
	b.WriteString("SELECT " + q.Columns + " FROM " + t.Name)
	if len(where) > 0 {
		b.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	order := make([]string, t.Key)
	for i := range order {
		order[i] = t.Columns[i].Name
		if q.Desc {
			order[i] += " DESC"
		}
	}
	b.WriteString(" ORDER BY " + strings.Join(order, ", "))
	if q.Limit > 0 {
		b.WriteString(" LIMIT " + strconv.Itoa(q.Limit))
	}
	return b.String(), args
}

// CountSQL returns the SQL that counts t's rows (those t.Where selects).
func (t *Table) CountSQL() string {
	s := "SELECT count(*) FROM " + t.Name
	if t.Where != "" {
		s += " WHERE " + t.Where
	}
	return s
}

// CanonicalJSON returns s in one form whatever spacing and key order the
// engine stored it with (PostgreSQL's jsonb has its own): compact, keys
// sorted, numbers as written.
func CanonicalJSON(s string) (string, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("not JSON: %w", err)
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// compareKeys orders two keys of one table: integers by value, text by
// bytes, as both engines order them.
func compareKeys(a, b Key) int {
	for i := range a {
		switch x := a[i].(type) {
		case int64:
			y := b[i].(int64)
			if x != y {
				if x < y {
					return -1
				}
				return 1
			}
		case string:
			if c := strings.Compare(x, b[i].(string)); c != 0 {
				return c
			}
		}
	}
	return 0
}

// FormatKey writes a key for messages: "42", "(7, link, Main Page)".
func FormatKey(k Key) string {
	parts := make([]string, len(k))
	for i, v := range k {
		parts[i] = fmt.Sprint(v)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
