package store

import (
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

func TestSearchTerms(t *testing.T) {
	for q, want := range map[string][]string{
		`  위키  "quoted" Foo foo a b c d e f g h i j `: {"위키", "quoted", "Foo", "a", "b", "c", "d", "e"},
		`"quick  brown fox" jumps`:                    {"quick brown fox", "jumps"},
		`say "hello`:                                  {"say", `"hello`},
		`hello" "" "  " x"y`:                          {`hello"`, `x"y`},
		`"a b"c`:                                      {"a b", "c"},
	} {
		if got := SearchTerms(q); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("SearchTerms(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestSnippet(t *testing.T) {
	m := func(s string) string {
		s = strings.ReplaceAll(s, wiki.MarkStart, "[")
		return strings.ReplaceAll(s, wiki.MarkEnd, "]")
	}
	for _, tc := range []struct {
		name, text string
		terms      []string
		want       string
	}{
		{"marks every match, folding case", "Tomato and tomato", []string{"TOMATO"}, "[Tomato] and [tomato]"},
		{"marks Korean inside a word", "위키는 누구나", []string{"위키"}, "[위키]는 누구나"},
		{"prefers the longest term at a position", "abcdef", []string{"abc", "abcde"}, "[abcde]f"},
		{"returns the start without a match", "no match here", []string{"zzz"}, "no match here"},
		{"collapses white space", "a\n\n  b", nil, "a b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m(Snippet(tc.text, tc.terms)); got != tc.want {
				t.Fatalf("snippet = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("windows long text around the first match", func(t *testing.T) {
		text := strings.Repeat("lorem ipsum ", 100) + "needle " + strings.Repeat("dolor sit ", 100)
		got := m(Snippet(text, []string{"needle"}))
		if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "[needle]") {
			t.Fatalf("snippet = %q", got)
		}
		if n := len([]rune(got)); n > SnippetRunes+4 {
			t.Fatalf("snippet is %d characters", n)
		}
	})
}
