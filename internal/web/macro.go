package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// The live macros' data: small JSON documents that the page's script
// fetches, cached at the edge for the list lifetime and purged with every
// change (purge.ListsTag), so that the pages using them stay cache hits.

type macroLink struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

func (s *Server) macro(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireRead(r); err != nil {
		return err
	}
	ctx := r.Context()
	var out any
	switch r.PathValue("name") {
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
		prefix := strings.TrimSpace(strings.ReplaceAll(r.URL.Query().Get("prefix"), "_", " "))
		if prefix != "" {
			t, err := wiki.ParseTitle(prefix)
			if err != nil {
				return err
			}
			prefix = string(t)
		}
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
		return wiki.Errorf(wiki.KindNotFound, "no macro %q; known: recentchanges, pagecount, allpages", sanitizeLine(r.PathValue("name")))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	s.writeBody(w, r, http.StatusOK, "application/json", b, cacheShort, time.Time{})
	return nil
}
