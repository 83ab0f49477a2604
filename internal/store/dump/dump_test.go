package dump

import (
	"crypto/sha256"
	"strconv"
	"testing"
)

func TestSQL(t *testing.T) {
	links := &Table{Name: "links", Key: 3, Columns: cols(`from_page:i kind:t target_title:t`)}
	jobs := &Table{Name: "jobs", Key: 1, Where: "state <> 'done'", Columns: cols(`id:i kind:t`)}
	dollar := func(i int) string { return "$" + strconv.Itoa(i) }
	cases := []struct {
		name  string
		t     *Table
		q     Query
		want  string
		nargs int
	}{
		{"a first batch reads from the start", jobs, Query{Columns: "id, kind", Limit: 10},
			"SELECT id, kind FROM jobs WHERE state <> 'done' ORDER BY id LIMIT 10", 0},
		{"a composite key compares as a row value", links, Query{Columns: "*", After: Key{int64(1), "link", "A"}, Limit: 5},
			"SELECT * FROM links WHERE (from_page, kind, target_title) > ($1, $2, $3) ORDER BY from_page, kind, target_title LIMIT 5", 3},
		{"the last row up to a key is the first in descending order", jobs, Query{Columns: "id", Until: Key{int64(9)}, Desc: true, Limit: 1},
			"SELECT id FROM jobs WHERE state <> 'done' AND id <= $1 ORDER BY id DESC LIMIT 1", 1},
		{"a range has both bounds", links, Query{Columns: "*", After: Key{int64(1), "a", "b"}, Until: Key{int64(2), "c", "d"}},
			"SELECT * FROM links WHERE (from_page, kind, target_title) > ($1, $2, $3) AND (from_page, kind, target_title) <= ($4, $5, $6) ORDER BY from_page, kind, target_title", 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, args := c.t.SQL(c.q, dollar)
			if got != c.want || len(args) != c.nargs {
				t.Errorf("got %q with %d args, want %q with %d", got, len(args), c.want, c.nargs)
			}
		})
	}
}

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                              `{}`,
		`{"to": "B", "from" : "A"}`:       `{"from":"A","to":"B"}`,
		`{"n": 12345678901234567890}`:     `{"n":12345678901234567890}`,
		`{"t": "<a & b>", "u": "\u00e9"}`: `{"t":"<a & b>","u":"é"}`,
	} {
		if got, err := CanonicalJSON(in); err != nil || got != want {
			t.Errorf("CanonicalJSON(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := CanonicalJSON(`{"a":`); err == nil {
		t.Error("broken JSON was accepted")
	}
}

func TestChecksumSeparatesValues(t *testing.T) {
	sum := func(r Row) [sha256.Size]byte {
		h := sha256.New()
		hashRow(h, r)
		var s [sha256.Size]byte
		h.Sum(s[:0])
		return s
	}
	pairs := [][2]Row{
		{{"ab", "c"}, {"a", "bc"}},
		{{int64(1), true}, {int64(1), false}},
		{{int64(12)}, {"12x"}},
	}
	for _, p := range pairs {
		if sum(p[0]) == sum(p[1]) {
			t.Errorf("%v and %v have one checksum", p[0], p[1])
		}
	}
	if sum(Row{"x", []byte("y")}) != sum(Row{"x", []byte("y")}) {
		t.Error("equal rows have different checksums")
	}
}
