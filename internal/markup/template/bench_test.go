package template

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkFiveThousandTransclusions expands a page of 5,000 calls of one
// small template (which calls another and a parser function) with ten
// distinct arguments: the memo makes all but ten of them a lookup.
func BenchmarkFiveThousandTransclusions(b *testing.B) {
	p := pages{
		"Template:Row":  "| {{{1}}} | {{Cell|{{{2|x}}}}} | {{#if:{{{3|}}}|yes|no}} |\n",
		"Template:Cell": "**{{{1}}}**",
	}
	var src strings.Builder
	src.WriteString("| a | b | c |\n|---|---|---|\n")
	for i := range 5000 {
		fmt.Fprintf(&src, "{{Row|%d|v%d}}\n", i%10, i%10)
	}
	text := src.String()
	load := p.loader(nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := Expand(ctx, text, testPage, load, keepMacros, Limits{})
		if err != nil || res.Errors != 0 || len(res.Templates) != 2 {
			b.Fatalf("Expand: %v, %d errors, templates %q", err, res.Errors, res.Templates)
		}
	}
}

// BenchmarkDistinctTransclusions is the same page with 5,000 distinct
// arguments: every call is expanded.
func BenchmarkDistinctTransclusions(b *testing.B) {
	p := pages{
		"Template:Row":  "| {{{1}}} | {{Cell|{{{2|x}}}}} | {{#if:{{{3|}}}|yes|no}} |\n",
		"Template:Cell": "**{{{1}}}**",
	}
	var src strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&src, "{{Row|%d|v%d}}\n", i, i)
	}
	text := src.String()
	load := p.loader(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Expand(context.Background(), text, testPage, load, keepMacros, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorstCaseNodes spends the whole node budget on calls that
// cannot be memoized, to see what the default limit costs.
func BenchmarkWorstCaseNodes(b *testing.B) {
	p := pages{"Template:N": "{{#if:{{{1}}}|{{{1}}}}}"}
	var src strings.Builder
	for i := 0; src.Len() < 2<<20; i++ {
		fmt.Fprintf(&src, "{{N|%d}}", i)
	}
	text := src.String()
	load := p.loader(nil)
	b.ReportAllocs()
	for b.Loop() {
		res, err := Expand(context.Background(), text, testPage, load, nil, Limits{})
		if err != nil || !strings.Contains(res.Text, "node count limit") {
			b.Fatalf("Expand: %v, node limit not reached", err)
		}
	}
}
