package mwxml

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// readAll reads a whole dump into pages and their items.
func readAll(t testing.TB, r io.Reader, lim Limits) (SiteInfo, []any, error) {
	t.Helper()
	rd, err := NewReader(r, lim)
	if err != nil {
		return SiteInfo{}, nil, err
	}
	var items []any
	for {
		it, err := rd.Next()
		if err == io.EOF {
			return rd.SiteInfo(), items, nil
		}
		if err != nil {
			return rd.SiteInfo(), items, err
		}
		items = append(items, it)
	}
}

const sample = `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Old &amp; Wiki</sitename>
    <dbname>old</dbname>
    <base>http://old.example/wiki/Main_Page</base>
    <generator>MediaWiki 1.35.0</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="100" case="first-letter">Portal</namespace>
    </namespaces>
  </siteinfo>
  <page>
    <title>Zürich</title>
    <ns>0</ns>
    <id>7</id>
    <restrictions>edit=sysop:move=sysop</restrictions>
    <revision>
      <id>10</id>
      <timestamp>2020-01-02T03:04:05Z</timestamp>
      <contributor><username>Ann</username><id>3</id></contributor>
      <comment>first &lt;b&gt; &amp; "q"</comment>
      <model>wikitext</model>
      <format>text/x-wiki</format>
      <text xml:space="preserve" bytes="5">Hello</text>
      <sha1>abc</sha1>
    </revision>
    <revision>
      <id>11</id>
      <parentid>10</parentid>
      <timestamp>2020-01-03T03:04:05Z</timestamp>
      <contributor><ip>192.0.2.1</ip></contributor>
      <minor/>
      <text xml:space="preserve">Hello &#x263A;</text>
    </revision>
    <discussionthreadinginfo><x>y</x></discussionthreadinginfo>
  </page>
  <page>
    <title>Go</title>
    <ns>0</ns>
    <id>8</id>
    <redirect title="Zürich" />
    <revision>
      <id>12</id>
      <timestamp>2020-01-04T00:00:00Z</timestamp>
      <contributor deleted="deleted" />
      <comment deleted="deleted" />
      <text deleted="deleted" />
    </revision>
  </page>
  <page>
    <title>File:A.png</title>
    <ns>6</ns>
    <id>9</id>
    <upload>
      <timestamp>2020-01-05T00:00:00Z</timestamp>
      <contributor><username>Bob</username><id>4</id></contributor>
      <comment>up</comment>
      <filename>A.png</filename>
      <src>http://old.example/images/A.png</src>
      <size>123</size>
    </upload>
  </page>
</mediawiki>
`

func TestReaderReadsEveryField(t *testing.T) {
	site, items, err := readAll(t, strings.NewReader(sample), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if site.SiteName != "Old & Wiki" || site.Case != "first-letter" || len(site.Namespaces) != 3 || site.Namespaces[2] != (Namespace{100, "first-letter", "Portal"}) {
		t.Errorf("siteinfo %+v", site)
	}
	if len(items) != 7 {
		t.Fatalf("%d items, want 7: %#v", len(items), items)
	}
	p := items[0].(*Page)
	if *p != (Page{Title: "Zürich", NS: 0, ID: 7, Restrictions: "edit=sysop:move=sysop"}) {
		t.Errorf("page %+v", p)
	}
	r1 := items[1].(*Revision)
	if r1.ID != 10 || r1.Comment != `first <b> & "q"` || r1.Contributor != (Contributor{Username: "Ann", ID: 3}) ||
		r1.Text != "Hello" || r1.SHA1 != "abc" || r1.Model != "wikitext" || !r1.Timestamp.Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("revision %+v", r1)
	}
	r2 := items[2].(*Revision)
	if !r2.Minor || r2.ParentID != 10 || r2.Contributor.IP != "192.0.2.1" || r2.Text != "Hello ☺" {
		t.Errorf("revision %+v", r2)
	}
	p2 := items[3].(*Page)
	if p2.Redirect != "Zürich" {
		t.Errorf("redirect %+v", p2)
	}
	r3 := items[4].(*Revision)
	if !r3.Contributor.Deleted || !r3.CommentDeleted || !r3.TextDeleted {
		t.Errorf("deleted revision %+v", r3)
	}
	u := items[6].(*Upload)
	if u.Filename != "A.png" || u.Size != 123 || u.Contributor.Username != "Bob" {
		t.Errorf("upload %+v", u)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	var a bytes.Buffer
	if err := Generate(&a, 30, 3, 1); err != nil {
		t.Fatal(err)
	}
	site, items, err := readAll(t, bytes.NewReader(a.Bytes()), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 30*4+6*2 {
		t.Fatalf("%d items", len(items))
	}
	var b bytes.Buffer
	w := NewWriter(&b, site, "en")
	for _, it := range items {
		switch v := it.(type) {
		case *Page:
			w.Page(*v)
		case *Revision:
			if v.SHA1 != SHA1Base36(v.Text) {
				t.Fatalf("sha1 %s, want %s", v.SHA1, SHA1Base36(v.Text))
			}
			w.Revision(*v)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("the dump written again differs")
	}
	// Specials and a carriage return survive.
	var c bytes.Buffer
	w = NewWriter(&c, site, "en")
	w.Page(Page{Title: `A&B "<c>"`})
	want := Revision{ID: 1, Timestamp: time.Unix(0, 0).UTC(), Contributor: Contributor{IP: "::1"}, Comment: "<&>\"'", Text: "x\r\ny]]>", Model: "wikitext"}
	w.Revision(want)
	w.Close()
	_, items, err = readAll(t, &c, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := items[1].(*Revision)
	if items[0].(*Page).Title != `A&B "<c>"` || got.Text != want.Text || got.Comment != want.Comment {
		t.Errorf("got %+v %+v", items[0], got)
	}
}

func TestSHA1Base36(t *testing.T) {
	// MediaWiki's sha1 of the empty text.
	if got := SHA1Base36(""); got != "phoiac9h4m842xq45sp7s6u21eteeq1" {
		t.Errorf("got %s", got)
	}
	if SHA1HexToBase36("da39a3ee5e6b4b0d3255bfef95601890afd80709") != SHA1Base36("") {
		t.Error("hex conversion differs")
	}
}

func TestReaderRefuses(t *testing.T) {
	var gen bytes.Buffer
	Generate(&gen, 3, 2, 1)
	full := gen.String()
	page := func(title, rev string) string {
		return `<mediawiki version="0.11"><page><title>` + title + `</title><ns>0</ns><id>1</id><revision>` + rev + `</revision></page></mediawiki>`
	}
	okRev := `<id>1</id><timestamp>2020-01-01T00:00:00Z</timestamp><contributor><ip>x</ip></contributor><text>t</text>`
	for _, c := range []struct {
		name, dump, want string
	}{
		{"a truncated dump", full[:len(full)/2], "ends in the middle"},
		{"bad XML", page("A", okRev+"<b></c>"), "bad XML"},
		{"a huge text", page("Big", `<timestamp>2020-01-01T00:00:00Z</timestamp><text>`+strings.Repeat("x", 3000)+`</text>`), `page "Big": the revision's text is longer than the limit`},
		{"a huge text declared", page("Big", `<timestamp>2020-01-01T00:00:00Z</timestamp><text bytes="5000">x</text>`), `the revision's text is 5000 bytes`},
		{"a huge text of entities", page("Big", `<timestamp>2020-01-01T00:00:00Z</timestamp><text>`+strings.Repeat("&amp;", 1<<20)+`</text>`), `longer than the limit`},
		{"a bad timestamp", page("When", `<timestamp>yesterday</timestamp>`), `page "When": <timestamp> is "yesterday"`},
		{"no timestamp", page("When", `<id>5</id>`), `without a <timestamp>`},
		{"a missing title", `<mediawiki><page><ns>0</ns><revision>` + okRev + `</revision></page></mediawiki>`, "without a <title>"},
		{"a long title", page(strings.Repeat("t", 300), okRev), "<title> is longer than 255 bytes"},
		{"a nesting bomb", `<mediawiki><page><title>N</title>` + strings.Repeat("<x>", 100) + strings.Repeat("</x>", 100) + `</page></mediawiki>`, "deeper than 32"},
		{"an entity declaration", `<!DOCTYPE mediawiki [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>` + page("E", `<timestamp>2020-01-01T00:00:00Z</timestamp><text>&b;</text>`), "<!DOCTYPE> declaration"},
		{"an external entity", `<mediawiki><page><title>E</title><revision><timestamp>2020-01-01T00:00:00Z</timestamp><text>&xxe;</text></revision></page></mediawiki>`, "invalid character entity &xxe;"},
		{"not a dump", `<html></html>`, "not a MediaWiki export"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lim := Limits{MaxTextBytes: 2048}
			if c.name == "a truncated dump" {
				lim = Limits{}
			}
			_, _, err := readAll(t, strings.NewReader(c.dump), lim)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *Error", err)
			}
			if !strings.Contains(err.Error(), c.want) || e.Line == 0 {
				t.Errorf("error %q, want %q with a position", err, c.want)
			}
		})
	}
}

func TestDecompress(t *testing.T) {
	var plain bytes.Buffer
	Generate(&plain, 5, 2, 1)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	zw.Close()
	inputs := map[Compression][]byte{Plain: plain.Bytes(), Gzip: gz.Bytes()}
	if bz, err := os.ReadFile("testdata/small.xml.bz2"); err == nil {
		inputs[Bzip2] = bz
	} else {
		t.Error(err)
	}
	for want, in := range inputs {
		r, c, err := Decompress(bytes.NewReader(in))
		if err != nil || c != want {
			t.Fatalf("%q: %v %v", want, c, err)
		}
		_, items, err := readAll(t, r, Limits{})
		if err != nil || len(items) < 3 {
			t.Errorf("%q: %d items, %v", want, len(items), err)
		}
	}
	if _, _, err := Decompress(bytes.NewReader([]byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c, 0, 4})); err == nil || !strings.Contains(err.Error(), "7z x") {
		t.Errorf("7z: %v", err)
	}
}

// TestMakeBzip2 writes testdata/small.xml.bz2 with the bzip2 command
// (Go has no bzip2 writer): MWXML_MAKE_BZIP2=1 go test -run MakeBzip2.
func TestMakeBzip2(t *testing.T) {
	if os.Getenv("MWXML_MAKE_BZIP2") == "" {
		t.Skip("set MWXML_MAKE_BZIP2=1 to write testdata/small.xml.bz2")
	}
	var plain bytes.Buffer
	Generate(&plain, 5, 2, 1)
	cmd := exec.Command("bzip2", "-9c")
	cmd.Stdin = &plain
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll("testdata", 0o755)
	if err := os.WriteFile("testdata/small.xml.bz2", out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(sample))
	var gen bytes.Buffer
	Generate(&gen, 2, 2, 1)
	f.Add(gen.Bytes())
	f.Add([]byte(`<mediawiki><page><title>A</title><revision><timestamp>2020-01-01T00:00:00Z</timestamp><text>x</text></revision></page></mediawiki>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data), Limits{MaxTextBytes: 4096, MaxDepth: 16})
		if err != nil {
			return
		}
		for range 10000 {
			it, err := rd.Next()
			if err != nil {
				return
			}
			if v, ok := it.(*Revision); ok && len(v.Text) > 4096 {
				t.Fatalf("a text of %d bytes passed the limit", len(v.Text))
			}
		}
	})
}
