package render

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// DefaultTimeout is how much CPU time a render may take before it gives up
// and shows the page as plain text (WithTimeout changes it). Every input shape
// known to be slow is bounded by the parsers themselves (limits.go,
// links.go, delimiters.go, linkref.go) to well under a second for a page
// of the largest size allowed; the timeout is the net under the shapes
// nobody has found yet, so that no page can hold a worker for minutes.
const DefaultTimeout = 3 * time.Second

// WithTimeout sets the render time limit; 0 or less means none.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithHighlightBudget sets how long one render may spend highlighting code
// (default 500 ms of wall time); blocks past it stay plain (Result.Partial).
func WithHighlightBudget(d time.Duration) Option {
	return func(o *options) { o.highlightBudget = d }
}

// budget is one render's time limit, checked at the parsers' check points
// (most inline parsers, the container parsers, paragraph transformers, the
// delimiter matching and the walker). Reading the clock every time would
// cost more than some of the steps, so it is read every checkEvery steps.
// The clock is the render's CPU time where it can be read (cpuclock_*.go).
type budget struct {
	ctx      context.Context
	now      func() time.Duration
	deadline time.Duration // on now's clock; 0: none
	steps    int
}

// wallClock is a clock of the time since it was made.
func wallClock() (now func() time.Duration, unlock func()) {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }, func() {}
}

const checkEvery = 256

var budgetKey = parser.NewContextKey()

// errTimeout is the panic value that ends a render over its time limit.
var errTimeout = errors.New("render: time limit reached")

// stopRender is the panic value that ends a render whose context is done.
type stopRender struct{ err error }

func (b *budget) check() {
	if b == nil {
		return
	}
	if b.steps++; b.steps < checkEvery {
		return
	}
	b.steps = 0
	if err := b.ctx.Err(); err != nil {
		panic(stopRender{err})
	}
	if b.deadline > 0 && b.now() > b.deadline {
		panic(errTimeout)
	}
}

// check is a check point inside the parser.
func check(pc parser.Context) {
	if b, ok := pc.Get(budgetKey).(*budget); ok {
		b.check()
	}
}

// timedOut renders src as escaped plain text under a notice: what a page
// whose render ran out of time shows.
func timedOut(src []byte) string {
	return plainPage("<strong>This page took too long to render, so it is shown as plain text.</strong> "+
		"Editors: simplify its markup (deeply nested brackets, emphasis or lists are the usual cause) or split it into smaller pages.", src, "")
}

// plainPage is what a page that cannot be shown as rendered shows: note
// (HTML) in a paragraph, text escaped in a pre, then after (HTML) if any.
func plainPage(note string, text []byte, after string) string {
	var b bytes.Buffer
	b.Grow(len(text) + len(text)/4 + len(note) + len(after) + 32)
	b.WriteString("<p>" + note + "</p>\n<pre>")
	canonEscape(bufWriter{&b}, text)
	b.WriteString("</pre>\n" + after)
	return b.String()
}

// checkPoint is an inline parser that never parses anything: it runs
// first on the characters the other inline parsers start at, to check the
// budget. (Only on those: a character no parser starts at is not a place
// where goldmark splits text, and a check point must not change the tree.)
type checkPoint struct{}

func (checkPoint) Trigger() []byte {
	// Not ' ': an inline parser at spaces makes goldmark cut the text at
	// every one, and plain words are read in linear time without checks.
	return []byte{'[', ']', '!', '<', '`', '*', '_', '~', '(', '{'}
}

func (checkPoint) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	check(pc)
	return nil
}

// pageWriter is the writer of one page's HTML. It remembers what the
// sanitizer made of each short piece of raw HTML: pages repeat the same
// tags (<br>, <kbd>, </kbd>), and each pass through the sanitizer costs a
// tokenizer and its 4 KB buffer (2.4 GB allocated for 2 MB of
// "<span><b><i>").
type pageWriter struct {
	bufWriter
	raw map[string][]byte
}

// Bounds of pageWriter's memory: the pieces remembered and their length.
const (
	maxMemoEntries = 4096
	maxMemoRaw     = 256
)
