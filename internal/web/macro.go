package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// The live macros' data: small JSON documents that the page's script
// fetches, cached at the edge for the list lifetime and purged with every
// change (purge.ListsTag), so that the pages using them stay cache hits.

type macroLink struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

var (
	macroSpec         = &httpx.Spec{Name: "macro"}
	macroAllPagesSpec = &httpx.Spec{Name: "macro", Params: []httpx.Param{{Name: "prefix", Kind: httpx.TitleKey}}}
)

func (s *Server) macro(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	spec := macroSpec
	if name == "allpages" {
		spec = macroAllPagesSpec
	}
	s.serveRead(w, r, spec, "/w/macro/"+url.PathEscape(name), routeOpts{}, func(w http.ResponseWriter, r *http.Request) error {
		if err := s.requireRead(r); err != nil {
			return err
		}
		return s.macroData(w, r, name)
	})
}

func (s *Server) macroData(w http.ResponseWriter, r *http.Request, name string) error {
	ctx := r.Context()
	var out any
	switch name {
	case "recentchanges":
		cs, err := s.store.RecentChanges(ctx, wiki.ChangeQuery{Limit: 10})
		if err != nil {
			return err
		}
		type change struct {
			macroLink
			User string    `json:"user"`
			Time time.Time `json:"time"`
			Kind string    `json:"kind"`
		}
		list := []change{}
		for _, c := range cs {
			list = append(list, change{macroLink{string(c.Title), c.Title.URL()}, c.UserName, c.Time.UTC(), string(c.Kind)})
		}
		out = map[string]any{"changes": list}
	case "pagecount":
		n, err := s.store.PageCount(ctx)
		if err != nil {
			return err
		}
		out = map[string]int{"count": n}
	case "allpages":
		prefix := string(httpx.From(r).Title("prefix"))
		pages, err := s.store.AllPages(ctx, wiki.ListQuery{Prefix: prefix, Limit: 100})
		if err != nil {
			return err
		}
		list := []macroLink{}
		for _, p := range pages {
			list = append(list, macroLink{string(p.Title), p.Title.URL()})
		}
		out = map[string]any{"pages": list}
	default:
		return wiki.Errorf(wiki.KindNotFound, "no macro %q; known: recentchanges, pagecount, allpages", sanitizeLine(name))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	s.writeBody(w, r, http.StatusOK, "application/json", b, cacheShort, time.Time{})
	return nil
}
