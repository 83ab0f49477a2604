package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// insertLinks inserts link rows given as three parallel arrays (from_page,
// kind, target_title), in one statement; duplicates are dropped.
const insertLinks = `INSERT INTO links (from_page, kind, target_title)
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`

// queueLinkRows queues the insertion of the rows on b, if there are any,
// in the order of the target index (LinkRows.Sort).
func queueLinkRows(b *pgx.Batch, rs *store.LinkRows) {
	rs.Sort()
	var from []int64
	var kinds, titles []string
	for _, r := range rs.Rows {
		if r.Title == "" {
			continue
		}
		from, kinds, titles = append(from, r.From), append(kinds, r.Kind), append(titles, r.Title)
	}
	if len(from) > 0 {
		b.Queue(insertLinks, from, kinds, titles)
	}
}

// queueReplaceLinks queues on b what makes the page's link rows those of ls.
func queueReplaceLinks(b *pgx.Batch, pageID int64, ls wiki.LinkSet) {
	b.Queue(`DELETE FROM links WHERE from_page = $1`, pageID)
	var rows store.LinkRows
	rows.Add(pageID, ls)
	queueLinkRows(b, &rows)
}

// replaceLinks makes the page's link rows those of ls, in one round trip.
func replaceLinks(ctx context.Context, tx pgx.Tx, pageID int64, ls wiki.LinkSet) error {
	var b pgx.Batch
	queueReplaceLinks(&b, pageID, ls)
	return tx.SendBatch(ctx, &b).Close()
}

// RefreshLinks replaces the page's link rows if revID is still its latest
// revision and the page is live. The page row is locked first, so that a
// save of the page (which writes its own links) waits or is waited for.
func (db *DB) RefreshLinks(ctx context.Context, pageID, revID int64, ls wiki.LinkSet) (bool, error) {
	done := false
	err := db.write(ctx, func(tx pgx.Tx) error {
		done = false
		var latest int64
		var deleted bool
		err := tx.QueryRow(ctx, `SELECT latest_rev, deleted FROM pages WHERE id = $1 FOR UPDATE`, pageID).Scan(&latest, &deleted)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil || latest != revID || deleted {
			return err
		}
		done = true
		return replaceLinks(ctx, tx, pageID, ls)
	})
	if err != nil {
		return false, fmt.Errorf("postgres: refresh links of page %d: %w", pageID, err)
	}
	return done, nil
}
