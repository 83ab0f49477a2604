package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// fileSet is an Options.Files that knows a fixed set of files and
// records its calls.
type fileSet struct {
	mu    sync.Mutex
	files map[wiki.Title]wiki.FileVersion
	calls int
	asked []wiki.Title
}

func (f *fileSet) fn(_ context.Context, ts []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.asked = append(f.asked, ts...)
	out := map[wiki.Title]wiki.FileVersion{}
	for _, t := range ts {
		if v, ok := f.files[t]; ok {
			out[t] = v
		}
	}
	return out, nil
}

// fileVersion is a version of file title with content named after it.
func fileVersion(title, mime string, w, h int) wiki.FileVersion {
	sum := sha256.Sum256([]byte(title))
	return wiki.FileVersion{Title: wiki.MustTitle(title), SHA256: hex.EncodeToString(sum[:]), MIME: mime, Width: w, Height: h, Size: 1000}
}

// sha is the SHA-256 fileVersion gives title.
func sha(title string) string { return fileVersion(title, "", 0, 0).SHA256 }

// testFiles are the files the tests' wiki holds.
func testFiles() *fileSet {
	f := &fileSet{files: map[wiki.Title]wiki.FileVersion{}}
	for _, v := range []wiki.FileVersion{
		fileVersion("File:Photo.jpg", "image/jpeg", 1200, 800),
		fileVersion("File:Small.png", "image/png", 100, 50),
		fileVersion("File:Mid.png", "image/png", 300, 200),
		fileVersion("File:Exact.png", "image/png", 220, 110),
		fileVersion("File:Tall.png", "image/png", 300, 600),
		fileVersion("File:Anim.gif", "image/gif", 500, 500),
		fileVersion("File:Logo.svg", "image/svg+xml", 400, 200),
		fileVersion("File:Sizeless.svg", "image/svg+xml", 0, 0),
		fileVersion("File:Manual.pdf", "application/pdf", 0, 0),
		fileVersion("File:Huge.png", "image/png", 10000, 10000),
		fileVersion("File:Scan.tiff", "image/tiff", 800, 600),
		fileVersion(`File:A&B's "q".png`, "image/png", 640, 480),
		fileVersion("File:서울.jpg", "image/jpeg", 1000, 500),
	} {
		f.files[v.Title] = v
	}
	return f
}

// mustRenderFiles renders src with the test wiki's pages ex and files f.
func mustRenderFiles(tb testing.TB, src string, ex Exists, f *fileSet) Result {
	tb.Helper()
	var o Options
	if f != nil {
		o.Files = f.fn
	}
	res, err := New().RenderWith(context.Background(), src, ex, o)
	if err != nil {
		tb.Fatalf("Render(%q): %v", src, err)
	}
	if !IsSafe(res.HTML) {
		tb.Fatalf("Render(%q) output is not a sanitizer fixpoint:\n%s\nvs\n%s", src, res.HTML, Sanitize(res.HTML))
	}
	checkSafeHTML(tb, res.HTML)
	return res
}

// media is the URL of file (a name as media URLs carry it, "220px-X.png")
// of the test file title.
func media(title, file string) string { return "/media/" + sha(title) + "/" + file }

// img is the <img> of a test file: src, srcset ("" for none), the rest
// of the attributes as written between them and loading.
func img(src, srcset, attrs string) string {
	s := `<img src="` + src + `"`
	if srcset != "" {
		s += ` srcset="` + srcset + `"`
	}
	return s + " " + attrs + ` loading="lazy" decoding="async">`
}

var (
	photo220 = img(media("File:Photo.jpg", "220px-Photo.jpg"),
		media("File:Photo.jpg", "330px-Photo.jpg")+" 1.5x, "+media("File:Photo.jpg", "440px-Photo.jpg")+" 2x", `alt="Harbour" width="220" height="147"`)
	photoOwn = img(media("File:Photo.jpg", "Photo.jpg"), "", `alt="Photo.jpg" width="1200" height="800"`)
	smallOwn = img(media("File:Small.png", "Small.png"), "", `alt="Small.png" width="100" height="50"`)
)

type fileCase struct {
	name, src string
	want      []string // substrings of the HTML
	not       []string // must not appear
}

func runFileCases(t *testing.T, tests []fileCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRenderFiles(t, tt.src, exists("Foo", "File:Photo.jpg").fn, testFiles())
			for _, w := range tt.want {
				if !strings.Contains(res.HTML, w) {
					t.Errorf("HTML lacks\n%s\ngot:\n%s", w, res.HTML)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(res.HTML, w) {
					t.Errorf("HTML contains %s\ngot:\n%s", w, res.HTML)
				}
			}
		})
	}
}

func TestFileSizes(t *testing.T) {
	p := func(file string) string { return media("File:Photo.jpg", file) }
	runFileCases(t, []fileCase{
		{"a thumbnail is the default width, with its 1.5x and 2x, in a figure with its caption", "[[File:Photo.jpg|thumb|Harbour]]",
			[]string{`<figure class="thumb tright"><a href="/wiki/File:Photo.jpg" class="image">` + photo220 + `</a><figcaption>Harbour</figcaption></figure>` + "\n"}, []string{"<p>"}},
		{"thumbnail and Image: are the same", "[[Image:Photo.jpg|thumbnail|Harbour]]",
			[]string{`<figure class="thumb tright"><a href="/wiki/File:Photo.jpg" class="image">` + photo220 + `</a><figcaption>Harbour</figcaption></figure>`}, nil},
		{"a plain image is shown at its own size, from its original", "[[File:Photo.jpg]]",
			[]string{`<p><a href="/wiki/File:Photo.jpg" class="image">` + photoOwn + `</a></p>`}, []string{"srcset", "figure"}},
		{"a width makes a thumbnail", "[[File:Photo.jpg|300px]]",
			[]string{img(p("300px-Photo.jpg"), p("450px-Photo.jpg")+" 1.5x, "+p("600px-Photo.jpg")+" 2x", `alt="Photo.jpg" width="300" height="200"`)}, nil},
		{"a height alone sets the width by the aspect ratio", "[[File:Photo.jpg|x100px]]",
			[]string{`src="` + p("150px-Photo.jpg") + `"`, `width="150" height="100"`}, nil},
		{"a box fits the image: the height limits", "[[File:Photo.jpg|300x100px]]",
			[]string{`width="150" height="100"`}, nil},
		{"a box fits the image: the width limits", "[[File:Photo.jpg|120x400px]]",
			[]string{`width="120" height="80"`}, nil},
		{"the height is rounded", "[[File:Photo.jpg|thumb|101px]]",
			[]string{`width="101" height="67"`, p("152px-Photo.jpg") + " 1.5x", p("202px-Photo.jpg") + " 2x"}, nil},
		{"an image is never enlarged", "[[File:Small.png|500px]] [[File:Small.png|thumb]] [[File:Small.png|x1000px]]",
			[]string{`<a href="/wiki/File:Small.png" class="image">` + smallOwn + `</a>`}, []string{"px-Small", "srcset", `width="500"`, `width="220"`}},
		{"the original serves 1.5x when the thumbnail for it would be as wide, and 2x is left out", "[[File:Mid.png|thumb]]",
			[]string{img(media("File:Mid.png", "220px-Mid.png"), media("File:Mid.png", "Mid.png")+" 1.5x", `alt="Mid.png" width="220" height="147"`)}, []string{" 2x"}},
		{"the original serves 2x when only the 2x thumbnail would be as wide", "[[File:Photo.jpg|700px]]",
			[]string{`srcset="` + p("1050px-Photo.jpg") + " 1.5x, " + p("Photo.jpg") + ` 2x"`, `width="700" height="467"`}, nil},
		{"a thumbnail as wide as the original is the original, without srcset", "[[File:Exact.png|thumb]]",
			[]string{img(media("File:Exact.png", "Exact.png"), "", `alt="Exact.png" width="220" height="110"`)}, []string{"srcset", "px-"}},
		{"thumbnails of GIF are PNG", "[[File:Anim.gif|thumb]]",
			[]string{`src="` + media("File:Anim.gif", "220px-Anim.gif.png") + `"`, media("File:Anim.gif", "330px-Anim.gif.png") + " 1.5x"}, nil},
		{"frameless is a thumbnail's size without its frame", "[[File:Photo.jpg|frameless|alt=Harbour]]",
			[]string{`<p><a href="/wiki/File:Photo.jpg" class="image">` + photo220 + `</a></p>`}, []string{"figure", "thumb"}},
		{"upright scales the default width by three quarters, in tens", "[[File:Photo.jpg|thumb|upright]]",
			[]string{`src="` + p("170px-Photo.jpg") + `"`, `width="170" height="113"`}, nil},
		{"upright takes a factor", "[[File:Photo.jpg|frameless|upright=0.5]] [[File:Photo.jpg|thumb|upright=2]]",
			[]string{`width="110" height="73"`, `width="440" height="293"`}, nil},
		{"an explicit width wins over upright", "[[File:Photo.jpg|thumb|upright|300px]]",
			[]string{`width="300" height="200"`}, []string{`width="170"`}},
		{"upright leaves a plain image alone", "[[File:Photo.jpg|upright]]",
			[]string{photoOwn}, nil},
		{"a frame shows the image at its own size, whatever size is asked", "[[File:Small.png|frame|300px|In a frame]]",
			[]string{`<figure class="thumb tright"><a href="/wiki/File:Small.png" class="image">` +
				img(media("File:Small.png", "Small.png"), "", `alt="In a frame" width="100" height="50"`) + `</a><figcaption>In a frame</figcaption></figure>`}, nil},
		{"keywords are read in any case, with spaces", "[[ file : Photo.jpg | THUMB | Left | 200PX | Harbour ]]",
			[]string{`<figure class="thumb tleft">`, `width="200" height="133"`, `<figcaption>Harbour</figcaption>`}, nil},
		{"a size of more digits is a caption", "[[File:Photo.jpg|thumb|123456px]]",
			[]string{`<figcaption>123456px</figcaption>`, `width="220"`}, nil},
		{"an SVG is shown from its original, scaled by the browser, enlarged if asked", "[[File:Logo.svg|thumb]] [[File:Logo.svg|800px]]",
			[]string{img(media("File:Logo.svg", "Logo.svg"), "", `alt="Logo.svg" width="220" height="110"`),
				img(media("File:Logo.svg", "Logo.svg"), "", `alt="Logo.svg" width="800" height="400"`)}, []string{"srcset", "px-"}},
		{"an SVG of unknown size gets the width asked only", "[[File:Sizeless.svg|thumb]] [[File:Sizeless.svg]]",
			[]string{img(media("File:Sizeless.svg", "Sizeless.svg"), "", `alt="Sizeless.svg" width="220"`),
				img(media("File:Sizeless.svg", "Sizeless.svg"), "", `alt="Sizeless.svg"`)}, []string{"height="}},
	})
}

func TestFileLayout(t *testing.T) {
	runFileCases(t, []fileCase{
		{"thumbnails stand right by default, or where told", "[[File:Small.png|thumb|left]] [[File:Small.png|thumb|center]] [[File:Small.png|thumb|centre]] [[File:Small.png|thumb|none]] [[File:Small.png|frame|right]]",
			[]string{`<figure class="thumb tleft">`, `<figure class="thumb tcenter">`, `<figure class="thumb tnone">`, `<figure class="thumb tright">`}, []string{"<p>"}},
		{"the last alignment wins", "[[File:Small.png|thumb|left|right]]",
			[]string{`<figure class="thumb tright">`}, []string{"tleft"}},
		{"a floated image without a frame is in a span, without a paragraph", "[[File:Small.png|left]]\n[[File:Small.png|frameless|center|50px]]",
			[]string{`<span class="image-left"><a href="/wiki/File:Small.png" class="image">` + smallOwn + `</a></span>` + "\n" + `<span class="image-center"><a href="/wiki/File:Small.png" class="image">`},
			[]string{"<p>", "figure"}},
		{"none is no float for an image without a frame", "[[File:Small.png|none]]",
			[]string{`<p><a href="/wiki/File:Small.png" class="image">` + smallOwn + `</a></p>`}, []string{"image-none"}},
		{"images in text stay in the paragraph", "See [[File:Small.png]] here.",
			[]string{`<p>See <a href="/wiki/File:Small.png" class="image">` + smallOwn + `</a> here.</p>`}, nil},
		{"a thumbnail in text is spans, since a paragraph may not hold a figure", "See [[File:Small.png|thumb|The [[Foo|foo]]]] here.",
			[]string{`<p>See <span class="thumb tright"><a href="/wiki/File:Small.png" class="image">` +
				img(media("File:Small.png", "Small.png"), "", `alt="The foo" width="100" height="50"`) +
				`</a><span class="thumbcaption">The <a href="/wiki/Foo" title="Foo">foo</a></span></span> here.</p>`}, []string{"figure"}},
		{"a paragraph of thumbnails and categories has no <p>", "[[File:Small.png|thumb|a]]\n[[File:Photo.jpg|frame|b]] [[Category:Pictures]]",
			[]string{"<figcaption>a</figcaption></figure>\n<figure", "<figcaption>b</figcaption></figure>"}, []string{"<p>", "Pictures"}},
		{"a paragraph of plain images keeps its <p>", "[[File:Small.png]] [[File:Small.png|50px]]",
			[]string{`<p><a href="/wiki/File:Small.png"`}, nil},
		{"a paragraph of a thumbnail and a Media: link keeps its <p>", "[[File:Small.png|thumb]] [[Media:Manual.pdf]]",
			[]string{`<p><span class="thumb tright">`}, []string{"figure"}},
		{"in a tight list item a thumbnail is a figure", "- [[File:Small.png|thumb|a]]\n- b [[File:Small.png|thumb|c]]",
			[]string{`<li><figure class="thumb tright">`, `<li>b <span class="thumb tright">`}, nil},
		{"in a table cell, spans", "| a |\n|---|\n| [[File:Small.png|thumb|x [[Foo|y]] z]] |",
			[]string{`<td><span class="thumb tright">`, `<span class="thumbcaption">x <a href="/wiki/Foo" title="Foo">y</a> z</span></span></td>`}, nil},
		{"a thumbnail without a caption has no figcaption", "[[File:Small.png|thumb]]",
			[]string{`</a></figure>`}, []string{"figcaption"}},
		{"a border on an image without a frame", "[[File:Small.png|border]] [[File:Small.png|thumb|border]]",
			[]string{`alt="Small.png" width="100" height="50" class="thumbborder" loading`}, []string{`</a><figcaption`}},
		{"the caption is the last option that is none", "[[File:Small.png|thumb|first|left|second|middle]]",
			[]string{"<figcaption>second</figcaption>"}, []string{"first", "middle"}},
		{"empty options are no caption", "[[File:Small.png|thumb|Cap| |]]",
			[]string{"<figcaption>Cap</figcaption>"}, nil},
		{"a caption may be long", "[[File:Small.png|thumb|" + strings.Repeat("word ", 700) + "end]]",
			[]string{"<figcaption>word word", "end</figcaption>"}, nil},
		{"a caption holds wiki links, red or blue, and categories", "[[File:Small.png|thumb|A [[Foo]], a [[Bar|bar]][[Category:Cats]] & more]]",
			[]string{`<figcaption>A <a href="/wiki/Foo" title="Foo">Foo</a>, a <a href="/wiki/Bar?action=edit&amp;redlink=1" class="new" title="Bar (page does not exist)">bar</a> &amp; more</figcaption>`}, []string{"Cats"}},
		{"an embed longer than the limit is no embed", "[[File:Small.png|thumb|" + strings.Repeat("x", maxFileEmbed) + "]]",
			[]string{"[[File:Small.png|thumb|xxx"}, []string{"<img", "<figure"}},
		{"a link in a caption's link ends the embed", "[[File:Small.png|thumb|a [[b [[c]] d]] e]]",
			[]string{`<a href="/wiki/C?action=edit&amp;redlink=1"`}, []string{"<img"}},
		{"in a Markdown link an image is not linked again, and its caption is text", "[x [[File:Small.png]] [[File:Small.png|thumb|a [[Foo]]]]](/x)",
			[]string{`<a href="/x">x ` + smallOwn + ` <span class="thumb tright">` + img(media("File:Small.png", "Small.png"), "", `alt="a Foo" width="100" height="50"`) + `<span class="thumbcaption">a Foo</span></span></a>`},
			[]string{`class="image"`}},
	})
}

func TestFileLinksAndText(t *testing.T) {
	runFileCases(t, []fileCase{
		{"alt= gives the alt text", "[[File:Small.png|thumb|alt=A small picture|Cap]]",
			[]string{`alt="A small picture"`, "<figcaption>Cap</figcaption>"}, nil},
		{"an empty alt= is an empty alt text", "[[File:Small.png|alt=]]",
			[]string{`alt=""`}, nil},
		{"a thumbnail's alt text is its caption, as text", "[[File:Small.png|thumb|A [[Foo|foo]] & b]]",
			[]string{`alt="A foo &amp; b"`}, nil},
		{"the caption of an image without a frame is its alt text and tooltip", "[[File:Small.png|A small one]]",
			[]string{`alt="A small one" title="A small one" width="100"`}, []string{"figcaption", "thumbcaption"}},
		{"link= to a page", "[[File:Small.png|link=Foo]] [[File:Small.png|link=bar#Some part]] [[File:Small.png|link=#Here]] [[File:Small.png|link=:Category:Cats]]",
			[]string{`<a href="/wiki/Foo" class="image" title="Foo"><img`, `<a href="/wiki/Bar#Some_part" class="image" title="Bar"><img`,
				`<a href="#Here" class="image"><img`, `<a href="/wiki/Category:Cats" class="image" title="Category:Cats"><img`}, []string{`href="/wiki/File:Small.png"`}},
		{"link= to a URL is an external link", "[[File:Small.png|link=https://example.org/a b?c=1&d=2]] [[File:Small.png|link=//example.org/x]] [[File:Small.png|link=mailto:a@example.org]]",
			[]string{`<a href="https://example.org/a%20b?c=1&amp;d=2" class="image external" rel="nofollow noopener"><img`,
				`<a href="//example.org/x" class="image external" rel="nofollow noopener"><img`, `<a href="mailto:a@example.org" class="image external" rel="nofollow noopener"><img`}, nil},
		{"an empty link= links nowhere", "[[File:Small.png|link=]]\n\n[[File:Small.png|thumb|link=|Cap]]",
			[]string{`<p>` + smallOwn, `<figure class="thumb tright"><img`}, []string{"<a "}},
		{"a link= a browser would run links nowhere", "[[File:Small.png|link=javascript:alert(1)]] [[File:Small.png|link=JavaScript:alert(1)]] [[File:Small.png|link=data:text/html,x]] [[File:Small.png|link=vbscript:x]]",
			[]string{`<p>` + smallOwn}, []string{"<a ", "javascript", "JavaScript", "data:", "vbscript"}},
		{"a link= that names no page links nowhere", "[[File:Small.png|link=a<b]] [[File:Small.png|link=ftp://example.org/x]]",
			[]string{smallOwn}, []string{"<a "}},
		{"a missing file is a red link to upload it", "[[File:Nope.png]]",
			[]string{`<p><a href="/wiki/Special:Upload?wpDestFile=Nope.png" class="new" title="File:Nope.png (upload it)">File:Nope.png</a></p>`}, nil},
		{"a missing file's link says its caption, or its alt text", "[[File:Nope.png|thumb|A caption]] [[File:Nope_two.png|alt=Alt text]] [[File:nope three.png|thumb|alt=Alt|Cap [[Foo]]]]",
			[]string{`title="File:Nope.png (upload it)">A caption</a>`, `<a href="/wiki/Special:Upload?wpDestFile=Nope_two.png" class="new" title="File:Nope two.png (upload it)">Alt text</a>`,
				`<a href="/wiki/Special:Upload?wpDestFile=Nope_three.png" class="new" title="File:Nope three.png (upload it)">Cap Foo</a>`}, []string{"<img", "figure"}},
		{"a missing file's name is escaped for the query", "[[File:Ünïcode & more.png]]",
			[]string{`href="/wiki/Special:Upload?wpDestFile=%C3%9Cn%C3%AFcode_%26_more.png"`, `title="File:Ünïcode &amp; more.png (upload it)">File:Ünïcode &amp; more.png</a>`}, nil},
		{"a file that is no image is a link to its page", "[[File:Manual.pdf]] [[File:Manual.pdf|thumb|The manual]]",
			[]string{`<a href="/wiki/File:Manual.pdf" class="file-not-image" title="File:Manual.pdf">Manual.pdf</a>`,
				`<a href="/wiki/File:Manual.pdf" class="file-not-image" title="File:Manual.pdf">The manual</a>`}, []string{"<img", "/media/"}},
		{"an image of too many pixels is a link to its page", "[[File:Huge.png|thumb|Big]]",
			[]string{`<a href="/wiki/File:Huge.png" class="file-too-large" title="File:Huge.png">Big</a>`}, []string{"<img", "/media/"}},
		{"an image of a type without thumbnails is a link to its page", "[[File:Scan.tiff|200px]]",
			[]string{`<a href="/wiki/File:Scan.tiff" class="file-unsupported" title="File:Scan.tiff">Scan.tiff</a>`}, []string{"<img"}},
		{"a Media: link goes to the file's bytes", "[[Media:Manual.pdf|the manual]] [[media:manual.pdf]] [[Media:Photo.jpg]] [[:Media:Small.png|s]]",
			[]string{`<a href="` + media("File:Manual.pdf", "Manual.pdf") + `" class="internal" title="File:Manual.pdf">the manual</a>`,
				`<a href="` + media("File:Manual.pdf", "Manual.pdf") + `" class="internal" title="File:Manual.pdf">media:manual.pdf</a>`,
				`<a href="` + media("File:Photo.jpg", "Photo.jpg") + `" class="internal" title="File:Photo.jpg">Media:Photo.jpg</a>`,
				`<a href="` + media("File:Small.png", "Small.png") + `" class="internal" title="File:Small.png">s</a>`}, []string{"<img"}},
		{"a Media: link to a missing file is a red link to upload it", "[[Media:Nope.pdf|the notes]] [[Media:Nope.pdf]]",
			[]string{`<a href="/wiki/Special:Upload?wpDestFile=Nope.pdf" class="new" title="File:Nope.pdf (upload it)">the notes</a>`,
				`<a href="/wiki/Special:Upload?wpDestFile=Nope.pdf" class="new" title="File:Nope.pdf (upload it)">Media:Nope.pdf</a>`}, nil},
		{"a Media: link that names no file is text", "[[Media:a<b]]",
			[]string{"[[Media:a&lt;b]]"}, []string{"<a "}},
		{"a leading colon links to the file's page", "[[:File:Photo.jpg]] [[:Image:Nope.png|the page]]",
			[]string{`<a href="/wiki/File:Photo.jpg" title="File:Photo.jpg">File:Photo.jpg</a>`,
				`<a href="/wiki/File:Nope.png?action=edit&amp;redlink=1" class="new" title="File:Nope.png (page does not exist)">the page</a>`}, []string{"<img", "Upload"}},
		{"a missing file in a link is its text", "[x [[File:Nope.png|thumb|Gone]] [[Media:Nope.pdf|notes]] [[File:Manual.pdf]]](/x)",
			[]string{`<a href="/x">x Gone notes Manual.pdf</a>`}, []string{"Upload"}},
	})
}

func TestMarkdownImagesOfFiles(t *testing.T) {
	runFileCases(t, []fileCase{
		{"a file's image is shown at its own size from its original", "![A harbour](File:Photo.jpg) ![x](./photo.jpg \"T\") ![](Image:Photo.jpg)",
			[]string{img(media("File:Photo.jpg", "Photo.jpg"), "", `alt="A harbour" width="1200" height="800"`),
				img(media("File:Photo.jpg", "Photo.jpg"), "", `alt="x" title="T" width="1200" height="800"`),
				img(media("File:Photo.jpg", "Photo.jpg"), "", `alt="" width="1200" height="800"`)}, []string{"srcset", "<a "}},
		{"an SVG too", "![Logo](Logo.svg)",
			[]string{img(media("File:Logo.svg", "Logo.svg"), "", `alt="Logo" width="400" height="200"`)}, nil},
		{"a missing file is a red link to upload it, with the alt text", "![A diagram](Diagram.png) ![](sub/chart.png)",
			[]string{`<a href="/wiki/Special:Upload?wpDestFile=Diagram.png" class="new" title="File:Diagram.png (upload it)">A diagram</a>`,
				`<a href="/wiki/Special:Upload?wpDestFile=Sub%2Fchart.png" class="new" title="File:Sub/chart.png (upload it)">File:Sub/chart.png</a>`}, []string{"<img"}},
		{"a file that is no image, or too large, is a link to its page", "![The manual](Manual.pdf) ![](File:Huge.png)",
			[]string{`<a href="/wiki/File:Manual.pdf" class="file-not-image" title="File:Manual.pdf">The manual</a>`,
				`<a href="/wiki/File:Huge.png" class="file-too-large" title="File:Huge.png">Huge.png</a>`}, []string{"<img"}},
		{"in a link, the image alone, or the text of a missing file", "[![in](Small.png)](/x) [![out](Nope.png)](/y)",
			[]string{`<a href="/x">` + img(media("File:Small.png", "Small.png"), "", `alt="in" width="100" height="50"`) + `</a>`, `<a href="/y">out</a>`}, []string{"Upload"}},
		{"images that name no file of the wiki are as before", "![a](/static/a.png) ![b](https://example.org/b.png) ![c](../c.png)",
			[]string{`<img src="/static/a.png" alt="a">`, `<a href="https://example.org/b.png" class="external" rel="nofollow noopener">b</a>`, `<img alt="c">`}, []string{"/media/", "Upload"}},
	})
}

// The files a page shows or links to as media are its LinkSet.Files, each
// once, as File: titles, whether they exist or not; Render, Links and
// Analyze agree.
func TestFileLinkSet(t *testing.T) {
	src := "[[File:Photo.jpg|thumb|A [[Foo]] [[Category:Pictures]]]] [[Image:photo.jpg]] [[Media:Manual.pdf]] [[media:Nope.pdf]]\n\n" +
		"![x](Diagram.png) ![y](File:Photo.jpg) ![z](../up.png) ![w](/static/a.png) [[:File:Linked.png]] [[File:Small.png|link=Target page#s]] " +
		"[[File:Small.png|link=Special:Upload]] [[File:Small.png|link=https://example.org/]]\n\n`[[File:InCode.png]]`\n"
	wantFiles := []wiki.Title{"File:Photo.jpg", "File:Manual.pdf", "File:Nope.pdf", "File:Diagram.png", "File:Small.png"}
	wantLinks := []wiki.Title{"Foo", "File:Linked.png", "Target page"}
	r := New()
	analyzed, _ := r.Analyze(src)
	for name, ls := range map[string]wiki.LinkSet{
		"Render":  mustRenderFiles(t, src, nil, testFiles()).Links,
		"Links":   r.Links(src),
		"Analyze": analyzed,
	} {
		if !slices.Equal(ls.Files, wantFiles) {
			t.Errorf("%s: files %q, want %q", name, ls.Files, wantFiles)
		}
		if !slices.Equal(ls.Links, wantLinks) {
			t.Errorf("%s: links %q, want %q", name, ls.Links, wantLinks)
		}
		if !slices.Equal(ls.Categories, []wiki.Title{"Category:Pictures"}) {
			t.Errorf("%s: categories %q", name, ls.Categories)
		}
	}
	if ls := r.Links("[[Foo]] ![a](/a.png)"); ls.Files != nil {
		t.Errorf("a page without files has files %q", ls.Files)
	}
	// The search index reads captions and labels, not options.
	plain := r.PlainText("[[File:Photo.jpg|thumb|200px|Sunset [[Foo|over]] the bay]] [[Media:Manual.pdf|the manual]] ![A map](Map.png)")
	if want := "Sunset over the bay the manual A map\n"; plain != want {
		t.Errorf("PlainText = %q, want %q", plain, want)
	}
}

// Files is asked once per render, with every distinct file, in order of
// first use; a page without files does not ask.
func TestFilesCalledOnceInBatch(t *testing.T) {
	f := testFiles()
	res := mustRenderFiles(t, "[[File:Photo.jpg]] [[File:Nope.png|thumb]] ![a](photo.jpg) [[Media:Manual.pdf]] [[Media:nope.png]]\n\n"+
		"| [[File:Small.png|x]] | ![b](Other.png) |\n|---|---|\n\n> [[File:Photo.jpg|thumb|[[Foo]]]]", exists("Foo").fn, f)
	if f.calls != 1 {
		t.Errorf("Files called %d times, want 1", f.calls)
	}
	want := []wiki.Title{"File:Photo.jpg", "File:Nope.png", "File:Manual.pdf", "File:Small.png", "File:Other.png"}
	if !slices.Equal(f.asked, want) {
		t.Errorf("Files asked %q, want %q", f.asked, want)
	}
	if !slices.Equal(res.Links.Files, want) {
		t.Errorf("LinkSet.Files = %q, want %q", res.Links.Files, want)
	}

	none := testFiles()
	mustRenderFiles(t, "[[Foo]] [[:File:Photo.jpg]] ![a](/static/a.png) ![b](https://example.org/b.png) `[[File:X.png]]`", nil, none)
	if none.calls != 0 {
		t.Errorf("Files called %d times for a page that shows no file", none.calls)
	}
}

func TestFilesError(t *testing.T) {
	boom := errors.New("boom")
	_, err := New().RenderWith(context.Background(), "[[File:Photo.jpg]]", nil, Options{
		Files: func(context.Context, []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) { return nil, boom },
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want it to wrap boom", err)
	}
}

// Without Files every file is missing: Render keeps working, with red
// links to upload them.
func TestNilFilesMakesRedLinks(t *testing.T) {
	src := "[[File:Photo.jpg|thumb|Harbour]] [[Media:Manual.pdf]] ![x](Small.png)"
	want := `<p><a href="/wiki/Special:Upload?wpDestFile=Photo.jpg" class="new" title="File:Photo.jpg (upload it)">Harbour</a> ` +
		`<a href="/wiki/Special:Upload?wpDestFile=Manual.pdf" class="new" title="File:Manual.pdf (upload it)">Media:Manual.pdf</a> ` +
		`<a href="/wiki/Special:Upload?wpDestFile=Small.png" class="new" title="File:Small.png (upload it)">x</a></p>` + "\n"
	if got := mustRender(t, src, nil).HTML; got != want {
		t.Errorf("Render:\n got %s\nwant %s", got, want)
	}
	if got := mustRenderFiles(t, src, nil, nil).HTML; got != want {
		t.Errorf("RenderWith without Files:\n got %s\nwant %s", got, want)
	}
}

// A version is used as the lookup gives it; one whose hash no media URL
// could carry is shown as a link to its page.
func TestFileVersionWithABadHash(t *testing.T) {
	f := &fileSet{files: map[wiki.Title]wiki.FileVersion{
		"File:Bad.png": {Title: "File:Bad.png", SHA256: `"><script>`, MIME: "image/png", Width: 10, Height: 10},
		"File:Bare.png": func() wiki.FileVersion { // no title: named after the embed
			v := fileVersion("File:Bare.png", "image/png", 300, 100)
			v.Title = ""
			return v
		}(),
	}}
	res := mustRenderFiles(t, "[[File:Bad.png|thumb]] [[Media:Bad.png]] [[File:Bare.png|thumb]]", nil, f)
	for _, want := range []string{
		`<a href="/wiki/File:Bad.png" class="file-unsupported" title="File:Bad.png">Bad.png</a>`,
		`<a href="/wiki/File:Bad.png" class="file-unsupported" title="File:Bad.png">Media:Bad.png</a>`,
		`src="` + media("File:Bare.png", "220px-Bare.png") + `"`,
	} {
		if !strings.Contains(res.HTML, want) {
			t.Errorf("HTML lacks %s\ngot:\n%s", want, res.HTML)
		}
	}
	if strings.Contains(res.HTML, "script") {
		t.Errorf("the hash reached the page:\n%s", res.HTML)
	}
}

// Everything an author writes in an embed reaches the page escaped, and no
// link= makes a link a browser would run.
func TestFileXSS(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"a caption with tags", `[[File:Photo.jpg|thumb|<script>alert(1)</script><img src=x onerror=alert(1)>]]`,
			[]string{`<figcaption>&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</figcaption>`, `alt="&lt;script&gt;`}},
		{"a caption with quotes in an image's tooltip", `[[File:Photo.jpg|a" onerror="alert(1)]]`,
			[]string{`title="a&#34; onerror=&#34;alert(1)"`}},
		{"alt text with quotes", `[[File:Photo.jpg|alt=x" onerror="alert(1)' b]]`,
			[]string{`alt="x&#34; onerror=&#34;alert(1)&#39; b"`}},
		{"a javascript: link=", `[[File:Photo.jpg|link=javascript:alert(1)]] [[File:Photo.jpg|link= javascript:alert(1)]] [[File:Photo.jpg|link=jav&#x09;ascript:alert(1)]]`, nil},
		{"a link= with quotes", `[[File:Photo.jpg|link=https://x.example/" onclick="alert(1)]] [[File:Photo.jpg|link=Foo" onclick="alert(1)]]`,
			[]string{`href="https://x.example/%22%20onclick=%22alert(1)" class="image external"`, `href="/wiki/Foo%22_onclick=%22alert%281%29" class="image" title="Foo&#34; onclick=&#34;alert(1)"`}},
		{"a file name with quotes and an ampersand", `[[File:A&B's "q".png|thumb|c]] [[File:Nope "x" & 'y'.png]] [[Media:A&B's "q".png]]`,
			[]string{`href="/wiki/File:A&amp;B%27s_%22q%22.png"`, `srcset="` + media(`File:A&B's "q".png`, "330px-A&amp;B%27s_%22q%22.png") + " 1.5x",
				`title="File:Nope &#34;x&#34; &amp; &#39;y&#39;.png (upload it)">File:Nope &#34;x&#34; &amp; &#39;y&#39;.png</a>`,
				`wpDestFile=Nope_%22x%22_%26_%27y%27.png"`}},
		{"a file name with tags is no file", `[[File:"><img src=x onerror=alert(1)>.png|thumb]]`,
			[]string{`[[File:&#34;&gt;&lt;img src=x onerror=alert(1)&gt;.png|thumb]]`}},
		{"a Media: label with tags", `[[Media:Manual.pdf|<b onclick=alert(1)>x</b>]]`,
			[]string{`>&lt;b onclick=alert(1)&gt;x&lt;/b&gt;</a>`}},
		{"a Markdown image's alt text and title", `![x" onerror="alert(1)](Photo.jpg "t\" onload=\"alert(1)")`,
			[]string{`alt="x&#34; onerror=&#34;alert(1)"`, `title="t&#34; onload=&#34;alert(1)"`}},
		{"a caption link with tags", `[[File:Photo.jpg|thumb|[[Foo|<script>x</script>]]]]`,
			[]string{`<a href="/wiki/Foo" title="Foo">&lt;script&gt;x&lt;/script&gt;</a>`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRenderFiles(t, tt.src, exists("Foo").fn, testFiles())
			for _, w := range tt.want {
				if !strings.Contains(res.HTML, w) {
					t.Errorf("HTML lacks %s\ngot:\n%s", w, res.HTML)
				}
			}
			// mustRenderFiles checked the elements, attributes and URLs.
			if lower := strings.ToLower(res.HTML); strings.Contains(lower, "javascript:") || strings.Contains(lower, "<script") {
				t.Errorf("unsafe output:\n%s", res.HTML)
			}
		})
	}
}

func TestSanitizeKeepsFileMarkup(t *testing.T) {
	p, mid := media("File:Photo.jpg", ""), media("File:Mid.png", "")
	own := []string{
		`<figure class="thumb tright"><a href="/wiki/File:Photo.jpg" class="image">` + photo220 + `</a><figcaption>Harbour <a href="/wiki/Foo" title="Foo">f</a></figcaption></figure>`,
		`<p>a <span class="thumb tleft"><a href="/wiki/File:Photo.jpg" class="image"><img src="` + p + `220px-Photo.jpg" alt="x" width="220" height="147" loading="lazy" decoding="async"></a><span class="thumbcaption">x</span></span></p>`,
		`<span class="image-center"><img src="` + mid + `Mid.png" alt="" width="300" height="200" class="thumbborder" loading="lazy" decoding="async"></span>`,
		`<img src="` + mid + `220px-Mid.png" srcset="` + mid + `Mid.png 1.5x" alt="m" width="220" height="147" loading="lazy" decoding="async">`,
		`<a href="https://example.org/" class="image external" rel="nofollow noopener"><img src="` + p + `Photo.jpg" alt="x"></a>`,
		`<a href="/wiki/Special:Upload?wpDestFile=A_%26_b.png" class="new" title="File:A &amp; b.png (upload it)">File:A &amp; b.png</a>`,
		`<a href="` + p + `Photo.jpg" class="internal" title="File:Photo.jpg">x</a>`,
		`<a href="/wiki/File:Doc.pdf" class="file-not-image" title="File:Doc.pdf">Doc.pdf</a> <a href="/wiki/File:H.png" class="file-too-large" title="File:H.png">H.png</a> <a href="/wiki/File:T.tiff" class="file-unsupported" title="File:T.tiff">T.tiff</a>`,
	}
	for _, h := range own {
		if got := Sanitize(h); got != h {
			t.Errorf("Sanitize changed our own markup:\n in: %s\nout: %s", h, got)
		}
	}
	// What the rules above let through, and no more.
	for in, want := range map[string]string{
		`<img src="/a.png" srcset="https://evil.example/a.png 2x">`:                         `<img src="/a.png">`,
		`<img src="/a.png" srcset="` + p + `a.png 1.5x, //evil.example/a.png 2x">`:          `<img src="/a.png">`,
		`<img src="/a.png" srcset="` + p + `a/b.png 1.5x">`:                                 `<img src="/a.png">`,
		`<img src="/a.png" srcset="/media/ABC/a.png 1.5x">`:                                 `<img src="/a.png">`,
		`<img src="/a.png" srcset="` + p + `a.png 3x">`:                                     `<img src="/a.png">`,
		`<img src="/a.png" loading="eager" decoding="sync" class="x">`:                      `<img src="/a.png">`,
		`<figure class="thumb tright x"><figcaption class="y">c</figcaption></figure>`:      `<figure><figcaption>c</figcaption></figure>`,
		`<span class="image-none">a</span><a href="/x" class="image evil">b</a>`:            `<span>a</span><a href="/x">b</a>`,
		`<img src="/a.png" srcset="` + p + `a.png 1.5x, ` + p + `b.png 2x" loading="lazy">`: `<img src="/a.png" srcset="` + p + `a.png 1.5x, ` + p + `b.png 2x" loading="lazy">`,
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}
