package postgres

import (
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/store"
)

func TestTSVectorLiteral(t *testing.T) {
	got := tsvector("the cat o'neil the back\\slash")
	want := `'back\\slash':5 'cat':2 'o''neil':3 'the':1,4`
	if got != want {
		t.Fatalf("tsvector:\n got %s\nwant %s", got, want)
	}
	long := strings.Repeat("w ", maxPos+10)
	if v := tsvector(long); strings.Count(v, ",") != maxPosPerTerm-1 {
		t.Fatalf("a term keeps at most %d positions: %d", maxPosPerTerm, strings.Count(v, ",")+1)
	}
}

func TestTSQueryLiteral(t *testing.T) {
	q := store.ParseQuery(`"red fox" jump* o'neil`)
	got := tsquery(q)
	if !strings.Contains(got, `('red' <-> 'fox')`) || !strings.Contains(got, `'jump':*`) || strings.Count(got, " & ") != len(q.Terms)-1 {
		t.Fatalf("tsquery(%+v) = %s", q, got)
	}
}
