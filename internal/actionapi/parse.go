package actionapi

import (
	"errors"
	"strings"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

var parseProps = []string{"text", "langlinks", "categories", "categorieshtml", "links", "templates", "images", "externallinks", "sections",
	"revid", "displaytitle", "subtitle", "headhtml", "modules", "jsconfigvars", "encodedjsconfigvars", "indicators", "iwlinks", "wikitext",
	"properties", "limitreportdata", "limitreporthtml", "parsetree", "parsewarnings", "parsewarningshtml"}

// parse is action=parse: the HTML the wiki renders for a page, an old
// revision or a text, with its links, categories and sections. A text
// goes through the engine's preview (its size limit and its render slots)
// and the "parse" rate limit; a page's render is the render cache's.
func (c *call) parse() error {
	props := c.enum("prop", parseProps...)
	if !c.p.has("prop") {
		props = []string{"text", "langlinks", "categories", "links", "templates", "images", "externallinks", "sections", "revid", "displaytitle", "iwlinks", "properties", "parsewarnings"}
	}
	for _, n := range []string{"wrapoutputclass", "disablelimitreport", "disableeditsection", "disabletoc", "preview", "sectionpreview", "pst", "onlypst", "contentformat", "contentmodel", "useskin", "mobileformat", "disablestylededuplication", "redirects", "summary", "section", "sectiontitle", "formatversion", "effectivelanglinks", "mainpage", "noimages", "usearticle", "showstrategykeys"} {
		c.p.used[n] = true
	}
	var (
		title    wiki.Title
		pageID   int64
		revID    int64
		source   string
		model    wiki.ContentModel // source's markup
		rendered *engine.Rendered
	)
	oldid, err := c.int64("oldid")
	if err != nil {
		return err
	}
	pid, err := c.int64("pageid")
	if err != nil {
		return err
	}
	switch {
	case c.p.has("text"):
		if c.p.has("page") || pid > 0 || oldid > 0 {
			return errf("invalidparammix", "The parameters \"text\" and \"page\", \"pageid\" or \"oldid\" can not be used together.")
		}
		// One event, and one more per engine.ParseUnit of text.
		if err := c.chargeParse(1 + len(c.p.vals["text"])/engine.ParseUnit); err != nil {
			return err
		}
		title = "API"
		if raw := c.p.get("title"); raw != "" {
			t, err := c.a.site.Rules.Parse(raw)
			if err != nil {
				return errf("invalidtitle", "Bad title \"%s\": %s", trunc(raw, 80), wiki.Message(err))
			}
			title = t
		}
		source = c.p.get("text")
		// The text is read in contentmodel's markup, else the site
		// default's (a new page's).
		model = wiki.ContentModel(c.p.get("contentmodel")).Or(c.a.eng.DefaultModel())
		if !model.Valid() {
			return errf("badvalue", "Unrecognized value for parameter \"contentmodel\": %s. Wikid pages are %s.", trunc(string(model), 40), engine.ModelNames())
		}
		rendered, err = c.a.eng.Preview(c.ctx, title, source, model)
		if err != nil {
			return err
		}
		// A short text may transclude pages of megabytes ({{:Page}}): the
		// parse is charged again by what it made (the text expanded, the
		// HTML before any replacement), once it is made. This answer goes
		// out; the client's next parses wait as long as the limit says
		// (the events are counted up to it).
		_ = c.chargeParse(rendered.Made / engine.ParseUnit)
	case oldid > 0:
		rv, err := c.a.store.FindRevision(c.ctx, oldid)
		if errors.Is(err, wiki.ErrNotFound) {
			return errf("nosuchrevid", "There is no revision with ID %d.", oldid)
		}
		if err != nil {
			return err
		}
		rendered, err = c.a.eng.Render(c.ctx, rv)
		if err != nil {
			return err
		}
		title, pageID, revID, source, model = rv.Title, rv.PageID, rv.ID, rv.Text, rv.Model
	default:
		var t wiki.Title
		if pid > 0 {
			p, err := c.a.store.FindPageByID(c.ctx, pid)
			if err != nil || p.Deleted {
				return errf("nosuchpageid", "There is no page with ID %d.", pid)
			}
			t = p.Title
		} else {
			raw := c.p.get("page")
			if raw == "" {
				return errf("missingparam", "One of the parameters \"text\", \"page\", \"pageid\" and \"oldid\" is required.")
			}
			if t, err = c.a.site.Rules.Parse(raw); err != nil {
				return errf("invalidtitle", "Bad title \"%s\": %s", trunc(raw, 80), wiki.Message(err))
			}
		}
		v, err := c.a.eng.ViewPage(c.ctx, t, !c.p.flag("redirects"))
		if errors.Is(err, wiki.ErrNotFound) {
			return errf("missingtitle", "The page you specified doesn't exist.")
		}
		if err != nil {
			return err
		}
		rendered, title, pageID, revID = v.Rendered, v.Page.Title, v.Page.ID, v.Revision.ID
		if contains(props, "sections") || contains(props, "wikitext") || contains(props, "links") {
			rv, err := c.a.store.FindRevision(c.ctx, v.Revision.ID)
			if err != nil {
				return err
			}
			source, model = rv.Text, rv.Model
		}
	}
	if contains(props, "links") || contains(props, "sections") {
		// Both parse the source again, uncached: a page's text counts
		// against the parse rate limit by its size (a text's was counted
		// above), and the parse takes a render slot, as every parse.
		if !c.p.has("text") {
			if err := c.chargeParse(len(source) / engine.ParseUnit); err != nil {
				return err
			}
		}
		release, err := c.a.eng.AcquireRenderSlot(c.ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	res := map[string]any{"title": string(title), "pageid": pageID}
	if !c.v2 {
		res["title"] = string(title)
	}
	for _, p := range props {
		switch p {
		case "text":
			html := `<div class="mw-parser-output">` + rendered.HTML + `</div>`
			res["text"] = c.textValue(html)
		case "revid":
			res["revid"] = revID
		case "displaytitle":
			res["displaytitle"] = htmlEscape(string(title))
		case "categories":
			cats := []any{}
			for _, cat := range rendered.Categories {
				m := map[string]any{"sortkey": ""}
				cats = append(cats, c.named(m, "category", cat.Name()))
			}
			res["categories"] = cats
		case "links":
			ls := c.a.eng.Markup(model).Links(source)
			exists, err := c.a.store.ExistingTitles(c.ctx, ls.Links)
			if err != nil {
				return err
			}
			links := []any{}
			for _, t := range ls.Links {
				m := map[string]any{"ns": nsOf(t)}
				if c.v2 {
					m["exists"] = exists[t]
				} else {
					c.setFlag(m, "exists", exists[t])
				}
				links = append(links, c.named(m, "title", string(t)))
			}
			res["links"] = links
		case "templates":
			ts := []any{}
			for _, t := range rendered.Templates {
				ts = append(ts, c.named(map[string]any{"ns": nsOf(t), "exists": c.flagValue()}, "title", string(t)))
			}
			res["templates"] = ts
		case "sections":
			secs := []any{}
			ss, err := c.a.eng.Markup(model).Sections(source)
			if err != nil {
				return err
			}
			for _, s := range ss {
				if s.Index == 0 {
					continue
				}
				secs = append(secs, map[string]any{"toclevel": max(s.Level-1, 1), "level": itoa(s.Level), "line": s.Heading, "number": itoa(s.Index),
					"index": itoa(s.Index), "fromtitle": string(title), "byteoffset": s.Start, "anchor": strings.ReplaceAll(s.Heading, " ", "_")})
			}
			res["sections"] = secs
		case "wikitext":
			res["wikitext"] = c.textValue(source)
		case "langlinks", "images", "externallinks", "iwlinks", "parsewarnings", "modules", "jsconfigvars", "indicators":
			res[p] = []any{}
		case "properties":
			if c.v2 {
				res[p] = map[string]any{}
			} else {
				res[p] = []any{}
			}
		}
	}
	c.out["parse"] = res
	return nil
}

// chargeParse counts n events of the "parse" rate limit, or answers
// ratelimited.
func (c *call) chargeParse(n int) error {
	for range n {
		if wait, ok := c.a.host.Allow(c.r, "parse"); !ok {
			return &apiError{code: "ratelimited", info: "You've exceeded your rate limit for parsing text. Please wait some time and try again.", retry: wait}
		}
	}
	return nil
}

// textValue is a text in the answer: {"*": text} in formatversion 1, the
// text itself in 2.
func (c *call) textValue(s string) any {
	if c.v2 {
		return s
	}
	return map[string]any{"*": s}
}

// named puts a link's name under "*" (formatversion 1) or key (2).
func (c *call) named(m map[string]any, key, name string) map[string]any {
	if c.v2 {
		m[key] = name
	} else {
		m["*"] = name
	}
	return m
}
