package postgres

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// ImportPages saves pages in one transaction, each on top of its latest
// revision: a missing (or deleted) title is created, text equal to the
// latest is a null edit; BaseRevID is ignored. The search entries' terms
// and the texts' SHA-1 are made in parallel before the transaction. A
// dependents job among a request's jobs is dropped when no page links to
// its title: no page shows that link's colour; the backlinks jobs kept are
// gathered into a few for the batch (wiki.BatchBacklinks). One failed page
// fails the batch.
//
// The batch is written in bulk, not page by page: its page rows are locked
// (and missing ones inserted) in one statement each, the batch is then
// played in memory in request order (so that a title saved twice gets two
// revisions, the second on top of the first), and revisions and changes go
// by COPY, links and page rows by array statements.
func (db *DB) ImportPages(ctx context.Context, reqs []wiki.SaveRequest) ([]wiki.SaveResult, error) {
	if len(reqs) == 0 {
		return []wiki.SaveResult{}, nil
	}
	terms, shas := make([]string, len(reqs)), make([]string, len(reqs))
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(reqs))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(reqs); i += workers {
				terms[i], shas[i] = searchTerms(reqs[i]), sha1Hex(reqs[i].Text)
			}
		})
	}
	wg.Wait()
	var res []wiki.SaveResult
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		res, err = importTx(ctx, tx, reqs, terms, shas)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: import pages: %w", err)
	}
	return res, nil
}

// importPage is a title's state as the batch has left it so far.
type importPage struct {
	page   wiki.Page
	live   bool
	latest wiki.Revision // the latest revision, when live (Text not filled)
}

// importTx is ImportPages's work in tx.
func importTx(ctx context.Context, tx pgx.Tx, reqs []wiki.SaveRequest, terms, shas []string) ([]wiki.SaveResult, error) {
	var titles []wiki.Title
	firstAt := map[wiki.Title]time.Time{}
	for _, req := range reqs {
		if _, ok := firstAt[req.Title]; !ok {
			firstAt[req.Title] = now(req.Time)
			titles = append(titles, req.Title)
		}
	}
	slices.Sort(titles)
	pages, err := lockPages(ctx, tx, titles...)
	if err != nil {
		return nil, err
	}
	if err := insertMissingPages(ctx, tx, titles, firstAt, pages); err != nil {
		return nil, err
	}

	// What the batch reads before it writes, in one round trip: the
	// latest revisions of the live pages, the titles' protections, and
	// which pages link to the titles of backlinks jobs.
	var latestIDs []int64
	for _, p := range pages {
		if !p.Deleted && p.LatestID != 0 {
			latestIDs = append(latestIDs, p.LatestID)
		}
	}
	var backlinkTitles []string
	for _, req := range reqs {
		if slices.ContainsFunc(req.Jobs, func(j wiki.JobSpec) bool { return wiki.DependentsJob(j.Kind) }) {
			backlinkTitles = append(backlinkTitles, string(req.Title))
		}
	}
	// A title is linked if a page not rewritten earlier in the batch links
	// to it: at most len(reqs) pages are rewritten, each with at most five
	// rows (link, category, redirect, template, file) to one title, so that
	// many rows tell.
	linkersLimit := 5 * (len(reqs) + 1)
	var b pgx.Batch
	b.Queue(`SELECT `+revCols+revColsFrom+` WHERE r.id = ANY($1)`, latestIDs)
	b.Queue(`SELECT `+protectionCols+` FROM protection WHERE title = ANY($1) ORDER BY title FOR SHARE`, titlesArg(titles))
	b.Queue(`SELECT t, array(SELECT from_page FROM links WHERE target_title = t LIMIT $2)
		FROM unnest($1::text[]) AS t`, backlinkTitles, linkersLimit)
	br := tx.SendBatch(ctx, &b)
	latest, err := collectBatch(br, func(rows pgx.Rows) (wiki.Revision, error) { return scanRevision(rows, false) })
	if err != nil {
		br.Close()
		return nil, err
	}
	protections, err := collectBatch(br, func(rows pgx.Rows) (wiki.Protection, error) { return scanProtection(rows) })
	if err != nil {
		br.Close()
		return nil, err
	}
	type linkers struct {
		title string
		pages []int64
	}
	linked, err := collectBatch(br, func(rows pgx.Rows) (linkers, error) {
		var l linkers
		return l, rows.Scan(&l.title, &l.pages)
	})
	if err != nil {
		br.Close()
		return nil, err
	}
	if err := br.Close(); err != nil {
		return nil, err
	}

	prot := make(map[wiki.Title]wiki.Protection, len(protections))
	for _, p := range protections {
		prot[p.Title] = p
	}
	for _, req := range reqs {
		if !protectionAllows(prot, req.Title, req.Group, now(req.Time), wiki.ProtectEdit) {
			return nil, fmt.Errorf("%q: %w", req.Title, wiki.ErrProtected)
		}
	}
	state := make(map[wiki.Title]*importPage, len(pages))
	for t, p := range pages {
		state[t] = &importPage{page: p.Page}
	}
	for _, r := range latest {
		if st := state[r.Title]; st != nil && !st.page.Deleted && st.page.LatestID == r.ID {
			st.live, st.latest = true, r
		}
	}
	dbLinkers := make(map[string][]int64, len(linked))
	for _, l := range linked {
		dbLinkers[l.title] = l.pages
	}

	// The new revisions' IDs are taken from the sequence before the rows
	// are copied, in request order, so that a title saved twice has its
	// revisions in order.
	n := 0
	type version struct {
		sha   string
		model wiki.ContentModel
	}
	cur := map[wiki.Title]version{}
	for t, st := range state {
		if st.live {
			cur[t] = version{st.latest.SHA1, st.page.Model}
		}
	}
	models := make([]wiki.ContentModel, len(reqs))
	for i, req := range reqs {
		v, ok := cur[req.Title]
		models[i] = req.Model
		if models[i] == "" {
			models[i] = v.model
			if !ok {
				models[i] = state[req.Title].page.Model.Or(wiki.ModelMarkdown) // a deleted page's too
			}
		}
		if !ok || v.sha != shas[i] || v.model != models[i] || req.NullRevision {
			n++
			cur[req.Title] = version{shas[i], models[i]}
		}
	}
	revIDs, err := nextRevisionIDs(ctx, tx, n)
	if err != nil {
		return nil, err
	}

	res := make([]wiki.SaveResult, len(reqs))
	var (
		revRows, changeRows [][]any
		links               store.LinkRows
		batchPages          []int64
		rewritten           = map[int64]bool{} // pages whose old link rows the batch replaced
		linkedInBatch       = map[string]bool{}
		search              = map[int64]int{} // page → index in entries
		entries             []searchEntry
		jobs                []wiki.JobSpec
		jobsAt              time.Time
	)
	var jobGroups []func() error
	var backlinks wiki.BatchBacklinks // the batch's, gathered
	flushJobs := func() {
		if len(jobs) > 0 {
			js, at := jobs, jobsAt
			jobGroups = append(jobGroups, func() error { return insertJobs(ctx, tx, js, at) })
		}
		jobs = nil
	}
	for i, req := range reqs {
		at := now(req.Time)
		st := state[req.Title]
		for _, j := range req.Jobs {
			if wiki.DependentsJob(j.Kind) && !linkedInBatch[string(req.Title)] &&
				!slices.ContainsFunc(dbLinkers[string(req.Title)], func(id int64) bool { return !rewritten[id] }) ||
				backlinks.Take(j) {
				continue
			}
			if len(jobs) > 0 && !at.Equal(jobsAt) {
				flushJobs()
			}
			jobs, jobsAt = append(jobs, j), at
		}
		if st.live && st.latest.SHA1 == shas[i] && st.page.Model == models[i] && !req.NullRevision {
			res[i] = wiki.SaveResult{Page: st.page, Revision: st.latest, Unchanged: true}
		} else {
			var parentID int64
			oldSize := 0
			if st.live {
				parentID, oldSize = st.page.LatestID, st.page.Size
			}
			rev := wiki.Revision{
				ID: revIDs[0], PageID: st.page.ID, Title: req.Title, ParentID: parentID, UserID: req.UserID, UserName: req.UserName,
				Time: at, Summary: req.Summary, Size: len(req.Text), SHA1: shas[i], Minor: req.Minor, ParentSize: oldSize,
				Model: models[i],
			}
			tags := wiki.JoinTags(req.Tags)
			rev.Tags = wiki.SplitTags(tags)
			revIDs = revIDs[1:]
			revRows = append(revRows, []any{rev.ID, rev.PageID, rev.ParentID, rev.UserID, rev.UserName, ms(at), rev.Summary,
				req.Text, rev.Size, rev.SHA1, rev.Minor, tags, string(rev.Model)})
			kind := wiki.ChangeEdit
			if !st.live {
				kind = wiki.ChangeNew
			}
			c := wiki.Change{Kind: kind, Title: req.Title, PageID: rev.PageID, RevID: rev.ID, OldRevID: parentID,
				UserID: req.UserID, UserName: req.UserName, Time: at, Summary: req.Summary, Size: rev.Size, OldSize: oldSize, Minor: req.Minor}
			changeRows = append(changeRows, []any{string(c.Kind), string(c.Title), string(c.NewTitle), c.PageID, c.RevID, c.OldRevID,
				c.UserID, c.UserName, ms(c.Time), c.Summary, c.Size, c.OldSize, c.Minor, tags})
			page := wiki.Page{ID: rev.PageID, Title: req.Title, LatestID: rev.ID, Redirect: req.Links.Redirect, Touched: at, Size: rev.Size, Model: rev.Model}
			res[i] = wiki.SaveResult{Page: page, Revision: rev, Created: !st.live}
			st.page, st.live, st.latest = page, true, rev
			e := searchEntry{pageID: page.ID, revID: rev.ID, title: req.Title, terms: terms[i]}
			if k, ok := search[page.ID]; ok {
				entries[k] = e
			} else {
				search[page.ID] = len(entries)
				entries = append(entries, e)
			}
		}
		if !rewritten[st.page.ID] {
			batchPages = append(batchPages, st.page.ID)
		}
		rewritten[st.page.ID] = true
		links.Add(st.page.ID, req.Title, req.Links)
		links.At = req.Time
		for _, t := range req.Links.Links {
			linkedInBatch[string(t)] = true
		}
		for _, t := range req.Links.Categories {
			linkedInBatch[string(t)] = true
		}
		if t := req.Links.Redirect; t != "" {
			linkedInBatch[string(t)] = true
		}
		for _, t := range req.Links.Templates {
			linkedInBatch[string(t)] = true
		}
		for _, t := range req.Links.Files {
			linkedInBatch[string(t)] = true
		}
	}
	flushJobs()
	jobs, jobsAt = backlinks.Jobs(), now(reqs[len(reqs)-1].Time)
	flushJobs()

	if len(revRows) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"revisions"},
			[]string{"id", "page_id", "parent_id", "user_id", "user_name", "ts", "summary", "text", "size", "sha1", "minor", "tags", "model"},
			pgx.CopyFromRows(revRows)); err != nil {
			return nil, err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"changes"},
			[]string{"kind", "title", "new_title", "page_id", "rev_id", "old_rev_id", "user_id", "user_name", "ts", "summary", "size", "old_size", "minor", "tags"},
			pgx.CopyFromRows(changeRows)); err != nil {
			return nil, err
		}
	}
	b = pgx.Batch{}
	// The pages that got a revision (those with a search entry), as the
	// batch left them.
	var ids, latestRevs, touched []int64
	var redirects, pageModels []string
	var sizes []int32
	for _, e := range entries {
		p := state[e.title].page
		ids, latestRevs, touched = append(ids, p.ID), append(latestRevs, p.LatestID), append(touched, ms(p.Touched))
		redirects, sizes = append(redirects, string(p.Redirect)), append(sizes, int32(p.Size))
		pageModels = append(pageModels, string(p.Model))
	}
	if len(ids) > 0 {
		b.Queue(`UPDATE pages p SET latest_rev = u.latest, redirect = u.redirect, deleted = false, touched = u.touched, size = u.size, model = u.model
			FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::integer[], $6::text[]) AS u(id, latest, redirect, touched, size, model)
			WHERE p.id = u.id`, ids, latestRevs, redirects, touched, sizes, pageModels)
	}
	b.Queue(`DELETE FROM links WHERE from_page = ANY($1)`, batchPages)
	queueLinkRows(&b, &links)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return nil, err
	}
	for _, insert := range jobGroups {
		if err := insert(); err != nil {
			return nil, err
		}
	}
	if err := writeSearch(ctx, tx, entries); err != nil {
		return nil, err
	}
	return res, nil
}

// insertMissingPages inserts the page rows of titles that pages lacks
// (titles in order) and adds them to pages. A title created meanwhile by
// another transaction is locked and read instead.
func insertMissingPages(ctx context.Context, tx pgx.Tx, titles []wiki.Title, firstAt map[wiki.Title]time.Time, pages map[wiki.Title]pageRow) error {
	var missing, ns []string
	var touched []int64
	for _, t := range titles {
		if _, ok := pages[t]; !ok {
			missing, ns, touched = append(missing, string(t)), append(ns, t.Namespace()), append(touched, ms(firstAt[t]))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `INSERT INTO pages (title, ns, touched)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ON CONFLICT (title) DO NOTHING RETURNING id, title, touched`,
		missing, ns, touched)
	if err != nil {
		return err
	}
	inserted, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.Page, error) {
		var p wiki.Page
		var title string
		var ms int64
		err := row.Scan(&p.ID, &title, &ms)
		p.Title, p.Touched = wiki.Title(title), fromMS(ms)
		return p, err
	})
	if err != nil {
		return err
	}
	for _, p := range inserted {
		// Without a latest revision, the new row is not live yet.
		pages[p.Title] = pageRow{Page: p, exists: true}
	}
	var lost []wiki.Title
	for _, t := range missing {
		if _, ok := pages[wiki.Title(t)]; !ok {
			lost = append(lost, wiki.Title(t))
		}
	}
	if len(lost) == 0 {
		return nil
	}
	more, err := lockPages(ctx, tx, lost...)
	if err != nil {
		return err
	}
	for t, p := range more {
		pages[t] = p
	}
	return nil
}

// nextRevisionIDs takes n revision IDs from the table's sequence, in
// increasing order.
func nextRevisionIDs(ctx context.Context, tx pgx.Tx, n int) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, `SELECT nextval(pg_get_serial_sequence('revisions', 'id')) FROM generate_series(1, $1)`, n)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return ids, nil
}

// collectBatch reads the next result of br as rows scanned by scan.
func collectBatch[T any](br pgx.BatchResults, scan func(pgx.Rows) (T, error)) ([]T, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
