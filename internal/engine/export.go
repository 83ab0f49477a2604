package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/wikid/wikid/internal/mwxml"
	"github.com/wikid/wikid/internal/wiki"
)

// ExportRequest says what an export writes.
type ExportRequest struct {
	Titles   []wiki.Title
	Category wiki.Title // its members too (not its subcategories' members)
	All      bool       // every live page
	// Full writes every visible revision; else each page's current one.
	Full bool
	// Templates adds the pages the exported pages transclude.
	Templates bool
	// MarkdownModel writes Markdown pages with their model, markdown,
	// which MediaWiki refuses (it has no such content model); else they
	// are written as wikitext, which it takes.
	MarkdownModel bool
	// MaxPages and MaxBytes stop the export after that many pages or
	// bytes of text (0: no limit); ExportStats.Truncated says so.
	MaxPages int
	MaxBytes int64
	// SiteName and Base (the main page's URL) fill the siteinfo.
	SiteName, Base string
}

// ExportStats counts what an export wrote.
type ExportStats struct {
	Pages, Revisions int
	Bytes            int64 // of revision text
	Truncated        bool  // a limit stopped it
}

// exportListBatch is how many titles, and revisions, an export reads per
// query.
const exportListBatch = 500

// Export writes a MediaWiki dump (export-0.11) of the pages req names to
// w, one page at a time: what importDump.php reads. Deleted pages and
// revisions are never written; nor are files (only their pages).
func (e *Engine) Export(ctx context.Context, w io.Writer, req ExportRequest) (ExportStats, error) {
	var st ExportStats
	site := exportSiteInfo(req.SiteName, req.Base, e.TitleRules().CapitalLinks())
	wr := mwxml.NewWriter(w, site, "en")
	seen := map[wiki.Title]bool{}
	var templates []wiki.Title
	stop := errors.New("limit")
	one := func(t wiki.Title) error {
		if seen[t] {
			return nil
		}
		seen[t] = true
		if req.MaxPages > 0 && st.Pages >= req.MaxPages || req.MaxBytes > 0 && st.Bytes >= req.MaxBytes {
			st.Truncated = true
			return stop
		}
		p, err := e.store.FindPage(ctx, t)
		if errors.Is(err, wiki.ErrNotFound) || err == nil && p.Deleted {
			return nil
		}
		if err != nil {
			return err
		}
		if err := e.exportPage(ctx, wr, p, req, &st); err != nil {
			return err
		}
		if req.Templates {
			ts, err := e.store.PageTemplates(ctx, p.ID)
			if err != nil {
				return err
			}
			templates = append(templates, ts...)
		}
		return wr.Flush()
	}
	err := func() error {
		for _, t := range req.Titles {
			if err := one(t); err != nil {
				return err
			}
		}
		if req.Category != "" {
			var from wiki.CategoryCursor
			for _, sub := range []bool{true, false} {
				from = wiki.CategoryCursor{}
				for {
					ms, err := e.store.CategoryMembers(ctx, req.Category, wiki.CategoryQuery{From: from, Limit: exportListBatch + 1, Subcategories: sub})
					if err != nil {
						return err
					}
					for i, m := range ms {
						if i == exportListBatch {
							break
						}
						if err := one(m.Title); err != nil {
							return err
						}
					}
					if len(ms) <= exportListBatch {
						break
					}
					from = wiki.CategoryCursor{SortKey: ms[exportListBatch].SortKey, Title: ms[exportListBatch].Title}
				}
			}
		}
		if req.All {
			var after wiki.Title
			for {
				ps, err := e.store.AllPages(ctx, wiki.ListQuery{After: after, Limit: exportListBatch})
				if err != nil {
					return err
				}
				for _, p := range ps {
					if err := one(p.Title); err != nil {
						return err
					}
				}
				if len(ps) < exportListBatch {
					break
				}
				after = ps[len(ps)-1].Title
			}
		}
		for len(templates) > 0 {
			t := templates[0]
			templates = templates[1:]
			if err := one(t); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil && err != stop {
		wr.Close()
		return st, err
	}
	return st, wr.Close()
}

// exportSiteInfo is the wiki's siteinfo: its namespaces by MediaWiki's
// numbers and Wikid's canonical names.
func exportSiteInfo(name, base string, capital bool) mwxml.SiteInfo {
	c := "first-letter"
	if !capital {
		c = "case-sensitive"
	}
	site := mwxml.SiteInfo{SiteName: name, DBName: "wikid", Base: base, Generator: "Wikid", Case: c}
	for _, n := range wiki.Namespaces {
		site.Namespaces = append(site.Namespaces, mwxml.Namespace{Key: n.ID, Case: c, Name: n.Name})
	}
	return site
}

// exportPage writes page p: its current revision, or with req.Full all
// its visible revisions, oldest first.
func (e *Engine) exportPage(ctx context.Context, wr *mwxml.Writer, p wiki.Page, req ExportRequest, st *ExportStats) error {
	ns, _ := wiki.NamespaceByName(p.Title.Namespace())
	head := mwxml.Page{Title: string(p.Title), NS: ns.ID, ID: p.ID, Redirect: string(p.Redirect)}
	if pr, err := e.store.FindProtection(ctx, p.Title); err == nil && pr.Active(e.now()) {
		head.Restrictions = restrictions(pr)
	}
	ids := []int64{p.LatestID}
	if req.Full {
		ids = ids[:0]
		var before int64
		for {
			h, err := e.store.History(ctx, wiki.HistoryQuery{PageID: p.ID, Before: before, Limit: exportListBatch})
			if err != nil {
				return err
			}
			for _, r := range h {
				ids = append(ids, r.ID)
			}
			if len(h) < exportListBatch {
				break
			}
			before = h[len(h)-1].ID
		}
		slices.Reverse(ids)
	}
	if err := wr.Page(head); err != nil {
		return err
	}
	for len(ids) > 0 {
		n := min(len(ids), 50) // texts read per query
		revs, err := e.store.FindRevisions(ctx, ids[:n])
		if err != nil {
			return err
		}
		slices.SortFunc(revs, func(a, b wiki.Revision) int { return int(a.ID - b.ID) })
		for _, r := range revs {
			if err := wr.Revision(exportRevision(r, req.MarkdownModel)); err != nil {
				return err
			}
			st.Revisions++
			st.Bytes += int64(len(r.Text))
		}
		ids = ids[n:]
	}
	st.Pages++
	return wr.EndPage()
}

// exportRevision is r as a dump writes it. An author with an account is
// a username with its ID; without one, an IP address is an <ip>, any
// other name (an imported author, "imported>Ann") a username with ID 0.
func exportRevision(r wiki.Revision, markdownModel bool) mwxml.Revision {
	c := mwxml.Contributor{Username: r.UserName, ID: r.UserID}
	if r.UserID == 0 && net.ParseIP(r.UserName) != nil {
		c = mwxml.Contributor{IP: r.UserName}
	}
	model := string(r.Model.Or(wiki.ModelMarkdown))
	if model == string(wiki.ModelMarkdown) && !markdownModel {
		model = string(wiki.ModelWikitext)
	}
	return mwxml.Revision{
		ID: r.ID, ParentID: r.ParentID, Timestamp: r.Time.UTC().Truncate(time.Second), Contributor: c,
		Minor: r.Minor, Comment: r.Summary, Model: model, Text: r.Text, SHA1: mwxml.SHA1HexToBase36(r.SHA1),
	}
}

// restrictions writes a protection as MediaWiki's page_restrictions
// field: edit=sysop:move=autoconfirmed.
func restrictions(pr wiki.Protection) string {
	level := func(l wiki.ProtectionLevel) string {
		if l == wiki.ProtectAdmins {
			return "sysop"
		}
		return "autoconfirmed"
	}
	var parts []string
	if pr.Edit != wiki.ProtectNone {
		parts = append(parts, "edit="+level(pr.Edit))
	}
	if pr.Move != wiki.ProtectNone {
		parts = append(parts, "move="+level(pr.Move))
	}
	return strings.Join(parts, ":")
}
