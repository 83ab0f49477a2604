package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/diff"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/timing"
	"github.com/wikid/wikid/internal/view"
	"github.com/wikid/wikid/internal/wiki"
)

// The REST API follows MediaWiki's REST API v1 (/w/rest.php/v1/) wherever
// the resource is the same, so its clients work with a base-URL change.

func (s *Server) apiRoutes() http.Handler {
	mux := http.NewServeMux()
	const p = "/w/rest.php/v1/"
	mux.HandleFunc("GET "+p+"page/{title}", s.api(s.apiGetPage))
	mux.HandleFunc("GET "+p+"page/{title}/bare", s.api(s.apiGetPage))
	mux.HandleFunc("GET "+p+"page/{title}/html", s.api(s.apiGetHTML))
	mux.HandleFunc("GET "+p+"page/{title}/history", s.api(s.apiHistory))
	mux.HandleFunc("PUT "+p+"page/{title}", s.api(s.apiPutPage))
	mux.HandleFunc("POST "+p+"page", s.api(s.apiCreatePage))
	mux.HandleFunc("GET "+p+"search/page", s.api(s.apiSearch))
	mux.HandleFunc("GET "+p+"revision/{id}", s.api(s.apiRevision))
	mux.HandleFunc("GET "+p+"revision/{from}/compare/{to}", s.api(s.apiCompare))
	mux.HandleFunc(p, s.api(func(w http.ResponseWriter, r *http.Request) error {
		rest := strings.TrimPrefix(r.URL.Path, p)
		switch {
		case rest == "page":
			return methodNotAllowed(w, "POST")
		case strings.HasPrefix(rest, "page/") && strings.Count(rest, "/") == 1:
			return methodNotAllowed(w, "GET, HEAD, PUT")
		case strings.HasPrefix(rest, "page/") || rest == "search/page" || strings.HasPrefix(rest, "revision/"):
			return methodNotAllowed(w, "GET, HEAD")
		}
		return wiki.Errorf(wiki.KindNotFound, "no API route %s %s; see the README for the routes", sanitizeLine(r.Method), r.URL.Path)
	}))
	return mux
}

// api wraps an API handler: JSON errors, read permission, no caching.
func (s *Server) api(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		err := s.requireRead(r)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			if statusOf(err) >= 500 && statusOf(err) != 499 {
				s.log.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeAPIError(w, r, err)
		}
	}
}

type apiError struct {
	HTTPCode            int               `json:"httpCode"`
	HTTPReason          string            `json:"httpReason"`
	ErrorKey            string            `json:"errorKey"`
	MessageTranslations map[string]string `json:"messageTranslations"`
}

func writeAPIError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == 499 {
		return
	}
	if errors.Is(err, errMethod) {
		status = http.StatusMethodNotAllowed
	}
	key := map[int]string{400: "rest-bad-request", 401: "rest-unauthorized", 403: "rest-permission-denied",
		404: "rest-nonexistent-title", 405: "rest-method-not-allowed", 409: "rest-edit-conflict", 413: "rest-too-large", 500: "rest-internal-error"}[status]
	if key == "" {
		key = "rest-error"
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, status, apiError{HTTPCode: status, HTTPReason: http.StatusText(status), ErrorKey: key,
		MessageTranslations: map[string]string{"en": messageOf(err)}})
}

func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = 500, []byte(`{"httpCode":500,"httpReason":"Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.Header().Set("Server-Timing", timing.From(r.Context()).Header("none", time.Now()))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
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

func apiTitle(r *http.Request) (wiki.Title, error) {
	raw := r.PathValue("title")
	if !utf8.ValidString(raw) {
		return "", wiki.Errorf(wiki.KindInvalid, "the title in the URL is not valid UTF-8")
	}
	return wiki.ParseTitle(raw)
}

func (s *Server) livePage(r *http.Request, t wiki.Title) (wiki.Page, error) {
	p, err := s.store.FindPage(r.Context(), t)
	if errors.Is(err, wiki.ErrNotFound) || (err == nil && p.Deleted) {
		return p, wiki.Errorf(wiki.KindNotFound, "the page %q does not exist; create it with POST /w/rest.php/v1/page", t)
	}
	return p, err
}

func (s *Server) pageJSON(p wiki.Page, rev wiki.Revision, withSource bool) apiPage {
	out := apiPage{ID: p.ID, Key: p.Title.Key(), Title: string(p.Title), Latest: apiRevisionRef{ID: rev.ID, Timestamp: ts(rev.Time)},
		ContentModel: "wikitext", License: apiLicense{Title: s.cfg.SiteName + " content"}}
	if withSource {
		src := rev.Text
		out.Source = &src
	}
	return out
}

func (s *Server) apiGetPage(w http.ResponseWriter, r *http.Request) error {
	t, err := apiTitle(r)
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
	out := s.pageJSON(p, rev, !strings.HasSuffix(r.URL.Path, "/bare"))
	if strings.HasSuffix(r.URL.Path, "/bare") {
		out.HTMLURL = "/w/rest.php/v1/page/" + p.Title.Key() + "/html"
	}
	writeJSON(w, r, http.StatusOK, out)
	return nil
}

func (s *Server) apiGetHTML(w http.ResponseWriter, r *http.Request) error {
	t, err := apiTitle(r)
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
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
	b.WriteString(html.EscapeString(string(v.Page.Title)))
	b.WriteString("</title></head><body>\n")
	b.WriteString(v.Rendered.HTML)
	b.WriteString("\n</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'self'")
	w.Header().Set("ETag", etagOf([]byte(v.Rendered.HTML)))
	w.Header().Set("Last-Modified", v.Revision.Time.UTC().Format(http.TimeFormat))
	w.Write([]byte(b.String()))
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
	t, err := apiTitle(r)
	if err != nil {
		return err
	}
	p, err := s.livePage(r, t)
	if err != nil {
		return err
	}
	var before int64
	if o := r.URL.Query().Get("older_than"); o != "" {
		if before, err = strconv.ParseInt(o, 10, 64); err != nil {
			return wiki.Errorf(wiki.KindInvalid, "older_than must be a revision number")
		}
	}
	const limit = 20
	revs, err := s.store.History(r.Context(), wiki.HistoryQuery{PageID: p.ID, Before: before, Limit: limit + 1})
	if err != nil {
		return err
	}
	out := struct {
		Revisions []apiHistoryRev `json:"revisions"`
		Latest    string          `json:"latest"`
		Older     string          `json:"older,omitempty"`
	}{Revisions: []apiHistoryRev{}, Latest: "/w/rest.php/v1/page/" + p.Title.Key() + "/history"}
	if len(revs) > limit {
		out.Older = fmt.Sprintf("/w/rest.php/v1/page/%s/history?older_than=%d", p.Title.Key(), revs[limit-1].ID)
		revs = revs[:limit]
	}
	for _, rv := range revs {
		out.Revisions = append(out.Revisions, histRev(rv))
	}
	writeJSON(w, r, http.StatusOK, out)
	return nil
}

type apiEditBody struct {
	Source  *string `json:"source"`
	Title   string  `json:"title"`
	Comment string  `json:"comment"`
	Latest  *struct {
		ID int64 `json:"id"`
	} `json:"latest"`
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
	return body, nil
}

func (s *Server) apiSave(w http.ResponseWriter, r *http.Request, t wiki.Title, body apiEditBody, base int64, status int) error {
	uid, uname := s.editor(r)
	out, err := s.eng.Save(r.Context(), engine.Edit{Title: t, Text: *body.Source, Summary: body.Comment, BaseRevID: base,
		Editor: engine.Editor{UserID: uid, UserName: uname}})
	if err != nil {
		return err
	}
	rev := out.Revision
	rev.Text = *body.Source
	if out.Merged || out.NoChange {
		full, err := s.store.FindRevision(r.Context(), out.Revision.ID)
		if err != nil {
			return err
		}
		rev = full
	}
	if !out.Created {
		status = http.StatusOK
	}
	writeJSON(w, r, status, s.pageJSON(out.Page, rev, true))
	return nil
}

func (s *Server) apiPutPage(w http.ResponseWriter, r *http.Request) error {
	t, err := apiTitle(r)
	if err != nil {
		return err
	}
	body, err := s.apiWrite(r)
	if err != nil {
		return err
	}
	var base int64
	if body.Latest != nil {
		base = body.Latest.ID
	} else if p, err := s.store.FindPage(r.Context(), t); err == nil && !p.Deleted {
		return wiki.Errorf(wiki.KindConflict, "the page %q exists; to change it, send \"latest\": {\"id\": %d} with the revision you edited", t, p.LatestID)
	}
	return s.apiSave(w, r, t, body, base, http.StatusCreated)
}

func (s *Server) apiCreatePage(w http.ResponseWriter, r *http.Request) error {
	body, err := s.apiWrite(r)
	if err != nil {
		return err
	}
	t, err := wiki.ParseTitle(body.Title)
	if err != nil {
		return err
	}
	if p, err := s.store.FindPage(r.Context(), t); err == nil && !p.Deleted {
		return wiki.Errorf(wiki.KindConflict, "the page %q already exists; change it with PUT /w/rest.php/v1/page/%s", t, t.Key())
	}
	return s.apiSave(w, r, t, body, 0, http.StatusCreated)
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		return wiki.Errorf(wiki.KindInvalid, "give a search query: ?q=words")
	}
	if !utf8.ValidString(q) || len(q) > 300 {
		return wiki.Errorf(wiki.KindInvalid, "the query must be valid UTF-8 and at most 300 bytes")
	}
	limit := clampLimit(r.URL.Query().Get("limit"), 10, 100)
	hits, err := s.store.Search(r.Context(), q, 0, limit)
	if err != nil {
		return err
	}
	type page struct {
		ID          int64   `json:"id"`
		Key         string  `json:"key"`
		Title       string  `json:"title"`
		Excerpt     string  `json:"excerpt"`
		Description *string `json:"description"`
	}
	out := struct {
		Pages []page `json:"pages"`
	}{Pages: []page{}}
	for _, h := range hits {
		out.Pages = append(out.Pages, page{Key: h.Title.Key(), Title: string(h.Title), Excerpt: string(view.Snippet(h.Snippet))})
	}
	writeJSON(w, r, http.StatusOK, out)
	return nil
}

func (s *Server) apiRevisionByID(r *http.Request, name string) (wiki.Revision, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return wiki.Revision{}, wiki.Errorf(wiki.KindInvalid, "%s must be a revision number", name)
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
		Source string `json:"source"`
	}{apiHistoryRev: histRev(rev), Source: rev.Text}
	out.Page.ID, out.Page.Key, out.Page.Title = rev.PageID, rev.Title.Key(), string(rev.Title)
	writeJSON(w, r, http.StatusOK, out)
	return nil
}

// apiCompare returns a line diff. The diff array follows MediaWiki's
// type codes: 0 context, 1 added, 2 deleted, 3 changed in place.
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
		From side   `json:"from"`
		To   side   `json:"to"`
		Diff []line `json:"diff"`
	}{From: side{from.ID, "main"}, To: side{to.ID, "main"}, Diff: []line{}}
	for _, h := range diff.Lines(from.Text, to.Text) {
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
	writeJSON(w, r, http.StatusOK, out)
	return nil
}
