package wikitext

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// TestOutputBounded: whatever the source, a render's HTML is at most a
// small multiple of it plus a constant, or the render times out cleanly.
// Short headings are the largest amplifier: an id, an anchor, an edit link
// with the page's name and a table of contents entry for four bytes.
func TestOutputBounded(t *testing.T) {
	page := wiki.Title(strings.Repeat("Pâge ", 40))
	cases := map[string]string{
		"headings":          fillPage("=a=\n"),
		"headings with toc": "__TOC__\n" + fillPage("==a==\n"),
		"named notes":       "<ref name=a>x</ref>" + fillPage("<ref name=a/>"),
		"notes":             fillPage("<ref>a</ref>"),
		"external links":    fillPage("[http://a]"),
		"files":             fillPage("[[File:a.png]]"),
	}
	r := New()
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			start := cpuTime()
			res, err := r.RenderWith(context.Background(), src, nil, render.Options{EditPage: page})
			d := cpuTime() - start
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut && len(res.HTML) > maxOutput(len(src)) {
				t.Errorf("%d bytes of HTML for %d of source", len(res.HTML), len(src))
			}
			if d > 3*render.DefaultTimeout && !race.Enabled {
				t.Errorf("took %v of CPU (timed out %v)", d, res.TimedOut)
			}
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 2<<30 {
				t.Errorf("%d MB allocated", alloc>>20)
			}
		})
	}
}
