package search

import (
	"slices"
	"strings"
	"testing"
)

// Whatever a stored block holds (a torn write, a bug), reading it returns
// an error or values, never a panic or a runaway allocation.
func FuzzBlock(f *testing.F) {
	seg := Build([]Doc{{ID: 2, Title: "a b", Body: "c d c e"}, {ID: 5, Title: "c", Body: "a a a"}})
	for _, b := range seg.Blocks {
		f.Add(b.Data, "c")
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "a")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		_ = Entries(data, func(k string, l List) bool {
			_, _ = l.Postings(nil)
			_, _ = l.Runs(nil)
			_ = l.RunsOf([]int64{1, 2, 5}, func(int64, []byte) error { return nil })
			_, _ = l.PostingsOf(nil, []int64{1, 2, 5})
			return true
		})
		_, _, _ = Lookup(data, key)
		_, _ = Range(data, key, PrefixEnd(key), func(string, List) bool { return true })
	})
}

// A segment built from any documents finds, for a one-word or two-word
// phrase query, the documents whose terms hold it, and merging it with
// itself (each document kept once) changes nothing.
func FuzzBuildMatch(f *testing.F) {
	f.Add("a b c", "b c a a", "a b", "b")
	f.Add("", "x", "x y", "y")
	f.Fuzz(func(t *testing.T, t1, b1, t2, b2 string) {
		// Terms as the analyzer makes them: it drops control characters,
		// so that no term starts with a title key's prefix.
		clean := func(s string) string {
			return strings.Join(strings.Fields(strings.ReplaceAll(s, titlePrefix, " ")), " ")
		}
		docs := []Doc{{ID: 1, Title: clean(t1), Body: clean(b1)}, {ID: 2, Title: clean(t2), Body: clean(b2)}}
		seg := Build(docs)
		var merged []Block
		if _, err := Merge([]BlockSource{source(seg.Blocks), source(seg.Blocks)}, 2, func(i int, d int64) int64 {
			if int64(i+1) == d { // doc 1 from the first copy, doc 2 from the second
				return d
			}
			return 0
		}, func(i int, d int64) int32 { return seg.Lens[d-1] }, func(b Block) error { merged = append(merged, b); return nil }); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			for _, w := range strings.Fields(d.Title + " " + d.Body) {
				terms := []Term{{Words: []string{w}}}
				var want []int64
				for _, e := range docs {
					if slices.Contains(strings.Fields(e.Title+" "+e.Body), w) {
						want = append(want, e.ID)
					}
				}
				for _, blocks := range [][]Block{seg.Blocks, merged} {
					hits, err := Match(memReader{blocks}, terms, false)
					if err != nil {
						t.Fatal(err)
					}
					if got := hitDocs(hits); !slices.Equal(got, want) {
						t.Fatalf("%q: got %v, want %v", w, got, want)
					}
				}
			}
		}
	})
}

// A corrupt block read by a query (words, a phrase, a prefix) or by a
// merge yields an error or values, never a panic or a runaway allocation.
func FuzzCorruptMatchMerge(f *testing.F) {
	seg := Build([]Doc{{ID: 1, Title: "a b", Body: "c d c e"}, {ID: 3, Title: "c", Body: "a c d a"}})
	for _, b := range seg.Blocks {
		f.Add(b.Data)
	}
	f.Add([]byte{1, 1, 'c', 5, 2, 1, 0x7f, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := memReader{[]Block{{First: "", Data: data}}}
		for _, q := range [][]Term{
			{{Words: []string{"c"}}},
			{{Words: []string{"c", "d"}}},
			{{Words: []string{"a", "c"}}, {Words: []string{"c"}, Prefix: true}},
			{{Words: []string{"c", "c", "c"}}},
		} {
			for _, title := range []bool{false, true} {
				hits, err := Match(r, q, title)
				if err == nil {
					for _, h := range hits {
						if len(h.TF) != len(Words(q)) {
							t.Fatalf("hit %+v for %d words", h, len(Words(q)))
						}
					}
				}
			}
		}
		_, _ = Merge([]BlockSource{source([]Block{{Data: data}}), source(seg.Blocks)}, 3, func(i int, d int64) int64 {
			if d >= 1 && d <= 3 {
				return d
			}
			return 0
		}, func(i int, d int64) int32 {
			if d >= 1 && d <= 3 {
				return 5
			}
			return 0
		}, func(Block) error { return nil })
	})
}
