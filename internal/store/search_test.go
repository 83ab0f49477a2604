package store

import (
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

func TestSnippet(t *testing.T) {
	m := func(s string) string {
		s = strings.ReplaceAll(s, wiki.MarkStart, "[")
		return strings.ReplaceAll(s, wiki.MarkEnd, "]")
	}
	for _, tc := range []struct {
		name, text string
		query      string
		want       string
	}{
		{"marks every match, folding case and accents", "Tomato and tomato, Café", "TOMATO cafe", "[Tomato] and [tomato], [Café]"},
		{"marks Korean inside a word", "위키는 누구나", "위키", "[위키]는 누구나"},
		{"marks a CJK word as one span", "東京都の人口", "東京都", "[東京都]の人口"},
		{"marks prefixes", "wiki wikis wok", "wik*", "[wiki] [wikis] wok"},
		{"folds apostrophes", "Don’t panic", "don't", "[Don’t] panic"},
		{"returns the start without a match", "no match here", "zzz", "no match here"},
		{"collapses white space", "a\n\n  b", "", "a b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m(Snippet(tc.text, ParseQuery(tc.query))); got != tc.want {
				t.Fatalf("snippet = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("windows long text around the first match", func(t *testing.T) {
		text := strings.Repeat("lorem ipsum ", 100) + "needle " + strings.Repeat("dolor sit ", 100)
		got := m(Snippet(text, ParseQuery("needle")))
		if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "[needle]") {
			t.Fatalf("snippet = %q", got)
		}
		if n := len([]rune(got)); n > SnippetRunes+4 {
			t.Fatalf("snippet is %d characters", n)
		}
	})
}
