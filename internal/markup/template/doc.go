// Package template expands MediaWiki-style templates in the Markdown source
// of a page, before the page is parsed as Markdown (text level, like
// MediaWiki's preprocessor).
//
// # Syntax
//
// {{Name|positional|key=value}} transcludes the page Template:Name (the
// first letter in any case, spaces and underscores alike); {{:Title}}
// transcludes a main namespace page and {{User:X}} (any namespace the title
// rules know, but Special) that page. A template page that redirects is
// followed once. A missing page becomes a wiki link to it, which the
// renderer shows red; a name that is no valid title is left as written.
// In a template, {{{1}}}, {{{key}}} and {{{key|default}}} are its
// arguments: named ones trimmed of white space, positional ones not, all
// expanded in the caller before they are passed; an unknown parameter
// without a default stays as written. Pipes inside [[links|labels]] and
// nested braces do not split arguments; the first '=' outside them makes
// an argument named (so {{{1}}}=x names an argument by the value of 1, as
// in MediaWiki). A template's text loses one trailing newline and is
// inserted as is, so a template can produce table rows or list items.
//
// Magic words: {{PAGENAME}}, {{FULLPAGENAME}}, {{NAMESPACE}} (of the page
// being rendered, also inside templates), {{SITENAME}}, {{!}} (a pipe) and
// {{=}}. {{DEFAULTSORT:key}} (or DEFAULTSORTKEY, DEFAULTCATEGORYSORT, in
// upper case) sets the page's default category sort key
// (Result.DefaultSort) and writes nothing; a later one replaces it with a
// warning, unless given |noerror (replace silently) or |noreplace (keep
// the earlier one). Parser functions: {{#if}}, {{#ifeq}}, {{#switch}},
// {{#expr}} and {{#ifexpr}}, with MediaWiki's semantics: only the branch
// taken is expanded, results are trimmed, comparisons are numeric when
// both sides are numbers.
//
// # Text that is not expanded
//
// Fenced code blocks and inline code spans are copied verbatim; indented
// code blocks are not recognized (use a fence to show template syntax).
// HTML comments are copied verbatim. <nowiki>…</nowiki> is replaced by
// its content with { } | [ ] < written as character references, which
// the Markdown renderer shows literally; <nowiki/> is removed. In a
// transcluded page <noinclude> content is dropped, <includeonly> tags
// are removed and, when the page has <onlyinclude> sections, only their
// content is used; on the page itself, <includeonly> content is dropped
// and the other tags are removed. With Page.Wikitext the source is
// MediaWiki markup: backticks and fences are text, and <nowiki>, <pre>,
// <syntaxhighlight>, <source> and <math> elements (and <nowiki/>) are
// copied as written, for the wikitext renderer. Calls the keep function claims (the
// renderer's dynamic macros) stay exactly as written.
//
// # Limits
//
// Everything an author can write becomes text, never an error: loops and
// limits become error boxes (<strong class="error">). A page that
// transcludes itself, directly or not, gets a box naming the loop. Past
// Limits.Depth nested templates or Limits.Nesting braces within braces of
// one text, the call gets a box. The bytes templates and parser functions
// produce are counted as they are written, against Limits.PostExpand;
// the calls and parameters visited, against Limits.Nodes (an expression
// counts a node more per 64 bytes); the calls, arguments and open links
// the preprocessor builds, counted apart, against Limits.Nodes in one
// text and one and a half times that in all the texts of the expansion;
// the bytes of the expressions evaluated, against Limits.Expr; the pages
// loaded, against Limits.Templates; and, as a net under shapes that
// produce little but churn a lot, the bytes copied, compared and loaded,
// and those read again at each visit (names, white space trimmed,
// expressions), against 16 times PostExpand plus the page's length. Past
// any of these the expansion stops: one box says which limit, templates
// produce nothing more and the rest of the page is copied as written
// (past the preprocessor's limit, exactly as in the source). So the
// output is at most the page (nowiki content escaped) plus PostExpand
// plus one box, however the templates multiply, and the time and memory
// an expansion takes are a small multiple of its texts and limits.
//
// Within one expansion each page is loaded and parsed once, each distinct
// expression is evaluated once, and the output of a template called with
// the same arguments is reused, so a page with thousands of calls of one
// template costs little more than its text.
package template
