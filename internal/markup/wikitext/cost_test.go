package wikitext

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/render"
)

// maxPage is the largest page the wiki stores (max_page_bytes).
const maxPage = 2 << 20

// fillPage repeats unit up to the largest page (an eighth of it under the
// race detector).
func fillPage(unit string) string {
	n := maxPage
	if race.Enabled {
		// The race detector makes a render five to ten times slower, and
		// the timeout then cuts it before its output is checked. .ci/run
		// renders the page limit without the detector.
		n /= 8
	}
	return strings.Repeat(unit, n/len(unit))
}

// TestFollowNotesLinear: text that follows another note is added to it; many
// of them must cost linear memory, not a copy of the note per follower.
func TestFollowNotesLinear(t *testing.T) {
	src := "<ref name=a>x</ref>" + strings.Repeat("<ref follow=a>y</ref>", 40000)
	r := New(WithTimeout(30 * time.Second))
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	res := mustRender(t, r, src, render.Options{})
	runtime.ReadMemStats(&m1)
	if res.TimedOut {
		t.Fatal("timed out")
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 200*uint64(len(src))+64<<20 {
		t.Errorf("%d MB allocated for %d bytes of source", alloc>>20, len(src))
	}
}

// TestCategoriesAmongTextLinear: a category takes the white space before
// it; many categories among text must not copy the text before each.
func TestCategoriesAmongTextLinear(t *testing.T) {
	src := strings.Repeat("text [[Category:C]]", 100000)
	r := New(WithTimeout(60 * time.Second))
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	res := mustRender(t, r, src, render.Options{})
	runtime.ReadMemStats(&m1)
	if res.TimedOut {
		t.Fatal("timed out")
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 200*uint64(len(src))+64<<20 {
		t.Errorf("%d MB allocated for %d bytes of source", alloc>>20, len(src))
	}
}

// TestReferencesErrorsLinear: a references list defining many notes never
// cited reports each; the reports must cost linear time and memory.
func TestReferencesErrorsLinear(t *testing.T) {
	for _, src := range []string{
		"<references>" + strings.Repeat("<ref name=a>x</ref>", 20000) + "</references>",
		"<ref>n</ref><references>" + strings.Repeat("<ref name=a>x</ref>", 20000) + "</references>",
	} {
		r := New(WithTimeout(60 * time.Second))
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := cpuTime()
		res := mustRender(t, r, src, render.Options{})
		d := cpuTime() - start
		runtime.ReadMemStats(&m1)
		if res.TimedOut || d > 10*time.Second && !race.Enabled {
			t.Errorf("took %v of CPU, timed out %v", d, res.TimedOut)
		}
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 200*uint64(len(src))+64<<20 {
			t.Errorf("%d MB allocated for %d bytes of source", alloc>>20, len(src))
		}
	}
}

// TestFosteredText: text standing in a table outside its cells is moved
// before the table by the balancing parse, which joins it to the text
// moved there before at a cost that grows with it (quadratic); such a page
// must time out within the limit.
func TestFosteredText(t *testing.T) {
	cases := map[string]string{
		"tables nested past the limit": fillPage("{|\n|a||b\n|-\n"),
		"text between rows":            "<table>" + fillPage("x<tr>"),
	}
	r := New()
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			start := cpuTime()
			res := mustRender(t, r, src, render.Options{})
			if d := cpuTime() - start; d > 3*render.DefaultTimeout && !race.Enabled {
				t.Errorf("took %v of CPU (timed out %v)", d, res.TimedOut)
			}
		})
	}
}

// TestNestedLinksLinear: a file embed's caption may hold links one level
// deep, so the search for an embed's end reads up to 4 KB. Pages at the
// limit made of embeds that never close, or that nest, must cost linear
// time to render, analyze and convert to Markdown (which reads every "[["
// that way), not 4 KB per "[[".
func TestNestedLinksLinear(t *testing.T) {
	cases := map[string]string{
		"unclosed embeds":       fillPage("[[File:a|"),
		"embeds in open embeds": fillPage("[[File:[[x"),
		"bracket runs":          fillPage("[[["),
		"open links":            fillPage("[[a|"),
	}
	r := New(WithTimeout(60 * time.Second))
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			start := cpuTime()
			res := mustRender(t, r, src, render.Options{})
			r.Analyze(src)
			if _, err := r.ToMarkdown(context.Background(), src); err != nil {
				t.Error(err)
			}
			// Linear, each takes 0.3 to 0.7 s; each "[[" reading 4 KB,
			// they took 3 to 9 s.
			if d := cpuTime() - start; d > 3*time.Second/2 && !race.Enabled || res.TimedOut {
				t.Errorf("took %v of CPU (timed out %v)", d, res.TimedOut)
			}
		})
	}
}

// TestScansLinear: shapes at the page limit that made a pass read the page
// again from each of its parts: every category looked up among those
// before it; a run of URLs the sanitizer refuses (a scheme it does not
// allow, an address that does not parse) read again from each protocol in
// it, in text and in headings; a table behind two million colons nested
// in as many lists.
func TestScansLinear(t *testing.T) {
	var cats strings.Builder
	for i := 0; cats.Len() < maxPage-32; i++ {
		fmt.Fprintf(&cats, "[[Category:C%d]]", i)
	}
	n := maxPage
	if race.Enabled {
		n /= 8
	}
	cases := map[string]string{
		"distinct categories":  cats.String()[:min(cats.Len(), n)],
		"refused schemes":      fillPage("ftp://a/"),
		"unparsed addresses":   fillPage("http://a%zz/"),
		"refused in a heading": "=" + fillPage("ftp://a/")[:n-16] + "=\n",
		"colons before table":  strings.Repeat(":", n-16) + "{|\n|a\n|}\n",
	}
	r := New(WithTimeout(20 * time.Second))
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			start := cpuTime()
			res := mustRender(t, r, src, render.Options{EditPage: "P"})
			r.Analyze(src)
			if _, err := r.Sections(src); err != nil {
				t.Error(err)
			}
			if _, err := r.MarkSections(src, "n"); err != nil {
				t.Error(err)
			}
			if _, err := r.ToMarkdown(context.Background(), src); err != nil {
				t.Error(err)
			}
			// Linear, each takes under half a second; before, from 10 s
			// (the colons) to half an hour (the refused URLs).
			if d := cpuTime() - start; d > 4*time.Second && !race.Enabled || res.TimedOut {
				t.Errorf("took %v of CPU (timed out %v)", d, res.TimedOut)
			}
			if len(res.HTML) > 8*len(src)+4096 {
				t.Errorf("%d bytes of HTML for %d of source", len(res.HTML), len(src))
			}
		})
	}
}

// A page nested deeper than the HTML parser goes shows its text under a
// note, with no tag of its own: end tags the parse could not match would
// close the skin's elements around the article.
func TestNestedTooDeep(t *testing.T) {
	r := New()
	for name, src := range map[string]string{
		"divs and stray end tags": strings.Repeat("<div>", 600) + "x" + strings.Repeat("</div>", 700) + "</td></table></div>y",
		"tables behind colons":    strings.Repeat(strings.Repeat(":", 64)+"{|\n|a\n", 5) + "</div></div></div>y",
	} {
		t.Run(name, func(t *testing.T) {
			res := mustRender(t, r, src, render.Options{})
			if !strings.Contains(res.HTML, "nests its elements more than 512 deep") || !strings.Contains(res.HTML, "y") {
				t.Fatalf("%.300q", res.HTML)
			}
			for _, tag := range []string{"</div>", "</table>", "</td>", "<div"} {
				if strings.Count(res.HTML, tag) > 0 {
					t.Errorf("%q in %.300q", tag, res.HTML)
				}
			}
		})
	}
}
