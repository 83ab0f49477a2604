// Package view holds the HTML templates and static assets, embedded in the
// binary and parsed once at start-up. Assets are served under
// content-hashed names so that browsers may keep them forever.
package view

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Pages lists every page template; Parse fails if one is missing.
var Pages = []string{"view", "missing", "edit", "history", "diff", "login", "changes", "titles", "search", "form", "error", "blocklist", "preferences", "reset", "log", "editwatchlist", "notifications", "info", "upload", "filerevert", "editmodel", "dumps"}

// Asset is one static file, loaded and hashed at start.
type Asset struct {
	Name        string // hashed name: style.3f2a9c1b.css
	ContentType string
	Body        []byte
	ETag        string
}

// Views is the parsed template set and the asset table.
type Views struct {
	pages  map[string]*template.Template
	assets map[string]*Asset // by hashed name
	urls   map[string]string // logical name → /static/hashed name
	// Version changes when any template or asset changes: part of page ETags.
	Version string
	titles  wiki.TitleRules // the wiki's, for the links in edit summaries
}

// Parse loads and checks every template and asset; titles are the wiki's
// title rules, by which the links in edit summaries name pages.
func Parse(titles wiki.TitleRules) (*Views, error) {
	v := &Views{pages: map[string]*template.Template{}, assets: map[string]*Asset{}, urls: map[string]string{}, titles: titles}
	all := sha256.New()
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])[:12]
		base := path.Base(p)
		ext := path.Ext(base)
		hashed := strings.TrimSuffix(base, ext) + "." + h + ext
		v.assets[hashed] = &Asset{Name: hashed, ContentType: contentType(ext), Body: b, ETag: `"` + h + `"`}
		v.urls[base] = "/static/" + hashed
		all.Write(sum[:])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("view: assets: %w", err)
	}
	layout, err := template.New("layout").Funcs(v.funcs()).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("view: layout: %w", err)
	}
	for _, name := range Pages {
		src, err := templateFS.ReadFile("templates/" + name + ".html")
		if err != nil {
			return nil, fmt.Errorf("view: template %s is missing: %w", name, err)
		}
		all.Write(src)
		t, err := template.Must(layout.Clone()).Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("view: template %s: %w", name, err)
		}
		v.pages[name] = t
	}
	lb, _ := templateFS.ReadFile("templates/layout.html")
	all.Write(lb)
	v.Version = hex.EncodeToString(all.Sum(nil))[:12]
	return v, nil
}

// Asset returns the asset with the given hashed name.
func (v *Views) Asset(name string) (*Asset, bool) { a, ok := v.assets[name]; return a, ok }

// AssetURL returns the hashed URL of a logical asset name ("style.css").
func (v *Views) AssetURL(name string) string { return v.urls[name] }

// Render executes page template name with data into w.
func (v *Views) Render(w io.Writer, name string, data any) error {
	t, ok := v.pages[name]
	if !ok {
		return fmt.Errorf("view: no template %q", name)
	}
	return t.ExecuteTemplate(w, "layout", data)
}

// Fragment executes one named template of the layout set (such as
// "userbar") with data into w.
func (v *Views) Fragment(w io.Writer, name string, data any) error {
	return v.pages["view"].ExecuteTemplate(w, name, data)
}

// RenderBytes is Render into a new buffer.
func (v *Views) RenderBytes(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(16 << 10)
	if err := v.Render(&b, name, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (v *Views) funcs() template.FuncMap {
	return template.FuncMap{
		"asset":    func(name string) string { return v.urls[name] },
		"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"datetime": func(t time.Time) string { return t.UTC().Format("15:04, 2 January 2006") },
		"clock":    func(t time.Time) string { return t.UTC().Format("15:04") },
		"sub":      func(a, b int) int { return a - b },
		"add":      func(a, b int) int { return a + b },
		"snippet":  Snippet,
		// modelName takes a page's Model or a log entry's parameter.
		"modelName": func(m any) string { return ModelName(wiki.ContentModel(fmt.Sprint(m))) },
		// A count read up to a cap (wiki.MaxCount + 1 means more).
		"infoCount": func(n, max int) struct {
			N, Max int
			More   bool
		} {
			return struct {
				N, Max int
				More   bool
			}{n, max, n > max}
		},
		"rollbackURL": RollbackURL,
		// A rollback button of a listing row, where the length of the
		// streak is not read: "rollback".
		"rollbackLinkOf": func(t wiki.Title, from string) struct{ URL, Label string } {
			return struct{ URL, Label string }{RollbackURL(t, from), "rollback"}
		},
		// Edit summaries: text with [[links]], as MediaWiki shows them.
		"summaryHTML": func(s string) template.HTML { return template.HTML(render.Summary(s, v.titles)) },
		// Links with names in them, written in the canonical form the
		// server expects (html/template would escape in lower case).
		"userURL":          func(name string) string { return wiki.Title(wiki.NSUser + ":" + name).URL() },
		"userTalkURL":      func(name string) string { return wiki.Title(wiki.NSUserTalk + ":" + name).URL() },
		"contribsURL":      ContribsURL,
		"searchURL":        func(q string) string { return "/wiki/Special:Search?q=" + httpx.QueryEscape(q) },
		"loginURL":         func(t wiki.Title) string { return "/wiki/Special:UserLogin?returnto=" + httpx.QueryEscape(t.Key()) },
		"whatLinksHereURL": WhatLinksHereURL,
		"userSpecialURL": func(page, name string) string {
			return "/wiki/Special:" + page + "/" + wiki.EscapeKey(strings.ReplaceAll(name, " ", "_"))
		},
		"tabs":   tabsHTML,
		"nstabs": namespaceTabsHTML,
		// Log entry params hold titles and expiries as text.
		"titleOf": func(s string) wiki.Title { return wiki.Title(s) },
		"protectLogURL": func(t wiki.Title) string {
			return "/wiki/Special:Log/protect?page=" + httpx.QueryEscape(t.Key())
		},
		"expiryText":  ExpiryText,
		"queryEscape": httpx.QueryEscape,
		// mark emits an HTML comment (html/template drops literal ones):
		// the markers around per-user parts that the splice path finds.
		"mark": func(name string) template.HTML { return template.HTML("<!--" + name + "-->") },
	}
}

// RollbackURL is the canonical address of the rollback of the latest
// edits of page t by the user named from.
func RollbackURL(t wiki.Title, from string) string {
	return t.URL() + "?action=rollback&from=" + httpx.QueryEscape(from)
}

// ExpiryText words a protection's or block's expiry as the log stores it
// ("infinite" or RFC 3339): "indefinite", or "expires 15:04, 2 January 2026".
func ExpiryText(s string) string {
	if s == "" || s == "infinite" {
		return "indefinite"
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return "expires " + s
	}
	return "expires " + t.UTC().Format("15:04, 2 January 2006")
}

// ContribsURL is the canonical link to a user's contributions.
func ContribsURL(name string) string {
	return "/wiki/Special:Contributions/" + wiki.EscapeKey(strings.ReplaceAll(name, " ", "_"))
}

// WhatLinksHereURL is the canonical link to the pages that link to t.
func WhatLinksHereURL(t wiki.Title) string {
	return "/wiki/Special:WhatLinksHere/" + wiki.EscapeKey(t.Key())
}

// Snippet escapes a search snippet and turns its match marks into <mark>.
func Snippet(s string) template.HTML {
	esc := template.HTMLEscapeString(s)
	esc = strings.ReplaceAll(esc, wiki.MarkStart, "<mark>")
	esc = strings.ReplaceAll(esc, wiki.MarkEnd, "</mark>")
	// Balance marks that a truncated snippet may have left open.
	if n := strings.Count(esc, "<mark>") - strings.Count(esc, "</mark>"); n > 0 {
		esc += strings.Repeat("</mark>", n)
	}
	return template.HTML(esc)
}

func contentType(ext string) string {
	switch ext {
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	}
	return "application/octet-stream"
}

// ModelName is a content model's name as the interface shows it:
// "Markdown", "Wikitext" (MediaWiki's name for its markup).
func ModelName(m wiki.ContentModel) string {
	switch m.Or(wiki.ModelMarkdown) {
	case wiki.ModelMarkdown:
		return "Markdown"
	case wiki.ModelWikitext:
		return "Wikitext"
	}
	return string(m)
}
