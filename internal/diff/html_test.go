package diff

import (
	"strings"
	"testing"
)

func TestHTML(t *testing.T) {
	t.Run("no hunks render nothing", func(t *testing.T) {
		if got := HTML(nil); got != "" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("user text is always escaped", func(t *testing.T) {
		a := "intro\n<script>alert(1)</script> & \"quotes\"\nkept <b>bold</b>\ngone <img src=x onerror=alert(2)>\n"
		b := "intro\n<script>alert(2)</script> & 'quotes'\nkept <b>bold</b>\nnew <iframe>\n"
		out := HTML(Lines(a, b))
		for _, bad := range []string{"<script", "</script", "<b>", "<img", "<iframe", `"quotes"`, "'quotes'"} {
			if strings.Contains(out, bad) {
				t.Errorf("output contains unescaped %q:\n%s", bad, out)
			}
		}
		for _, want := range []string{"&lt;script&gt;", "&amp;", "&#34;", "&#39;", "&lt;b&gt;bold&lt;/b&gt;"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("rows carry MediaWiki class names, line numbers and word marks", func(t *testing.T) {
		out := HTML(Lines("same\nthe old word\nremoved line\n", "same\nthe new word\n"))
		for _, want := range []string{
			`<table class="diff">`,
			`<td class="diff-context">same</td>`,
			`<td class="diff-number">2</td>`,
			`<td class="diff-deletedline">the <del class="diffchange">old</del> word</td>`,
			`<td class="diff-addedline">the <ins class="diffchange">new</ins> word</td>`,
			`<td class="diff-deletedline"><del>removed line</del></td>`,
			`<th scope="col">Old version</th>`,
			`Line 1:`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("added lines leave the old side empty", func(t *testing.T) {
		out := HTML(Lines("a\n", "a\nb\n"))
		want := `<td class="diff-empty" colspan="2"></td><td class="diff-number">2</td><td class="diff-addedline"><ins>b</ins></td>`
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	})
}
