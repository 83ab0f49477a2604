package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// insertLinks inserts link rows given as parallel arrays (from_page,
// kind, target_title, sortkey, subcat), in one statement; duplicates are
// dropped.
const insertLinks = `INSERT INTO links (from_page, kind, target_title, sortkey, subcat)
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::boolean[]) ON CONFLICT DO NOTHING`

// queueLinkRows queues the insertion of the rows on b, if there are any,
// in the order of the target index (LinkRows.Sort).
func queueLinkRows(b *pgx.Batch, rs *store.LinkRows) {
	rs.Sort()
	var from []int64
	var kinds, titles, keys []string
	var subcats []bool
	for _, r := range rs.Rows {
		if r.Title == "" {
			continue
		}
		from, kinds, titles = append(from, r.From), append(kinds, r.Kind), append(titles, r.Title)
		keys, subcats = append(keys, r.SortKey), append(subcats, r.Subcat)
	}
	if len(from) > 0 {
		b.Queue(insertLinks, from, kinds, titles, keys, subcats)
	}
	queueAdditions(b, rs)
}

// queueAdditions queues what keeps category_added in step with the
// category rows just written for rs's pages: a membership new to its page
// is recorded as added at rs.At, one that goes on keeps its time, and one
// that ended is forgotten (so that coming back is a new addition).
func queueAdditions(b *pgx.Batch, rs *store.LinkRows) {
	if len(rs.Pages) == 0 {
		return
	}
	if cats, pages := rs.Additions(); len(cats) > 0 {
		b.Queue(`INSERT INTO category_added (category, page_id, added)
			SELECT * FROM unnest($1::text[], $2::bigint[], array_fill($3::bigint, ARRAY[cardinality($1::text[])])) ON CONFLICT DO NOTHING`,
			cats, pages, ms(now(rs.At)))
	}
	b.Queue(`DELETE FROM category_added a WHERE a.page_id = ANY($1) AND NOT EXISTS (SELECT 1 FROM links l
		WHERE l.from_page = a.page_id AND l.kind = 'category' AND l.target_title = a.category)`, rs.PageIDs())
}

// queueReplaceLinks queues on b what makes the link rows of page pageID,
// titled page, those of ls, written at time at (zero: now).
func queueReplaceLinks(b *pgx.Batch, pageID int64, page wiki.Title, ls wiki.LinkSet, at time.Time) {
	b.Queue(`DELETE FROM links WHERE from_page = $1`, pageID)
	rows := store.LinkRows{At: at}
	rows.Add(pageID, page, ls)
	queueLinkRows(b, &rows)
}

// replaceLinks makes the link rows of page pageID, titled page, those of
// ls, written at time at (zero: now), in one round trip.
func replaceLinks(ctx context.Context, tx pgx.Tx, pageID int64, page wiki.Title, ls wiki.LinkSet, at time.Time) error {
	var b pgx.Batch
	queueReplaceLinks(&b, pageID, page, ls, at)
	return tx.SendBatch(ctx, &b).Close()
}

// RefreshLinks replaces the page's link rows if revID is still its latest
// revision and the page is live. The page row is locked first, so that a
// save of the page (which writes its own links) waits or is waited for.
func (db *DB) RefreshLinks(ctx context.Context, pageID, revID int64, ls wiki.LinkSet) (bool, error) {
	// Most refreshes find the rows the table has: checked by reads first,
	// without a transaction or a lock (see the SQLite store's).
	same, err := db.sameLinks(ctx, pageID, revID, ls)
	if err != nil || same {
		return same, err
	}
	done := false
	err = db.write(ctx, func(tx pgx.Tx) error {
		done = false
		var latest int64
		var deleted bool
		var title string
		err := tx.QueryRow(ctx, `SELECT latest_rev, deleted, title FROM pages WHERE id = $1 FOR UPDATE`, pageID).Scan(&latest, &deleted, &title)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil || latest != revID || deleted {
			return err
		}
		done = true
		return replaceLinks(ctx, tx, pageID, wiki.Title(title), ls, time.Time{})
	})
	if err != nil {
		return false, fmt.Errorf("postgres: refresh links of page %d: %w", pageID, err)
	}
	return done, nil
}

// sameLinks reports whether revID is the latest revision of the live page
// pageID and its rows are those of ls (as the SQLite store's).
func (db *DB) sameLinks(ctx context.Context, pageID, revID int64, ls wiki.LinkSet) (bool, error) {
	var latest int64
	var deleted bool
	var title string
	err := db.pool.QueryRow(ctx, `SELECT latest_rev, deleted, title FROM pages WHERE id = $1`, pageID).Scan(&latest, &deleted, &title)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && (latest != revID || deleted)) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres: refresh links of page %d: %w", pageID, err)
	}
	rows, err := db.pool.Query(ctx, `SELECT kind, target_title, sortkey, subcat FROM links WHERE from_page = $1`, pageID)
	if err != nil {
		return false, fmt.Errorf("postgres: refresh links of page %d: %w", pageID, err)
	}
	stored, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.LinkRow, error) {
		r := store.LinkRow{From: pageID}
		err := row.Scan(&r.Kind, &r.Title, &r.SortKey, &r.Subcat)
		return r, err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: refresh links of page %d: %w", pageID, err)
	}
	var want store.LinkRows
	want.Add(pageID, wiki.Title(title), ls)
	return want.Same(pageID, stored), nil
}
