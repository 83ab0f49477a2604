package render

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// Fenced code is highlighted when the page is rendered, so that a view of
// the cached page costs nothing more, with Chroma's lexers. The output is
// <span class="…"> around tokens, styled by the site's style sheet (light
// and dark): no inline styles, which the CSP and the sanitizer forbid.
//
// Chroma's lexers are regular expressions run by a backtracking engine:
// 150–400 KB a second (32 KiB of Go, C or Perl took 90–240 ms on a busy
// 2-core machine), and some inputs make a single match slow (each match
// gives up after 250 ms, but a token may try dozens).
// Hence the bounds: blocks larger than maxHighlightBlock, and whatever
// exceeds maxHighlightPage per page, are shown as plain code; and a page's
// highlighting runs against a deadline, after which the block at hand and
// the rest are plain. Tokenizing runs in its own goroutine so that the
// deadline holds even inside one slow match; a goroutine left behind stops
// at its next token, and while maxAbandoned of them are still running, no
// highlighting starts.
const (
	maxHighlightBlock = 32 << 10
	maxHighlightPage  = 32 << 10
	highlightBudget   = 500 * time.Millisecond
	maxAbandoned      = 2
)

// highlightAttr is the node attribute under which walker leaves the
// highlighted HTML of a fenced code block for renderFencedCodeBlock.
const highlightAttr = "wikid-highlight"

// fenceLanguage returns the language named by a fenced code block's info
// string, as GitHub and Pandoc read it: the first word, which ends at
// white space, a comma or a brace ("rust,ignore", "python {.numberLines}",
// "go title=x"); in an attribute block, the first class ("{.go}",
// "{#main .go}"), or a leading bare word as R Markdown and Quarto write
// it ("{r echo=FALSE}"). It returns nil when there is none.
func fenceLanguage(info []byte) []byte {
	info = util.TrimLeftSpace(info)
	if len(info) > 0 && info[0] == '{' {
		body := info[1:]
		if i := bytes.IndexByte(body, '}'); i >= 0 {
			body = body[:i]
		}
		words := bytes.FieldsFunc(body, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		for i, f := range words {
			switch {
			case f[0] == '.' && len(f) > 1:
				return f[1:]
			case i == 0 && f[0] != '.' && f[0] != '#' && bytes.IndexByte(f, '=') < 0:
				return f
			}
		}
		return nil
	}
	if end := bytes.IndexAny(info, " \t,{"); end >= 0 {
		info = info[:end]
	}
	if len(info) == 0 {
		return nil
	}
	return info
}

// codeLanguageOf is the language of a fenced code block, or nil.
func codeLanguageOf(n *ast.FencedCodeBlock, source []byte) []byte {
	if n.Info == nil {
		return nil
	}
	return fenceLanguage(n.Info.Segment.Value(source))
}

// lexerFor finds the lexer for a language name, alias or file extension
// ("go", "golang", "py", "sh", "yml"), any case; nil when there is none.
func lexerFor(lang string) chroma.Lexer { return lexerIndex()[strings.ToLower(lang)] }

// lexerIndex maps lower-case names, then aliases, then file extensions to
// lexers, so that a lookup is one map read (chroma's own Get falls back to
// matching every file pattern of every lexer). Plain text has no lexer,
// and neither have the languages whose lexers are not lazy (lazyLexer).
//
// A lexer may hand a part of its text to another it finds by name, a name
// written in the text itself (Gemtext's and Org's code blocks: chroma's
// UsingByGroup): the lazy lexers are registered anew in a registry of
// their own, which they look names up in, so that no text reaches the
// others that way either.
var lexerIndex = sync.OnceValue(func() map[string]chroma.Lexer {
	var all []chroma.Lexer
	lazy := chroma.NewLexerRegistry()
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		if lazyLexer(l) {
			all = append(all, lazy.Register(l))
		}
	}
	idx := map[string]chroma.Lexer{}
	for _, l := range all {
		idx[strings.ToLower(l.Config().Name)] = l
	}
	for _, l := range all {
		for _, a := range l.Config().Aliases {
			if a = strings.ToLower(a); idx[a] == nil {
				idx[a] = l
			}
		}
	}
	byExt := map[string]chroma.Lexer{}
	for _, l := range all {
		for _, f := range l.Config().Filenames {
			ext, ok := strings.CutPrefix(strings.ToLower(f), "*.")
			if !ok || strings.ContainsAny(ext, "*?[") {
				continue
			}
			if o := byExt[ext]; o == nil || l.Config().Priority > o.Config().Priority {
				byExt[ext] = l
			}
		}
	}
	for ext, l := range byExt {
		if idx[ext] == nil {
			idx[ext] = l
		}
	}
	for k, l := range idx {
		if l.Config().Name == "plaintext" {
			delete(idx, k)
		}
	}
	return idx
})

// lazyLexer reports whether l makes its tokens one by one as they are
// read, so that highlighting abandoned at its deadline stops at the next
// token: chroma's regular expression lexers, and those that rename their
// tokens. The others (templates in HTML such as ERB, PHTML and Svelte;
// Markdown; HTTP) tokenize the whole text before the first token, at a
// cost quadratic in it for some inputs: a goroutine abandoned on 32 KB
// of PHTML burnt 27 s of CPU the render's clock never saw.
func lazyLexer(l chroma.Lexer) bool {
	if _, ok := l.(*chroma.RegexLexer); ok {
		return true
	}
	return fmt.Sprintf("%T", l) == "*chroma.remappingLexer"
}

// tokenClass is the class written for a token: Pygments' short names,
// grouped to what the style sheet colours. Plain names, punctuation and
// operators, the most frequent tokens, get none and stay unwrapped.
func tokenClass(t chroma.TokenType) string {
	switch t {
	case chroma.KeywordConstant, chroma.KeywordPseudo:
		return "kc"
	case chroma.OperatorWord:
		return "k"
	case chroma.NameBuiltin, chroma.NameBuiltinPseudo:
		return "nb"
	case chroma.NameFunction, chroma.NameFunctionMagic:
		return "nf"
	case chroma.NameDecorator:
		return "nd"
	case chroma.NameClass, chroma.NameException:
		return "nc"
	case chroma.NameConstant:
		return "no"
	case chroma.NameTag:
		return "nt"
	case chroma.NameAttribute:
		return "na"
	case chroma.NameVariable, chroma.NameVariableClass, chroma.NameVariableGlobal,
		chroma.NameVariableInstance, chroma.NameVariableMagic:
		return "nv"
	case chroma.NameLabel:
		return "nl"
	case chroma.NameEntity:
		return "ni"
	case chroma.LiteralStringEscape, chroma.LiteralStringInterpol:
		return "se"
	case chroma.LiteralStringRegex:
		return "sr"
	case chroma.LiteralStringSymbol:
		return "ss"
	case chroma.LiteralDate:
		return "m"
	case chroma.CommentPreproc, chroma.CommentPreprocFile:
		return "cp"
	case chroma.GenericDeleted:
		return "gd"
	case chroma.GenericInserted:
		return "gi"
	case chroma.GenericHeading:
		return "gh"
	case chroma.GenericSubheading:
		return "gu"
	case chroma.GenericEmph:
		return "ge"
	case chroma.GenericStrong:
		return "gs"
	case chroma.GenericPrompt:
		return "gp"
	case chroma.GenericOutput:
		return "go"
	case chroma.GenericError, chroma.GenericTraceback:
		return "gr"
	}
	switch t.SubCategory() {
	case chroma.LiteralString:
		return "s"
	case chroma.LiteralNumber:
		return "m"
	}
	switch t.Category() {
	case chroma.Keyword:
		return "k"
	case chroma.Comment:
		return "c"
	}
	return ""
}

// tokenClasses lists every class tokenClass returns, for the policy.
var tokenClasses = []string{"k", "kc", "nb", "nf", "nd", "nc", "no", "nt", "na", "nv", "nl", "ni",
	"s", "se", "sr", "ss", "m", "c", "cp", "gd", "gi", "gh", "gu", "ge", "gs", "gp", "go", "gr"}

// tokenClassRule is the policy's rule for the class of <span>.
func tokenClassRule() *regexp.Regexp {
	cs := append([]string(nil), tokenClasses...)
	sort.Strings(cs)
	return regexp.MustCompile(`^(?:` + strings.Join(cs, "|") + `)$`)
}

// highlighter highlights the code blocks of one page within its budgets.
type highlighter struct {
	started  bool
	left     int           // bytes that may still be highlighted
	budget   time.Duration // highlightBudget unless set (tests)
	deadline time.Time
	// cut: a block was left plain because the deadline passed. How far
	// highlighting gets in time depends on the machine's load, so such
	// a render is not kept for good (Result.Partial).
	cut bool
}

// abandoned counts tokenizing goroutines left running past a deadline.
var abandoned atomic.Int32

// highlight returns code (the lines of a block) highlighted as lang, in
// canonical form, or false when it is to be shown plain.
func (h *highlighter) highlight(lang []byte, code []byte) (string, bool) {
	if len(lang) == 0 || len(code) == 0 || len(code) > maxHighlightBlock {
		return "", false
	}
	l := lexerFor(string(lang))
	if l == nil {
		return "", false
	}
	return h.run(l, code)
}

func (h *highlighter) run(l chroma.Lexer, code []byte) (string, bool) {
	if !h.started {
		if h.budget == 0 {
			h.budget = highlightBudget
		}
		h.started, h.left, h.deadline = true, maxHighlightPage, time.Now().Add(h.budget)
	}
	if len(code) > h.left || abandoned.Load() >= maxAbandoned {
		return "", false
	}
	wait := time.Until(h.deadline)
	if wait <= 0 {
		h.cut = true
		return "", false
	}
	h.left -= len(code)
	t := &tokenizing{done: make(chan struct{})}
	go t.run(l, string(code))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-t.done:
		return t.html, t.ok
	case <-timer.C:
		if t.abandon() {
			h.left, h.cut = 0, true
			return "", false
		}
		<-t.done
		return t.html, t.ok
	}
}

// tokenizing is one block being tokenized in its own goroutine.
type tokenizing struct {
	done chan struct{}
	stop atomic.Bool
	html string
	ok   bool

	mu       sync.Mutex
	finished bool
	gaveUp   bool
}

// abandon gives up on t unless it has finished; it reports whether it did.
func (t *tokenizing) abandon() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		return false
	}
	t.gaveUp = true
	t.stop.Store(true)
	abandoned.Add(1)
	return true
}

func (t *tokenizing) run(l chroma.Lexer, code string) {
	defer func() {
		if recover() != nil { // a lexer bug must not take the server down
			t.html, t.ok = "", false
		}
		t.mu.Lock()
		t.finished = true
		if t.gaveUp {
			abandoned.Add(-1)
		}
		t.mu.Unlock()
		close(t.done)
	}()
	t.html, t.ok = tokenize(l, code, &t.stop)
}

// tokenize writes code as spans of classed tokens. The tokens must add up
// to code exactly, or it reports false (a lexer that rewrote the text).
func tokenize(l chroma.Lexer, code string, stop *atomic.Bool) (string, bool) {
	code = normalizeNewlines(code)
	lexed := code
	if !strings.HasSuffix(lexed, "\n") {
		lexed += "\n" // lexers expect it; it is not written
	}
	it, err := l.Tokenise(nil, lexed)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(code) * 2)
	w := stringsWriter{&b}
	write := func(class string, from, to int) {
		to = min(to, len(code))
		if from >= to {
			return
		}
		if class != "" {
			b.WriteString(`<span class="` + class + `">`)
		}
		canonEscapeString(w, code[from:to])
		if class != "" {
			b.WriteString("</span>")
		}
	}
	// A run is code[start:end] of one class, end being where its last
	// token that is not white space ends. White space between two tokens
	// of a class stays in their run ("// a comment" is one span); between
	// two classes it is written bare.
	class, start, end, pos := "", 0, 0, 0
	for tok := it(); tok != chroma.EOF; tok = it() {
		if stop.Load() {
			return "", false
		}
		v := tok.Value
		if !strings.HasPrefix(lexed[pos:], v) {
			return "", false
		}
		if strings.TrimSpace(v) == "" {
			pos += len(v)
			continue
		}
		if c := tokenClass(tok.Type); c != class {
			write(class, start, end)
			write("", end, pos)
			class, start = c, pos
		}
		pos += len(v)
		end = pos
	}
	if pos != len(lexed) {
		return "", false
	}
	write(class, start, end)
	write("", end, pos)
	return b.String(), true
}

// normalizeNewlines turns CR LF and CR into LF, as the canonical form does.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
