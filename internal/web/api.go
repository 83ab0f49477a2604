package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/diff"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

// The REST API follows MediaWiki's REST API v1 (/w/rest.php/v1/) wherever
// the resource is the same, so its clients work with a base-URL change.

const restBase = "/w/rest.php/v1/"

// restKey writes a title in a REST path segment: its key, with '/' escaped
// (a title with a slash is one segment, as in MediaWiki).
func restKey(t wiki.Title) string { return url.PathEscape(t.Key()) }

// restPageURL is the canonical REST URL of page t, plus suffix ("/html").
func restPageURL(t wiki.Title, suffix string) string { return restBase + "page/" + restKey(t) + suffix }

var (
	specRESTPage     = &httpx.Spec{Name: "rest:page"}
	specRESTBare     = &httpx.Spec{Name: "rest:page"}
	specRESTHTML     = &httpx.Spec{Name: "rest:page:html"}
	specRESTHistory  = &httpx.Spec{Name: "rest:page:history", Params: []httpx.Param{{Name: "older_than", Kind: httpx.ID, What: "a revision number"}}}
	specRESTEdit     = &httpx.Spec{Name: "rest:page:edit"}
	specRESTCreate   = &httpx.Spec{Name: "rest:page:create"}
	specRESTSearch   = &httpx.Spec{Name: "rest:search", Params: []httpx.Param{{Name: "q", Kind: httpx.Text, Max: 300}, {Name: "limit", Kind: httpx.Limit, Max: 100, Default: "10"}, namespaceParam}}
	specRESTTitles   = &httpx.Spec{Name: "rest:search-title", Params: []httpx.Param{{Name: "q", Kind: httpx.Text, Max: 255}, {Name: "limit", Kind: httpx.Limit, Max: 100, Default: "10"}}}
	specRESTRevision = &httpx.Spec{Name: "rest:revision"}
	specRESTCompare  = &httpx.Spec{Name: "rest:compare"}
	specRESTFile     = &httpx.Spec{Name: "rest:file"}
	specRESTUpload   = &httpx.Spec{Name: "rest:file:upload"}
)

func (s *Server) apiRoutes() http.Handler {
	mux := http.NewServeMux()
	p := restBase
	title := func(suffix string) func(*http.Request) (string, error) {
		return func(r *http.Request) (string, error) {
			t, err := s.apiTitle(r)
			if err != nil {
				return "", err
			}
			return restPageURL(t, suffix), nil
		}
	}
	fixed := func(path string) func(*http.Request) (string, error) {
		return func(*http.Request) (string, error) { return path, nil }
	}
	revision := func(r *http.Request) (string, error) {
		id, err := pathID(r, "id")
		return restBase + "revision/" + strconv.FormatInt(id, 10), err
	}
	compare := func(r *http.Request) (string, error) {
		from, err := pathID(r, "from")
		if err != nil {
			return "", err
		}
		to, err := pathID(r, "to")
		return restBase + "revision/" + strconv.FormatInt(from, 10) + "/compare/" + strconv.FormatInt(to, 10), err
	}
	mux.HandleFunc("GET "+p+"page/{title}", s.api(specRESTPage, title(""), s.apiGetPage))
	mux.HandleFunc("GET "+p+"page/{title}/bare", s.api(specRESTBare, title("/bare"), s.apiGetPage))
	mux.HandleFunc("GET "+p+"page/{title}/html", s.api(specRESTHTML, title("/html"), s.apiGetHTML))
	mux.HandleFunc("GET "+p+"page/{title}/history", s.api(specRESTHistory, title("/history"), s.apiHistory))
	mux.HandleFunc("PUT "+p+"page/{title}", s.api(specRESTEdit, title(""), s.apiPutPage))
	mux.HandleFunc("POST "+p+"page", s.api(specRESTCreate, fixed(p+"page"), s.apiCreatePage))
	file := func(r *http.Request) (string, error) {
		t, err := s.apiFileTitle(r)
		return restBase + "file/" + restKey(t), err
	}
	mux.HandleFunc("GET "+p+"file/{title}", s.api(specRESTFile, file, s.apiGetFile))
	mux.HandleFunc("POST "+p+"file/{title}", s.api(specRESTUpload, file, s.apiUpload))
	mux.HandleFunc("GET "+p+"search/page", s.api(specRESTSearch, fixed(p+"search/page"), s.apiSearch))
	mux.HandleFunc("GET "+p+"search/title", s.api(specRESTTitles, fixed(p+"search/title"), s.apiSearchTitles))
	mux.HandleFunc("GET "+p+"revision/{id}", s.api(specRESTRevision, revision, s.apiRevision))
	mux.HandleFunc("GET "+p+"revision/{from}/compare/{to}", s.api(specRESTCompare, compare, s.apiCompare))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// No route for this method and path: 405 with the methods the
		// path has, or 404.
		httpx.SetRoute(r, "rest:other")
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete} {
			r2 := r.Clone(r.Context())
			r2.Method = m
			if _, pattern := mux.Handler(r2); pattern != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			s.writeAPIError(w, r, methodNotAllowed(w, strings.Join(allow, ", ")))
			return
		}
		s.writeAPIError(w, r, &wiki.Error{Kind: wiki.KindNotFound, Err: errNoRoute,
			Msg: "there is no REST route " + sanitizeLine(r.Method) + " " + sanitizeLine(r.URL.Path) + "; the routes are listed in the README"})
	})
}

// errNoRoute marks the 404 of a path that no REST route has.
var errNoRoute = errors.New("no such REST route")

func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, wiki.Errorf(wiki.KindInvalid, "%s must be a revision number", name)
	}
	return id, nil
}

// api wraps a REST handler: the parse (a non-canonical target is answered
// uncached, not redirected), read permission, JSON errors.
func (s *Server) api(spec *httpx.Spec, path func(*http.Request) (string, error), h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		httpx.SetRoute(r, spec.Name)
		p, err := path(r)
		if err != nil {
			s.writeAPIError(w, r, err)
			return
		}
		q, err := httpx.Parse(r, spec, p, s.titles)
		if err != nil {
			s.writeAPIError(w, r, err)
			return
		}
		s.serve(w, withTags(r), q, routeOpts{noRedirect: true, onError: s.writeAPIError}, func(w http.ResponseWriter, r *http.Request) error {
			if err := s.requireRead(r); err != nil {
				return err
			}
			return h(w, r)
		})
	}
}

type apiError struct {
	HTTPCode            int               `json:"httpCode"`
	HTTPReason          string            `json:"httpReason"`
	ErrorKey            string            `json:"errorKey"`
	MessageTranslations map[string]string `json:"messageTranslations"`
	// Source is the text the client sent, returned when an edit was
	// refused because the page was deleted or moved since its base
	// revision, so that nothing is lost. It is never other text.
	Source *string `json:"source,omitempty"`
	// NewTitle is the page's title after a move (errorKey "pagemoved").
	NewTitle string `json:"newTitle,omitempty"`
}

func (s *Server) writeAPIError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == 499 {
		return
	}
	if status >= 500 && status != http.StatusServiceUnavailable {
		s.log.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	setRetryAfter(w, err)
	key := map[int]string{400: "rest-bad-request", 401: "rest-unauthorized", 403: "rest-permission-denied",
		404: "rest-nonexistent-title", 405: "rest-method-not-allowed", 409: "rest-edit-conflict", 413: "rest-too-large",
		429: "rest-rate-limited", 500: "rest-internal-error", 503: "rest-unavailable"}[status]
	if key == "" {
		key = "rest-error"
	}
	if errors.Is(err, errNoRoute) {
		key = "rest-no-match"
	}
	out := apiError{HTTPCode: status, HTTPReason: http.StatusText(status), MessageTranslations: map[string]string{"en": messageOf(err)}}
	// The error keys of MediaWiki's edit API for the same refusals.
	var (
		protected *engine.ProtectedError
		deleted   *engine.DeletedError
		moved     *engine.MovedError
	)
	switch {
	case errors.Is(err, errBlocked):
		key = "blocked"
	case errors.As(err, &protected):
		key = "protectedpage"
		if protected.Creating {
			key = "protectedtitle"
		}
	case errors.As(err, &deleted):
		key, out.Source = "pagedeleted", &deleted.Yours
	case errors.As(err, &moved):
		key, out.Source, out.NewTitle = "pagemoved", &moved.Yours, string(moved.To)
	}
	out.ErrorKey = key
	b, _ := json.Marshal(out)
	httpx.Write(w, r, &httpx.Response{Status: status, Type: "application/json", Body: append(b, '\n'),
		Cache: httpx.NoStore, Header: takeHeader(w)})
}

// writeJSON answers with v as JSON through the one builder; mode and
// modified as for pages, tags from the request's tag set.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any, mode cacheMode, modified time.Time) {
	b, err := json.Marshal(v)
	if err != nil {
		s.writeAPIError(w, r, err)
		return
	}
	s.writeBody(w, r, status, "application/json", append(b, '\n'), mode, modified)
}

type apiRevisionRef struct {
	ID        int64  `json:"id"`
	Timestamp string `json:"timestamp"`
}

type apiPage struct {
	ID           int64          `json:"id"`
	Key          string         `json:"key"`
	Title        string         `json:"title"`
	Latest       apiRevisionRef `json:"latest"`
	ContentModel string         `json:"content_model"`
	License      apiLicense     `json:"license"`
	Source       *string        `json:"source,omitempty"`
	HTMLURL      string         `json:"html_url,omitempty"`
}

type apiLicense struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// apiTitle parses the {title} path value by the wiki's title rules.
func (s *Server) apiTitle(r *http.Request) (wiki.Title, error) {
	raw := r.PathValue("title")
	if !utf8.ValidString(raw) {
		return "", wiki.Errorf(wiki.KindInvalid, "the title in the URL is not valid UTF-8")
	}
	return s.titles.Parse(raw)
}

func (s *Server) livePage(r *http.Request, t wiki.Title) (wiki.Page, error) {
	p, err := s.store.FindPage(r.Context(), t)
	if errors.Is(err, wiki.ErrNotFound) || (err == nil && p.Deleted) {
		return p, wiki.Errorf(wiki.KindNotFound, "the page %q does not exist; create it with POST /w/rest.php/v1/page", t)
	}
	return p, err
}

// pageJSON is page p with its latest revision rev. Its content_model is
// rev's, the markup of its source, by MediaWiki's names (markdown is
// Wikid's own).
func (s *Server) pageJSON(p wiki.Page, rev wiki.Revision, withSource bool) apiPage {
	out := apiPage{ID: p.ID, Key: p.Title.Key(), Title: string(p.Title), Latest: apiRevisionRef{ID: rev.ID, Timestamp: ts(rev.Time)},
		ContentModel: string(rev.Model.Or(p.Model).Or(wiki.ModelMarkdown)), License: apiLicense{Title: s.cfg.SiteName + " content"}}
	if withSource {
		src := rev.Text
		out.Source = &src
	}
	return out
}

func (s *Server) apiGetPage(w http.ResponseWriter, r *http.Request) error {
	t, err := s.apiTitle(r)
	if err != nil {
		return err
	}
	p, err := s.livePage(r, t)
	if err != nil {
		return err
	}
	rev, err := s.store.FindRevision(r.Context(), p.LatestID)
	if err != nil {
		return err
	}
	bare := httpx.From(r).Spec == specRESTBare
	out := s.pageJSON(p, rev, !bare)
	if bare {
		out.HTMLURL = restPageURL(p.Title, "/html")
	}
	addTag(r, p.Title)
	s.writeJSON(w, r, http.StatusOK, out, cachePublic, rev.Time)
	return nil
}

func (s *Server) apiGetHTML(w http.ResponseWriter, r *http.Request) error {
	t, err := s.apiTitle(r)
	if err != nil {
		return err
	}
	v, err := s.eng.ViewPage(r.Context(), t, true)
	if err != nil {
		if errors.Is(err, wiki.ErrNotFound) {
			return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist", t)
		}
		return err
	}
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
	b.WriteString(html.EscapeString(string(v.Page.Title)))
	b.WriteString("</title></head><body>\n")
	b.WriteString(v.Rendered.HTML)
	b.WriteString("\n</body></html>\n")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'self'")
	addTag(r, v.Page.Title)
	mode := cachePublic
	if v.Rendered.TimedOut || v.Rendered.Partial {
		mode = cacheBrief // rendered again soon: caches must not keep it longer
	}
	s.writeBody(w, r, http.StatusOK, "text/html; charset=utf-8", b.Bytes(), mode, v.Revision.Time)
	return nil
}

type apiHistoryRev struct {
	ID        int64   `json:"id"`
	Timestamp string  `json:"timestamp"`
	Minor     bool    `json:"minor"`
	Size      int     `json:"size"`
	Comment   string  `json:"comment"`
	User      apiUser `json:"user"`
	Delta     int     `json:"delta"`
	ParentID  int64   `json:"parent_id,omitempty"`
}

type apiUser struct {
	ID   *int64 `json:"id"`
	Name string `json:"name"`
}

func histRev(rv wiki.Revision) apiHistoryRev {
	u := apiUser{Name: rv.UserName}
	if rv.UserID != 0 {
		id := rv.UserID
		u.ID = &id
	}
	return apiHistoryRev{ID: rv.ID, Timestamp: ts(rv.Time), Minor: rv.Minor, Size: rv.Size, Comment: rv.Summary,
		User: u, Delta: rv.Size - rv.ParentSize, ParentID: rv.ParentID}
}

func (s *Server) apiHistory(w http.ResponseWriter, r *http.Request) error {
	t, err := s.apiTitle(r)
	if err != nil {
		return err
	}
	p, err := s.livePage(r, t)
	if err != nil {
		return err
	}
	before := httpx.From(r).Int("older_than", 0)
	const limit = 20
	revs, err := s.store.History(r.Context(), wiki.HistoryQuery{PageID: p.ID, Before: before, Limit: limit + 1})
	if err != nil {
		return err
	}
	out := struct {
		Revisions []apiHistoryRev `json:"revisions"`
		Latest    string          `json:"latest"`
		Older     string          `json:"older,omitempty"`
	}{Revisions: []apiHistoryRev{}, Latest: restPageURL(p.Title, "/history")}
	if len(revs) > limit {
		out.Older = specRESTHistory.Link(restPageURL(p.Title, "/history"), s.titles, "older_than", strconv.FormatInt(revs[limit-1].ID, 10))
		revs = revs[:limit]
	}
	for _, rv := range revs {
		out.Revisions = append(out.Revisions, histRev(rv))
	}
	addTag(r, p.Title)
	s.writeJSON(w, r, http.StatusOK, out, cachePublic, p.Touched)
	return nil
}

type apiEditBody struct {
	Source  *string `json:"source"`
	Title   string  `json:"title"`
	Comment string  `json:"comment"`
	Latest  *struct {
		ID int64 `json:"id"`
	} `json:"latest"`
	// Section makes source one section of the page (a number, as the
	// edit links number them, or "new" to append a section headed
	// SectionTitle), as MediaWiki's action API has it.
	Section      json.RawMessage `json:"section"`
	SectionTitle string          `json:"sectiontitle"`
	// ContentModel is the markup of source (markdown or wikitext), as
	// MediaWiki's content_model: absent keeps the page's, or a new page
	// gets the wiki's default_content_model.
	ContentModel wiki.ContentModel `json:"content_model"`
}

// section reads the body's section, by the rules of the edit form's
// section parameter: "" when absent.
func (b apiEditBody) section(rules wiki.TitleRules) (string, error) {
	raw := bytes.TrimSpace(b.Section)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var v string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", wiki.Errorf(wiki.KindInvalid, "\"section\" is not a valid JSON string: %v", err)
		}
	} else {
		v = string(raw)
	}
	out, err := sectionParam.Normalize(v, rules)
	if err != nil || out == "" {
		return "", wiki.Errorf(wiki.KindInvalid, "\"section\" must be a section number (0, 1, 2, …; 0 is the text before the first heading) or \"new\", not %.40s", raw)
	}
	return out, nil
}

// apiWrite checks what every write needs: edit rights and, for cookie
// sessions, the CSRF header.
func (s *Server) apiWrite(r *http.Request) (apiEditBody, error) {
	var body apiEditBody
	if err := s.requireEdit(r); err != nil {
		return body, err
	}
	if v := viewerOf(r); !v.Token {
		if err := s.checkCSRF(r); err != nil {
			return body, err
		}
	}
	if err := s.checkBlock(r); err != nil {
		return body, err
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return body, wiki.Errorf(wiki.KindInvalid, "send the body as JSON with Content-Type: application/json")
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return body, formError(err)
	}
	if !utf8.Valid(data) {
		return body, wiki.Errorf(wiki.KindInvalid, "the request body is not valid UTF-8")
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return body, wiki.Errorf(wiki.KindInvalid, "the request body is not valid JSON: %v", err)
	}
	if body.Source == nil {
		return body, wiki.Errorf(wiki.KindInvalid, "the body must have a \"source\" field with the page text")
	}
	if strings.TrimSpace(*body.Source) == "" {
		return body, wiki.Errorf(wiki.KindInvalid, "\"source\" is empty; a page needs some text")
	}
	if m := body.ContentModel; m != "" && !m.Valid() {
		return body, wiki.Errorf(wiki.KindInvalid, "\"content_model\" %.40q is not a content model of this wiki; send %s, or leave it out to keep the page's", m, engine.ModelNames())
	}
	return body, nil
}

// apiSave saves the edit; a creation answers 201 with Location, a change 200.
func (s *Server) apiSave(w http.ResponseWriter, r *http.Request, t wiki.Title, body apiEditBody, base int64, section string) error {
	out, err := s.eng.Save(r.Context(), engine.Edit{Title: t, Text: *body.Source, Summary: body.Comment, BaseRevID: base,
		Editor: s.editorOf(r), Section: section, SectionTitle: body.SectionTitle, Model: body.ContentModel})
	if err != nil {
		return err
	}
	rev := out.Revision
	rev.Text = *body.Source
	// The saved text is not the one sent when it was merged, signed or
	// put in place of a section.
	if out.Merged || out.NoChange || section != "" || strings.Contains(*body.Source, "~~~") {
		full, err := s.store.FindRevision(r.Context(), out.Revision.ID)
		if err != nil {
			return err
		}
		rev = full
	}
	status := http.StatusOK
	if out.Created {
		// The new resource, as MediaWiki's REST API answers a creation.
		w.Header().Set("Location", restPageURL(out.Page.Title, ""))
		status = http.StatusCreated
	}
	s.writeJSON(w, r, status, s.pageJSON(out.Page, rev, true), cacheNone, time.Time{})
	return nil
}

func (s *Server) apiPutPage(w http.ResponseWriter, r *http.Request) error {
	t, err := s.apiTitle(r)
	if err != nil {
		return err
	}
	body, err := s.apiWrite(r)
	if err != nil {
		return err
	}
	section, err := body.section(s.titles)
	if err != nil {
		return err
	}
	var base int64
	if body.Latest != nil {
		base = body.Latest.ID
	} else if p, err := s.store.FindPage(r.Context(), t); err == nil && !p.Deleted && section != engine.NewSection {
		return wiki.Errorf(wiki.KindConflict, "the page %q exists; to change it, send \"latest\": {\"id\": %d} with the revision you edited", t, p.LatestID)
	}
	return s.apiSave(w, r, t, body, base, section)
}

func (s *Server) apiCreatePage(w http.ResponseWriter, r *http.Request) error {
	body, err := s.apiWrite(r)
	if err != nil {
		return err
	}
	t, err := s.titles.Parse(body.Title)
	if err != nil {
		return err
	}
	if p, err := s.store.FindPage(r.Context(), t); err == nil && !p.Deleted {
		return wiki.Errorf(wiki.KindConflict, "the page %q already exists; change it with PUT /w/rest.php/v1/page/%s", t, t.Key())
	}
	return s.apiSave(w, r, t, body, 0, "")
}

// apiSearchResults is the answer of search/page and search/title, as
// MediaWiki's REST API shapes it.
type apiSearchResults struct {
	Pages []apiSearchPage `json:"pages"`
}

type apiSearchPage struct {
	ID          int64   `json:"id"`
	Key         string  `json:"key"`
	Title       string  `json:"title"`
	Excerpt     string  `json:"excerpt"`
	Description *string `json:"description"`
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) error {
	rq := httpx.From(r)
	q := rq.Get("q")
	if q == "" {
		return wiki.Errorf(wiki.KindInvalid, "give a search query: ?q=words")
	}
	namespaces, _ := namespaceFilter(r)
	hits, _, err := s.eng.Search(r.Context(), wiki.SearchQuery{Text: q, Limit: int(rq.Int("limit", 10)), Namespaces: namespaces})
	if err != nil {
		return err
	}
	out := apiSearchResults{Pages: []apiSearchPage{}}
	for _, h := range hits {
		out.Pages = append(out.Pages, apiSearchPage{ID: h.PageID, Key: h.Title.Key(), Title: string(h.Title), Excerpt: string(view.Snippet(h.Snippet))})
	}
	s.writeJSON(w, r, http.StatusOK, out, cacheShort, time.Time{})
	return nil
}

// apiSearchTitles is MediaWiki's title completion: pages whose title
// starts with q, ignoring case and accents.
func (s *Server) apiSearchTitles(w http.ResponseWriter, r *http.Request) error {
	rq := httpx.From(r)
	q := rq.Get("q")
	if q == "" {
		return wiki.Errorf(wiki.KindInvalid, "give the start of a title: ?q=text")
	}
	pages, err := s.store.SearchTitles(r.Context(), q, int(rq.Int("limit", 10)))
	if err != nil {
		return err
	}
	out := apiSearchResults{Pages: []apiSearchPage{}}
	for _, p := range pages {
		out.Pages = append(out.Pages, apiSearchPage{ID: p.ID, Key: p.Title.Key(), Title: string(p.Title), Excerpt: string(p.Title)})
	}
	s.writeJSON(w, r, http.StatusOK, out, cacheShort, time.Time{})
	return nil
}

func (s *Server) apiRevisionByID(r *http.Request, name string) (wiki.Revision, error) {
	id, err := pathID(r, name)
	if err != nil {
		return wiki.Revision{}, err
	}
	rev, err := s.store.FindRevision(r.Context(), id)
	if errors.Is(err, wiki.ErrNotFound) {
		return rev, wiki.Errorf(wiki.KindNotFound, "revision %d does not exist", id)
	}
	return rev, err
}

func (s *Server) apiRevision(w http.ResponseWriter, r *http.Request) error {
	rev, err := s.apiRevisionByID(r, "id")
	if err != nil {
		return err
	}
	out := struct {
		apiHistoryRev
		Page struct {
			ID    int64  `json:"id"`
			Key   string `json:"key"`
			Title string `json:"title"`
		} `json:"page"`
		ContentModel string `json:"content_model"`
		Source       string `json:"source"`
	}{apiHistoryRev: histRev(rev), Source: rev.Text, ContentModel: string(rev.Model.Or(wiki.ModelMarkdown))}
	out.Page.ID, out.Page.Key, out.Page.Title = rev.PageID, rev.Title.Key(), string(rev.Title)
	addTag(r, rev.Title) // a move or delete of the page changes the answer
	s.writeJSON(w, r, http.StatusOK, out, cachePublic, rev.Time)
	return nil
}

// apiCompare returns a line diff. The diff array follows MediaWiki's
// type codes: 0 context, 1 added, 2 deleted, 3 changed in place. coarse says
// the revisions differed too much for an exact comparison (unchanged lines
// matched approximately); truncated, that lines or long texts were left
// out of the answer to bound its size.
func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request) error {
	from, err := s.apiRevisionByID(r, "from")
	if err != nil {
		return err
	}
	to, err := s.apiRevisionByID(r, "to")
	if err != nil {
		return err
	}
	if from.PageID != to.PageID {
		return wiki.Errorf(wiki.KindInvalid, "revisions %d and %d belong to different pages; compare revisions of one page", from.ID, to.ID)
	}
	res, err := s.eng.Diff(r.Context(), from, to)
	if err != nil {
		return err
	}
	type line struct {
		Type       int    `json:"type"`
		LineNumber int    `json:"lineNumber,omitempty"`
		Text       string `json:"text"`
		OldText    string `json:"oldText,omitempty"`
	}
	type side struct {
		ID       int64  `json:"id"`
		SlotRole string `json:"slot_role"`
	}
	out := struct {
		From      side   `json:"from"`
		To        side   `json:"to"`
		Diff      []line `json:"diff"`
		Coarse    bool   `json:"coarse"`
		Truncated bool   `json:"truncated"`
	}{From: side{from.ID, "main"}, To: side{to.ID, "main"}, Diff: []line{}, Coarse: res.Coarse, Truncated: res.Truncated}
	for _, h := range res.Hunks {
		for _, row := range h.Rows {
			switch row.Kind {
			case diff.Unchanged:
				out.Diff = append(out.Diff, line{Type: 0, LineNumber: row.NewLine, Text: row.New})
			case diff.Added:
				out.Diff = append(out.Diff, line{Type: 1, LineNumber: row.NewLine, Text: row.New})
			case diff.Deleted:
				out.Diff = append(out.Diff, line{Type: 2, Text: row.Old})
			case diff.Changed:
				out.Diff = append(out.Diff, line{Type: 3, LineNumber: row.NewLine, Text: row.New, OldText: row.Old})
			}
		}
	}
	newer := to.Time
	if from.Time.After(newer) {
		newer = from.Time
	}
	addTag(r, to.Title)
	s.writeJSON(w, r, http.StatusOK, out, cachePublic, newer)
	return nil
}
