package actionapi

import (
	"strconv"
	"strings"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

// List modules read one index range of the store each (limit+1 rows, to
// know whether there is more), never one query per row.

func (c *call) list(name, pre string) ([]any, map[string]string, error) {
	switch name {
	case "allpages":
		pages, next, err := c.allPages(pre)
		return c.pageRows(pages), next, err
	case "categorymembers":
		return c.categoryMembers(pre, false)
	case "search":
		return c.search(pre, false)
	case "recentchanges":
		return c.recentChanges(pre, "")
	case "usercontribs":
		user := c.p.get("ucuser")
		if user == "" {
			return nil, nil, errf("missingparam", "The \"ucuser\" parameter must be set: the user whose contributions to list.")
		}
		if strings.Contains(user, "|") {
			return nil, nil, errf("badvalue", "Give one user in ucuser.")
		}
		return c.recentChanges(pre, strings.ReplaceAll(user, "_", " "))
	case "logevents":
		return c.logEvents(pre)
	}
	return nil, nil, nil
}

// generate runs a list module as the query's generator: its pages, and the
// continuation under its "g"-prefixed parameters.
func (c *call) generate(name string, cont map[string]string) ([]wiki.Page, map[string]string, error) {
	pre := "g" + queryPrefix[name]
	switch name {
	case "allpages":
		return c.allPages(pre)
	case "categorymembers":
		rows, next, err := c.categoryMembers(pre, true)
		return pagesOf(rows), next, err
	case "search":
		rows, next, err := c.search(pre, true)
		return pagesOf(rows), next, err
	case "recentchanges":
		rows, next, err := c.recentChanges(pre, "")
		if err != nil {
			return nil, nil, err
		}
		var titles []wiki.Title
		seen := map[wiki.Title]bool{}
		for _, r := range rows {
			t := wiki.Title(r.(map[string]any)["title"].(string))
			if !seen[t] {
				seen[t] = true
				titles = append(titles, t)
			}
		}
		pages, err := c.findPages(titles)
		return pages, next, err
	case "links", "categories", "templates":
		// The pages the titles= pages link to.
		var src []*entry
		for _, raw := range c.p.list("titles") {
			t, err := c.a.site.Rules.Parse(raw)
			if err != nil {
				continue
			}
			p, err := c.a.store.FindPage(c.ctx, t)
			if err == nil && !p.Deleted {
				src = append(src, &entry{title: t, page: p})
			}
			if len(src) == maxTitles {
				break
			}
		}
		c.p.used["titles"] = true
		targets, err := c.linkTargets(name, src)
		if err != nil {
			return nil, nil, err
		}
		limit, err := c.limit(pre+"limit", 10)
		if err != nil {
			return nil, nil, err
		}
		from := c.p.get(pre + "continue")
		var titles []wiki.Title
		seen := map[wiki.Title]bool{}
		for _, e := range src {
			for _, t := range targets[e.page.ID] {
				if !seen[t] && t.Key() >= from {
					seen[t] = true
					titles = append(titles, t)
				}
			}
		}
		next := map[string]string{}
		if len(titles) > limit {
			next[pre+"continue"] = titles[limit].Key()
			titles = titles[:limit]
		}
		pages, err := c.findPages(titles)
		return pages, next, err
	}
	return nil, nil, nil
}

// findPages returns the live pages among titles (missing ones as pages
// without an ID, so that the set shows them missing).
func (c *call) findPages(titles []wiki.Title) ([]wiki.Page, error) {
	exists, err := c.a.store.ExistingTitles(c.ctx, titles)
	if err != nil {
		return nil, err
	}
	var out []wiki.Page
	for _, t := range titles {
		if !exists[t] {
			continue
		}
		p, err := c.a.store.FindPage(c.ctx, t)
		if err != nil {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

func pagesOf(rows []any) []wiki.Page {
	var out []wiki.Page
	for _, r := range rows {
		m := r.(map[string]any)
		if p, ok := m["_page"].(wiki.Page); ok {
			out = append(out, p)
		}
	}
	return out
}

func (c *call) pageRows(pages []wiki.Page) []any {
	out := []any{}
	for _, p := range pages {
		out = append(out, map[string]any{"pageid": p.ID, "ns": nsOf(p.Title), "title": string(p.Title)})
	}
	return out
}

// namespaces reads a namespace parameter ("0|1|2") as the store's names.
func (c *call) namespaces(name string) ([]string, error) {
	vals := c.p.list(name)
	if len(vals) == 0 || len(vals) == 1 && vals[0] == "*" {
		return nil, nil
	}
	var out []string
	for _, v := range vals {
		id, err := strconv.Atoi(v)
		n, ok := wiki.NamespaceByID(id)
		if err != nil || !ok {
			return nil, errf("badvalue", "Unrecognized value for parameter \"%s\": %s. Give namespace numbers such as 0 (main) or 14 (Category).", name, trunc(v, 20))
		}
		// Each namespace once, however often it is given: the filter
		// is at most the namespace list, whatever the request's size.
		if !contains(out, n.Name) {
			out = append(out, n.Name)
		}
	}
	return out, nil
}

func (c *call) allPages(pre string) ([]wiki.Page, map[string]string, error) {
	limit, err := c.limit(pre+"limit", 10)
	if err != nil {
		return nil, nil, err
	}
	ns := 0
	if v := c.p.get(pre + "namespace"); v != "" {
		if ns, err = strconv.Atoi(v); err != nil {
			return nil, nil, errf("badvalue", "Unrecognized value for parameter \"%snamespace\": %s.", pre, trunc(v, 20))
		}
	}
	n, ok := wiki.NamespaceByID(ns)
	if !ok {
		return nil, nil, errf("badvalue", "Unrecognized value for parameter \"%snamespace\": %d.", pre, ns)
	}
	filter, err := c.one(pre+"filterredir", "all", "redirects", "nonredirects")
	if err != nil {
		return nil, nil, err
	}
	if d, err := c.one(pre+"dir", "ascending", "descending"); err != nil {
		return nil, nil, err
	} else if d == "descending" {
		return nil, nil, errf("badvalue", "%sdir=descending is not supported by Wikid; list in ascending order.", pre)
	}
	for _, x := range []string{"to", "minsize", "maxsize", "prtype", "prlevel", "prfiltercascade", "prexpiry", "filterlanglinks"} {
		c.p.used[pre+x] = true
	}
	full := func(s string) string {
		s = strings.ReplaceAll(s, "_", " ")
		if n.Name != "" {
			return n.Name + ":" + s
		}
		return s
	}
	q := wiki.ListQuery{Limit: limit + 1, Namespaces: []string{n.Name}}
	if v := c.p.get(pre + "prefix"); v != "" {
		q.Prefix = full(v)
	} else if n.Name != "" {
		q.Prefix = n.Name + ":"
	}
	from := c.p.get(pre + "continue")
	if from == "" {
		from = c.p.get(pre + "from")
	}
	if from != "" {
		t, err := c.a.site.Rules.Parse(full(from))
		if err != nil {
			return nil, nil, errf("invalidtitle", "Bad title \"%s\": %s", trunc(from, 60), wiki.Message(err))
		}
		q.From = t
	}
	pages, err := c.a.store.AllPages(c.ctx, q)
	if err != nil {
		return nil, nil, err
	}
	next := map[string]string{}
	if len(pages) > limit {
		next[pre+"continue"] = pages[limit].Title.Name()
		if strings.Contains(string(pages[limit].Title), ":") && n.Name == "" {
			next[pre+"continue"] = pages[limit].Title.Key()
		} else {
			next[pre+"continue"] = strings.ReplaceAll(pages[limit].Title.Name(), " ", "_")
		}
		pages = pages[:limit]
	}
	out := pages[:0]
	for _, p := range pages {
		if filter == "redirects" && p.Redirect == "" || filter == "nonredirects" && p.Redirect != "" {
			continue
		}
		out = append(out, p)
	}
	return out, next, nil
}

func (c *call) categoryMembers(pre string, gen bool) ([]any, map[string]string, error) {
	limit, err := c.limit(pre+"limit", 10)
	if err != nil {
		return nil, nil, err
	}
	raw := c.p.get(pre + "title")
	var cat wiki.Title
	if raw == "" {
		if id, err := c.int64(pre + "pageid"); err != nil {
			return nil, nil, err
		} else if id > 0 {
			p, err := c.a.store.FindPageByID(c.ctx, id)
			if err != nil || p.Deleted {
				return nil, nil, errf("nosuchpageid", "There is no page with ID %d.", id)
			}
			cat = p.Title
		} else {
			return nil, nil, errf("missingparam", "One of the parameters \"%stitle\" and \"%spageid\" is required.", pre, pre)
		}
	} else {
		if !strings.Contains(raw, ":") {
			raw = "Category:" + raw
		}
		t, err := c.a.site.Rules.Parse(raw)
		if err != nil {
			return nil, nil, errf("invalidtitle", "Bad title \"%s\": %s", trunc(raw, 60), wiki.Message(err))
		}
		cat = t
	}
	if cat.Namespace() != wiki.NSCategory {
		return nil, nil, errf("invalidcategory", "The category name you entered is not valid: %s is not in the Category namespace.", cat)
	}
	types := c.enum(pre+"type", "page", "subcat", "file")
	if len(types) == 0 {
		types = []string{"page", "subcat", "file"}
	}
	cmprop := c.enum(pre+"prop", "ids", "title", "sortkey", "sortkeyprefix", "type", "timestamp")
	if !c.p.has(pre + "prop") {
		cmprop = []string{"ids", "title"}
	}
	nsFilter, err := c.namespaces(pre + "namespace")
	if err != nil {
		return nil, nil, err
	}
	for _, x := range []string{"sort", "dir", "start", "end", "starthexsortkey", "endhexsortkey", "startsortkeyprefix", "endsortkeyprefix"} {
		c.p.used[pre+x] = true
	}
	// Subcategories first, then the other members: continued as
	// "subcat|key\ntitle" or "page|key\ntitle" (the next member).
	phase, cursor := "subcat", wiki.CategoryCursor{}
	if v := c.p.get(pre + "continue"); v != "" {
		ph, rest, ok := strings.Cut(v, "|")
		key, title, _ := strings.Cut(rest, "\n")
		if !ok || ph != "subcat" && ph != "page" {
			return nil, nil, errf("badcontinue", "Invalid continue param. You should pass the original value returned by the previous query.")
		}
		phase, cursor = ph, wiki.CategoryCursor{SortKey: key, Title: wiki.Title(strings.ReplaceAll(title, "_", " "))}
	}
	wantSub := contains(types, "subcat")
	wantPages := contains(types, "page") || contains(types, "file")
	out := []any{}
	next := map[string]string{}
	for _, ph := range []string{"subcat", "page"} {
		if ph == "subcat" && (phase != "subcat" || !wantSub) || ph == "page" && !wantPages {
			if ph == "subcat" {
				cursor = wiki.CategoryCursor{} // the pages start at their beginning
			}
			continue
		}
		left := limit - len(out)
		if left <= 0 {
			next[pre+"continue"] = ph + "|"
			break
		}
		ms, err := c.a.store.CategoryMembers(c.ctx, cat, wiki.CategoryQuery{From: cursor, Limit: left + 1, Subcategories: ph == "subcat"})
		if err != nil {
			return nil, nil, err
		}
		cursor = wiki.CategoryCursor{}
		if len(ms) > left {
			cur := ms[left].Cursor()
			next[pre+"continue"] = ph + "|" + cur.SortKey + "\n" + cur.Title.Key()
			ms = ms[:left]
		}
		for _, m := range ms {
			isFile := m.Title.Namespace() == wiki.NSFile
			if ph == "page" && (isFile && !contains(types, "file") || !isFile && !contains(types, "page")) {
				continue
			}
			if nsFilter != nil && !contains(nsFilter, m.Title.Namespace()) {
				continue
			}
			row := map[string]any{"_page": m.Page}
			for _, p := range cmprop {
				switch p {
				case "ids":
					row["pageid"] = m.ID
				case "title":
					row["ns"], row["title"] = nsOf(m.Title), string(m.Title)
				case "sortkeyprefix":
					row["sortkeyprefix"] = m.SortKey
				case "type":
					typ := "page"
					if ph == "subcat" {
						typ = "subcat"
					} else if isFile {
						typ = "file"
					}
					row["type"] = typ
				}
			}
			out = append(out, row)
		}
		if next[pre+"continue"] != "" {
			break
		}
	}
	if !gen {
		for _, r := range out {
			delete(r.(map[string]any), "_page")
		}
	}
	return out, next, nil
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (c *call) search(pre string, gen bool) ([]any, map[string]string, error) {
	text := c.p.get(pre + "search")
	if text == "" {
		return nil, nil, errf("missingparam", "The \"%ssearch\" parameter must be set: the words to search for.", pre)
	}
	if len(text) > 300 {
		return nil, nil, errf("badvalue", "The search text is longer than 300 bytes; shorten it.")
	}
	limit, err := c.limit(pre+"limit", 10)
	if err != nil {
		return nil, nil, err
	}
	limit = min(limit, engine.MaxSearchHits)
	offset := 0
	if v := c.p.get(pre + "offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 || offset > 10000 {
			return nil, nil, errf("badvalue", "The \"%soffset\" parameter must be a number from 0 to 10000.", pre)
		}
	}
	ns, err := c.namespaces(pre + "namespace")
	if err != nil {
		return nil, nil, err
	}
	if ns == nil && !c.p.has(pre+"namespace") {
		ns = []string{wiki.NSMain}
	}
	if _, err := c.one(pre+"what", "text", "title", "nearmatch"); err != nil {
		return nil, nil, err
	}
	for _, x := range []string{"prop", "info", "interwiki", "enablerewrites", "sort", "qiprofile"} {
		c.p.used[pre+x] = true
	}
	hits, more, err := c.a.eng.Search(c.ctx, wiki.SearchQuery{Text: text, Offset: offset, Limit: limit, Namespaces: ns})
	if err != nil {
		return nil, nil, err
	}
	out := []any{}
	for _, h := range hits {
		snippet := strings.ReplaceAll(strings.ReplaceAll(htmlEscape(h.Snippet), wiki.MarkStart, `<span class="searchmatch">`), wiki.MarkEnd, "</span>")
		if n := strings.Count(snippet, "<span") - strings.Count(snippet, "</span>"); n > 0 {
			snippet += strings.Repeat("</span>", n)
		}
		row := map[string]any{"ns": nsOf(h.Title), "title": string(h.Title), "pageid": h.PageID, "snippet": snippet}
		if gen {
			row["_page"] = wiki.Page{ID: h.PageID, Title: h.Title}
		}
		out = append(out, row)
	}
	next := map[string]string{}
	if more {
		next[pre+"offset"] = strconv.Itoa(offset + len(hits))
	}
	if gen {
		// The generator's pages are read whole (info, revisions).
		var titles []wiki.Title
		for _, h := range hits {
			titles = append(titles, h.Title)
		}
		pages, err := c.findPages(titles)
		if err != nil {
			return nil, nil, err
		}
		out = out[:0]
		for _, p := range pages {
			out = append(out, map[string]any{"_page": p})
		}
	}
	return out, next, nil
}

// htmlEscape makes s safe as HTML text and as a quoted attribute.
func htmlEscape(s string) string { return htmlEscaper.Replace(s) }

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// recentChanges is list=recentchanges, and list=usercontribs with user.
func (c *call) recentChanges(pre, user string) ([]any, map[string]string, error) {
	limit, err := c.limit(pre+"limit", 10)
	if err != nil {
		return nil, nil, err
	}
	q := wiki.ChangeQuery{Limit: limit + 1, UserName: user}
	if pre == "rc" || pre == "grc" {
		q.UserName = strings.ReplaceAll(c.p.get(pre+"user"), "_", " ")
		q.HideUser = strings.ReplaceAll(c.p.get(pre+"excludeuser"), "_", " ")
	}
	if q.Namespaces, err = c.namespaces(pre + "namespace"); err != nil {
		return nil, nil, err
	}
	if d, err := c.one(pre+"dir", "older", "newer"); err != nil {
		return nil, nil, err
	} else if d == "newer" {
		return nil, nil, errf("badvalue", "%sdir=newer is not supported by Wikid; list newest first (%sdir=older).", pre, pre)
	}
	for _, s := range c.enum(pre+"show", "minor", "!minor", "bot", "!bot", "anon", "!anon", "redirect", "!redirect", "patrolled", "!patrolled", "unpatrolled", "new", "!new", "top", "!top") {
		switch s {
		case "!minor":
			q.HideMinor = true
		case "new":
			q.OnlyNew = true
		}
	}
	types := c.enum(pre+"type", "edit", "new", "log", "external", "categorize")
	if v := c.p.get(pre + "end"); v != "" {
		t, err := parseTime(v)
		if err != nil {
			return nil, nil, err
		}
		q.Since = t
	}
	c.p.used[pre+"start"], c.p.used[pre+"toponly"], c.p.used[pre+"tag"], c.p.used[pre+"token"] = true, true, true, true
	c.p.used[pre+"userprefix"], c.p.used[pre+"generaterevisions"], c.p.used[pre+"slot"] = true, true, true
	if v := c.p.get(pre + "continue"); v != "" {
		_, id, _ := strings.Cut(v, "|")
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n <= 0 {
			return nil, nil, errf("badcontinue", "Invalid continue param. You should pass the original value returned by the previous query.")
		}
		q.Before = n + 1
	}
	props := c.enum(pre+"prop", "user", "userid", "comment", "parsedcomment", "flags", "timestamp", "title", "ids", "sizes", "redirect", "patrolled", "loginfo", "tags", "sha1", "size", "sizediff")
	if !c.p.has(pre + "prop") {
		props = []string{"title", "timestamp", "ids"}
		if user != "" {
			props = []string{"ids", "title", "timestamp", "comment", "size", "flags"}
		}
	}
	changes, err := c.a.store.RecentChanges(c.ctx, q)
	if err != nil {
		return nil, nil, err
	}
	next := map[string]string{}
	if len(changes) > limit {
		ch := changes[limit]
		next[pre+"continue"] = ch.Time.UTC().Format("20060102150405") + "|" + strconv.FormatInt(ch.ID, 10)
		changes = changes[:limit]
	}
	// The store leaves out a deleted page's edits, as MediaWiki
	// archives them (store.ChangeFilters).
	out := []any{}
	for _, ch := range changes {
		typ := "edit"
		switch ch.Kind {
		case wiki.ChangeNew:
			typ = "new"
		case wiki.ChangeMove, wiki.ChangeDelete, wiki.ChangeUndelete:
			typ = "log"
		}
		if len(types) > 0 && !contains(types, typ) {
			continue
		}
		row := map[string]any{}
		if user == "" {
			row["type"] = typ
		}
		for _, p := range props {
			switch p {
			case "title":
				row["ns"], row["title"] = nsOf(ch.Title), string(ch.Title)
			case "ids":
				row["pageid"], row["revid"] = ch.PageID, ch.RevID
				if user == "" {
					row["rcid"], row["old_revid"] = ch.ID, ch.OldRevID
				} else {
					row["parentid"] = ch.OldRevID
				}
			case "user":
				row["user"] = ch.UserName
				if ch.UserID == 0 {
					c.setFlag(row, "anon", true)
				}
			case "userid":
				row["userid"] = ch.UserID
			case "comment":
				row[p] = ch.Summary
			case "parsedcomment":
				// HTML, which clients insert as such: the summary escaped.
				row[p] = htmlEscape(ch.Summary)
			case "timestamp":
				row["timestamp"] = mwTime(ch.Time)
			case "sizes":
				row["oldlen"], row["newlen"] = ch.OldSize, ch.Size
			case "size":
				row["size"] = ch.Size
			case "sizediff":
				row["sizediff"] = ch.Size - ch.OldSize
			case "flags":
				if c.v2 {
					row["minor"], row["new"], row["bot"] = ch.Minor, ch.Kind == wiki.ChangeNew, false
					if user != "" {
						row["top"] = false
					}
				} else {
					c.setFlag(row, "minor", ch.Minor)
					c.setFlag(row, "new", ch.Kind == wiki.ChangeNew)
				}
			case "tags":
				tags := ch.Tags
				if tags == nil {
					tags = []string{}
				}
				row["tags"] = tags
			case "loginfo":
				if typ == "log" {
					row["logtype"], row["logaction"] = logOf(ch.Kind)
					if ch.Kind == wiki.ChangeMove {
						row["logparams"] = map[string]any{"target_title": string(ch.NewTitle), "target_ns": nsOf(ch.NewTitle)}
					}
				}
			}
		}
		out = append(out, row)
	}
	return out, next, nil
}

func logOf(k wiki.ChangeKind) (string, string) {
	switch k {
	case wiki.ChangeMove:
		return "move", "move"
	case wiki.ChangeDelete:
		return "delete", "delete"
	case wiki.ChangeUndelete:
		return "delete", "restore"
	}
	return "", ""
}

func (c *call) logEvents(pre string) ([]any, map[string]string, error) {
	limit, err := c.limit(pre+"limit", 10)
	if err != nil {
		return nil, nil, err
	}
	q := wiki.LogQuery{Limit: limit + 1, UserName: strings.ReplaceAll(c.p.get(pre+"user"), "_", " ")}
	if typ := c.p.get(pre + "type"); typ != "" {
		if !contains(wiki.LogTypes, wiki.LogType(typ)) {
			return nil, nil, errf("badvalue", "Unrecognized value for parameter \"%stype\": %s.", pre, trunc(typ, 30))
		}
		q.Type = wiki.LogType(typ)
	}
	if v := c.p.get(pre + "action"); v != "" {
		typ, _, _ := strings.Cut(v, "/")
		q.Type = wiki.LogType(typ)
	}
	if v := c.p.get(pre + "title"); v != "" {
		t, err := c.a.site.Rules.Parse(v)
		if err != nil {
			return nil, nil, errf("invalidtitle", "Bad title \"%s\": %s", trunc(v, 60), wiki.Message(err))
		}
		q.Target = t
	}
	if v := c.p.get(pre + "continue"); v != "" {
		_, id, _ := strings.Cut(v, "|")
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n <= 0 {
			return nil, nil, errf("badcontinue", "Invalid continue param. You should pass the original value returned by the previous query.")
		}
		q.Before = n + 1
	}
	for _, x := range []string{"prop", "start", "end", "dir", "namespace", "prefix", "tag"} {
		c.p.used[pre+x] = true
	}
	entries, err := c.a.store.Log(c.ctx, q)
	if err != nil {
		return nil, nil, err
	}
	next := map[string]string{}
	if len(entries) > limit {
		e := entries[limit]
		next[pre+"continue"] = e.Time.UTC().Format("20060102150405") + "|" + strconv.FormatInt(e.ID, 10)
		entries = entries[:limit]
	}
	out := []any{}
	for _, e := range entries {
		params := map[string]any{}
		for k, v := range e.Params {
			params[k] = v
		}
		if to, ok := e.Params["to"]; ok {
			params["target_title"], params["target_ns"] = to, nsOf(wiki.Title(to))
		}
		out = append(out, map[string]any{"logid": e.ID, "ns": nsOf(e.Target), "title": string(e.Target), "pageid": e.PageID,
			"logpage": e.PageID, "type": string(e.Type), "action": e.Action, "user": e.UserName, "userid": e.UserID,
			"timestamp": mwTime(e.Time), "comment": e.Comment, "params": params})
	}
	return out, next, nil
}
