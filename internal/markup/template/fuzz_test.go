package template

import (
	"context"
	"strings"
	"testing"
)

// fuzzPages are a few templates with parameters, loops, a redirect and
// doubling output.
var fuzzPages = func() pages {
	p := pages{
		"Template:P":     "<{{{1|d}}}|{{{x}}}>",
		"Template:Q":     "{{P|{{{1}}}|x={{{2|}}}}}<noinclude>doc</noinclude>",
		"Template:Loop":  "{{Loop2}}",
		"Template:Loop2": "{{#if:{{{1|}}}|{{Loop}}|{{Loop|1}}}}",
		"Template:R":     "#REDIRECT [[Template:P]]",
		"Template:S":     "{{#switch:{{{1}}}|a=A|b|c=C|#default={{P}}}}",
		"Template:E":     "{{#expr:{{{1|1}}}*2}}",
		"Template:Code":  "```\n{{{1}}}\n```\n`{{{1}}}`",
	}
	for k, v := range doubling(30) {
		p[k] = v
	}
	return p
}()

func FuzzExpand(f *testing.F) {
	for _, c := range seedCases() {
		f.Add(c)
	}
	lim := Limits{PostExpand: 1 << 14, Nodes: 20_000, Templates: 50}
	f.Fuzz(func(t *testing.T, src string) {
		run := func() Result {
			res, err := Expand(context.Background(), src, testPage, fuzzPages.loader(nil), keepMacros, lim)
			if err != nil {
				t.Fatalf("Expand(%q): %v", src, err)
			}
			return res
		}
		a, b := run(), run()
		// The work is bounded: each count within its limit (a charge
		// may pass it once, and stops the expansion), and what is
		// allocated a small multiple of the page and PostExpand.
		var e *expander
		n := allocated(func() {
			e = newExpander(context.Background(), src, testPage, fuzzPages.loader(nil), keepMacros, lim.withDefaults())
			if _, err := e.run(src); err != nil {
				t.Fatalf("Expand(%q): %v", src, err)
			}
		})
		l := e.lim
		if e.generated > l.Nodes+l.Nodes/2 || e.exprBytes > l.Expr+maxExpr+exprCost || e.work > 2*e.workLimit ||
			e.halt == running && (e.nodes > l.Nodes || e.exprBytes > l.Expr || e.work > e.workLimit) {
			t.Fatalf("Expand(%q): %d nodes, %d generated, %d bytes of expressions, %d of work (limit %d), halt %d",
				src, e.nodes, e.generated, e.exprBytes, e.work, e.workLimit, e.halt)
		}
		if bound := 32*uint64(len(src)+lim.PostExpand) + 64<<10; n > bound {
			t.Fatalf("Expand(%q): %d bytes allocated, over %d", src, n, bound)
		}
		if a.Text != b.Text || a.Errors != b.Errors || len(a.Templates) != len(b.Templates) {
			t.Fatalf("Expand(%q) is not deterministic:\n%q\n%q", src, a.Text, b.Text)
		}
		// The page's text (nowiki content grows when escaped), what
		// templates produce, and one error box.
		bound := len(src) + lim.PostExpand + 300
		if strings.Contains(strings.ToLower(src), "nowiki") {
			bound += 5 * len(src)
		}
		if len(a.Text) > bound {
			t.Fatalf("Expand(%q): %d bytes of output, over %d", src, len(a.Text), bound)
		}
		if len(a.Templates) > lim.Templates {
			t.Fatalf("Expand(%q): %d templates loaded", src, len(a.Templates))
		}
	})
}

// seedCases are the sources of the table tests and a few more.
func seedCases() []string {
	seeds := []string{
		"{{P}}{{Q|a|b}}{{Loop}}{{R|z}}{{S|b}}{{E|3}}{{Code|{{P}}}}{{L30}}",
		"{{Q|{{{1}}}|[[a|b=c]]}} {{#if:{{{1|}}}|{{L30}}|{{L2}}}}",
		"<nowiki>{{P}}</nowiki><includeonly>{{P}}</includeonly><onlyinclude>x</onlyinclude>",
		"{{{{{P}}}}} {{{{P}}}} {{P|{{ }} }} {{#switch:a|a|b=1}} {{#expr:(1+2)*3 mod 2}}",
		"{{allpages|prefix={{PAGENAME}}}} {{recentchanges}}",
	}
	for _, cs := range [][]expandCase{templateCases, includeCases, codeCases, magicCases, functionCases, unbalancedCases, loopCases} {
		for _, c := range cs {
			seeds = append(seeds, c.src)
		}
	}
	return seeds
}
