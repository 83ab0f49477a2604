package template

import (
	"context"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

func TestWikitextMode(t *testing.T) {
	pages := map[wiki.Title]string{"Template:X": "x", "Template:L": "* item", "Template:T": "{|\n| a\n|}", "Template:E": "", "Template:P": "{{{1}}}"}
	load := func(_ context.Context, t wiki.Title) (string, bool, error) {
		s, ok := pages[t]
		return s, ok, nil
	}
	tests := []struct{ name, src, want string }{
		{"a list item from a template starts a line", "a {{L}}{{L}}\n{{L}}", "a \n* item\n* item\n* item"},
		{"a table from a template starts a line", "a {{T}}", "a \n{|\n| a\n|}"},
		{"backticks are text", "`{{X}}`", "`x`"},
		{"fences are text", "```\n{{X}}\n```", "```\nx\n```"},
		{"nowiki is copied", "<nowiki>{{X}}</nowiki>{{X}}", "<nowiki>{{X}}</nowiki>x"},
		{"an empty nowiki is copied", "[[a]]<nowiki/>s", "[[a]]<nowiki/>s"},
		{"pre is copied", "<pre class=\"a\">{{X}}</PRE >{{X}}", "<pre class=\"a\">{{X}}</PRE >x"},
		{"syntaxhighlight is copied", "<syntaxhighlight lang=go>{{X}}</syntaxhighlight>", "<syntaxhighlight lang=go>{{X}}</syntaxhighlight>"},
		{"source and math are copied", "<source>{{X}}</source><math>{{X}}</math>", "<source>{{X}}</source><math>{{X}}</math>"},
		{"an unclosed pre is text", "<pre>{{X}}", "<pre>x"},
		{"a longer tag name is another tag", "<prefix>{{X}}</prefix>", "<prefix>x</prefix>"},
		{"comments are removed", "<!--{{X}}-->{{X}}", "x"},
		{"a comment alone on its line takes the line", "a\n <!-- c --> \nb", "a\nb"},
		{"a comment beside a call leaves the line", "a\n{{E}}<!-- c -->\nb", "a\n\nb"},
		{"a comment in a parameter name", "{{P|1<!-- c -->=y}}", "y"},
		{"an unclosed comment runs to the end", "a<!-- {{X}}", "a"},
		{"noinclude goes", "<noinclude>{{X}}</noinclude>", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Expand(context.Background(), tt.src, Page{Title: "P", Wikitext: true}, load, nil, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want {
				t.Errorf("Expand(%q) = %q, want %q", tt.src, res.Text, tt.want)
			}
		})
	}
}

func TestWikitextModeUnclosedTagsAreLinear(t *testing.T) {
	src := ""
	for range 20000 {
		src += "<pre x <nowiki>{{X}}"
	}
	pages := map[wiki.Title]string{"Template:X": "x"}
	load := func(_ context.Context, t wiki.Title) (string, bool, error) {
		s, ok := pages[t]
		return s, ok, nil
	}
	if _, err := Expand(context.Background(), src, Page{Title: "P", Wikitext: true}, load, nil, Limits{}); err != nil {
		t.Fatal(err)
	}
}
