// TEMPORARY (deleted at merge in favour of the pages part's definitions): copies of pageCols, revCols, scanPage and scanRevision so this branch compiles alone.
package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/wiki"
)

const (
	pageCols = `p.id, p.title, p.latest_rev, p.redirect, p.deleted, p.touched, p.size`
	// revCols needs: revisions r JOIN pages p, LEFT JOIN revisions pr (the parent).
	revCols = `r.id, r.page_id, p.title, r.parent_id, r.user_id, r.user_name, r.ts, r.summary, r.size, r.sha1, r.minor, coalesce(pr.size, 0)`
)

func scanPage(row pgx.Row) (wiki.Page, error) {
	var p wiki.Page
	var title, redirect string
	var touched int64
	err := row.Scan(&p.ID, &title, &p.LatestID, &redirect, &p.Deleted, &touched, &p.Size)
	p.Title, p.Redirect, p.Touched = wiki.Title(title), wiki.Title(redirect), fromMS(touched)
	return p, err
}

func scanRevision(row pgx.Row) (wiki.Revision, error) {
	var r wiki.Revision
	var title string
	var ts int64
	err := row.Scan(&r.ID, &r.PageID, &title, &r.ParentID, &r.UserID, &r.UserName, &ts, &r.Summary, &r.Size, &r.SHA1, &r.Minor, &r.ParentSize)
	r.Title, r.Time = wiki.Title(title), fromMS(ts)
	return r, err
}
