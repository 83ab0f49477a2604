package web

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

var rootSpec = &httpx.Spec{Name: "root"}

func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, rootSpec, "/", routeOpts{}, func(w http.ResponseWriter, r *http.Request) error {
		httpx.Redirect(w, r, s.mainPage.URL(), http.StatusFound, httpx.Public, 300)
		return nil
	})
}

// indexPHP accepts MediaWiki's /w/index.php?title=X&action=Y links: a GET
// is redirected to the article URL with the other parameters, put in the
// canonical form of the route they select.
func (s *Server) indexPHP(w http.ResponseWriter, r *http.Request) {
	httpx.SetRoute(r, "index.php")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeError(w, r, methodNotAllowed(w, "GET, HEAD"))
		return
	}
	raw, err := httpx.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.titles.Parse(raw.First("title"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rest := raw[:0:0]
	for _, p := range raw {
		if p.Name != "title" {
			rest = append(rest, p)
		}
	}
	// The parameters the target route reads, in its canonical form: what
	// the redirect carries is bounded by the route's own limits.
	var spec *httpx.Spec
	if t.IsSpecial() {
		name, _, _ := strings.Cut(t.Name(), "/")
		rt := specialRoutes[strings.ToLower(strings.ReplaceAll(name, " ", ""))]
		if rt == nil {
			s.writeError(w, r, wiki.Errorf(wiki.KindNotFound, "there is no special page %q; see Special:SpecialPages for the list", t.Name()))
			return
		}
		spec = rt.spec
	} else {
		rt, err := s.pageRouteGet(t, rest)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		spec = rt.spec
	}
	params, err := spec.Canonical(rest, s.titles)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	httpx.Redirect(w, r, httpx.URL(t.URL(), params), http.StatusMovedPermanently, httpx.NoStore, 0)
}

func methodNotAllowed(w http.ResponseWriter, allow string) error {
	w.Header().Set("Allow", allow)
	return &wiki.Error{Kind: wiki.KindInvalid, Msg: "that HTTP method is not allowed here; allowed: " + allow, Err: errMethod}
}

var errMethod = errors.New("method not allowed")

// titleFromPath parses the {title...} path value by the wiki's title rules:
// its canonical URL is the title's, so that a title the rules spell
// otherwise ("apple" with capital_links on) is redirected, and one they
// keep is not.
func (s *Server) titleFromPath(r *http.Request) (wiki.Title, error) {
	raw := r.PathValue("title")
	if !utf8.ValidString(raw) {
		return "", wiki.Errorf(wiki.KindInvalid, "the address is not valid UTF-8; check the link")
	}
	return s.titles.Parse(raw)
}

// The parameters of /wiki/Title, as MediaWiki names them.
var (
	actionParam = httpx.Param{Name: "action", Kind: httpx.Enum, Default: "view",
		Values: []string{"view", "edit", "submit", "history", "raw", "move", "delete", "undelete", "purge", "revert", "protect", "unprotect", "watch", "unwatch", "info", "rollback", "thank", "filerevert", "editmodel"}}
	redirectParam = httpx.Param{Name: "redirect", Kind: httpx.Enum, Values: []string{"no"}}
	oldidParam    = httpx.Param{Name: "oldid", Kind: httpx.ID, What: "a revision number"}
	diffParam     = httpx.Param{Name: "diff", Kind: httpx.ID, What: "a revision number, prev or cur", Values: []string{"prev", "cur"}}
	fromParam     = httpx.Param{Name: "from", Kind: httpx.TitleKey}
	// fromPageParam is where Special:WhatLinksHere's listing starts: a
	// page ID, as MediaWiki's (its listing is in page ID order).
	fromPageParam = httpx.Param{Name: "from", Kind: httpx.ID, What: "a page number (the links at Next give it)"}
	offsetParam   = httpx.Param{Name: "offset", Kind: httpx.ID, What: "a revision number"}
	// pagefromParam is where a category page's listing starts, as
	// MediaWiki's pagefrom (and its older from, which redirects to it).
	pagefromParam = httpx.Param{Name: "pagefrom", Alias: "from", Kind: httpx.SortCursor}
	// sectionParam is the section an edit form edits, as MediaWiki's: a
	// section number (render.Sections; 0 is the text before the first
	// heading) or new, a new section appended.
	sectionParam = httpx.Param{Name: "section", Kind: httpx.Index, Values: []string{engine.NewSection}, What: "a section number (0, 1, 2, …) or new"}
)

// pageRoute is one thing /wiki/Title does: its parameters and its handler.
type pageRoute struct {
	spec   *httpx.Spec
	handle func(s *Server, w http.ResponseWriter, r *http.Request, t wiki.Title) error
	splice bool // a plain article view: logged-in views are spliced
}

func pageSpec(name string, params ...httpx.Param) *httpx.Spec {
	return &httpx.Spec{Name: name, Params: append([]httpx.Param{actionParam}, params...)}
}

var (
	routeView     = &pageRoute{spec: pageSpec("page", redirectParam), handle: (*Server).view, splice: true}
	routeCategory = &pageRoute{spec: pageSpec("page", redirectParam, pagefromParam, feedParam), handle: (*Server).view, splice: true}
	routeOldid    = &pageRoute{spec: pageSpec("page:oldid", oldidParam), handle: (*Server).viewOld}
	routeDiff     = &pageRoute{spec: pageSpec("page:diff", diffParam, oldidParam), handle: (*Server).diffPage}
	routeEdit     = &pageRoute{spec: pageSpec("page:edit", oldidParam, sectionParam, httpx.Param{Name: "redlink", Kind: httpx.Enum, Values: []string{"1"}},
		undoParam, undoAfterParam), handle: (*Server).editForm}
	routeHistory = &pageRoute{spec: pageSpec("page:history", offsetParam, feedParam,
		httpx.Param{Name: "limit", Kind: httpx.Limit, Max: 500, Default: "50"}), handle: (*Server).history}
	routeRaw  = &pageRoute{spec: pageSpec("page:raw", oldidParam), handle: (*Server).raw}
	routeMove = &pageRoute{spec: pageSpec("page:move"), handle: func(s *Server, w http.ResponseWriter, r *http.Request, t wiki.Title) error {
		return s.moveForm(w, r, t, "")
	}}
	routeDelete = &pageRoute{spec: pageSpec("page:delete"), handle: func(s *Server, w http.ResponseWriter, r *http.Request, t wiki.Title) error {
		return s.deleteForm(w, r, t, "")
	}}
	routeUndelete = &pageRoute{spec: pageSpec("page:undelete"), handle: func(s *Server, w http.ResponseWriter, r *http.Request, t wiki.Title) error {
		return s.undeleteForm(w, r, t, "")
	}}
	routePurge      = &pageRoute{spec: pageSpec("page:purge"), handle: (*Server).purgeForm}
	routeWatch      = &pageRoute{spec: pageSpec("page:watch"), handle: (*Server).watchForm}
	routeUnwatch    = &pageRoute{spec: pageSpec("page:unwatch"), handle: (*Server).unwatchForm}
	routeInfo       = &pageRoute{spec: pageSpec("page:info"), handle: (*Server).info}
	routeThank      = &pageRoute{spec: pageSpec("page:thank", thankRevParam), handle: (*Server).thankForm}
	routeFileRevert = &pageRoute{spec: pageSpec("page:filerevert", oldimageParam), handle: (*Server).fileRevertForm}
	routeRollback   = &pageRoute{spec: pageSpec("page:rollback", rollbackFromParam), handle: (*Server).rollbackForm}
	routeProtect    = &pageRoute{spec: pageSpec("page:protect"), handle: func(s *Server, w http.ResponseWriter, r *http.Request, t wiki.Title) error {
		return s.protectForm(w, r, t, "")
	}}
)

// postRoutes are the changes a POST to /wiki/Title?action=… makes.
var postRoutes = map[string]*pageRoute{
	"submit":     {spec: pageSpec("page:submit", sectionParam), handle: (*Server).submit},
	"edit":       {spec: pageSpec("page:submit", sectionParam), handle: (*Server).submit},
	"revert":     {spec: pageSpec("page:revert"), handle: (*Server).revert},
	"move":       {spec: pageSpec("page:move"), handle: (*Server).move},
	"delete":     {spec: pageSpec("page:delete"), handle: (*Server).delete},
	"undelete":   {spec: pageSpec("page:undelete"), handle: (*Server).undelete},
	"purge":      {spec: pageSpec("page:purge"), handle: (*Server).purge},
	"protect":    {spec: pageSpec("page:protect"), handle: (*Server).protect},
	"watch":      {spec: pageSpec("page:watch"), handle: (*Server).watch},
	"unwatch":    {spec: pageSpec("page:unwatch"), handle: (*Server).unwatch},
	"rollback":   {spec: pageSpec("page:rollback", rollbackFromParam), handle: (*Server).rollback},
	"thank":      {spec: pageSpec("page:thank", thankRevParam), handle: (*Server).thank},
	"filerevert": {spec: pageSpec("page:filerevert", oldimageParam), handle: (*Server).fileRevert},
	"editmodel":  {spec: pageSpec("page:editmodel"), handle: (*Server).editModel},
}

// pageRouteGet chooses what a GET of /wiki/Title does, from the query as
// sent (the first non-empty value of each parameter, as the canonical form
// will have it).
func (s *Server) pageRouteGet(t wiki.Title, q httpx.Query) (*pageRoute, error) {
	switch action := q.First("action"); action {
	case "", "view":
		switch {
		case q.First("diff") != "":
			return routeDiff, nil
		case q.First("oldid") != "":
			return routeOldid, nil
		case t.Namespace() == wiki.NSCategory:
			return routeCategory, nil
		}
		return routeView, nil
	case "edit", "submit":
		return routeEdit, nil
	case "history":
		return routeHistory, nil
	case "raw":
		return routeRaw, nil
	case "move":
		return routeMove, nil
	case "delete":
		return routeDelete, nil
	case "undelete":
		return routeUndelete, nil
	case "purge":
		return routePurge, nil
	case "protect", "unprotect":
		return routeProtect, nil
	case "watch":
		return routeWatch, nil
	case "unwatch":
		return routeUnwatch, nil
	case "info":
		return routeInfo, nil
	case "rollback":
		return routeRollback, nil
	case "thank":
		return routeThank, nil
	case "filerevert":
		return routeFileRevert, nil
	case "editmodel":
		return routeEditModel, nil
	default:
		return nil, wiki.Errorf(wiki.KindInvalid, "unknown action %q; known actions: view, edit, history, info, raw, move, delete, undelete, purge, protect, rollback, thank, watch, unwatch, filerevert, editmodel", sanitizeLine(action))
	}
}

// wikiPage parses and dispatches /wiki/Title by method and action, as
// MediaWiki does; special pages have their own table (special.go).
func (s *Server) wikiPage(w http.ResponseWriter, r *http.Request) {
	httpx.SetRoute(r, "page")
	t, err := s.titleFromPath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if t.IsSpecial() {
		s.special(w, r, t)
		return
	}
	raw, err := httpx.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var rt *pageRoute
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		rt, err = s.pageRouteGet(t, raw)
	case http.MethodPost:
		action := raw.First("action")
		if rt = postRoutes[action]; rt == nil {
			err = wiki.Errorf(wiki.KindInvalid, "unknown action %q for POST; known: submit, revert, filerevert, rollback, thank, move, delete, undelete, purge, protect, watch, unwatch", sanitizeLine(action))
		}
	default:
		err = methodNotAllowed(w, "GET, HEAD, POST")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := httpx.ParseQueryFor(r, raw, rt.spec, t.URL(), s.titles)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o := routeOpts{noEdge: s.hostFeed(q)}
	if rt.splice && len(q.Params) == 0 {
		o.splice = t
	}
	s.serve(w, withTags(r, t), q, o, func(w http.ResponseWriter, r *http.Request) error {
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				return formError(err)
			}
			if err := s.checkCSRF(r); err != nil {
				return err
			}
		} else if err := s.requireRead(r); err != nil {
			return err
		}
		return rt.handle(s, w, r, t)
	})
}

// purgeForm asks before purging, as MediaWiki does for a GET of
// action=purge (a link must not change state).
func (s *Server) purgeForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	return s.writeForm(w, r, t, "view", http.StatusOK, formData{
		Heading: "Purge " + string(t), Intro: "Render the page again from its text and drop every cached copy of it.",
		Action: t.URL() + "?action=purge", Submit: "Purge", Cancel: t.URL(),
	})
}

// purge drops the page's renders and cached copies (MediaWiki's
// action=purge: a POST from the confirmation form). Each purge costs a
// render and a purge of every cache, in front too, so purges are limited per
// user, and per client address for anonymous readers (MediaWiki's defaults:
// 30 a minute).
func (s *Server) purge(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	v := viewerOf(r)
	who := "u\x00" + v.User.Name
	if !v.LoggedIn {
		who = "a\x00" + s.client(r).String()
	}
	if wait, ok := s.purges.allow(who); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		return wiki.Errorf(wiki.KindTooMany, "you purged many pages in the last minute; wait %d seconds and try again", int(wait.Seconds())+1)
	}
	if _, err := s.livePage(r, t); err != nil {
		return err
	}
	s.eng.Purge(r.Context(), t)
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}

func formError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return wiki.Errorf(wiki.KindInvalid, "the form data could not be read (%v); submit the form again", err)
}

// formValue returns a form field, rejecting invalid UTF-8.
func formValue(r *http.Request, name string) (string, error) {
	v := r.PostFormValue(name)
	if !utf8.ValidString(v) {
		return "", wiki.Errorf(wiki.KindInvalid, "the field %q is not valid UTF-8 text", name)
	}
	return v, nil
}

type crumb struct {
	Label  string
	URL    string
	Exists bool
}

type viewData struct {
	Title          wiki.Title
	Revision       wiki.Revision
	Body           template.HTML
	TOC            template.HTML
	Categories     []wiki.Title
	RedirectedFrom wiki.Title
	IsRedirectPage bool
	RedirectTarget wiki.Title
	OldRevision    bool
	Breadcrumbs    []crumb
	// Members are a category's members that are not categories, one
	// page of them by sort key, grouped by the first letter of their
	// keys; MemberCount counts them and MembersNext links to the next
	// page.
	Members     []memberGroup
	MemberCount int
	MembersNext string
	// Subcategories are the members that are categories themselves
	// (the first page of them), grouped as Members; MoreSubcategories
	// says there are more.
	Subcategories     []memberGroup
	SubcategoryCount  int
	MoreSubcategories bool
	// Protection is the page's active protection, drawn as a lock. It is
	// part of the cached page: protecting purges the page, and the entry
	// lives no longer than the protection (expireWith).
	Protection *wiki.Protection
	// File is a File: page's file (nil for other pages, and for a file
	// page without an upload).
	File *fileView
}

func (s *Server) view(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if feedFormat(r) != "" {
		return s.categoryFeed(w, r, t)
	}
	ctx := r.Context()
	noRedirect := httpx.From(r).Get("redirect") == "no"
	v, err := s.eng.ViewPage(ctx, t, noRedirect)
	if errors.Is(err, wiki.ErrNotFound) {
		return s.missing(w, r, t, v.Page.Deleted)
	}
	if err != nil {
		return err
	}
	d := &viewData{
		Title: v.Page.Title, Revision: v.Revision, Body: template.HTML(v.Rendered.HTML), TOC: template.HTML(v.Rendered.TOC),
		Categories: v.Rendered.Categories, RedirectedFrom: v.RedirectedFrom,
	}
	if v.RedirectedFrom != "" {
		addTag(r, v.Page.Title)
	}
	if v.Page.Redirect != "" && v.RedirectedFrom == "" {
		d.IsRedirectPage, d.RedirectTarget = true, v.Page.Redirect
	}
	if err := s.fillPageExtras(r, d); err != nil {
		return err
	}
	if pr, active, err := s.eng.Protection(ctx, d.Title); err != nil {
		return err
	} else if active {
		d.Protection = &pr
		expireWith(r, pr.Expiry)
	}
	p := s.page(r, string(d.Title))
	if t.Namespace() == wiki.NSCategory {
		p.Feeds = feedLinks(t.URL(), nil, s.cfg.SiteName+" – New pages in "+string(t))
	}
	if err := s.setTabs(p, r, d.Title, "view", true); err != nil {
		return err
	}
	setSpliceNote(r, d.Title, true)
	p.ReturnTo = returnToQuery(d.Title)
	p.Data = d
	mode := cachePublic
	if v.Rendered.TimedOut || v.Rendered.Partial {
		mode = cacheBrief // the engine renders it again soon: caches must not keep it longer
	}
	s.writeBodyPage(w, r, p, "view", mode, v.Revision.Time)
	return nil
}

// fillPageExtras adds breadcrumbs for subpages and members for categories:
// one batched query each.
func (s *Server) fillPageExtras(r *http.Request, d *viewData) error {
	ctx := r.Context()
	if parents := d.Title.Parents(); len(parents) > 0 {
		exists, err := s.store.ExistingTitles(ctx, parents)
		if err != nil {
			return err
		}
		// As MediaWiki: links to the parents that exist, "A › A/B".
		for _, p := range parents {
			if !exists[p] {
				continue
			}
			label := p.Subpage()
			if p == parents[0] {
				label = string(p)
			}
			d.Breadcrumbs = append(d.Breadcrumbs, crumb{Label: label, URL: p.URL(), Exists: true})
		}
	}
	if d.Title.Namespace() == wiki.NSFile {
		if err := s.fillFile(r, d); err != nil {
			return err
		}
	}
	if d.Title.Namespace() == wiki.NSCategory {
		q := httpx.From(r)
		from := q.SortCursor(pagefromParam.Name)
		const limit = 200
		// Subcategories first, as MediaWiki lists them: on the first page,
		// then the other members, paged by (sort key, title).
		if from.IsZero() {
			subcats, err := s.store.CategoryMembers(ctx, d.Title, wiki.CategoryQuery{Limit: limit + 1, Subcategories: true})
			if err != nil {
				return err
			}
			if len(subcats) > limit {
				subcats, d.MoreSubcategories = subcats[:limit], true
			}
			d.Subcategories, d.SubcategoryCount = groupMembers(subcats, false, true), len(subcats)
		}
		members, err := s.store.CategoryMembers(ctx, d.Title, wiki.CategoryQuery{From: from, Limit: limit + 1})
		if err != nil {
			return err
		}
		if len(members) > limit {
			d.MembersNext = q.Link(d.Title.URL(), pagefromParam.Name, httpx.SortCursorValue(members[limit].Cursor()))
			members = members[:limit]
		}
		// A page that starts inside a letter's group says its heading
		// continues one of the page before ("B cont."): a member of that
		// letter comes before the first one here.
		cont := false
		if !from.IsZero() && len(members) > 0 {
			first := members[0]
			before, err := s.store.CategoryMembers(ctx, d.Title, wiki.CategoryQuery{
				From: wiki.CategoryCursor{SortKey: wiki.SortKeyInitial(first.SortKey)}, Before: first.Cursor(), Limit: 1})
			if err != nil {
				return err
			}
			cont = len(before) > 0
		}
		d.Members, d.MemberCount = groupMembers(members, cont, false), len(members)
	}
	return nil
}

// memberGroup is the members of a category listing whose sort keys start
// with one letter, under its heading.
type memberGroup struct {
	Initial string // the heading: the first character of their sort keys
	Cont    bool   // the group began on the page before
	Subcats bool   // the members are subcategories, shown without their prefix
	Members []wiki.Page
}

// maxUnbrokenGroup is the most members a group of a category listing has
// for its column layout to keep it whole: a longer one flows on into the
// next column, where keeping it whole would make one column as long as
// the group and leave the others short.
const maxUnbrokenGroup = 12

// Long reports whether g is too long to be kept in one column.
func (g memberGroup) Long() bool { return len(g.Members) > maxUnbrokenGroup }

// groupMembers groups members, in listing order, by the first character
// of their sort keys (wiki.SortKeyInitial), as MediaWiki heads a category
// page's columns; cont says the first group began on an earlier page,
// subcats that the members are the subcategories. A key that starts with
// white space (" ", the idiom that lists a page first) is headed by a
// no-break space, which keeps the heading's height.
func groupMembers(members []wiki.CategoryMember, cont, subcats bool) []memberGroup {
	var out []memberGroup
	for _, m := range members {
		initial := wiki.SortKeyInitial(m.SortKey)
		if strings.TrimSpace(initial) == "" {
			initial = "\u00a0"
		}
		if len(out) == 0 || out[len(out)-1].Initial != initial {
			out = append(out, memberGroup{Initial: initial, Cont: cont && len(out) == 0, Subcats: subcats})
		}
		g := &out[len(out)-1]
		g.Members = append(g.Members, m.Page)
	}
	return out
}

type missingData struct {
	Title   wiki.Title
	Deleted bool
	CanEdit bool
	Log     []wiki.LogEntry // the title's deletion and move log
}

// titleLog returns the deletion and move log entries of t, newest first,
// for the notices of a missing or deleted page (as MediaWiki shows them).
func (s *Server) titleLog(r *http.Request, t wiki.Title) ([]wiki.LogEntry, error) {
	es, err := s.store.Log(r.Context(), wiki.LogQuery{Target: t, Limit: 20})
	if err != nil {
		return nil, err
	}
	out := es[:0]
	for _, e := range es {
		if e.Type == wiki.LogDelete || e.Type == wiki.LogMove {
			out = append(out, e)
		}
	}
	return out, nil
}

// missing answers a view of a page that does not exist: 404 with a
// "create it" link (a category page still lists its members).
func (s *Server) missing(w http.ResponseWriter, r *http.Request, t wiki.Title, deleted bool) error {
	if t.Namespace() == wiki.NSCategory {
		d := &viewData{Title: t}
		if err := s.fillPageExtras(r, d); err != nil {
			return err
		}
		if len(d.Members) > 0 || len(d.Subcategories) > 0 {
			p := s.page(r, string(t))
			if err := s.setTabs(p, r, t, "view", false); err != nil {
				return err
			}
			setSpliceNote(r, t, false)
			p.Data = d
			s.writeBodyPage(w, r, p, "view", cachePublic, time.Time{})
			return nil
		}
	}
	p := s.page(r, string(t))
	if err := s.setTabs(p, r, t, "view", false); err != nil {
		return err
	}
	p.ReturnTo = returnToQuery(t)
	p.NoIndex = true
	log, err := s.titleLog(r, t)
	if err != nil {
		return err
	}
	p.Data = missingData{Title: t, Deleted: deleted, CanEdit: s.canEdit(viewerOf(r)), Log: log}
	s.writePage(w, r, http.StatusNotFound, "missing", p)
	return nil
}

func (s *Server) viewOld(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	id := httpx.From(r).Int("oldid", 0)
	ctx := r.Context()
	page, rev, err := s.revisionOf(r, t, id)
	if err != nil {
		return err
	}
	rd, err := s.eng.Render(ctx, rev)
	if err != nil {
		return err
	}
	rev.Text = ""
	// The render of a revision is its render as the latest: its section
	// edit links edit the current text, not this revision's.
	d := &viewData{Title: page.Title, Revision: rev, Body: template.HTML(render.StripEditLinks(rd.HTML)), TOC: template.HTML(rd.TOC),
		Categories: rd.Categories, OldRevision: rev.ID != page.LatestID}
	p := s.page(r, string(t))
	if err := s.setTabs(p, r, t, "view", true); err != nil {
		return err
	}
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "view", cachePublic, rev.Time)
	return nil
}

// revisionOf loads revision id and checks that it belongs to page t.
func (s *Server) revisionOf(r *http.Request, t wiki.Title, id int64) (wiki.Page, wiki.Revision, error) {
	ctx := r.Context()
	page, err := s.store.FindPage(ctx, t)
	if err != nil {
		return page, wiki.Revision{}, err
	}
	rev, err := s.store.FindRevision(ctx, id)
	if errors.Is(err, wiki.ErrNotFound) || (err == nil && rev.PageID != page.ID) {
		return page, rev, wiki.Errorf(wiki.KindNotFound, "revision %d of %q does not exist; see the page's history for its revisions", id, t)
	}
	if err != nil {
		return page, rev, err
	}
	if page.Deleted && !viewerOf(r).IsAdmin() {
		return page, rev, wiki.ErrNotFound
	}
	return page, rev, nil
}

// oldidOr returns the ?oldid= revision number, or def when there is none.
func oldidOr(r *http.Request, def int64) int64 { return httpx.From(r).Int("oldid", def) }

func (s *Server) raw(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	ctx := r.Context()
	page, err := s.store.FindPage(ctx, t)
	if err != nil || page.Deleted {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist", t)
	}
	_, rev, err := s.revisionOf(r, t, oldidOr(r, page.LatestID))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", "inline")
	s.writeBody(w, r, http.StatusOK, "text/plain; charset=utf-8", []byte(rev.Text), cachePublic, rev.Time)
	return nil
}

type editData struct {
	Title       wiki.Title
	Text        string
	Summary     string
	Minor       bool
	BaseRev     int64
	Creating    bool
	OldRevision bool
	Preview     *previewData
	Conflict    bool
	Yours       string
	Merged      bool
	Error       string
	// ErrorLink is a page the error points to (the new title of a moved page).
	ErrorLink wiki.Title
	// Log is the title's deletion and move log, shown above the form of a
	// deleted page, as MediaWiki does.
	Log []wiki.LogEntry
	// Protection is the title's active protection; ReadOnly says it keeps
	// the viewer out (the text is shown, without a form to save it).
	Protection *wiki.Protection
	ReadOnly   bool
	// UsedBy is how many pages transclude the page: a save refreshes them
	// through jobs, of which Queued are waiting now.
	UsedBy, Queued int
	// UsedByMore: more than UsedByMax (wiki.MaxCount) pages, not counted.
	UsedByMore bool
	UsedByMax  int
	// Templates are the pages the text transcludes: the preview's, else
	// the saved text's.
	Templates []templateUse
	// ShowWatch offers the "watch this page" box (logged-in editors);
	// Watch ticks it.
	ShowWatch, Watch bool
	// Section is the section edited (a number, or engine.NewSection), or
	// "" for the whole page; Heading is its heading's text, and Subject
	// the subject of a new section.
	Section, Heading, Subject string
	// SectionConflict: a section edit conflicted; the form now edits the
	// whole page.
	SectionConflict bool
	// Undo and UndoAfter are the revisions an undo link reverts (undo.go),
	// carried by the form so that the save is tagged undo; UndoDiff
	// compares the current text with the proposed one.
	Undo, UndoAfter int64
	UndoDiff        template.HTML
	// Model is the markup of Text: the page's (the revision's, editing an
	// old one), or the site default for a new page. The form carries it,
	// so that the save and the preview read the text in it.
	Model wiki.ContentModel
}

// templateUse is a page transcluded, listed under the edit box.
type templateUse struct {
	Title  wiki.Title
	Exists bool
}

type previewData struct {
	Templates []wiki.Title
	HTML      template.HTML
	TOC       template.HTML
}

func (s *Server) editForm(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	section := httpx.From(r).Get("section")
	if err := s.requireEdit(r); err != nil {
		if !viewerOf(r).LoggedIn {
			back := t.Key() + "?action=edit"
			if section != "" {
				back += "&section=" + section
			}
			redirect(w, r, "/wiki/Special:UserLogin?returnto="+url.QueryEscape(back), http.StatusFound)
			return nil
		}
		return err
	}
	if section != "" && httpx.From(r).Has("oldid") {
		return wiki.Errorf(wiki.KindInvalid, "a section can be edited in the current version of the page only; remove oldid from the address, or edit the whole old revision without section")
	}
	// A blocked user sees why instead of a form they could not save.
	if b, err := s.blockedOrNil(r); err != nil {
		return err
	} else if b != nil {
		p := s.page(r, "Blocked from editing")
		p.NoIndex = true
		if err := s.setTabs(p, r, t, "edit", true); err != nil {
			return err
		}
		p.Data = errorData{Heading: "You are blocked from editing", Message: blockMessage(*b), Back: t.URL()}
		s.writePage(w, r, http.StatusForbidden, "error", p)
		return nil
	}
	ctx := r.Context()
	d := &editData{Title: t, Creating: true, Minor: viewerOf(r).User.Prefs.MinorDefault, Section: section, Model: s.eng.DefaultModel()}
	if undo, after, err := undoParams(r); err != nil {
		return err
	} else if undo != 0 {
		return s.undoForm(w, r, t, undo, after, d)
	}
	page, err := s.store.FindPage(ctx, t)
	live := err == nil && !page.Deleted
	if err == nil {
		// A deleted page created again keeps its model, as the store does.
		d.Model = page.Model.Or(wiki.ModelMarkdown)
	}
	if section != "" && section != engine.NewSection && !live {
		if err != nil && !errors.Is(err, wiki.ErrNotFound) {
			return err
		}
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so it has no section %s; create the page first", t, section)
	}
	if live {
		d.Creating = false
		d.BaseRev = page.LatestID
		_, rev, err := s.revisionOf(r, t, oldidOr(r, page.LatestID))
		if err != nil {
			return err
		}
		d.Text, d.Model = rev.Text, rev.Model.Or(wiki.ModelMarkdown)
		switch section {
		case "":
		case engine.NewSection:
			d.Text = ""
		default:
			n, err := engine.ParseSection(section)
			if err != nil {
				return err
			}
			if d.Text, d.Heading, err = s.eng.SectionText(r.Context(), t, rev.Text, d.Model, n); err != nil {
				return err
			}
			if d.Heading != "" {
				d.Summary = engine.SectionSummary(d.Heading)
			}
		}
		if rev.ID != page.LatestID {
			d.OldRevision = true
			d.Summary = "Restored revision " + strconv.FormatInt(rev.ID, 10) + " by " + rev.UserName
		}
	} else if err != nil && !errors.Is(err, wiki.ErrNotFound) {
		return err
	}
	if err == nil && page.Deleted {
		if d.Log, err = s.titleLog(r, t); err != nil {
			return err
		}
	}
	if err := s.noteProtection(r, d); err != nil {
		return err
	}
	return s.writeEdit(w, r, http.StatusOK, d)
}

// noteProtection fills d's protection notice: the viewer sees why the page
// is protected, and, when it keeps them out, its text without a form.
func (s *Server) noteProtection(r *http.Request, d *editData) error {
	pr, active, err := s.eng.Protection(r.Context(), d.Title)
	if err != nil || !active {
		return err
	}
	d.Protection = &pr
	d.ReadOnly = !pr.Edit.Allows(viewerOf(r).Group())
	return nil
}

func (s *Server) writeEdit(w http.ResponseWriter, r *http.Request, status int, d *editData) error {
	verb := "Editing "
	if d.Creating {
		verb = "Creating "
	}
	head, tab := verb+string(d.Title), "edit"
	switch d.Section {
	case "":
	case engine.NewSection:
		head, tab = verb+string(d.Title)+" (new section)", "addtopic"
	default:
		head += " (section)"
	}
	p := s.formPage(r, head)
	if err := s.setTabs(p, r, d.Title, tab, !d.Creating); err != nil {
		return err
	}
	s.listTemplates(r, d)
	if v := viewerOf(r); v.LoggedIn && !v.Token {
		d.ShowWatch = true
		if _, posted := r.PostForm["watchthis-shown"]; posted {
			d.Watch = r.PostFormValue("watchthis") != ""
		} else {
			d.Watch = v.Watching(d.Title, s.now()) || !v.User.Prefs.NoAutoWatch
		}
	}
	if !d.Creating {
		// What a save of a template sets going: shown before it is saved.
		if n, err := s.eng.CountTransclusions(r.Context(), d.Title); err == nil && n > 0 {
			d.UsedBy, d.UsedByMore, d.UsedByMax = n, n > wiki.MaxCount, wiki.MaxCount
			if st, err := s.store.JobStats(r.Context()); err == nil {
				d.Queued = st.Counts[wiki.JobQueued] + st.Counts[wiki.JobRunning]
			}
		}
	}
	p.Data = d
	s.writePage(w, r, status, "edit", p)
	return nil
}

// listTemplates fills d.Templates: those of the preview, else those the
// saved page transcludes, each with whether it exists.
func (s *Server) listTemplates(r *http.Request, d *editData) {
	var ts []wiki.Title
	switch {
	case d.Preview != nil:
		ts = d.Preview.Templates
	case !d.Creating:
		p, err := s.store.FindPage(r.Context(), d.Title)
		if err != nil {
			return
		}
		if ts, err = s.store.PageTemplates(r.Context(), p.ID); err != nil {
			return
		}
	}
	if len(ts) == 0 {
		return
	}
	exists, err := s.store.ExistingTitles(r.Context(), ts)
	if err != nil {
		return
	}
	for _, t := range ts {
		d.Templates = append(d.Templates, templateUse{Title: t, Exists: exists[t]})
	}
}

// submit saves an edit (or shows a preview), merging with edits made since
// the form was opened; an overlapping edit gets the conflict form.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if err := s.requireEdit(r); err != nil {
		return err
	}
	text, err := formValue(r, "text")
	if err != nil {
		return err
	}
	summary, err := formValue(r, "summary")
	if err != nil {
		return err
	}
	subject, err := formValue(r, "sectiontitle")
	if err != nil {
		return err
	}
	section := httpx.From(r).Get("section")
	base, _ := strconv.ParseInt(r.PostFormValue("baserev"), 10, 64)
	model, err := formModel(r)
	if err != nil {
		return err
	}
	d := &editData{Title: t, Text: text, Summary: summary, Minor: r.PostFormValue("minor") != "", BaseRev: base, Creating: base == 0,
		Section: section, Subject: subject, Model: model}
	if model == "" {
		// A form without the field (an old form, a script): the page's
		// model, which the save keeps too.
		d.Model = s.eng.DefaultModel()
		if p, err := s.store.FindPage(r.Context(), t); err == nil {
			d.Model = p.Model.Or(wiki.ModelMarkdown)
		}
	}
	if r.PostFormValue("preview") != "" {
		if err := s.previewAllowed(r); err != nil {
			setRetryAfter(w, err)
			d.Error = wiki.Message(err)
			return s.writeEdit(w, r, statusOf(err), d)
		}
	}
	if section != "" && section != engine.NewSection {
		if n, err := engine.ParseSection(section); err == nil {
			_, d.Heading, _ = s.eng.SectionText(r.Context(), t, text, d.Model, min(n, 1))
		}
	}
	tags, err := s.undoTags(r, t, d)
	if err != nil {
		return err
	}
	if r.PostFormValue("preview") != "" {
		// The preview shows the text as it will be saved: signed, and a
		// new section under its subject.
		shown, err := s.eng.Sign(text, d.Model, s.editorOf(r))
		if err == nil && section == engine.NewSection && strings.TrimSpace(subject) != "" {
			shown = engine.TopicText(subject, shown, d.Model)
		}
		var rd *engine.Rendered
		if err == nil {
			rd, err = s.preview(r, t, shown, d.Model)
		}
		if k := wiki.KindOf(err); k == wiki.KindTooLarge || k == wiki.KindUnavailable || k == wiki.KindTooMany {
			// The form again, with the author's text and what was wrong.
			setRetryAfter(w, err)
			d.Error = wiki.Message(err)
			return s.writeEdit(w, r, statusOf(err), d)
		}
		if err != nil {
			return err
		}
		d.Preview = &previewData{HTML: template.HTML(rd.HTML), TOC: template.HTML(rd.TOC), Templates: rd.Templates}
		return s.writeEdit(w, r, http.StatusOK, d)
	}
	if err := s.checkBlock(r); err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" && section != engine.NewSection {
		d.Error = "The page text is empty. Write something before saving; to remove a page, ask an administrator to delete it."
		if section != "" {
			d.Error = "The section text is empty. Write something before saving; to remove the section, edit the whole page and delete it there."
		}
		return s.writeEdit(w, r, http.StatusBadRequest, d)
	}
	out, err := s.eng.Save(r.Context(), engine.Edit{Title: t, Text: text, Summary: summary, Minor: d.Minor,
		BaseRevID: base, Editor: s.editorOf(r), Section: section, SectionTitle: subject, Tags: tags, Model: model})
	var conflict *engine.ConflictError
	if errors.As(err, &conflict) {
		d.Conflict, d.Text, d.Yours, d.BaseRev = true, conflict.Current, conflict.Yours, conflict.CurrentRev
		if section != "" {
			// The section changed meanwhile: the form now edits the whole
			// page as it is, beside the editor's version of the section.
			d.SectionConflict, d.Yours, d.Section = true, text, ""
		}
		return s.writeEdit(w, r, http.StatusConflict, d)
	}
	// A page deleted or moved since the form was opened: the form again
	// with the editor's own text (never the deleted page's). Saving it
	// again creates the page anew (deleted), or saves it at the page's new
	// title against the same base revision, merging (moved).
	var deleted *engine.DeletedError
	var moved *engine.MovedError
	switch {
	case errors.As(err, &deleted):
		d.Error, d.BaseRev, d.Creating = deleted.Error(), 0, true
		if section != engine.NewSection {
			d.Section = "" // a page created anew is all its text
		}
		if d.Log, err = s.titleLog(r, t); err != nil {
			return err
		}
		return s.writeEdit(w, r, http.StatusConflict, d)
	case errors.As(err, &moved):
		d.Error, d.ErrorLink, d.Title = moved.Error(), moved.To, moved.To
		return s.writeEdit(w, r, http.StatusConflict, d)
	case wiki.KindOf(err) == wiki.KindForbidden:
		// Protected: the text stays in the form, with the reason.
		d.Error = wiki.Message(err)
		if err := s.noteProtection(r, d); err != nil {
			return err
		}
		d.ReadOnly = false // the text stays editable to copy; the notice says why it was not saved
		return s.writeEdit(w, r, http.StatusForbidden, d)
	}
	if err != nil {
		if k := wiki.KindOf(err); k == wiki.KindInvalid || k == wiki.KindTooLarge || k == wiki.KindUnavailable {
			setRetryAfter(w, err)
			d.Error = wiki.Message(err)
			return s.writeEdit(w, r, statusOf(err), d)
		}
		return err
	}
	s.autoWatch(r, out.Page.Title)
	redirect(w, r, out.Page.Title.URL(), http.StatusSeeOther)
	return nil
}

type historyData struct {
	Title     wiki.Title
	Revisions []wiki.Revision
	LatestID  int64
	CanEdit   bool
	// Viewer is the logged-in viewer's user ID (0: none): the others'
	// revisions get a "thank" link.
	Viewer int64
	Next   string
	// Rollback is the latest revision's rollback button, for the viewers
	// who may roll back (undo.go).
	Rollback *rollbackLink
}

func (s *Server) history(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	ctx := r.Context()
	page, err := s.store.FindPage(ctx, t)
	if err != nil || (page.Deleted && !viewerOf(r).IsAdmin()) {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so it has no history", t)
	}
	q := httpx.From(r)
	before := q.Int("offset", 0)
	limit := int(q.Int("limit", 50))
	revs, err := s.store.History(ctx, wiki.HistoryQuery{PageID: page.ID, Before: before, Limit: limit + 1})
	if err != nil {
		return err
	}
	d := historyData{Title: page.Title, LatestID: page.LatestID, CanEdit: s.canEdit(viewerOf(r)) && viewerOf(r).LoggedIn}
	if v := viewerOf(r); v.LoggedIn && !v.Token {
		d.Viewer = v.User.ID
	}
	if len(revs) > limit {
		d.Next = q.Link(t.URL(), "action", "history", "offset", strconv.FormatInt(revs[limit-1].ID, 10), "limit", strconv.Itoa(limit))
		revs = revs[:limit]
	}
	if feedFormat(r) != "" {
		return s.historyFeed(w, r, page.Title, revs)
	}
	d.Revisions = revs
	if len(revs) > 0 && revs[0].ID == page.LatestID {
		if d.Rollback, err = s.rollbackLinkFor(r, page); err != nil {
			return err
		}
	}
	p := s.page(r, "History of "+string(t))
	p.Feeds = feedLinks(q.Path, q.Params, s.cfg.SiteName+" – Revision history of "+string(page.Title))
	if err := s.setTabs(p, r, t, "history", !page.Deleted); err != nil {
		return err
	}
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "history", cachePublic, page.Touched)
	return nil
}

type diffData struct {
	Title     wiki.Title
	Old, New  wiki.Revision
	Table     template.HTML
	Identical bool
	CanRevert bool
	// Coarse and Truncated say that the comparison is approximate or cut
	// short (diff.Result); Added and Deleted count its lines.
	Coarse, Truncated bool
	Added, Deleted    int
	// UndoURL undoes the newer revision (or the range after the older
	// one) through the edit form; Rollback is the latest revision's
	// rollback button (undo.go). Both for the viewers who may use them.
	UndoURL  string
	Rollback *rollbackLink
}

// diffPage shows ?diff=NEW&oldid=OLD; diff may also be "prev" or "cur".
func (s *Server) diffPage(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	ctx := r.Context()
	q := httpx.From(r)
	page, err := s.store.FindPage(ctx, t)
	if err != nil {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist", t)
	}
	// diff is a revision number, "prev" (the parent of oldid) or "cur";
	// oldid defaults to the parent of the newer revision.
	var newID, oldID int64
	switch q.Get("diff") {
	case "prev":
		newID = q.Int("oldid", page.LatestID)
	case "cur", "":
		newID, oldID = page.LatestID, q.Int("oldid", 0)
	default:
		newID, oldID = q.Int("diff", 0), q.Int("oldid", 0)
	}
	_, newRev, err := s.revisionOf(r, t, newID)
	if err != nil {
		return err
	}
	if oldID == 0 {
		oldID = newRev.ParentID
	}
	var oldRev wiki.Revision
	if oldID != 0 {
		if _, oldRev, err = s.revisionOf(r, t, oldID); err != nil {
			return err
		}
	}
	if oldRev.ID > newRev.ID {
		oldRev, newRev = newRev, oldRev
	}
	d := diffData{Title: page.Title, Old: oldRev, New: newRev, Identical: oldRev.Text == newRev.Text}
	if !d.Identical {
		// The comparison of two revisions never changes: the engine keeps
		// it. What depends on the viewer and on the page's state (the
		// revert button, the tabs) is drawn here, per request.
		res, err := s.eng.Diff(ctx, oldRev, newRev)
		if err != nil {
			return err
		}
		d.Table = template.HTML(res.HTML())
		d.Coarse, d.Truncated, d.Added, d.Deleted = res.Coarse, res.Truncated, res.Added, res.Deleted
	}
	v := viewerOf(r)
	d.CanRevert = v.LoggedIn && s.canEdit(v) && oldRev.ID != 0 && newRev.ID == page.LatestID && !d.Identical
	if v.LoggedIn && s.canEdit(v) && !d.Identical && oldRev.ID != 0 && !page.Deleted {
		d.UndoURL = t.URL() + "?action=edit&undo=" + strconv.FormatInt(newRev.ID, 10)
		if oldRev.ID != newRev.ParentID {
			d.UndoURL += "&undoafter=" + strconv.FormatInt(oldRev.ID, 10)
		}
	}
	if newRev.ID == page.LatestID {
		if d.Rollback, err = s.rollbackLinkFor(r, page); err != nil {
			return err
		}
	}
	oldRev.Text, newRev.Text = "", ""
	d.Old, d.New = oldRev, newRev
	p := s.page(r, "Difference between revisions of "+string(t))
	if d.CanRevert || d.Rollback != nil {
		p.CSRF = s.csrfToken(r)
	}
	if err := s.setTabs(p, r, t, "history", true); err != nil {
		return err
	}
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "diff", cachePublic, newRev.Time)
	return nil
}

func (s *Server) revert(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	if err := s.requireEdit(r); err != nil {
		return err
	}
	if err := s.checkBlock(r); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PostFormValue("oldid"), 10, 64)
	if err != nil {
		return wiki.Errorf(wiki.KindInvalid, "oldid must be a revision number")
	}
	if _, err := s.eng.Revert(r.Context(), t, id, s.editorOf(r)); err != nil {
		return err
	}
	redirect(w, r, t.URL(), http.StatusSeeOther)
	return nil
}

// formModel reads the form's content model (the edit form's hidden
// field): "" when it has none, an error naming the models when it is
// not one of them.
func formModel(r *http.Request) (wiki.ContentModel, error) {
	m := wiki.ContentModel(r.PostFormValue("model"))
	if m != "" && !m.Valid() {
		return "", wiki.Errorf(wiki.KindInvalid, "the content model %.40q is not one this wiki knows; use %s", m, engine.ModelNames())
	}
	return m, nil
}

// preview renders text as page t's in model m for an edit form, charged
// to the client's parse rate limit as an Action API parse of a text is,
// by bytes: one event per engine.ParseUnit of text before the render, and
// one per engine.ParseUnit it made after it (a short text can transclude
// pages of megabytes), so that ordinary previews cost nothing and a few
// of megabytes a minute are shown. This preview is shown; the client's
// next ones are refused until the minute is over.
func (s *Server) preview(r *http.Request, t wiki.Title, text string, m wiki.ContentModel) (*engine.Rendered, error) {
	key := s.limitKey(r)
	if wait, ok := s.parses.allowN(key, len(text)/engine.ParseUnit); !ok {
		return nil, previewLimited(wait)
	}
	rd, err := s.eng.Preview(r.Context(), t, text, m)
	if err == nil {
		s.parses.allowN(key, rd.Made/engine.ParseUnit)
	}
	return rd, err
}

// previewAllowed checks, without counting, that the client has previews
// left this minute: for the work an edit form does on the text before
// its preview (finding the section's heading).
func (s *Server) previewAllowed(r *http.Request) error {
	if wait, ok := s.parses.allowN(s.limitKey(r), 0); !ok {
		return previewLimited(wait)
	}
	return nil
}

func previewLimited(wait time.Duration) error {
	return &wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait,
		Msg: "You have previewed a lot of text in the last minute: wait a minute and preview again. Saving does not wait."}
}
