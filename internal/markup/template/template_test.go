package template

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// pages is an in-memory wiki: title → text.
type pages map[string]string

// loader returns a Loader over p that counts its calls per title.
func (p pages) loader(calls map[wiki.Title]int) Loader {
	return func(ctx context.Context, t wiki.Title) (string, bool, error) {
		if calls != nil {
			calls[t]++
		}
		text, ok := p[string(t)]
		return text, ok, nil
	}
}

// keepMacros keeps the renderer's dynamic macros.
func keepMacros(inner string) bool {
	name, _, _ := strings.Cut(inner, "|")
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "recentchanges", "pagecount", "allpages":
		return true
	}
	return false
}

// wikiPages are the templates most cases share.
var wikiPages = pages{
	"Template:Hello":       "Hello, {{{1|world}}}!\n",
	"Template:Hello there": "Hi there",
	"Template:Named":       "{{{a}}}-{{{b|B}}}",
	"Template:Pos":         "[{{{1}}}]",
	"Template:Empty":       "[{{{1|}}}]",
	"Template:Pass":        "{{Pos|{{{1}}}}}",
	"Template:Greet":       "{{Hello|{{{name}}}}}",
	"Template:Row":         "| {{{1}}} | {{{2}}} |\n",
	"Template:Doc":         "A<noinclude>doc</noinclude><includeonly>B</includeonly>",
	"Template:DocCase":     "A<NoInclude >doc</noINCLUDE><IncludeOnly>B</includeonly>",
	"Template:Only":        "x<onlyinclude>y</onlyinclude>z<onlyinclude>w</onlyinclude>",
	"Template:Self":        "a{{Self}}b",
	"Template:A":           "{{B}}",
	"Template:B":           "{{A}}",
	"Template:Alias":       "#REDIRECT [[Template:Hello]]",
	"Template:Where":       "{{PAGENAME}} on {{SITENAME}}",
	"Template:Sp":          "  s  ",
	"Template:Def":         "{{{1|{{Hello}}}}}",
	"Template:Dyn":         "{{ {{{1}}} }}",
	"Template:NL":          "a\n\n",
	"Template:CRLF":        "a\r\n",
	"Template:Fenced":      "```\n{{{1}}}\n```\n{{{1}}}",
	"Template:Lazy":        "{{#if:{{{1|}}}|{{Hello}}|{{Missing}}}}",
	"Main":                 "main text",
	"User:Bob":             "bob's page",
	"Category:Things":      "things",
}

type expandCase struct {
	name      string
	src       string
	want      string
	templates []string // nil: not checked
	errors    int
}

func runCases(t *testing.T, cases []expandCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustExpand(t, wikiPages, c.src, Limits{})
			if res.Text != c.want {
				t.Errorf("Expand(%q)\n got %q\nwant %q", c.src, res.Text, c.want)
			}
			if c.templates != nil {
				got := make([]string, len(res.Templates))
				for i, t := range res.Templates {
					got[i] = string(t)
				}
				if !slices.Equal(got, c.templates) {
					t.Errorf("Templates = %q, want %q", got, c.templates)
				}
			}
			if res.Errors != c.errors {
				t.Errorf("Errors = %d, want %d", res.Errors, c.errors)
			}
		})
	}
}

var testPage = Page{Title: wiki.MustTitle("Help:Foo bar"), SiteName: "Wikid"}

func mustExpand(t testing.TB, p pages, src string, lim Limits) Result {
	t.Helper()
	res, err := Expand(context.Background(), src, testPage, p.loader(nil), keepMacros, lim)
	if err != nil {
		t.Fatalf("Expand(%q): %v", src, err)
	}
	return res
}

var templateCases = []expandCase{
	{"text without templates is unchanged", "no *templates* here", "no *templates* here", []string{}, 0},
	{"a template is transcluded without its trailing newline", "<{{Hello}}>", "<Hello, world!>", []string{"Template:Hello"}, 0},
	{"the first letter of a name is case-insensitive", "{{hello|you}}", "Hello, you!", nil, 0},
	{"spaces and underscores in names are equivalent", "{{Hello_there}}/{{hello  there}}", "Hi there/Hi there", []string{"Template:Hello there"}, 0},
	{"named arguments are trimmed", "{{Named| a = x |b= y }}", "x-y", nil, 0},
	{"a missing named argument takes its default", "{{Named|a=x}}", "x-B", nil, 0},
	{"positional arguments keep their white space", "{{Pos| x }}", "[ x ]", nil, 0},
	{"an unknown parameter without default stays as written", "{{Pos}}", "[{{{1}}}]", nil, 0},
	{"an empty default", "{{Empty}}", "[]", nil, 0},
	{"a parameter passed on to an inner template", "{{Pass|v}}", "[v]", []string{"Template:Pass", "Template:Pos"}, 0},
	{"a named argument passed on as a positional one", "{{Greet|name=you}}", "Hello, you!", []string{"Template:Greet", "Template:Hello"}, 0},
	{"a later numbered argument overrides a positional one", "{{Pos|a|1=b}}", "[b]", nil, 0},
	{"a later positional argument overrides a numbered one", "{{Pos|1=b|a}}", "[a]", nil, 0},
	{"pipes inside links do not split arguments", "{{Pos|[[Link|label]]}}", "[[[Link|label]]]", nil, 0},
	{"an equals sign inside a link does not name an argument", "{{Pos|[[a|b=c]]}}", "[[[a|b=c]]]", nil, 0},
	{"an equals sign inside a nested call does not name an argument", "{{Pos|{{Named|a=1}}}}", "[1-B]", nil, 0},
	{"the first top-level equals sign names an argument, even after a nested call", "{{Named|{{{1|a}}}=x}}", "x-B", nil, 0},
	{"arguments are expanded in the caller, before the call", "{{Pos|{{Hello}}}}", "[Hello, world!]", []string{"Template:Hello", "Template:Pos"}, 0},
	{"a default can be a template, expanded only when used", "{{Def|x}}", "x", []string{"Template:Def"}, 0},
	{"a default template when the argument is missing", "{{Def}}", "Hello, world!", []string{"Template:Def", "Template:Hello"}, 0},
	{"a name built from a parameter", "{{Dyn|Hello}}", "Hello, world!", nil, 0},
	{"a parameter at the top level takes its default", "{{{1|d}}}{{{x}}}", "d{{{x}}}", nil, 0},
	{"one trailing newline of a template is dropped", "{{NL}}", "a\n", nil, 0},
	{"a trailing CRLF counts as one newline", "{{CRLF}}.", "a.", nil, 0},
	{"a template can produce a table row", "| a | b |\n|---|---|\n{{Row|x|y}}\n", "| a | b |\n|---|---|\n| x | y |\n", nil, 0},
	{"a colon names a main namespace page", "{{:Main}}", "main text", []string{"Main"}, 0},
	{"a known namespace names that page", "{{User:Bob}}", "bob's page", []string{"User:Bob"}, 0},
	{"Template: may be written out", "{{Template:hello}}", "Hello, world!", []string{"Template:Hello"}, 0},
	{"a Special page is not transcluded", "{{Special:RecentChanges}}", "{{Special:RecentChanges}}", []string{}, 0},
	{"an invalid name stays as written", "{{a<b}} {{}} {{#unknown:x}} {{a\nb}}", "{{a<b}} {{}} {{#unknown:x}} {{a\nb}}", []string{}, 0},
	{"an invalid name built by expansion is shown expanded", "{{a<{{PAGENAME}}|x}}", "{{a<Foo bar|x}}", []string{}, 0},
	{"a missing template becomes a red link and is listed", "x {{Nope|a}} y", "x [[Template:Nope]] y", []string{"Template:Nope"}, 0},
	{"a missing category page is linked, not categorized", "{{Category:None}}", "[[:Category:None]]", []string{"Category:None"}, 0},
	{"a redirecting template is followed once", "{{Alias|you}}", "Hello, you!", []string{"Template:Alias", "Template:Hello"}, 0},
	{"the renderer's macros are kept as written", "{{recentchanges}} {{ pagecount }} {{allpages|prefix=X}}", "{{recentchanges}} {{ pagecount }} {{allpages|prefix=X}}", []string{}, 0},
	{"a macro's argument may be built by templates", "{{allpages|prefix={{PAGENAME}}/}}", "{{allpages|prefix=Foo bar/}}", []string{}, 0},
	{"a template's output is not trimmed", "[{{Sp}}]", "[  s  ]", nil, 0},
}

func TestTemplatesAndParameters(t *testing.T) {
	runCases(t, templateCases)
}

var includeCases = []expandCase{
	{"noinclude and includeonly when transcluded", "{{Doc}}", "AB", nil, 0},
	{"include tags in any case", "{{DocCase}}", "AB", nil, 0},
	{"noinclude and includeonly on the page itself", wikiPages["Template:Doc"], "Adoc", nil, 0},
	{"onlyinclude when transcluded", "{{Only}}", "yw", nil, 0},
	{"onlyinclude on the page itself", wikiPages["Template:Only"], "xyzw", nil, 0},
	{"an unclosed includeonly hides the rest of the page", "a<includeonly>b{{Hello}}", "a", []string{}, 0},
	{"nowiki content is not expanded and shows literally", "<nowiki>{{Hello}} | [[x]] <b></nowiki>", "&#123;&#123;Hello&#125;&#125; &#124; &#91;&#91;x&#93;&#93; &lt;b>", []string{}, 0},
	{"an empty nowiki breaks a call", "{<nowiki/>{Hello}}", "{{Hello}}", []string{}, 0},
	{"an unclosed nowiki is text", "<nowiki>{{Hello}}", "<nowiki>Hello, world!", nil, 0},
	{"nowiki content is no template name", "{{<nowiki>Hello</nowiki>}}", "{{Hello}}", []string{}, 0},
	{"nowiki in an argument", "{{Pos|<nowiki>a|b</nowiki>}}", "[a&#124;b]", nil, 0},
	{"HTML comments are copied as they are", "<!-- {{Hello}} -->", "<!-- {{Hello}} -->", []string{}, 0},
}

func TestIncludeTags(t *testing.T) {
	runCases(t, includeCases)
}

var codeCases = []expandCase{
	{"a fenced code block is verbatim", "```\n{{Hello}}\n```\n{{Hello}}", "```\n{{Hello}}\n```\nHello, world!", nil, 0},
	{"a fence is closed only by a fence as long", "~~~~\n{{Hello}}\n~~~\n{{Hello}}\n~~~~\n{{Hello}}", "~~~~\n{{Hello}}\n~~~\n{{Hello}}\n~~~~\nHello, world!", nil, 0},
	{"a backtick fence is not closed by tildes", "```go\n{{Hello}}\n~~~\n{{Hello}}", "```go\n{{Hello}}\n~~~\n{{Hello}}", []string{}, 0},
	{"a fence in a list item", "- a\n  ```\n  {{Hello}}\n  ```\n", "- a\n  ```\n  {{Hello}}\n  ```\n", []string{}, 0},
	{"a fence in a block quote", "> ```\n> {{Hello}}\n> ```\n", "> ```\n> {{Hello}}\n> ```\n", []string{}, 0},
	{"a code span is verbatim", "`{{Hello}}` {{Hello}}", "`{{Hello}}` Hello, world!", nil, 0},
	{"a double backtick span", "``a ` {{Hello}}`` b", "``a ` {{Hello}}`` b", []string{}, 0},
	{"a code span may cross a line", "`a\n{{Hello}}`", "`a\n{{Hello}}`", []string{}, 0},
	{"a code span does not cross a blank line", "`a\n\n{{Hello}}`", "`a\n\nHello, world!`", nil, 0},
	{"an unmatched backtick is text", "`{{Hello}}", "`Hello, world!", nil, 0},
	{"an escaped backtick opens nothing", "\\`{{Hello}}`", "\\`Hello, world!`", nil, 0},
	{"code in a template is verbatim", "{{Fenced|{{PAGENAME}}}}", "```\n{{{1}}}\n```\nFoo bar", nil, 0},
	{"indented code is not recognized", "    {{Hello}}", "    Hello, world!", nil, 0},
}

func TestMarkdownCode(t *testing.T) {
	runCases(t, codeCases)
}

var magicCases = []expandCase{
	{"page name words", "{{PAGENAME}}|{{FULLPAGENAME}}|{{NAMESPACE}}|{{SITENAME}}", "Foo bar|Help:Foo bar|Help|Wikid", []string{}, 0},
	{"inside a template, the page being rendered", "{{Where}}", "Foo bar on Wikid", nil, 0},
	{"magic words are upper case", "{{pagename}}", "[[Template:Pagename]]", nil, 0},
	{"pipe and equals", "{{Pos|a{{!}}b}}{{Named|a{{=}}b}}", "[a|b]{{{a}}}-B", nil, 0},
}

func TestMagicWords(t *testing.T) {
	runCases(t, magicCases)
}

var functionCases = []expandCase{
	{"#if true", "[{{#if: x | yes | no }}]", "[yes]", nil, 0},
	{"#if false", "[{{#if: | yes | no }}]", "[no]", nil, 0},
	{"#if on white space", "[{{#if:   | yes | no }}]", "[no]", nil, 0},
	{"#if without else", "[{{#if:|yes}}]", "[]", nil, 0},
	{"#if on a missing parameter", "[{{#IF: {{{1|}}} | yes | no }}]", "[no]", nil, 0},
	{"#if expands only the branch taken", "{{#if: x | a | {{Nope}} }}", "a", []string{}, 0},
	{"#if in a template", "{{Lazy|1}}", "Hello, world!", []string{"Template:Lazy", "Template:Hello"}, 0},
	{"#if trims a template's output", "[{{#if:1|{{Sp}}}}][{{Sp}}]", "[s][  s  ]", nil, 0},
	{"#if trims around a template", "[{{#if:1|  {{Sp}} x }}]", "[s   x]", nil, 0},
	{"#if keeps '=' in a branch", "{{#if:1|a=b}}", "a=b", nil, 0},
	{"#ifeq numbers", "{{#ifeq: 01 | 1 | eq | ne}}", "eq", nil, 0},
	{"#ifeq exponent", "{{#ifeq: 1e3 | 1000 | eq | ne}}", "eq", nil, 0},
	{"#ifeq strings are case-sensitive", "{{#ifeq: a | A | eq | ne}}", "ne", nil, 0},
	{"#ifeq strings", "{{#ifeq: {{PAGENAME}} | Foo bar | eq | ne}}", "eq", nil, 0},
	{"#switch falls through bare cases", "{{#switch: b | a = x | b | c = y | #default = z}}", "y", nil, 0},
	{"#switch default", "{{#switch: q | a = x | #default = z }}", "z", nil, 0},
	{"#switch last bare case is the default", "{{#switch: q | a = x | fallback }}", "fallback", nil, 0},
	{"#switch bare #default then a case", "{{#switch: q | #default | a = x}}", "x", nil, 0},
	{"#switch no match, no default", "[{{#switch: q | a = x }}]", "[]", nil, 0},
	{"#switch compares numbers", "{{#switch: 2 | 1 = one | 2.0 = two }}", "two", nil, 0},
	{"#switch expands only the case taken", "{{#switch: a | a = {{Hello}} | b = {{Nope}} }}", "Hello, world!", []string{"Template:Hello"}, 0},
	{"#expr", "{{#expr: 1 + 2 * 3}}", "7", nil, 0},
	{"#expr error", "{{#expr: 1/0}}", `<strong class="error">Expression error: Division by zero.</strong>`, nil, 1},
	{"#expr of a parameter", "{{#expr: {{{1|4}}} * 2}}", "8", nil, 0},
	{"#ifexpr", "{{#ifexpr: 2 > 1 | yes | no}}{{#ifexpr: 0 | yes | no}}", "yesno", nil, 0},
}

func TestParserFunctions(t *testing.T) {
	runCases(t, functionCases)
}

func TestExpr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1 + 2 * 3", "7"},
		{"(1 + 2) * 3", "9"},
		{"10 / 4", "2.5"},
		{"10 div 4", "2.5"},
		{"7 mod 3", "1"},
		{"-7 mod 3", "-1"},
		{"7.9 mod 3", "1"},
		{"5.5 fmod 2", "1.5"},
		{"2^3^2", "64"},
		{"-2^2", "4"},
		{"2 * -3", "-6"},
		{"1/3", "0.33333333333333"},
		{"0.1 + 0.2", "0.3"},
		{"3 > 2 and 1", "1"},
		{"1 < 0 or 0", "0"},
		{"not 0", "1"},
		{"not 1 + 1", "1"},
		{"3.14159 round 2", "3.14"},
		{"2.5 round 0", "3"},
		{"-2.5 round 0", "-3"},
		{"1234 round -2", "1200"},
		{"1e3", "1000"},
		{"1.5e-3", "0.0015"},
		{"2 = 2.0", "1"},
		{"1 <> 1", "0"},
		{"1 != 2", "1"},
		{"2 <= 2", "1"},
		{"3 >= 4", "0"},
		{"1e20", "1.0E+20"},
		{"1.5e20", "1.5E+20"},
		{"1e-5", "1.0E-5"},
		{"123456789012345678", "1.2345678901235E+17"},
		{"12345678901234", "12345678901234"},
		{"pi", "3.1415926535898"},
		{"e", "2.718281828459"},
		{"abs -3", "3"},
		{"floor 2.7 + ceil 2.1", "5"},
		{"trunc -2.7", "-2"},
		{"sqrt 16", "4"},
		{"ln 1", "0"},
		{"2 ^ 0.5 * 2 ^ 0.5", "2"},
		{"1.2.3 + 1", "2.2"},
		{"", ""},
		{"  ", ""},
		{"((((1))))", "1"},
		{"-0", "-0"},
		{"10^400", "INF"},
	} {
		got, err := evalExpr(c.in)
		if err != nil || got != c.want {
			t.Errorf("evalExpr(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"1/0", "Expression error: Division by zero."},
		{"1 mod 0", "Expression error: Division by zero."},
		{"1 +", "Expression error: Missing operand for +."},
		{"* 1", "Expression error: Unexpected * operator."},
		{"(1", "Expression error: Unclosed bracket."},
		{"1)", "Expression error: Unexpected closing bracket."},
		{"1 2", "Expression error: Unexpected number."},
		{"2 (1)", "Expression error: Unexpected ( operator."},
		{"foo", `Expression error: Unrecognized word "foo".`},
		{"1 & 2", `Expression error: Unrecognized punctuation character "&".`},
		{"ln 0", "Expression error: Invalid argument for ln: <= 0."},
		{"sqrt -1", "Expression error: Result is not a number."},
		{"1 not 2", "Expression error: Unexpected not operator."},
		{strings.Repeat("(", 150) + "1" + strings.Repeat(")", 150), "Expression error: Stack exhausted."},
		{strings.Repeat("1+", 600) + "1", "Expression error: Expression longer than 1000 bytes."},
	} {
		if got, err := evalExpr(c.in); err == nil || err.Error() != c.want {
			t.Errorf("evalExpr(%q) = %q, %v; want error %q", c.in, got, err, c.want)
		}
	}
}

var unbalancedCases = []expandCase{
	{"an unclosed call is text", "{{foo", "{{foo", []string{}, 0},
	{"closing braces alone are text", "}} ]] }}}", "}} ]] }}}", []string{}, 0},
	{"an unclosed call with arguments is text", "{{a|b=c|", "{{a|b=c|", []string{}, 0},
	{"five braces are a call of a parameter", "{{{{{x}}}}}", "{{{{{x}}}}}", []string{}, 0},
	{"four braces are a parameter in braces", "{{{{x}}}}", "{{{{x}}}}", []string{}, 0},
	{"an extra closing brace", "{{Hello}}}", "Hello, world!}", nil, 0},
	{"an extra opening brace", "{{{Hello}}", "{Hello, world!", nil, 0},
	{"a call inside an unclosed link still expands", "[[a|{{Hello}}", "[[a|Hello, world!", nil, 0},
	{"a call inside an unclosed call still expands", "{{a|{{Hello}}", "{{a|Hello, world!", nil, 0},
	{"single braces are text", "{a} {b|c}", "{a} {b|c}", []string{}, 0},
	{"braces of a link in a call", "{{Pos|[[x]]]}}", "[[[x]]]]", nil, 0},
}

func TestUnbalancedBraces(t *testing.T) {
	runCases(t, unbalancedCases)
}

var loopCases = []expandCase{
	{"a template that calls itself", "{{Self}}",
		`a<strong class="error">Template loop detected: [[Template:Self]] → [[Template:Self]]</strong>b`, []string{"Template:Self"}, 1},
	{"two templates that call each other", "{{A}}",
		`<strong class="error">Template loop detected: [[Template:A]] → [[Template:B]] → [[Template:A]]</strong>`, []string{"Template:A", "Template:B"}, 1},
	{"a loop entered in the middle", "{{B}}{{A}}",
		`<strong class="error">Template loop detected: [[Template:B]] → [[Template:A]] → [[Template:B]]</strong>` +
			`<strong class="error">Template loop detected: [[Template:A]] → [[Template:B]] → [[Template:A]]</strong>`, nil, 2},
}

func TestLoops(t *testing.T) {
	runCases(t, loopCases)
	t.Run("a page that transcludes itself", func(t *testing.T) {
		p := pages{"Help:Foo bar": "{{:Help:Foo bar}}"}
		res := mustExpand(t, p, "x{{:Help:Foo bar}}", Limits{})
		want := `x<strong class="error">Template loop detected: [[Help:Foo bar]] → [[Help:Foo bar]]</strong>`
		if res.Text != want || res.Errors != 1 {
			t.Errorf("got %q (%d errors), want %q", res.Text, res.Errors, want)
		}
	})
	t.Run("a redirect into a loop", func(t *testing.T) {
		p := pages{"Template:X": "{{R}}", "Template:R": "#REDIRECT [[Template:X]]"}
		res := mustExpand(t, p, "{{X}}", Limits{})
		want := `<strong class="error">Template loop detected: [[Template:X]] → [[Template:X]]</strong>`
		if res.Text != want {
			t.Errorf("got %q, want %q", res.Text, want)
		}
	})
	t.Run("memoized output is not reused inside a loop", func(t *testing.T) {
		// X's output, remembered when X is called first, transcludes Y;
		// called again below Y, X must report the loop, not reuse it.
		p := pages{"Template:X": "x{{Y}}", "Template:Y": "y{{#if:{{{1|}}}|{{X}}}}"}
		res := mustExpand(t, p, "{{X}}|{{Y|1}}", Limits{})
		want := `xy|yx<strong class="error">Template loop detected: [[Template:Y]] → [[Template:X]] → [[Template:Y]]</strong>`
		if res.Text != want {
			t.Errorf("got %q, want %q", res.Text, want)
		}
	})
}

// chain returns templates T0 … Tn, each calling the next, the last "end".
func chain(n int) pages {
	p := pages{}
	for i := range n {
		p[fmt.Sprintf("Template:T%d", i)] = fmt.Sprintf("{{T%d}}", i+1)
	}
	p[fmt.Sprintf("Template:T%d", n)] = "end"
	return p
}

// doubling returns templates L0 … Ln, each calling the one below twice.
func doubling(n int) pages {
	p := pages{"Template:L0": "ab"}
	for i := 1; i <= n; i++ {
		p[fmt.Sprintf("Template:L%d", i)] = fmt.Sprintf("{{L%d}}{{L%d}}", i-1, i-1)
	}
	return p
}

func TestLimits(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		res := mustExpand(t, chain(50), "{{T0}}", Limits{Depth: 5})
		want := `<strong class="error">Template recursion depth limit exceeded (5): [[Template:T5]]</strong>`
		if res.Text != want || res.Errors != 1 {
			t.Errorf("got %q (%d errors), want %q", res.Text, res.Errors, want)
		}
		if res := mustExpand(t, chain(39), "{{T0}}", Limits{}); res.Text != "end" {
			t.Errorf("40 levels: got %q, want end", res.Text)
		}
	})
	t.Run("memoized output deeper than the depth left is expanded again", func(t *testing.T) {
		p := chain(3)
		p["Template:Deep"] = "{{Deeper}}"
		p["Template:Deeper"] = "{{T0}}"
		res := mustExpand(t, p, "{{T0}} {{Deep}}", Limits{Depth: 5})
		want := `end <strong class="error">Template recursion depth limit exceeded (5): [[Template:T3]]</strong>`
		if res.Text != want {
			t.Errorf("got %q, want %q", res.Text, want)
		}
	})
	t.Run("doubling output stops at PostExpand", func(t *testing.T) {
		lim := Limits{PostExpand: 1 << 16}
		res := mustExpand(t, doubling(39), "before {{L39}} after {{L1}}", lim)
		if len(res.Text) > lim.PostExpand+1000 {
			t.Errorf("output is %d bytes, over the limit", len(res.Text))
		}
		if !strings.Contains(res.Text, "Post-expand include size limit exceeded (65536 bytes)") || res.Errors != 1 {
			t.Errorf("no post-expand error box (%d errors) in %q…", res.Errors, res.Text[:200])
		}
		if !strings.HasPrefix(res.Text, "before abab") || !strings.HasSuffix(res.Text, " after {{L1}}") {
			t.Errorf("the page's text around the calls is not kept: %q … %q", res.Text[:20], res.Text[len(res.Text)-20:])
		}
	})
	t.Run("doubling with the default limits", func(t *testing.T) {
		res := mustExpand(t, doubling(39), "{{L39}}", Limits{})
		if len(res.Text) > DefaultPostExpand+1000 || res.Errors != 1 {
			t.Errorf("output is %d bytes with %d errors", len(res.Text), res.Errors)
		}
	})
	t.Run("doubling past the depth limit", func(t *testing.T) {
		// Every path ends in a depth error box, so nothing is memoized:
		// the boxes themselves count against PostExpand.
		res := mustExpand(t, doubling(45), "{{L45}}", Limits{PostExpand: 1 << 16})
		if len(res.Text) > 1<<16+1000 || !strings.Contains(res.Text, "Post-expand include size limit exceeded") {
			t.Errorf("output is %d bytes with %d errors", len(res.Text), res.Errors)
		}
	})
	t.Run("memoized output counts against PostExpand", func(t *testing.T) {
		p := pages{"Template:Big": strings.Repeat("x", 1000)}
		res := mustExpand(t, p, strings.Repeat("{{Big}}", 100), Limits{PostExpand: 10_500})
		if n := strings.Count(res.Text, strings.Repeat("x", 1000)); n != 10 {
			t.Errorf("%d copies of the output, want 10", n)
		}
		if !strings.HasSuffix(res.Text, "</strong>"+strings.Repeat("{{Big}}", 90)) {
			t.Errorf("the calls past the limit are not kept as written: …%q", res.Text[len(res.Text)-100:])
		}
	})
	t.Run("nodes", func(t *testing.T) {
		res := mustExpand(t, wikiPages, strings.Repeat("{{Hello}}", 100), Limits{Nodes: 50})
		if !strings.Contains(res.Text, "Preprocessor node count limit exceeded (50 nodes)") || res.Errors != 1 {
			t.Errorf("no node limit box (%d errors): %q", res.Errors, res.Text)
		}
		if n := strings.Count(res.Text, "Hello, world!"); n < 10 || n > 50 {
			t.Errorf("%d calls expanded, want some under the limit", n)
		}
		if !strings.HasSuffix(res.Text, "{{Hello}}{{Hello}}") {
			t.Errorf("calls past the limit are not left as written: %q", res.Text)
		}
	})
	t.Run("templates", func(t *testing.T) {
		var src strings.Builder
		for i := range 10 {
			fmt.Fprintf(&src, "{{T%d}}", i*10)
		}
		res := mustExpand(t, chain(100), src.String(), Limits{Templates: 25})
		if !strings.Contains(res.Text, "Template count limit exceeded (25 pages)") || res.Errors != 1 {
			t.Errorf("no template count box (%d errors): %q", res.Errors, res.Text)
		}
		if len(res.Templates) != 25 {
			t.Errorf("%d templates loaded, want 25", len(res.Templates))
		}
	})
	t.Run("nesting", func(t *testing.T) {
		src := strings.Repeat("{{#if:1|", 150) + "x" + strings.Repeat("}}", 150)
		res := mustExpand(t, wikiPages, src, Limits{})
		if !strings.Contains(res.Text, "Expansion depth limit exceeded (100)") {
			t.Errorf("no nesting box: %q", res.Text)
		}
	})
	t.Run("expressions", func(t *testing.T) {
		var src strings.Builder
		var calls []string
		for i := range 10 {
			calls = append(calls, fmt.Sprintf("{{#expr:%s+%d}}", longExpr[:len(longExpr)-8], i))
			src.WriteString(calls[i])
		}
		lim := Limits{Expr: 5000}
		text, e := expand(t, pages{}, src.String(), lim)
		box := `<strong class="error">Expression size limit exceeded (5000 bytes): templates past this point are not expanded</strong>`
		// Four expressions of 985 bytes fit: 4*(985+16) <= 5000.
		want := "492493494495" + box + strings.Join(calls[4:], "")
		if text != want || e.errors != 1 {
			t.Errorf("got %q… (%d errors)", text[:min(len(text), 300)], e.errors)
		}
		if e.exprBytes-(985+exprCost) > lim.Expr {
			t.Errorf("%d bytes of expressions evaluated, limit %d", e.exprBytes, lim.Expr)
		}
	})
	t.Run("an expression is evaluated once", func(t *testing.T) {
		p := pages{"Template:X": "{{#ifexpr:" + longExpr + "|{{{1}}}}}{{#expr:" + longExpr + "}}"}
		var src strings.Builder
		for i := range 1000 {
			fmt.Fprintf(&src, "{{X|%d}}", i)
		}
		text, e := expand(t, p, src.String(), Limits{})
		if len(e.exprs) != 1 || e.exprBytes != len(longExpr)+exprCost || !strings.HasPrefix(text, "0496") {
			t.Errorf("%d expressions, %d bytes evaluated: %q…", len(e.exprs), e.exprBytes, text[:20])
		}
	})
	t.Run("generated nodes", func(t *testing.T) {
		// Unclosed calls: each is a piece and a part.
		src := "x" + strings.Repeat("{{a|", 300)
		text, e := expand(t, pages{}, src, Limits{Nodes: 100})
		box := `<strong class="error">Preprocessor generated node count limit exceeded (100 nodes): templates past this point are not expanded</strong>`
		// The error box is before the outermost piece open.
		if want := "x" + box + src[1:]; text != want || e.errors != 1 {
			t.Errorf("got %q (%d errors)", text, e.errors)
		}
		if e.generated != 100 {
			t.Errorf("%d pieces and parts, want 100", e.generated)
		}
	})
	t.Run("the page past the generated nodes is as written", func(t *testing.T) {
		src := "{{a}}[[x|<nowiki>{{</nowiki>{{#if:1|{{a}}{{a}}{{a}}"
		text, _ := expand(t, pages{}, src, Limits{Nodes: 5})
		box := `<strong class="error">Preprocessor generated node count limit exceeded (5 nodes): templates past this point are not expanded</strong>`
		if want := "[[Template:A]][[x|&#123;&#123;" + box + "{{#if:1|{{a}}{{a}}{{a}}"; text != want {
			t.Errorf("got %q, want %q", text, want)
		}
	})
	t.Run("generated nodes in templates", func(t *testing.T) {
		// The page may use as many as Nodes; its templates together
		// half as many more.
		p := pages{"Template:Big": strings.Repeat("{{Hello}}", 100)}
		text, e := expand(t, p, "{{Big}}"+strings.Repeat("{{Hello}}", 80), Limits{Nodes: 100})
		if !strings.Contains(text, "Preprocessor generated node count limit exceeded (100 nodes)") {
			t.Errorf("no generated node limit box: %q", text)
		}
		if e.generated > 150 {
			t.Errorf("%d pieces and parts, over 150", e.generated)
		}
	})
	t.Run("closed links are not counted", func(t *testing.T) {
		res := mustExpand(t, wikiPages, strings.Repeat("[[a|b]] ", 1000)+"{{Hello}}", Limits{Nodes: 100})
		if res.Errors != 0 || !strings.HasSuffix(res.Text, "Hello, world!") {
			t.Errorf("got …%q (%d errors)", res.Text[len(res.Text)-50:], res.Errors)
		}
	})
}

func TestTemplatesList(t *testing.T) {
	p := pages{
		"Template:Outer":  "{{Inner}}{{Missing}}{{Inner}}{{Redir}}",
		"Template:Inner":  "{{Leaf}}",
		"Template:Leaf":   "leaf",
		"Template:Redir":  "#redirect: [[Template:Target|label]]",
		"Template:Target": "target",
	}
	calls := map[wiki.Title]int{}
	res, err := Expand(context.Background(), "{{Outer}}{{Leaf}}{{Outer}}", testPage, p.loader(calls), nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []wiki.Title{"Template:Outer", "Template:Inner", "Template:Leaf", "Template:Missing", "Template:Redir", "Template:Target"}
	if !slices.Equal(res.Templates, want) {
		t.Errorf("Templates = %q, want %q", res.Templates, want)
	}
	if w := "leaf[[Template:Missing]]leaftarget"; res.Text != w+"leaf"+w {
		t.Errorf("Text = %q", res.Text)
	}
	for title, n := range calls {
		if n != 1 {
			t.Errorf("%s loaded %d times, want once", title, n)
		}
	}
}

func TestMemoizedCallsAreExpandedOnce(t *testing.T) {
	p := pages{"Template:Box": "<{{{1}}}{{Inner|{{{1}}}}}>", "Template:Inner": "({{{1}}})"}
	src := strings.Repeat("{{Box|a}}{{Box|b}}{{Box| a }}\n", 2000)
	res := mustExpand(t, p, src, Limits{})
	want := strings.Repeat("<a(a)><b(b)>< a ( a )>\n", 2000)
	if res.Text != want {
		t.Errorf("got %q…", res.Text[:100])
	}
	e := newExpander(context.Background(), src, testPage, p.loader(nil), nil, Limits{}.withDefaults())
	if _, err := e.run(src); err != nil {
		t.Fatal(err)
	}
	if len(e.memo) != 6 {
		t.Errorf("%d memo entries, want 6 (3 calls of Box, 3 of Inner)", len(e.memo))
	}
	if e.nodes > 3*2000*2+200 {
		t.Errorf("%d nodes visited for 6000 calls: the memo is not used", e.nodes)
	}
}

func TestContextAndLoaderErrors(t *testing.T) {
	t.Run("a cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Expand(ctx, "{{Hello}}", testPage, wikiPages.loader(nil), nil, Limits{})
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("a context cancelled while expanding", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		load := func(ctx context.Context, t wiki.Title) (string, bool, error) {
			cancel()
			return "x{{{1}}}", true, nil
		}
		var src strings.Builder
		for i := range 5000 {
			fmt.Fprintf(&src, "{{T|%d}}", i)
		}
		_, err := Expand(ctx, src.String(), testPage, load, nil, Limits{})
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("a loader error", func(t *testing.T) {
		boom := errors.New("boom")
		load := func(ctx context.Context, t wiki.Title) (string, bool, error) { return "", false, boom }
		_, err := Expand(context.Background(), "a {{Hello}} b", testPage, load, nil, Limits{})
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want boom", err)
		}
	})
}

func TestHas(t *testing.T) {
	for src, want := range map[string]bool{
		"":                      false,
		"plain text { } }} <b>": false,
		"a {{b}}":               true,
		"a {{":                  true,
		"x <noinclude>":         true,
		"x <NOWIKI/>":           true,
		"x </includeonly >":     true,
		"x <onlyinclude>":       true,
		"x <nowikis>":           false,
	} {
		if got := Has(src); got != want {
			t.Errorf("Has(%q) = %v, want %v", src, got, want)
		}
	}
	long := strings.Repeat("a < b { } <nowik ", 100)
	if n := testing.AllocsPerRun(100, func() { Has(long) }); n != 0 {
		t.Errorf("Has allocates %v times", n)
	}
}

// TestPathologicalInputs checks that hostile shapes are handled within the
// limits; the bound is on work done, the time limit only a generous net.
func TestPathologicalInputs(t *testing.T) {
	const mb = 1 << 20
	for name, src := range map[string]string{
		"a megabyte of {{":        strings.Repeat("{{", mb/2),
		"a megabyte of {{a|":      strings.Repeat("{{a|", mb/4),
		"a megabyte of {{ {{":     strings.Repeat("{{ ", mb/3),
		"a megabyte of [[{{":      strings.Repeat("[[{{", mb/4),
		"a megabyte of }}":        strings.Repeat("}}", mb/2),
		"a megabyte of {{…}}":     strings.Repeat("{", mb/2) + strings.Repeat("}", mb/2),
		"a megabyte of [[…]]":     strings.Repeat("[", mb/2) + strings.Repeat("]", mb/2),
		"a megabyte of {{{{{x}}":  strings.Repeat("{{{{{x}}", mb/8),
		"a megabyte of <nowiki>":  strings.Repeat("<nowiki>{{", mb/10),
		"a megabyte of <!--":      strings.Repeat("<!--{{", mb/6),
		"a megabyte of backticks": backtickRuns(mb),
		"a megabyte of fences":    strings.Repeat("```\n{{a}}\n", mb/10),
		"a megabyte of calls":     strings.Repeat("{{Hello|x}}", mb/11),
		"a megabyte of #if":       strings.Repeat("{{#if:1|", mb/16) + strings.Repeat("}}", mb/16),
		"a megabyte of a=b":       "{{Pos|" + strings.Repeat("a=b|", mb/4) + "}}",
	} {
		t.Run(name, func(t *testing.T) {
			res := mustExpand(t, wikiPages, src, Limits{})
			if len(res.Text) > 6*len(src)+DefaultPostExpand+1000 {
				t.Errorf("output is %d bytes for %d", len(res.Text), len(src))
			}
		})
	}
}

// backtickRuns is a paragraph of backtick runs of growing length, none
// closed: the shape that makes a naive code span scan quadratic.
func backtickRuns(size int) string {
	var b strings.Builder
	for n := 1; b.Len() < size; n++ {
		b.WriteString(strings.Repeat("`", n))
		b.WriteString(" {{a}} ")
	}
	return b.String()
}

func TestCaseSensitiveTitleRules(t *testing.T) {
	p := pages{
		"Template:foo":   "lower {{bar}}",
		"Template:Foo":   "upper",
		"Template:bar":   "#REDIRECT [[template:baz]]",
		"Template:baz":   "baz",
		"Help:page":      "help page",
		"User:Bob":       "Bob's page",
		"Template:Outer": "{{foo}}",
	}
	page := Page{Title: "help:test", SiteName: "Wikid", Rules: wiki.NewTitleRules(false)}
	for _, tc := range []struct{ src, want string }{
		{"{{foo}}", "lower baz"},
		{"{{Foo}}", "upper"},
		{"{{template:foo}}", "lower baz"},
		{"{{Template:Foo}}", "upper"},
		{"{{help:page}}", "help page"},
		{"{{user:bob}}", "Bob's page"},
		{"{{outer}}", "[[Template:outer]]"},
	} {
		res, err := Expand(context.Background(), tc.src, page, p.loader(nil), nil, Limits{})
		if err != nil || res.Text != tc.want {
			t.Errorf("capital_links false: %s → %q, %v; want %q", tc.src, res.Text, err, tc.want)
		}
	}
	// The same calls by the default rules reach the capitalized pages.
	res, err := Expand(context.Background(), "{{foo}} {{outer}}", testPage, p.loader(nil), nil, Limits{})
	if err != nil || res.Text != "upper upper" {
		t.Errorf("capital_links true: %q, %v; want %q", res.Text, err, "upper upper")
	}
}

func TestDefaultSort(t *testing.T) {
	p := pages{
		"Template:Person": "<includeonly>{{DEFAULTSORT:{{{last}}}, {{{first}}}}}</includeonly>{{{first}}} {{{last}}}",
		"Template:Sorted": "{{DEFAULTSORT:{{{1}}}|noerror}}",
		"Template:Keep":   "{{DEFAULTSORT:{{{1}}}|noreplace}}",
		"Template:Twice":  "{{Sorted|{{{1}}}}}{{Sorted|{{{1}}}}}",
	}
	warn := func(newKey, old string) string {
		return `<strong class="error">Warning: Default sort key &#34;` + newKey + `&#34; overrides earlier default sort key &#34;` + old + `&#34;.</strong>`
	}
	for _, c := range []struct {
		name, src, text, key string
		errors               int
	}{
		{"none", "text", "text", "", 0},
		{"writes nothing, trimmed", "a{{DEFAULTSORT: Smith, John }}b", "ab", "Smith, John", 0},
		{"the other names", "{{DEFAULTSORTKEY:x}}{{DEFAULTCATEGORYSORT:x}}", "", "x", 0},
		{"upper case only, as MediaWiki", "{{defaultsort:x}}", "[[Template:Defaultsort:x]]", "", 0},
		{"a key built by magic words", "{{DEFAULTSORT:{{PAGENAME}}}}", "", "Foo bar", 0},
		{"an empty key does nothing", "{{DEFAULTSORT:a}}{{DEFAULTSORT: }}", "", "a", 0},
		{"the same key again is no warning", "{{DEFAULTSORT:a}}{{DEFAULTSORT:a}}", "", "a", 0},
		{"a later key replaces an earlier one, with a warning", "{{DEFAULTSORT:a}}{{DEFAULTSORT:b}}", warn("b", "a"), "b", 1},
		{"the warning escapes the keys", "{{DEFAULTSORT:<a>}}{{DEFAULTSORT:b&c}}", warn("b&amp;c", "&lt;a&gt;"), "b&c", 1},
		{"noerror replaces silently", "{{DEFAULTSORT:a}}{{DEFAULTSORT:b|noerror}}", "", "b", 0},
		{"noreplace keeps the earlier key", "{{DEFAULTSORT:a}}{{DEFAULTSORT:b|NoReplace}}", "", "a", 0},
		{"noreplace sets the first key", "{{DEFAULTSORT:b|noreplace}}{{DEFAULTSORT:c|noerror}}", "", "c", 0},
		{"from a template", "{{Person|first=Ada|last=Lovelace}}", "Ada Lovelace", "Lovelace, Ada", 0},
		{"only in the branch taken", "{{#if: x | {{DEFAULTSORT:yes}} | {{DEFAULTSORT:no}} }}", "", "yes", 0},
		// A template called again with the same arguments is not expanded
		// again: its remembered output replays its DEFAULTSORT.
		{"replayed from the memo, in order", "{{Sorted|a}}{{Sorted|b}}{{Sorted|a}}", "", "a", 0},
		{"replayed noreplace", "{{Keep|a}}{{Sorted|b}}{{Keep|a}}", "", "b", 0},
		{"replayed from a template's template", "{{Twice|a}}{{Sorted|b}}{{Twice|a}}", "", "a", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := mustExpand(t, p, c.src, Limits{})
			if res.Text != c.text || res.DefaultSort != c.key || res.Errors != c.errors {
				t.Errorf("Expand(%q) = %q, DefaultSort %q, %d errors; want %q, %q, %d", c.src, res.Text, res.DefaultSort, res.Errors, c.text, c.key, c.errors)
			}
		})
	}
}

// A template's memo entry sums up its DEFAULTSORTs: nesting templates
// that each call the one below ten times replays them in constant space.
func TestDefaultSortReplayIsBounded(t *testing.T) {
	p := pages{"Template:L0": "{{DEFAULTSORT:k|noerror}}"}
	for i := 1; i <= 6; i++ {
		p[fmt.Sprintf("Template:L%d", i)] = strings.Repeat(fmt.Sprintf("{{L%d}}", i-1), 10)
	}
	res := mustExpand(t, p, strings.Repeat("{{L6}}", 1000), Limits{})
	if res.DefaultSort != "k" || res.Text != "" {
		t.Errorf("DefaultSort %q, text %q", res.DefaultSort, res.Text)
	}
}
