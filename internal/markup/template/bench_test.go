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

// exprPages returns Template:E, about 2 MiB of {{#expr:…}} or
// {{#ifexpr:…|}} calls (fn) of expressions of nearly 1,000 bytes, all
// alike or all distinct, and a 2 MiB page calling E with distinct
// arguments, so that no call of E is memoized.
func exprPages(fn string, distinct bool) (pages, string) {
	const size = 2 << 20
	unit := strings.Repeat("1e1*", 245) + "1e1"
	var t strings.Builder
	for i := 0; t.Len() < size-len(unit)-40; i++ {
		u := unit
		if distinct {
			u = fmt.Sprintf("%s+%d", unit, i)
		}
		if fn == "#expr" {
			fmt.Fprintf(&t, "{{#expr:%s}}", u)
		} else {
			fmt.Fprintf(&t, "{{#ifexpr:%s|}}", u)
		}
	}
	var src strings.Builder
	for i := 0; src.Len() < size-20; i++ {
		fmt.Fprintf(&src, "{{E|%d}}", i)
	}
	return pages{"Template:E": t.String()}, src.String()
}

// BenchmarkWorstCaseExpr expands a page of distinct calls of a template
// full of long expressions: each use of an expression counts against the
// nodes, and evaluating them against the expression limit.
func BenchmarkWorstCaseExpr(b *testing.B) {
	for _, fn := range []string{"#expr", "#ifexpr"} {
		for _, distinct := range []bool{false, true} {
			name := fn[1:] + "/alike"
			if distinct {
				name = fn[1:] + "/distinct"
			}
			b.Run(name, func(b *testing.B) {
				p, text := exprPages(fn, distinct)
				load := p.loader(nil)
				b.ReportAllocs()
				for b.Loop() {
					res, err := Expand(context.Background(), text, testPage, load, nil, Limits{})
					if err != nil || !strings.Contains(res.Text, "limit exceeded") {
						b.Fatalf("Expand: %v, no limit reached", err)
					}
				}
			})
		}
	}
}

// BenchmarkWorstCaseParse parses 2 MiB pages of braces that open pieces
// and parts and never close them (or close them once), the shapes that
// make the preprocessor allocate most.
func BenchmarkWorstCaseParse(b *testing.B) {
	const size = 2 << 20
	for name, text := range map[string]string{
		"{{[[":   strings.Repeat("{{[[", size/4),
		"{{a|":   strings.Repeat("{{a|", size/4),
		"{{a|||": "{{a" + strings.Repeat("|", size-5) + "}}",
		"{{a}}b": strings.Repeat("{{a}}b", size/6),
	} {
		b.Run(name, func(b *testing.B) {
			load := pages{}.loader(nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Expand(context.Background(), text, testPage, load, nil, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
