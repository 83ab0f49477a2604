package diff

import (
	"reflect"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"words, spaces and punctuation split apart", "Hello,  world!", []string{"Hello", ",", "  ", "world", "!"}},
		{"digits and letters form one word", "abc123 x", []string{"abc123", " ", "x"}},
		{"accented letters stay in their word", "café naïve", []string{"café", " ", "naïve"}},
		{"each Chinese character is a word", "维基百科", []string{"维", "基", "百", "科"}},
		{"each Hangul syllable is a word", "위키 문서", []string{"위", "키", " ", "문", "서"}},
		{"Latin next to Han splits at the script change", "Go语言", []string{"Go", "语", "言"}},
		{"invalid UTF-8 survives as single bytes", "a\xffb", []string{"a", "\xff", "b"}},
		{"empty line has no tokens", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tokenize(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if strings.Join(got, "") != tt.in {
				t.Fatalf("tokens do not concatenate back to the input")
			}
		})
	}
}

func TestWordHighlights(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		wantOld  []Segment
		wantNew  []Segment
	}{
		{
			"one replaced word is the only highlight",
			"The quick brown fox", "The quick red fox",
			[]Segment{{Text: "The quick ", Changed: false}, {Text: "brown", Changed: true}, {Text: " fox", Changed: false}},
			[]Segment{{Text: "The quick ", Changed: false}, {Text: "red", Changed: true}, {Text: " fox", Changed: false}},
		},
		{
			"an inserted phrase is highlighted as one run",
			"A wiki page.", "A very nice wiki page.",
			[]Segment{{Text: "A wiki page.", Changed: false}},
			[]Segment{{Text: "A ", Changed: false}, {Text: "very nice ", Changed: true}, {Text: "wiki page.", Changed: false}},
		},
		{
			"changed punctuation is highlighted alone",
			"Hello, world.", "Hello, world!",
			[]Segment{{Text: "Hello, world", Changed: false}, {Text: ".", Changed: true}},
			[]Segment{{Text: "Hello, world", Changed: false}, {Text: "!", Changed: true}},
		},
		{
			"one changed Chinese character is highlighted alone",
			"维基百科是自由的", "维基百科是开放的",
			[]Segment{{Text: "维基百科是", Changed: false}, {Text: "自由", Changed: true}, {Text: "的", Changed: false}},
			[]Segment{{Text: "维基百科是", Changed: false}, {Text: "开放", Changed: true}, {Text: "的", Changed: false}},
		},
		{
			"a changed Korean particle is highlighted alone",
			"위키는 문서를 편집한다", "위키는 문서가 편집한다",
			[]Segment{{Text: "위키는 문서", Changed: false}, {Text: "를", Changed: true}, {Text: " 편집한다", Changed: false}},
			[]Segment{{Text: "위키는 문서", Changed: false}, {Text: "가", Changed: true}, {Text: " 편집한다", Changed: false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ow, nw, similar := words(tt.old, tt.new)
			if !similar {
				t.Errorf("lines not considered similar")
			}
			if !reflect.DeepEqual(ow, tt.wantOld) {
				t.Errorf("old side = %+v, want %+v", ow, tt.wantOld)
			}
			if !reflect.DeepEqual(nw, tt.wantNew) {
				t.Errorf("new side = %+v, want %+v", nw, tt.wantNew)
			}
		})
	}
}

func TestLines(t *testing.T) {
	t.Run("identical texts have no hunks", func(t *testing.T) {
		if h := Lines("a\nb\n", "a\nb\n"); h != nil {
			t.Fatalf("got %+v", h)
		}
	})
	t.Run("a missing final newline is not shown as a change", func(t *testing.T) {
		if h := Lines("a\nb\n", "a\nb"); h != nil {
			t.Fatalf("got %+v", h)
		}
	})
	t.Run("a changed line gets two lines of context and word highlights", func(t *testing.T) {
		a := "1\n2\n3\n4\n5\nold words here\n7\n8\n9\n10\n11\n"
		b := "1\n2\n3\n4\n5\nnew words here\n7\n8\n9\n10\n11\n"
		h := Lines(a, b)
		if len(h) != 1 {
			t.Fatalf("got %d hunks, want 1", len(h))
		}
		got := h[0]
		if got.OldStart != 4 || got.NewStart != 4 || got.OldLines != 5 || got.NewLines != 5 {
			t.Errorf("hunk header = %d,%d %d,%d; want 4,5 4,5", got.OldStart, got.OldLines, got.NewStart, got.NewLines)
		}
		var kinds []Kind
		for _, r := range got.Rows {
			kinds = append(kinds, r.Kind)
		}
		want := []Kind{Unchanged, Unchanged, Changed, Unchanged, Unchanged}
		if !reflect.DeepEqual(kinds, want) {
			t.Fatalf("kinds = %v, want %v", kinds, want)
		}
		c := got.Rows[2]
		if c.OldLine != 6 || c.NewLine != 6 || c.Old != "old words here" || c.New != "new words here" {
			t.Errorf("changed row = %+v", c)
		}
		if c.OldWords[0] != (Segment{Text: "old", Changed: true}) || c.NewWords[0] != (Segment{Text: "new", Changed: true}) {
			t.Errorf("word highlights = %+v / %+v", c.OldWords, c.NewWords)
		}
	})
	t.Run("distant changes make separate hunks and close ones share one", func(t *testing.T) {
		var lines []string
		for i := range 40 {
			lines = append(lines, strings.Repeat("x", i+1))
		}
		a := strings.Join(lines, "\n")
		edited := append([]string(nil), lines...)
		edited[2], edited[6], edited[30] = "A", "B", "C"
		h := Lines(a, strings.Join(edited, "\n"))
		if len(h) != 2 {
			t.Fatalf("got %d hunks, want 2", len(h))
		}
		if h[0].OldStart != 1 || h[0].OldLines != 9 || h[1].OldStart != 29 || h[1].OldLines != 5 {
			t.Errorf("hunks = %d,%d and %d,%d", h[0].OldStart, h[0].OldLines, h[1].OldStart, h[1].OldLines)
		}
	})
	t.Run("unrelated lines show as deleted and added, with line numbers", func(t *testing.T) {
		h := Lines("keep\nalpha beta\n", "keep\ngamma delta\nepsilon\n")
		var got []Row
		for _, r := range h[0].Rows {
			got = append(got, Row{Kind: r.Kind, OldLine: r.OldLine, NewLine: r.NewLine, Old: r.Old, New: r.New})
		}
		want := []Row{
			{Kind: Unchanged, OldLine: 1, NewLine: 1, Old: "keep", New: "keep"},
			{Kind: Deleted, OldLine: 2, Old: "alpha beta"},
			{Kind: Added, NewLine: 2, New: "gamma delta"},
			{Kind: Added, NewLine: 3, New: "epsilon"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("rows = %+v, want %+v", got, want)
		}
	})
}

func TestStat(t *testing.T) {
	tests := []struct {
		name           string
		a, b           string
		added, deleted int
	}{
		{"no change", "a\nb\n", "a\nb\n", 0, 0},
		{"one line edited counts once each way", "a\nb\nc\n", "a\nB\nc\n", 1, 1},
		{"a page created from nothing", "", "a\nb\nc", 3, 0},
		{"a page blanked", "a\nb\n", "", 0, 2},
		{"lines appended", "a\n", "a\nb\nc\n", 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			added, deleted := Stat(tt.a, tt.b)
			if added != tt.added || deleted != tt.deleted {
				t.Fatalf("Stat = +%d -%d, want +%d -%d", added, deleted, tt.added, tt.deleted)
			}
		})
	}
}
