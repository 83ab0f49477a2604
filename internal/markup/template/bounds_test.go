package template

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// The tests here check bounds on the work and the memory of an expansion
// by counting (the expander's counters, allocations), not by timing: a
// hostile page or template must stay within a small multiple of its size
// and of the limits.

// allocated returns the bytes allocated while f runs (by the whole
// program, which runs little else meanwhile).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// expand runs an expansion and returns its output and the expander, whose
// counters the tests look at.
func expand(t testing.TB, p pages, src string, lim Limits) (string, *expander) {
	t.Helper()
	e := newExpander(context.Background(), src, testPage, p.loader(nil), keepMacros, lim.withDefaults())
	text, err := e.run(src)
	if err != nil {
		t.Fatal(err)
	}
	return text, e
}

// longExpr is an expression of 991 bytes (the longest is 1,000).
var longExpr = strings.Repeat("1+", 495) + "1"

func TestExpressionsCountAsWork(t *testing.T) {
	for _, call := range []string{"{{#expr:%s}}", "{{#ifexpr:%s|a|b}}"} {
		src := strings.Repeat(fmt.Sprintf(call, longExpr), 100)
		_, e := expand(t, pages{}, src, Limits{})
		// Every use counts, though the value is computed once.
		if want := 100 * len(longExpr); e.work < want {
			t.Errorf("%s: %d bytes of work for %d bytes of expressions", call, e.work, want)
		}
		if want := 100 * (len(longExpr) / exprNodeBytes); e.nodes < want {
			t.Errorf("%s: %d nodes, want at least %d", call, e.nodes, want)
		}
	}
}

// exprTemplate is a template of n distinct long expressions, and a page of
// calls of it with distinct arguments (which are not memoized).
func exprTemplate(n, calls int) (pages, string) {
	var tpl strings.Builder
	for i := range n {
		fmt.Fprintf(&tpl, "{{#ifexpr:%s+%d|}}", longExpr[:len(longExpr)-8], i)
	}
	var src strings.Builder
	for i := range calls {
		fmt.Fprintf(&src, "{{E|%d}}", i)
	}
	return pages{"Template:E": tpl.String()}, src.String()
}

func TestExpressionEvaluationIsBounded(t *testing.T) {
	t.Run("a template called with distinct arguments", func(t *testing.T) {
		// Unbounded, the 300 expressions of E would be evaluated for
		// each of the calls the node limit lets through, hundreds.
		p, src := exprTemplate(300, 2000)
		var text string
		allocs := testing.AllocsPerRun(1, func() { text, _ = expand(t, p, src, Limits{}) })
		if !strings.Contains(text, "limit exceeded") {
			t.Errorf("no limit reached: …%q", text[len(text)-200:])
		}
		// Each evaluation allocates (its stacks, its result); a remembered
		// value does not.
		if allocs > 20_000 {
			t.Errorf("%v allocations: expressions are evaluated again", allocs)
		}
	})
	t.Run("a page of distinct expressions", func(t *testing.T) {
		var src strings.Builder
		n := 0
		for ; src.Len() < DefaultExpr+100_000; n++ {
			fmt.Fprintf(&src, "{{#expr:%s+%d}}", longExpr[:len(longExpr)-8], n)
		}
		text, e := expand(t, pages{}, src.String(), Limits{})
		i := strings.Index(text, "Expression size limit exceeded")
		if i < 0 || e.errors != 1 {
			t.Fatalf("no expression limit box (%d errors)", e.errors)
		}
		// The expressions past the limit are left as written.
		if rest := text[i:]; strings.Count(rest, "{{#expr:") < n/20 {
			t.Errorf("%d expressions left as written of %d", strings.Count(rest, "{{#expr:"), n)
		}
	})
}

// TestRepeatedReadsCountAsWork checks that what the expander reads each
// time it visits a call is work: the name, the white space it trims and
// the text the keep function reads. A template with a long name or test,
// called with distinct arguments, reaches the work limit.
func TestRepeatedReadsCountAsWork(t *testing.T) {
	const long = 64 << 10
	for name, tpl := range map[string]string{
		"a long test":        "{{#if:" + strings.Repeat("a", long) + "|}}",
		"a long blank test":  "{{#if:" + strings.Repeat(" ", long) + "x|}}",
		"a long blank value": "{{#if:1|" + strings.Repeat(" ", long) + "}}",
		"long argument names": "{{Missing|" + strings.Repeat("a", long) + "=1|" +
			strings.Repeat("a", long) + "=2}}",
	} {
		t.Run(name, func(t *testing.T) {
			var src strings.Builder
			for i := range 2000 {
				fmt.Fprintf(&src, "{{N|%d}}", i)
			}
			text, e := expand(t, pages{"Template:N": tpl}, src.String(), Limits{})
			if !strings.Contains(text, "Expansion work limit exceeded") || e.work > e.workLimit+2*long {
				t.Errorf("%d bytes of work (limit %d), no work limit box", e.work, e.workLimit)
			}
		})
	}
}

// TestParseMemoryIsBounded parses the shapes that make the preprocessor
// allocate most, at the size of the largest page: what it builds is
// bounded by the node limit, and all the expansion allocates is a small
// multiple of the texts and PostExpand.
func TestParseMemoryIsBounded(t *testing.T) {
	const size = 2 << 20
	for _, c := range []struct {
		name, src string
		tpl       string // Template:T
		box       bool   // the generated node limit is reached
	}{
		{"unclosed calls and links", strings.Repeat("{{[[", size/4), "", true},
		{"unclosed calls with arguments", strings.Repeat("{{a|", size/4), "", true},
		{"one call of a million arguments", "{{a" + strings.Repeat("|", size-5) + "}}", "", true},
		{"a million named arguments", "{{a|" + strings.Repeat("=|", size/2-3) + "}}", "", true},
		{"calls", strings.Repeat("{{a}}b", size/6), "", false},
		{"calls in a page and a template", "{{T}}" + strings.Repeat("{{a}}b", size/6-1), strings.Repeat("{{a}}b", size/6), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := pages{}
			if c.tpl != "" {
				p["Template:T"] = c.tpl
			}
			var text string
			n := allocated(func() { text, _ = expand(t, p, c.src, Limits{}) })
			if bound := 20 * uint64(len(c.src)+len(c.tpl)+DefaultPostExpand); n > bound {
				t.Errorf("%d MB allocated, over %d MB", n>>20, bound>>20)
			}
			if box := strings.Contains(text, "Preprocessor generated node count limit exceeded"); box != c.box {
				t.Errorf("generated node limit box: %v, want %v", box, c.box)
			}
		})
	}
}
