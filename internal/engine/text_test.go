package engine

import (
	"strings"
	"testing"
)

func TestNormalizeText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"white space only", " \n\t\n  ", ""},
		{"one newline at the end", "a", "a\n"},
		{"CR LF and CR become LF", "a\r\nb\rc\r\n", "a\nb\nc\n"},
		{"blank lines at the end go", "a\n\n  \n\t\n\n", "a\n"},
		{"the last line of a code block keeps its spaces", "```\ncode  \n```\n\n    x  \n    y\t", "```\ncode  \n```\n\n    x  \n    y\t\n"},
		{"the last line keeps its spaces before blank lines", "    code  \n\n \n", "    code  \n"},
		{"NUL and bytes that are not UTF-8 become U+FFFD", "a\x00b\xffc", "a\uFFFDb\uFFFDc\n"},
		{"a text that ends in its newline stays", "a\n\nb\n", "a\n\nb\n"},
		{"a blank line between lines stays", "a\n \nb\n\n", "a\n \nb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalizeText(tt.in); got != tt.want {
				t.Errorf("normalizeText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	// A text already in form is returned as it is, not copied: an
	// import normalizes every page.
	in := strings.Repeat("a line of text\n", 100)
	if n := testing.AllocsPerRun(10, func() { normalizeText(in) }); n != 0 {
		t.Errorf("normalizeText of a normalized text allocates %v times", n)
	}
}
