package web

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/url"
	"time"

	"github.com/wikid/wikid/internal/httpx"
)

// OpenSearch: the suggestions browsers and tools ask for while a reader
// types (MediaWiki's api.php?action=opensearch), and the description
// document that lets a browser add the wiki as a search engine.

var (
	specActionAPI = &httpx.Spec{Name: "api", Params: []httpx.Param{
		{Name: "action", Kind: httpx.Enum, Values: []string{"opensearch"}, What: "an API module"},
		{Name: "search", Kind: httpx.Text, Max: 255},
		{Name: "limit", Kind: httpx.Limit, Max: 100, Default: "10"},
		{Name: "format", Kind: httpx.Enum, Values: []string{"json"}, Default: "json"},
		{Name: "formatversion", Kind: httpx.Enum, Values: []string{"1", "2"}, Default: "1"},
		{Name: "namespace", Kind: httpx.Text, Max: 64},
		{Name: "redirects", Kind: httpx.Enum, Values: []string{"return", "resolve"}, Default: "return"},
	}}
	specOpenSearchDesc = &httpx.Spec{Name: "opensearch-desc"}
)

// actionAPI serves /w/api.php: opensearch here (its answers are shared by
// anonymous readers through the edge), every other module in actionapi.
func (s *Server) actionAPI(w http.ResponseWriter, r *http.Request) {
	if raw, err := httpx.ParseQuery(r.URL.RawQuery); err == nil && raw.First("action") != "opensearch" {
		s.actionModules(w, r)
		return
	}
	q, err := httpx.Parse(r, specActionAPI, "/w/api.php", s.titles)
	if err != nil {
		httpx.SetRoute(r, specActionAPI.Name)
		s.writeActionError(w, r, "badvalue", err.Error())
		return
	}
	s.serve(w, withTags(r), q, routeOpts{noRedirect: true, onError: func(w http.ResponseWriter, r *http.Request, err error) {
		s.writeActionError(w, r, "internal_api_error", err.Error())
	}}, func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return methodNotAllowed(w, "GET, HEAD")
		}
		if err := s.requireRead(r); err != nil {
			return err
		}
		rq := httpx.From(r)
		if rq.Get("action") != "opensearch" {
			s.writeActionError(w, r, "noaction", "give an action: only action=opensearch is available (with search=the start of a title)")
			return nil
		}
		search := rq.Get("search")
		titles, descs, urls := []string{}, []string{}, []string{}
		if search != "" {
			pages, err := s.store.SearchTitles(r.Context(), search, int(rq.Int("limit", 10)))
			if err != nil {
				return err
			}
			for _, p := range pages {
				titles = append(titles, string(p.Title))
				descs = append(descs, "")
				urls = append(urls, p.Title.URL())
			}
		}
		// [query, titles, descriptions, URLs]; the URLs are relative: a
		// cached answer must not carry the Host header of whoever asked.
		s.writeJSON(w, r, http.StatusOK, []any{search, titles, descs, urls}, cacheShort, time.Time{})
		return nil
	})
}

// writeActionError answers an Action API error as MediaWiki does: a JSON
// object with a code and a message, and the code in MediaWiki-API-Error.
func (s *Server) writeActionError(w http.ResponseWriter, r *http.Request, code, info string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "info": info}})
	w.Header().Set("MediaWiki-API-Error", code)
	s.writeBody(w, r, http.StatusBadRequest, "application/json", append(body, '\n'), cacheNone, time.Time{})
}

// openSearchDescription serves the OpenSearch description document the
// layout's <link rel="search"> points at. Its URLs must be absolute, so
// they are built from the request's host: the answer is never cached.
func (s *Server) openSearchDescription(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, specOpenSearchDesc, "/w/opensearch_desc.php", routeOpts{noRedirect: true}, func(w http.ResponseWriter, r *http.Request) error {
		// The scheme as the trusted proxies report it: X-Forwarded-Proto
		// from anyone else is ignored, as everywhere.
		base := (&url.URL{Scheme: s.client(r).Scheme, Host: r.Host}).String()
		type urlT struct {
			Type     string `xml:"type,attr"`
			Method   string `xml:"method,attr"`
			Template string `xml:"template,attr"`
		}
		doc := struct {
			XMLName     xml.Name `xml:"http://a9.com/-/spec/opensearch/1.1/ OpenSearchDescription"`
			ShortName   string   `xml:"ShortName"`
			Description string   `xml:"Description"`
			Encoding    string   `xml:"InputEncoding"`
			URLs        []urlT   `xml:"Url"`
		}{
			ShortName: s.cfg.SiteName, Description: s.cfg.SiteName + " (wiki)", Encoding: "UTF-8",
			URLs: []urlT{
				{Type: "text/html", Method: "get", Template: base + "/wiki/Special:Search?go=1&q={searchTerms}"},
				{Type: "application/x-suggestions+json", Method: "get", Template: base + "/w/api.php?action=opensearch&search={searchTerms}"},
			},
		}
		body, err := xml.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		s.writeBody(w, r, http.StatusOK, "application/opensearchdescription+xml; charset=utf-8", append([]byte(xml.Header), append(body, '\n')...), cacheNone, time.Time{})
		return nil
	})
}
