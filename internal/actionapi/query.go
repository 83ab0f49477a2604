package actionapi

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// The query module: a set of pages (titles, pageids, revids or a
// generator), properties of those pages, lists and meta information.

// entry is one page of the query's page set.
type entry struct {
	title   wiki.Title
	page    wiki.Page // ID 0: missing
	missing bool
	invalid string // why the title is invalid
	raw     string
	revs    []wiki.Revision // revids=: the revisions asked for
	idOnly  int64           // pageids=: the ID asked for, when missing
	out     map[string]any
}

// revidBatch is how many revisions revids= reads at once.
const revidBatch = 10

func nsOf(t wiki.Title) int {
	if t.IsSpecial() {
		return -1
	}
	if n, ok := wiki.NamespaceByName(t.Namespace()); ok {
		return n.ID
	}
	return 0
}

// contentModelOf names a page's markup in MediaWiki's terms: markdown
// or wikitext (an empty model, of a page that does not exist, is the
// site default's).
func contentModelOf(m wiki.ContentModel, def wiki.ContentModel) string { return string(m.Or(def)) }

// contentFormatOf is the MIME type of model m's text, as MediaWiki's
// contentformat.
func contentFormatOf(m wiki.ContentModel) string {
	if m == wiki.ModelWikitext {
		return "text/x-wiki"
	}
	return "text/markdown"
}

var (
	propModules  = []string{"info", "revisions", "categories", "links", "templates"}
	listModules  = []string{"allpages", "recentchanges", "search", "categorymembers", "usercontribs", "logevents"}
	metaModules  = []string{"siteinfo", "tokens", "userinfo"}
	genModules   = []string{"allpages", "categorymembers", "search", "links", "recentchanges", "categories", "templates"}
	queryPrefix  = map[string]string{"allpages": "ap", "recentchanges": "rc", "search": "sr", "categorymembers": "cm", "usercontribs": "uc", "logevents": "le", "info": "in", "revisions": "rv", "categories": "cl", "links": "pl", "templates": "tl", "siteinfo": "si", "tokens": "", "userinfo": "ui"}
	readFreeMeta = []string{"tokens", "userinfo"}
)

func (c *call) query() error {
	c.p.used["continue"], c.p.used["rawcontinue"], c.p.used["indexpageids"], c.p.used["export"] = true, true, true, true
	c.p.used["inprop"], c.p.used["converttitles"] = true, true
	props := c.enum("prop", propModules...)
	lists := c.enum("list", listModules...)
	metas := c.enum("meta", metaModules...)
	gen, err := c.one("generator", genModules...)
	if err != nil {
		return err
	}
	needRead := len(props) > 0 || len(lists) > 0 || gen != "" || c.p.has("titles") || c.p.has("pageids") || c.p.has("revids")
	for _, m := range metas {
		if !slices.Contains(readFreeMeta, m) {
			needRead = true
		}
	}
	if needRead {
		if err := c.a.host.RequireRead(c.r); err != nil {
			return errf("readapidenied", "You need read permission to use this module: %s", wiki.Message(err))
		}
	}
	q := map[string]any{}
	cont := map[string]string{}
	for _, m := range metas {
		c.module = m
		var err error
		switch m {
		case "siteinfo":
			err = c.siteinfo(q)
		case "tokens":
			err = c.tokens(q)
		case "userinfo":
			err = c.userinfo(q)
		}
		if err != nil {
			return err
		}
	}
	continuing := c.p.get("continue") != ""
	for _, l := range lists {
		c.module = l
		pre := queryPrefix[l]
		if continuing && !c.p.has(pre+"continue") && !c.p.has(pre+"offset") {
			continue // finished in an earlier batch
		}
		items, next, err := c.list(l, pre)
		if err != nil {
			return err
		}
		q[l] = items
		for k, v := range next {
			cont[k] = v
		}
	}
	set, err := c.pageSet(gen, cont, q)
	if err != nil {
		return err
	}
	if set != nil {
		for _, pm := range props {
			c.module = pm
			if err := c.prop(pm, set, cont); err != nil {
				return err
			}
		}
		q["pages"] = c.pagesOut(set)
	}
	if len(cont) > 0 {
		cont["continue"] = "-||"
		if gen != "" {
			for k := range cont {
				if strings.HasPrefix(k, "g") && k != "continue" {
					cont["continue"] = k + "||"
				}
			}
		}
		out := map[string]any{}
		for k, v := range cont {
			out[k] = v
		}
		c.out["continue"] = out
	} else if len(lists)+len(props) > 0 || gen != "" {
		c.out["batchcomplete"] = c.flagValue()
	}
	if len(q) > 0 {
		c.out["query"] = q
	} else if len(metas)+len(lists)+len(props) == 0 && set == nil {
		c.out["batchcomplete"] = c.flagValue()
	}
	return nil
}

func (c *call) flagValue() any {
	if c.v2 {
		return true
	}
	return ""
}

// pageSet resolves titles=, pageids=, revids= or the generator. nil when
// the request names no pages.
func (c *call) pageSet(gen string, cont map[string]string, q map[string]any) ([]*entry, error) {
	titles, ids, revids := c.p.list("titles"), c.p.list("pageids"), c.p.list("revids")
	if gen == "links" || gen == "categories" || gen == "templates" {
		titles = nil // the generator's source pages
	}
	n := 0
	for _, x := range [][]string{titles, ids, revids} {
		if len(x) > 0 {
			n++
		}
	}
	if gen != "" {
		n++
	}
	if n == 0 {
		return nil, nil
	}
	if n > 1 {
		return nil, errf("invalidparammix", "The parameters \"titles\", \"pageids\", \"revids\" and \"generator\" can not be used together; give one of them.")
	}
	if len(titles) > maxTitles || len(ids) > maxTitles || len(revids) > maxTitles {
		return nil, errf("toomanyvalues", "Too many values supplied for titles, pageids or revids: the limit is %d.", maxTitles)
	}
	var set []*entry
	var normalized, redirects []any
	var badrev []string
	switch {
	case gen != "":
		c.module = gen
		c.generator = true
		pages, next, err := c.generate(gen, cont)
		c.generator = false
		if err != nil {
			return nil, err
		}
		for k, v := range next {
			cont[k] = v
		}
		for _, p := range pages {
			set = append(set, &entry{title: p.Title, page: p})
		}
	case len(titles) > 0:
		for _, raw := range titles {
			t, err := c.a.site.Rules.Parse(raw)
			if err != nil {
				set = append(set, &entry{raw: raw, invalid: wiki.Message(err)})
				continue
			}
			if string(t) != raw {
				normalized = append(normalized, map[string]any{"from": raw, "to": string(t)})
			}
			if slices.ContainsFunc(set, func(e *entry) bool { return e.title == t }) {
				continue // once per title, as MediaWiki
			}
			set = append(set, &entry{title: t})
		}
		// One lookup per title, at most maxTitles of them: the store has
		// no lookup of many pages by title.
		for _, e := range set {
			if e.invalid != "" || e.title.IsSpecial() {
				e.missing = e.invalid == ""
				continue
			}
			p, err := c.a.store.FindPage(c.ctx, e.title)
			if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
				e.missing = true
				continue
			}
			if err != nil {
				return nil, err
			}
			e.page = p
		}
	case len(ids) > 0:
		for _, raw := range ids {
			id, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || id <= 0 {
				return nil, errf("badinteger", "Invalid value \"%s\" for integer parameter \"pageids\".", trunc(raw, 40))
			}
			p, err := c.a.store.FindPageByID(c.ctx, id)
			if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
				set = append(set, &entry{idOnly: id, missing: true})
				continue
			}
			if err != nil {
				return nil, err
			}
			set = append(set, &entry{title: p.Title, page: p})
		}
	default:
		var want []int64
		for _, raw := range revids {
			id, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || id <= 0 {
				return nil, errf("badinteger", "Invalid value \"%s\" for integer parameter \"revids\".", trunc(raw, 40))
			}
			want = append(want, id)
		}
		// Read in small batches, within the response's content budget:
		// each revision comes with its text (up to the page size limit),
		// whether or not it is asked for. The rest continues at the next
		// revision ID.
		slices.Sort(want)
		want = slices.Compact(want)
		if from, _ := strconv.ParseInt(c.p.get("rvcontinue"), 10, 64); from > 0 {
			want = slices.DeleteFunc(want, func(id int64) bool { return id < from })
		}
		var revs []wiki.Revision
		loaded := 0
		for i := 0; i < len(want); i += revidBatch {
			if loaded >= contentBudget {
				cont["rvcontinue"] = strconv.FormatInt(want[i], 10)
				want = want[:i]
				break
			}
			batch, err := c.a.store.FindRevisions(c.ctx, want[i:min(i+revidBatch, len(want))])
			if err != nil {
				return nil, err
			}
			for _, rv := range batch {
				loaded += len(rv.Text)
			}
			revs = append(revs, batch...)
		}
		slices.SortFunc(revs, func(a, b wiki.Revision) int { return int(a.ID - b.ID) })
		found := map[int64]bool{}
		byPage := map[int64]*entry{}
		for _, rv := range revs {
			found[rv.ID] = true
			e := byPage[rv.PageID]
			if e == nil {
				e = &entry{title: rv.Title, page: wiki.Page{ID: rv.PageID, Title: rv.Title}}
				byPage[rv.PageID] = e
				set = append(set, e)
			}
			e.revs = append(e.revs, rv)
		}
		for _, id := range want {
			if !found[id] {
				badrev = append(badrev, strconv.FormatInt(id, 10))
			}
		}
		// The pages themselves, for info.
		for _, e := range set {
			if p, err := c.a.store.FindPageByID(c.ctx, e.page.ID); err == nil {
				e.page = p
			}
		}
	}
	if c.p.flag("redirects") {
		var out []*entry
		seen := map[wiki.Title]bool{}
		for _, e := range set {
			if e.page.ID == 0 || e.page.Redirect == "" || len(e.revs) > 0 {
				out = append(out, e)
				continue
			}
			to := e.page.Redirect
			redirects = append(redirects, map[string]any{"from": string(e.title), "to": string(to)})
			if seen[to] {
				continue
			}
			seen[to] = true
			ne := &entry{title: to}
			p, err := c.a.store.FindPage(c.ctx, to)
			switch {
			case errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted:
				ne.missing = true
			case err != nil:
				return nil, err
			default:
				ne.page = p
			}
			out = append(out, ne)
		}
		set = out
	}
	if len(normalized) > 0 {
		q["normalized"] = normalized
	}
	if len(redirects) > 0 {
		q["redirects"] = redirects
	}
	if len(badrev) > 0 {
		m := map[string]any{}
		if c.v2 {
			var l []any
			for _, id := range badrev {
				n, _ := strconv.Atoi(id)
				l = append(l, map[string]any{"revid": n, "missing": true})
			}
			q["badrevids"] = l
		} else {
			for _, id := range badrev {
				n, _ := strconv.Atoi(id)
				m[id] = map[string]any{"revid": n, "missing": ""}
			}
			q["badrevids"] = m
		}
	}
	for _, e := range set {
		e.out = c.pageBase(e)
	}
	return set, nil
}

func (c *call) pageBase(e *entry) map[string]any {
	m := map[string]any{}
	switch {
	case e.invalid != "":
		m["title"] = e.raw
		m["invalidreason"] = e.invalid
		c.setFlag(m, "invalid", true)
	case e.idOnly != 0:
		m["pageid"] = e.idOnly
		c.setFlag(m, "missing", true)
	case e.title.IsSpecial():
		m["ns"], m["title"] = -1, string(e.title)
		c.setFlag(m, "special", true)
		c.setFlag(m, "missing", true)
	case e.missing:
		m["ns"], m["title"] = nsOf(e.title), string(e.title)
		c.setFlag(m, "missing", true)
	default:
		m["pageid"], m["ns"], m["title"] = e.page.ID, nsOf(e.page.Title), string(e.page.Title)
	}
	return m
}

// pagesOut is the pages object: keyed by page ID (negative for missing
// pages) in formatversion 1, a list in 2.
func (c *call) pagesOut(set []*entry) any {
	if c.v2 {
		out := []any{}
		for _, e := range set {
			out = append(out, e.out)
		}
		return out
	}
	out := map[string]any{}
	neg := -1
	for _, e := range set {
		key := ""
		switch {
		case e.page.ID != 0 && !e.missing:
			key = strconv.FormatInt(e.page.ID, 10)
		case e.idOnly != 0:
			key = strconv.FormatInt(e.idOnly, 10)
		default:
			key = strconv.Itoa(neg)
			neg--
		}
		out[key] = e.out
	}
	return out
}

// live reports whether e is an existing page.
func (e *entry) live() bool { return e.page.ID != 0 && !e.missing && e.invalid == "" }

func (c *call) prop(name string, set []*entry, cont map[string]string) error {
	switch name {
	case "info":
		return c.info(set)
	case "revisions":
		return c.revisions(set, cont)
	case "categories", "templates", "links":
		return c.pageLinks(name, set, cont)
	}
	return nil
}

func (c *call) info(set []*entry) error {
	inprop := c.enum("inprop", "protection", "url", "displaytitle", "talkid", "subjectid", "watched", "watchers", "notificationtimestamp", "readable", "preload", "varianttitles", "linkclasses", "associatedpage")
	c.p.used["intestactions"], c.p.used["intoken"] = true, true
	for _, e := range set {
		if e.invalid != "" {
			continue
		}
		m := e.out
		m["contentmodel"] = contentModelOf(e.page.Model, c.a.eng.DefaultModel())
		m["pagelanguage"], m["pagelanguagehtmlcode"], m["pagelanguagedir"] = "en", "en", "ltr"
		if e.live() {
			m["touched"] = mwTime(e.page.Touched)
			m["lastrevid"] = e.page.LatestID
			m["length"] = e.page.Size
			c.setFlag(m, "redirect", e.page.Redirect != "")
			if c.v2 {
				m["redirect"] = e.page.Redirect != ""
				m["new"] = false
			}
		}
		for _, ip := range inprop {
			switch ip {
			case "protection":
				prot := []any{}
				if !e.title.IsSpecial() && e.idOnly == 0 {
					pr, ok, err := c.a.eng.Protection(c.ctx, e.title)
					if err != nil {
						return err
					}
					if ok {
						prot = protectionsOut(pr, e.live())
					}
				}
				m["protection"] = prot
				m["restrictiontypes"] = []string{"edit", "move"}
				if !e.live() {
					m["restrictiontypes"] = []string{"create"}
				}
			case "url":
				if e.idOnly == 0 {
					u := e.title.URL()
					m["fullurl"], m["canonicalurl"], m["editurl"] = u, u, u+"?action=edit"
				}
			case "displaytitle":
				m["displaytitle"] = string(e.title)
			case "readable":
				c.setFlag(m, "readable", true)
			case "talkid", "subjectid", "associatedpage":
				if pair, ok := e.title.Pair(); ok && ip == "associatedpage" {
					m["associatedpage"] = string(pair)
				}
			}
		}
	}
	return nil
}

func levelName(l wiki.ProtectionLevel) string {
	switch l {
	case wiki.ProtectAdmins:
		return "sysop"
	case wiki.ProtectUsers:
		return "autoconfirmed"
	}
	return ""
}

func levelOf(name string) (wiki.ProtectionLevel, bool) {
	switch name {
	case "sysop", "admins":
		return wiki.ProtectAdmins, true
	case "autoconfirmed", "users":
		return wiki.ProtectUsers, true
	case "all", "":
		return wiki.ProtectNone, true
	}
	return "", false
}

func expiryOut(t time.Time) string {
	if t.IsZero() {
		return "infinity"
	}
	return mwTime(t)
}

func protectionsOut(pr wiki.Protection, exists bool) []any {
	var out []any
	if pr.Edit != wiki.ProtectNone {
		typ := "edit"
		if !exists {
			typ = "create"
		}
		out = append(out, map[string]any{"type": typ, "level": levelName(pr.Edit), "expiry": expiryOut(pr.Expiry)})
	}
	if pr.Move != wiki.ProtectNone && exists {
		out = append(out, map[string]any{"type": "move", "level": levelName(pr.Move), "expiry": expiryOut(pr.Expiry)})
	}
	if out == nil {
		out = []any{}
	}
	return out
}

// revisionOut shapes one revision as prop=revisions shows it.
func (c *call) revisionOut(rv wiki.Revision, rvprop []string, slots bool) map[string]any {
	m := map[string]any{}
	for _, p := range rvprop {
		switch p {
		case "ids":
			m["revid"], m["parentid"] = rv.ID, rv.ParentID
		case "flags":
			if c.v2 {
				m["minor"] = rv.Minor
			} else {
				c.setFlag(m, "minor", rv.Minor)
			}
		case "timestamp":
			m["timestamp"] = mwTime(rv.Time)
		case "user":
			m["user"] = rv.UserName
			if rv.UserID == 0 {
				c.setFlag(m, "anon", true)
			}
		case "userid":
			m["userid"] = rv.UserID
		case "size":
			m["size"] = rv.Size
		case "sha1":
			m["sha1"] = rv.SHA1
		case "comment":
			m["comment"] = rv.Summary
		case "parsedcomment":
			// HTML, which clients insert as such: the summary escaped.
			m["parsedcomment"] = htmlEscape(rv.Summary)
		case "contentmodel":
			if !slots {
				m["contentmodel"] = contentModelOf(rv.Model, wiki.ModelMarkdown)
			}
		case "tags":
			tags := rv.Tags
			if tags == nil {
				tags = []string{}
			}
			m["tags"] = tags
		case "content":
			if slots {
				main := map[string]any{"contentmodel": contentModelOf(rv.Model, wiki.ModelMarkdown), "contentformat": contentFormatOf(rv.Model)}
				if c.v2 {
					main["content"] = rv.Text
				} else {
					main["*"] = rv.Text
				}
				m["slots"] = map[string]any{"main": main}
			} else {
				m["contentformat"], m["contentmodel"] = contentFormatOf(rv.Model), contentModelOf(rv.Model, wiki.ModelMarkdown)
				if c.v2 {
					m["content"] = rv.Text
				} else {
					m["*"] = rv.Text
				}
			}
		}
	}
	if slots && slices.Contains(rvprop, "size") && !slices.Contains(rvprop, "content") {
		m["slots"] = map[string]any{"main": map[string]any{"size": rv.Size, "contentmodel": contentModelOf(rv.Model, wiki.ModelMarkdown), "contentformat": contentFormatOf(rv.Model)}}
	}
	return m
}

var rvprops = []string{"ids", "flags", "timestamp", "user", "userid", "size", "slotsize", "sha1", "slotsha1", "contentmodel", "comment", "parsedcomment", "content", "tags", "roles"}

func (c *call) revisions(set []*entry, cont map[string]string) error {
	rvprop := c.enum("rvprop", rvprops...)
	if !c.p.has("rvprop") {
		rvprop = []string{"ids", "timestamp", "flags", "comment", "user"}
	}
	slotsParam := c.p.get("rvslots")
	slots := slotsParam != ""
	if slots && slotsParam != "main" && slotsParam != "*" {
		return errf("badvalue", "Unrecognized value for parameter \"rvslots\": %s. Wikid pages have one slot, main.", trunc(slotsParam, 40))
	}
	if !slots && slices.Contains(rvprop, "content") && c.v2 {
		c.warn("revisions", "Because \"rvslots\" was not specified, a legacy format has been used for the output. This format is deprecated, and in the future the new format will always be used.")
	}
	withContent := slices.Contains(rvprop, "content")
	for _, n := range []string{"rvsection", "rvcontentformat", "rvdifftotext", "rvdiffto", "rvexpandtemplates", "rvparse", "rvgeneratexml", "rvtoken"} {
		c.p.used[n] = true
	}
	rvdir, err := c.one("rvdir", "older", "newer")
	if err != nil {
		return err
	}
	single := c.p.has("rvlimit") || c.p.has("rvstartid") || c.p.has("rvendid") || c.p.has("rvstart") || c.p.has("rvend") || c.p.has("rvuser") || c.p.has("rvexcludeuser") || rvdir != ""
	if single {
		var live []*entry
		for _, e := range set {
			if e.live() {
				live = append(live, e)
			}
		}
		if len(live) > 1 {
			return errf("multpages", "rvlimit, rvstartid, rvendid, rvdir, rvstart, rvend and rvuser may only be used with a single page.")
		}
		if len(live) == 0 {
			return nil
		}
		return c.history(live[0], rvprop, slots, cont)
	}
	if c.p.has("revids") {
		for _, e := range set {
			var out []any
			for _, rv := range e.revs {
				if withContent && c.budget < rv.Size {
					c.warn("revisions", "This result was truncated because it would otherwise be larger than the limit of 8,388,608 bytes.")
					break
				}
				if withContent {
					c.budget -= rv.Size
				}
				out = append(out, c.revisionOut(rv, rvprop, slots))
			}
			if len(out) > 0 {
				e.out["revisions"] = out
			}
		}
		return nil
	}
	// The latest revision of each page, read in one batch, within the
	// response's content budget (the rest continues with rvcontinue).
	after, _ := strconv.ParseInt(c.p.get("rvcontinue"), 10, 64)
	var ids []int64
	byRev := map[int64]*entry{}
	var live []*entry
	for _, e := range set {
		if e.live() {
			live = append(live, e)
		}
	}
	slices.SortFunc(live, func(a, b *entry) int { return int(a.page.ID - b.page.ID) })
	for _, e := range live {
		if e.page.ID < after {
			continue
		}
		if c.budget < e.page.Size && len(ids) > 0 {
			cont["rvcontinue"] = strconv.FormatInt(e.page.ID, 10)
			break
		}
		c.budget -= e.page.Size
		ids = append(ids, e.page.LatestID)
		byRev[e.page.LatestID] = e
	}
	if len(ids) == 0 {
		return nil
	}
	revs, err := c.a.store.FindRevisions(c.ctx, ids)
	if err != nil {
		return err
	}
	for _, rv := range revs {
		if e := byRev[rv.ID]; e != nil {
			e.out["revisions"] = []any{c.revisionOut(rv, rvprop, slots)}
		}
	}
	return nil
}

// history lists one page's revisions, newest first, rvlimit at a time.
func (c *call) history(e *entry, rvprop []string, slots bool, cont map[string]string) error {
	newer := c.p.get("rvdir") == "newer"
	withContent := slices.Contains(rvprop, "content")
	def := 10
	if withContent {
		def = 1
	}
	limit, err := c.limit("rvlimit", def)
	if err != nil {
		return err
	}
	if withContent && limit > 50 {
		c.warn("revisions", "rvlimit may not be over 50 (set to 50) for users when content is requested.")
		limit = 50
	}
	// from is the first revision to list: rvcontinue, else rvstartid.
	var from int64
	if v := c.p.get("rvcontinue"); v != "" {
		_, id, _ := strings.Cut(v, "|")
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n <= 0 {
			return errf("badcontinue", "Invalid continue param. You should pass the original value returned by the previous query.")
		}
		from = n
	} else if from, err = c.int64("rvstartid"); err != nil {
		return err
	}
	endID, err := c.int64("rvendid")
	if err != nil {
		return err
	}
	user := strings.ReplaceAll(c.p.get("rvuser"), "_", " ")
	exclude := strings.ReplaceAll(c.p.get("rvexcludeuser"), "_", " ")
	var start, end time.Time
	if v := c.p.get("rvstart"); v != "" {
		if start, err = parseTime(v); err != nil {
			return err
		}
	}
	if v := c.p.get("rvend"); v != "" {
		if end, err = parseTime(v); err != nil {
			return err
		}
	}
	var revs []wiki.Revision
	if newer {
		// The store lists history newest first: oldest first reads the
		// whole history, in one query, up to maxNewerScan revisions.
		all, err := c.a.store.History(c.ctx, wiki.HistoryQuery{PageID: e.page.ID, Limit: maxNewerScan + 1})
		if err != nil {
			return err
		}
		if len(all) > maxNewerScan {
			return errf("badvalue", "rvdir=newer reads at most %d revisions and this page has more; list its revisions newest first (rvdir=older).", maxNewerScan)
		}
		slices.Reverse(all)
		for _, rv := range all {
			if from > 0 && rv.ID < from {
				continue
			}
			revs = append(revs, rv)
		}
	} else {
		before := int64(0)
		if from > 0 {
			before = from + 1
		}
		// Filters by user skip rows: read a few more, still one query.
		n := limit + 1
		if user != "" || exclude != "" {
			n = min(limit*4+1, maxLimit+1)
		}
		if revs, err = c.a.store.History(c.ctx, wiki.HistoryQuery{PageID: e.page.ID, Before: before, Limit: n}); err != nil {
			return err
		}
	}
	var keep []wiki.Revision
	for _, rv := range revs {
		// rvstart is where the listing starts, rvend where it ends, in
		// the listing's direction.
		if newer {
			if endID > 0 && rv.ID > endID || !end.IsZero() && rv.Time.After(end) {
				break
			}
			if !start.IsZero() && rv.Time.Before(start) {
				continue
			}
		} else {
			if endID > 0 && rv.ID < endID || !end.IsZero() && rv.Time.Before(end) {
				break
			}
			if !start.IsZero() && rv.Time.After(start) {
				continue
			}
		}
		if user != "" && rv.UserName != user || exclude != "" && rv.UserName == exclude {
			continue
		}
		if len(keep) == limit {
			cont["rvcontinue"] = mwTimeID(rv.Time, rv.ID)
			break
		}
		keep = append(keep, rv)
	}
	if withContent {
		// The texts, a few at a time, within the response's budget.
		for i := 0; i < len(keep); i += revidBatch {
			batch := keep[i:min(i+revidBatch, len(keep))]
			size := 0
			for _, rv := range batch {
				size += rv.Size
			}
			if c.budget < size && i > 0 {
				cont["rvcontinue"] = mwTimeID(keep[i].Time, keep[i].ID)
				keep = keep[:i]
				break
			}
			c.budget -= size
			var ids []int64
			for _, rv := range batch {
				ids = append(ids, rv.ID)
			}
			full, err := c.a.store.FindRevisions(c.ctx, ids)
			if err != nil {
				return err
			}
			texts := map[int64]string{}
			for _, rv := range full {
				texts[rv.ID] = rv.Text
			}
			for k := range batch {
				batch[k].Text = texts[batch[k].ID]
			}
		}
	}
	var out []any
	for _, rv := range keep {
		out = append(out, c.revisionOut(rv, rvprop, slots))
	}
	if len(out) > 0 {
		e.out["revisions"] = out
	}
	return nil
}

// maxNewerScan bounds the history rvdir=newer reads.
const maxNewerScan = 5000

func mwTimeID(t time.Time, id int64) string {
	return t.UTC().Format("20060102150405") + "|" + strconv.FormatInt(id, 10)
}

// parseTime reads a timestamp as MediaWiki accepts them: ISO 8601 or
// 14 digits.
func parseTime(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05Z", "20060102150405", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	if v == "now" {
		return time.Now(), nil
	}
	return time.Time{}, errf("badtimestamp", "Invalid value \"%s\" for timestamp parameter: use ISO 8601 such as 2024-01-31T12:00:00Z.", trunc(v, 40))
}

// pageLinks is prop=categories, templates or links: what each page
// links to, at most limit rows across the pages, continued as
// "pageid|title".
func (c *call) pageLinks(name string, set []*entry, cont map[string]string) error {
	pre := queryPrefix[name]
	limit, err := c.limit(pre+"limit", 10)
	if err != nil {
		return err
	}
	for _, n := range []string{pre + "namespace", pre + "prop", pre + "show", pre + "dir", pre + "categories", pre + "templates", pre + "titles"} {
		c.p.used[n] = true
	}
	var fromPage int64
	var fromTitle string
	if v := c.p.get(pre + "continue"); v != "" {
		id, t, _ := strings.Cut(v, "|")
		fromPage, _ = strconv.ParseInt(id, 10, 64)
		fromTitle = t
	}
	var live []*entry
	for _, e := range set {
		if e.live() && e.page.ID >= fromPage {
			live = append(live, e)
		}
	}
	slices.SortFunc(live, func(a, b *entry) int { return int(a.page.ID - b.page.ID) })
	if len(live) > maxTitles {
		// One read per page: at most maxTitles pages per batch.
		cont[pre+"continue"] = strconv.FormatInt(live[maxTitles].page.ID, 10) + "|"
		live = live[:maxTitles]
	}
	targets, err := c.linkTargets(name, live)
	if err != nil {
		return err
	}
	count := 0
	for _, e := range live {
		var rows []any
		for _, t := range targets[e.page.ID] {
			if e.page.ID == fromPage && fromTitle != "" && t.Key() < fromTitle {
				continue
			}
			if count == limit {
				cont[pre+"continue"] = strconv.FormatInt(e.page.ID, 10) + "|" + t.Key()
				break
			}
			count++
			rows = append(rows, map[string]any{"ns": nsOf(t), "title": string(t)})
		}
		if len(rows) > 0 {
			e.out[name] = rows
		}
		if count == limit && cont[pre+"continue"] != "" {
			break
		}
	}
	return nil
}

// linkTargets reads what each page links to, by title, from its link
// rows: categories, templates and links.
func (c *call) linkTargets(name string, pages []*entry) (map[int64][]wiki.Title, error) {
	out := map[int64][]wiki.Title{}
	switch name {
	case "categories":
		for _, e := range pages {
			cls, err := c.a.store.PageCategories(c.ctx, e.page.ID)
			if err != nil {
				return nil, err
			}
			for _, cl := range cls {
				out[e.page.ID] = append(out[e.page.ID], cl.Category)
			}
		}
	case "templates":
		for _, e := range pages {
			ts, err := c.a.store.PageTemplates(c.ctx, e.page.ID)
			if err != nil {
				return nil, err
			}
			out[e.page.ID] = ts
		}
	case "links":
		for _, e := range pages {
			ls, err := c.a.store.PageLinks(c.ctx, e.page.ID)
			if err != nil {
				return nil, err
			}
			out[e.page.ID] = ls
		}
	}
	for id := range out {
		slices.SortFunc(out[id], func(a, b wiki.Title) int { return strings.Compare(a.Key(), b.Key()) })
	}
	return out, nil
}
