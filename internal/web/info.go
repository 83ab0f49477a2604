package web

import (
	"net/http"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// infoData is action=info: what MediaWiki's page information lists, from
// bounded reads (counts stop past wiki.MaxCount).
type infoData struct {
	Title wiki.Title
	Page  wiki.Page
	Stats wiki.PageStats
	// Max is wiki.MaxCount: a count above it reads "more than Max".
	Max        int
	Last       wiki.Revision
	Categories []wiki.Title
	Templates  []templateUse
	Protection *wiki.Protection
	// Watchers is how many users watch the page; it is shown only from
	// WatchersShown on (below, "fewer than"), as MediaWiki does, so that
	// the page does not tell who might be watching an obscure page.
	Watchers, WatchersShown int
}

// info shows the page's information (MediaWiki's action=info). Its
// figures change with edits of other pages too (links to it), so it is
// cached as the listings are (cacheShort): under the page's tag, which its
// own changes purge, and the listings' tag, which every change purges,
// for a short lifetime at most.
func (s *Server) info(w http.ResponseWriter, r *http.Request, t wiki.Title) error {
	ctx := r.Context()
	page, err := s.store.FindPage(ctx, t)
	if err != nil || page.Deleted {
		return wiki.Errorf(wiki.KindNotFound, "the page %q does not exist, so there is no information about it; create it, or check the title", t)
	}
	st, err := s.store.PageStats(ctx, page.ID, page.Title)
	if err != nil {
		return err
	}
	last, err := s.store.History(ctx, wiki.HistoryQuery{PageID: page.ID, Limit: 1})
	if err != nil {
		return err
	}
	d := infoData{Title: page.Title, Page: page, Stats: st, Max: wiki.MaxCount, WatchersShown: 30}
	if d.Watchers, err = s.store.CountWatchers(ctx, page.Title, s.now()); err != nil {
		return err
	}
	if len(last) > 0 {
		d.Last = last[0]
	}
	cats, err := s.store.PageCategories(ctx, page.ID)
	if err != nil {
		return err
	}
	for _, c := range cats {
		d.Categories = append(d.Categories, c.Category)
	}
	tpls, err := s.store.PageTemplates(ctx, page.ID)
	if err != nil {
		return err
	}
	if len(tpls) > 0 {
		exists, err := s.store.ExistingTitles(ctx, tpls)
		if err != nil {
			return err
		}
		for _, tp := range tpls {
			d.Templates = append(d.Templates, templateUse{Title: tp, Exists: exists[tp]})
		}
	}
	if pr, active, err := s.eng.Protection(ctx, t); err != nil {
		return err
	} else if active {
		d.Protection = &pr
	}
	p := s.page(r, "Information for "+string(page.Title))
	if err := s.setTabs(p, r, t, "info", true); err != nil {
		return err
	}
	p.NoIndex = true
	p.Data = d
	s.writeBodyPage(w, r, p, "info", cacheShort, time.Time{})
	return nil
}
