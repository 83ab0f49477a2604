package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// versionCols needs: file_versions v JOIN pages p.
const versionCols = `v.id, v.page_id, p.title, v.sha256, v.size, v.mime, v.width, v.height, v.user_id, v.user_name, v.comment, v.ts, v.hidden`

// scanVersion scans versionCols, then extra.
func scanVersion(row pgx.Row, extra ...any) (wiki.FileVersion, error) {
	var v wiki.FileVersion
	var title string
	var ts int64
	err := row.Scan(append([]any{&v.ID, &v.PageID, &title, &v.SHA256, &v.Size, &v.MIME, &v.Width, &v.Height,
		&v.UserID, &v.UserName, &v.Comment, &ts, &v.Hidden}, extra...)...)
	v.Title, v.Time = wiki.Title(title), fromMS(ts)
	return v, err
}

// PutBlob stores blob sha from r, a chunk per statement, in one
// transaction, which r's reading keeps open: r should be at hand (a file
// the upload was spooled to), not a client's body. A blob stored already
// is found by a read first and r is left unread. The transaction is not
// run again on a lost race (write would): r cannot be read twice.
func (db *DB) PutBlob(ctx context.Context, sha string, size int64, r io.Reader) error {
	if !store.ValidSHA256(sha) {
		return fmt.Errorf("postgres: put blob: %w", wiki.Errorf(wiki.KindInvalid, "%q is not a SHA-256 in lower-case hex", sha))
	}
	var have bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blobs WHERE sha256 = $1)`, sha).Scan(&have); err != nil {
		return fmt.Errorf("postgres: put blob %s: %w", sha, err)
	}
	if have {
		return nil
	}
	err := pgx.BeginTxFunc(ctx, db.pool, writeTx, func(tx pgx.Tx) error {
		// A concurrent put of the same bytes that inserted its row first
		// makes this insert wait for its end: committed, the blob is
		// stored and this put does nothing; rolled back, this one goes on.
		tag, err := tx.Exec(ctx, `INSERT INTO blobs (sha256, size, created) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING`,
			sha, size, ms(now(time.Time{})))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return store.WriteChunks(r, sha, size, func(n int64, data []byte) error {
			_, err := tx.Exec(ctx, `INSERT INTO blob_chunks (sha256, n, data) VALUES ($1, $2, $3)`, sha, n, data)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("postgres: put blob %s: %w", sha, err)
	}
	return nil
}

// OpenBlob returns blob sha, whose ranges are read from the pool under
// ctx.
func (db *DB) OpenBlob(ctx context.Context, sha string) (wiki.Blob, error) {
	if !store.ValidSHA256(sha) {
		return nil, fmt.Errorf("postgres: open blob %q: %w", sha, wiki.ErrNotFound)
	}
	var size int64
	if err := db.pool.QueryRow(ctx, `SELECT size FROM blobs WHERE sha256 = $1`, sha).Scan(&size); err != nil {
		return nil, fmt.Errorf("postgres: open blob %s: %w", sha, notFound(err))
	}
	return store.NewBlob(ctx, sha, size, func(ctx context.Context, first, last int64, fn func(int64, []byte) error) error {
		rows, err := db.pool.Query(ctx, `SELECT n, data FROM blob_chunks WHERE sha256 = $1 AND n BETWEEN $2 AND $3 ORDER BY n`, sha, first, last)
		if err != nil {
			return err
		}
		var n int64
		var data []byte
		_, err = pgx.ForEachRow(rows, []any{&n, &data}, func() error { return fn(n, data) })
		return err
	}), nil
}

// SaveFile records an upload in one transaction: the File: page's save
// (savePageTx, as SavePage, its page row locked), the version and the
// upload log entry, then the page's jobs last (a purge log event among
// them holds the log's lock until the commit). The version and the entry
// are stored whatever the page's save came to, a null edit included (the
// caller asks for a null revision, req.Page.NullRevision).
func (db *DB) SaveFile(ctx context.Context, req wiki.UploadRequest) (wiki.SaveResult, wiki.FileVersion, error) {
	if err := store.CheckUpload(req); err != nil {
		return wiki.SaveResult{}, wiki.FileVersion{}, fmt.Errorf("postgres: save file %q: %w", req.Page.Title, err)
	}
	var res wiki.SaveResult
	var v wiki.FileVersion
	at := now(req.Page.Time)
	terms, sha := searchTerms(req.Page), sha1Hex(req.Page.Text)
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		v = req.Version
		var size int64
		if err := tx.QueryRow(ctx, `SELECT size FROM blobs WHERE sha256 = $1`, v.SHA256).Scan(&size); err != nil {
			return fmt.Errorf("blob %s: %w", v.SHA256, notFound(err))
		}
		if size != v.Size {
			return fmt.Errorf("the version's size is %d bytes, its blob's %d", v.Size, size)
		}
		page := req.Page
		page.Jobs = nil
		if res, err = savePageTx(ctx, tx, page, sha, terms); err != nil {
			return err
		}
		// A new version is visible, whatever hides the page's older ones.
		v.PageID, v.Title, v.Time, v.Hidden = res.Page.ID, req.Page.Title, at, false
		var b pgx.Batch
		b.Queue(`INSERT INTO file_versions (page_id, sha256, size, mime, width, height, user_id, user_name, comment, ts)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
			v.PageID, v.SHA256, v.Size, v.MIME, v.Width, v.Height, v.UserID, v.UserName, v.Comment, ms(at)).
			QueryRow(func(row pgx.Row) error { return row.Scan(&v.ID) })
		if err := queueLog(&b, store.UploadLog(req, v.PageID, at)); err != nil {
			return err
		}
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		return insertJobs(ctx, tx, req.Page.Jobs, at)
	})
	if err != nil {
		return wiki.SaveResult{}, wiki.FileVersion{}, fmt.Errorf("postgres: save file %q: %w", req.Page.Title, err)
	}
	return res, v, nil
}

// CurrentFiles returns the latest visible version of each live File: page
// among titles, in one query: each page's is the last entry of its range
// of file_versions_page not hidden (the index holds the flag).
func (db *DB) CurrentFiles(ctx context.Context, titles []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
	out := make(map[wiki.Title]wiki.FileVersion, len(titles))
	if len(titles) == 0 {
		return out, nil
	}
	vs, err := db.readVersions(ctx, `SELECT `+versionCols+` FROM pages p
		CROSS JOIN LATERAL (SELECT * FROM file_versions WHERE page_id = p.id AND NOT hidden ORDER BY id DESC LIMIT 1) v
		WHERE p.title = ANY($1) AND NOT p.deleted`, titlesArg(titles))
	if err != nil {
		return nil, fmt.Errorf("postgres: current files: %w", err)
	}
	for _, v := range vs {
		out[v.Title] = v
	}
	return out, nil
}

// FileVersions returns the versions of file t, newest first, hidden ones
// included, whether its page is deleted or not.
func (db *DB) FileVersions(ctx context.Context, t wiki.Title) ([]wiki.FileVersion, error) {
	vs, err := db.readVersions(ctx, `SELECT `+versionCols+` FROM pages p JOIN file_versions v ON v.page_id = p.id
		WHERE p.title = $1 ORDER BY v.id DESC`, string(t))
	if err != nil {
		return nil, fmt.Errorf("postgres: versions of file %q: %w", t, err)
	}
	return vs, nil
}

func (db *DB) readVersions(ctx context.Context, query string, args ...any) ([]wiki.FileVersion, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (wiki.FileVersion, error) { return scanVersion(row) })
}

// FindFileVersion returns the newest visible version of file t with
// content sha, else its newest hidden one (the first entry of a range of
// file_versions_sha, which is in that order), and whether it is deleted
// (its page is, or it is hidden).
func (db *DB) FindFileVersion(ctx context.Context, t wiki.Title, sha string) (wiki.FileVersion, bool, error) {
	if !store.ValidSHA256(sha) {
		return wiki.FileVersion{}, false, fmt.Errorf("postgres: find version %q of file %q: %w", sha, t, wiki.ErrNotFound)
	}
	var deleted bool
	v, err := scanVersion(db.pool.QueryRow(ctx, `SELECT `+versionCols+`, p.deleted FROM pages p
		CROSS JOIN LATERAL (SELECT * FROM file_versions WHERE sha256 = $2 AND page_id = p.id ORDER BY hidden, id DESC LIMIT 1) v
		WHERE p.title = $1`, string(t), sha), &deleted)
	if err != nil {
		return wiki.FileVersion{}, false, fmt.Errorf("postgres: find version %s of file %q: %w", sha, t, notFound(err))
	}
	return v, deleted || v.Hidden, nil
}

// FileUsage lists the live pages with a file row naming t, by title.
func (db *DB) FileUsage(ctx context.Context, t wiki.Title, q wiki.ListQuery) ([]wiki.Page, error) {
	return db.listPages(ctx, fmt.Sprintf("pages showing %q", t),
		` AND p.id IN (SELECT from_page FROM links WHERE target_title = $1 AND kind = 'file')`, q, string(t))
}

// FindThumbnail returns the thumbnail of blob source at width.
func (db *DB) FindThumbnail(ctx context.Context, source string, width int) (wiki.Thumbnail, error) {
	if !store.ValidSHA256(source) {
		return wiki.Thumbnail{}, fmt.Errorf("postgres: find thumbnail of %q: %w", source, wiki.ErrNotFound)
	}
	var th wiki.Thumbnail
	err := db.pool.QueryRow(ctx, `SELECT source, width, sha256, mime, height FROM thumbnails WHERE source = $1 AND width = $2`,
		source, width).Scan(&th.Source, &th.Width, &th.SHA256, &th.MIME, &th.Height)
	if err != nil {
		return wiki.Thumbnail{}, fmt.Errorf("postgres: find thumbnail of %s at %dpx: %w", source, width, notFound(err))
	}
	return th, nil
}

// SaveThumbnail records th unless a thumbnail of its source and width is
// stored (which stays); ErrNotFound when th's blob or its source's is not
// (the foreign keys tell).
func (db *DB) SaveThumbnail(ctx context.Context, th wiki.Thumbnail) error {
	if !store.ValidSHA256(th.Source) || !store.ValidSHA256(th.SHA256) {
		return fmt.Errorf("postgres: save thumbnail of %q: %w", th.Source, wiki.ErrNotFound)
	}
	err := db.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO thumbnails (source, width, sha256, mime, height) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (source, width) DO NOTHING`, th.Source, th.Width, th.SHA256, th.MIME, th.Height)
		return err
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" {
		return fmt.Errorf("postgres: save thumbnail of %s at %dpx: blob not stored: %w", th.Source, th.Width, wiki.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: save thumbnail of %s at %dpx: %w", th.Source, th.Width, err)
	}
	return nil
}
