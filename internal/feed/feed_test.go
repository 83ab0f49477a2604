package feed

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func sample() *Feed {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Feed{
		Title: "Wiki – changes \x00\x1b", ID: "https://w.example/wiki/Special:RecentChanges?feed=atom",
		Self: "https://w.example/wiki/Special:RecentChanges?feed=atom&x=\"1\"", Alternate: "https://w.example/wiki/Special:RecentChanges",
		Updated: at, Language: "en", Generator: "Wikid",
		Entries: []Entry{{
			ID: "https://w.example/wiki/A?diff=2&oldid=1", Title: "A ]]> <b>", Link: "https://w.example/wiki/A?diff=2&oldid=1",
			Updated: at, Author: "Eve\x07", Summary: "]]><script>alert(1)</script>\x01\uFFFE\u0085 ok",
			Content: `<table class="diff"><tr><td>x &amp; y</td></tr></table>` + "\x02",
		}, {ID: "https://w.example/#2", Title: "B", Link: "https://w.example/wiki/B", Updated: at}},
	}
}

// parse reads a whole document with encoding/xml (which refuses what XML
// 1.0 does not allow) and returns the text of the elements named name.
func parse(t *testing.T, doc []byte, name string) []string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(string(doc)))
	var out []string
	depth := -1
	var cur strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, doc)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if tk.Name.Local == name && depth < 0 {
				depth, cur = 0, strings.Builder{}
			} else if depth >= 0 {
				depth++
			}
		case xml.CharData:
			if depth >= 0 {
				cur.Write(tk)
			}
		case xml.EndElement:
			if depth == 0 {
				out = append(out, cur.String())
				depth = -1
			} else if depth > 0 {
				depth--
			}
		}
	}
}

func TestWriteEscapesEverything(t *testing.T) {
	for _, f := range []Format{Atom, RSS} {
		t.Run(string(f), func(t *testing.T) {
			doc := Write(sample(), f)
			s := string(doc)
			for _, bad := range []string{"<script>", "]]>", "<b>", "\x00", "\x01", "\x02", "\x07", "\x1b", "\uFFFE", "\u0085"} {
				if strings.Contains(s, bad) {
					t.Errorf("the document holds %q", bad)
				}
			}
			titles := parse(t, doc, "title")
			if len(titles) != 3 || titles[1] != "A ]]> <b>" || titles[0] != "Wiki – changes " {
				t.Errorf("titles = %q", titles)
			}
			body := "content"
			if f == RSS {
				body = "description"
			}
			contents := parse(t, doc, body)
			if !strings.Contains(strings.Join(contents, ""), `<table class="diff"><tr><td>x &amp; y</td></tr></table>`) {
				t.Errorf("%s = %q: want the HTML back as text", body, contents)
			}
			if f == RSS && !strings.Contains(contents[1], "&lt;script&gt;") {
				t.Errorf("the RSS description does not hold the summary escaped as HTML: %q", contents[1])
			}
			if f == Atom {
				if s := parse(t, doc, "summary"); len(s) != 1 || s[0] != "]]><script>alert(1)</script> ok" {
					t.Errorf("summaries = %q", s)
				}
				if a := parse(t, doc, "name"); len(a) != 2 || a[0] != "Eve" || a[1] != "unknown" {
					t.Errorf("authors = %q", a)
				}
			}
		})
	}
}

func TestDatesAndTypes(t *testing.T) {
	atom, rss := string(Write(sample(), Atom)), string(Write(sample(), RSS))
	if !strings.Contains(atom, "<updated>2026-01-02T03:04:05Z</updated>") {
		t.Error("Atom dates are not RFC 3339")
	}
	if !strings.Contains(rss, "<pubDate>Fri, 02 Jan 2026 03:04:05 +0000</pubDate>") {
		t.Error("RSS dates are not RFC 1123 with a numeric zone")
	}
	if Atom.ContentType() != "application/atom+xml; charset=utf-8" || RSS.ContentType() != "application/rss+xml; charset=utf-8" {
		t.Error("content types")
	}
	if string(Write(sample(), Atom)) != atom {
		t.Error("the same feed is written differently twice")
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{"a\x00b\tc\nd\re": "ab\tc\nd\re", "ok": "ok", "a\xff\xfeb": "a\uFFFDb", "x\u0085\u009fy\uFFFF": "xy"} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
