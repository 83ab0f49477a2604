package render

import (
	"context"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/render/pathological"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// angleInAngle matches a "<" that a "<" opened before any ">".
var angleInAngle = regexp.MustCompile(`<(?:\\.|[^<>\\\n])*<`)

// withGoldmarkParsers builds the renderer with goldmark's own parsers.
func withGoldmarkParsers() Option {
	return func(o *options) { o.goldmarkParsers, o.goldmarkStrike = true, goldmarkStrikethrough{} }
}

// sameAsGoldmark checks that Wikid's linear parsers render src as
// goldmark's own do, except where the linear ones depart from goldmark on
// purpose (links.go): a "<" inside <…> ends a destination, bare
// destinations nest parentheses at most 32 deep.
func sameAsGoldmark(tb testing.TB, linear, stock *Renderer, src string) {
	tb.Helper()
	ctx := context.Background()
	a, err := linear.Render(ctx, src, nil)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := stock.Render(ctx, src, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if a.HTML == b.HTML {
		return
	}
	if angleInAngle.MatchString(src) || strings.Count(src, "(") > maxDestinationParens {
		return // the departures above
	}
	tb.Errorf("linear parsers render %q as\n%s\ngoldmark's as\n%s", src, a.HTML, b.HTML)
}

func FuzzLinearParsers(f *testing.F) {
	for _, s := range []string{
		"*a **b** c*", "***a*** __b__ _c_", "*a_ *a_ *a_", "a**b c* c* c*", "~~a~~ ~b~ ~~c~",
		"[a](b) [c][d] [e]\n\n[d]: /u 'title'\n[e]: <x y>", "[a [b](c) d](e)", "![a [b](c)](d)",
		"*a [b* c](d) e*", "[a]: u\n'title' x\n[b]: v", "[a](<b) [c](d (e) f)", "[[Foo]] *[[Bar|b]]* {{PageCount}}",
		"www.example.org [www.x.org](u) *http://a.b/c*", "[a\nb]: /u\n\n[a b]", "\t- [a]:\n\t  b\n\t  'c'",
	} {
		f.Add(s)
	}
	linear, stock := New(), New(withGoldmarkParsers())
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		sameAsGoldmark(t, linear, stock, src)
	})
}

// TestLinearParsersMatchGoldmark renders the golden documents and every
// pathological shape (small: goldmark's parsers are quadratic on them) both
// ways.
func TestLinearParsersMatchGoldmark(t *testing.T) {
	linear, stock := New(), New(withGoldmarkParsers())
	files, _ := filepath.Glob("testdata/*.md")
	for _, in := range files {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		sameAsGoldmark(t, linear, stock, string(b))
	}
	for _, s := range pathological.Shapes() {
		for _, size := range []int{64, 300, 2000} {
			sameAsGoldmark(t, linear, stock, s.Gen(size))
		}
	}
}

// FuzzPlainFragment checks cleanURL's shortcut for fragments against the
// full parse.
func FuzzPlainFragment(f *testing.F) {
	for _, s := range []string{"#a", "#", "#%", "#%4", "#%41", "#%e2%82%ac_x", "#A-b.c~d_9", "#a b", "#a%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !plainFragment(raw) {
			return
		}
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.String() != raw {
			t.Fatalf("plainFragment(%q) but url.Parse gives %v, %v", raw, u, err)
		}
	})
}

// goldmarkStrikethrough is strikethrough on goldmark's own delimiter list,
// for the renderer that uses goldmark's parsers.
type goldmarkStrikethrough struct{}

func (goldmarkStrikethrough) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(goldmarkStrikeParser{}, 500)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(extension.NewStrikethroughHTMLRenderer(), 500)))
}

type goldmarkStrikeParser struct{}

func (goldmarkStrikeParser) Trigger() []byte { return []byte{'~'} }

func (goldmarkStrikeParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 1, tildes{})
	if d == nil || d.OriginalLength > 2 || before == '~' {
		return nil
	}
	d.Segment = segment.WithStop(segment.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	pc.PushDelimiter(d)
	return d
}

// FuzzNoAutolinks checks the parses without fastLinkify: autolinks says
// autolinkNone of no source in which linkify's gate (mayLink) lets a word
// through, and every source renders as with fastLinkify, which cuts its
// text at every space: without linkify when autolinks says there is
// nothing, with schemeLinkify when there is no '@'.
func FuzzNoAutolinks(f *testing.F) {
	for _, s := range []string{
		"plain words *and* [[Links]]\n\n- a list\n- b  \n  c\\\nd", "a@b.c", "see HTTP://x.y or www.a.b", "ftp:x", "wWw.",
		"| a | b |\n|---|---|\n| c `d` | e |", "[a b](c 'd e') <span> x </span>\n\n    code  here", "Term\n: its definition [^1]\n\n[^1]: a note",
		"see http://x.y/z and (https://a.b) *www.c.d* _ftp://e.f_ ~http://g.h~", "http://a.b at the start\nwww.c.d\n  (www.e.f)\n\tftp://g.h",
		"\\(http://x.y \\\\(http://x.y \\*www.a.b a\\ http://c.d", "[a http://x.y](u) `http://x.y` <http://x.y> <a href=http://x.y>",
		"~~http://x.y~~ **www.a.b** __http://c.d__", "xhttp://a.b wwww.c.d HTTP://A.B https:x www. http://",
		"| http://a.b | www.c.d |\n|---|---|\n| x http://e.f | y |", "- http://a.b\n- www.c.d\n\n> http://e.f\n\n1. (www.g.h)",
		"http://a.b/c_d_e?f=g&amp;h (http://x.y/(z)) http://p.q/r.", "# http://a.b\n\nTitle\n===\nwww.c.d: http://e.f:80/",
		"``http://a.b `x`www.c.d [[A]]http://e.f [^1]www.g.h\n\n[^1]: n", "*a*http://x.y [a]http://c.d ![b](c)www.e.f",
		// Escapes goldmark carries over a link and a line's end, and
		// white space at the end of a heading.
		"x\\ http://a.b\\[[A]]", "x\\ http://a.com\\*b*", "x\\ http://a.com\\(http://b.com", "a\\  \n\\(http://b.c",
		"C:\\  \nhttp://a.b\\_x_", "a\\\\\\\n*\\(http://b.com", "\\\\\\\n\\(www.",
		"Some intro text  \n| a | b |\n|---|---|\n| 1 | 2 |\n---\n", "Intro:\t\t\n| a |\n|---|\n===\nmore http://a.b",
	} {
		f.Add(s)
	}
	r, always := New(), New(func(o *options) { o.alwaysAutolinks = true })
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		b := []byte(src)
		if autolinks(b) == autolinkNone {
			for i := range b {
				if mayLink(b[i:]) {
					t.Fatalf("autolinks(%q) is none, but mayLink holds at %d", src, i)
				}
			}
		}
		sameAsLinkifyEverywhere(t, r, always, src)
	})
}

// sameAsLinkifyEverywhere checks that r renders src as always does, which
// parses every source with fastLinkify: the same HTML, links and plain
// text (but for white space).
func sameAsLinkifyEverywhere(tb testing.TB, r, always *Renderer, src string) {
	tb.Helper()
	a, err := r.Render(context.Background(), src, nil)
	if err != nil {
		tb.Fatal(err)
	}
	want, err := always.Render(context.Background(), src, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if a.HTML != want.HTML || !slices.Equal(a.Links.Links, want.Links.Links) {
		tb.Fatalf("%q renders as\n%s\nwith linkify at every space as\n%s", src, a.HTML, want.HTML)
	}
	// The plain texts may differ in white space at the end of a line:
	// cut at a space and then a tab there, goldmark kept the space.
	if a, b := r.PlainText(src), always.PlainText(src); strings.Join(strings.Fields(a), " ") != strings.Join(strings.Fields(b), " ") {
		tb.Fatalf("%q: plain text %q, with linkify at every space %q", src, a, b)
	}
}

// TestNoAutolinksSameHTML renders the golden documents and the pathological
// shapes that do without linkify at every space as with it.
func TestNoAutolinksSameHTML(t *testing.T) {
	r, always := New(), New(func(o *options) { o.alwaysAutolinks = true })
	files, _ := filepath.Glob("testdata/*.md")
	var srcs []string
	for _, in := range files {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	for _, s := range pathological.Shapes() {
		srcs = append(srcs, s.Gen(300))
	}
	ran := 0
	for _, src := range srcs {
		if autolinks([]byte(src)) == autolinkAll {
			continue
		}
		ran++
		sameAsLinkifyEverywhere(t, r, always, src)
	}
	if ran < 10 {
		t.Fatalf("only %d of %d documents do without linkify at every space", ran, len(srcs))
	}
}

// TestSchemeLinkifyPieces renders documents made of the pieces that
// matter to linkify (schemes, its triggers, escapes, the nodes after which
// goldmark reads afresh) as with linkify at every space, WIKID_PIECES
// of them (default 3000), the same ones on every run.
func TestSchemeLinkifyPieces(t *testing.T) {
	pieces := []string{"http:", "https:", "ftp:", "www.", "//", "a", "b.c", "x/y", " ", " ", "\n", "\n\n", "*", "_", "~", "~~", "(", ")",
		"[", "]", "`", "``", "\\", "<", ">", "[[A]]", "{{B}}", "!", "[^1]", "# ", "- ", "> ", "| ", "\t", ".", ":", "&amp;", ";", "?", "'", "\"", "    ", "1. "}
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("WIKID_PIECES")); err == nil {
		n = v
	}
	r, always := New(), New(func(o *options) { o.alwaysAutolinks = true })
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range n {
		b.Reset()
		for range 3 + rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if rng.IntN(4) == 0 {
			b.WriteString("\n\n[^1]: a note")
		}
		sameAsLinkifyEverywhere(t, r, always, b.String())
	}
}
