package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/wiki"
)

// versionCols needs: file_versions v JOIN pages p.
const versionCols = `v.id, v.page_id, p.title, v.sha256, v.size, v.mime, v.width, v.height, v.user_id, v.user_name, v.comment, v.ts, v.hidden`

const (
	// blobChunksQuery reads a range of a blob's chunks: one range of the
	// primary key's index.
	blobChunksQuery = `SELECT n, data FROM blob_chunks WHERE sha256 = ? AND n BETWEEN ? AND ? ORDER BY n`
	// currentFilesQuery reads the newest visible version of each live page
	// among a JSON array of titles: the last entry of the page's range of
	// file_versions_page not hidden (the index holds the flag).
	currentFilesQuery = `SELECT ` + versionCols + ` FROM pages p
		JOIN file_versions v ON v.id = (SELECT id FROM file_versions WHERE page_id = p.id AND hidden = 0 ORDER BY id DESC LIMIT 1)
		WHERE p.title IN (SELECT value FROM json_each(?)) AND p.deleted = 0`
	// findFileVersionQuery reads the newest visible version of a title's
	// page with given bytes, else its newest hidden one: the first entry
	// of a range of file_versions_sha, which is in that order.
	findFileVersionQuery = `SELECT ` + versionCols + `, p.deleted FROM pages p
		JOIN file_versions v ON v.page_id = p.id
		WHERE p.title = ? AND v.sha256 = ? ORDER BY v.hidden, v.id DESC LIMIT 1`
)

// scanVersion scans versionCols, then extra.
func scanVersion(s scanner, extra ...any) (wiki.FileVersion, error) {
	var v wiki.FileVersion
	var title string
	var ts int64
	err := s.Scan(append([]any{&v.ID, &v.PageID, &title, &v.SHA256, &v.Size, &v.MIME, &v.Width, &v.Height,
		&v.UserID, &v.UserName, &v.Comment, &ts, &v.Hidden}, extra...)...)
	v.Title, v.Time = wiki.Title(title), fromMS(ts)
	return v, err
}

// PutBlob stores blob sha from r, a chunk per statement, in one write
// transaction: the single writer is held while r is read, so r should be
// at hand (a file the upload was spooled to), not a client's body. A blob
// stored already is found by a read first and r is left unread.
func (db *DB) PutBlob(ctx context.Context, sha string, size int64, r io.Reader) error {
	if !store.ValidSHA256(sha) {
		return fmt.Errorf("sqlite: put blob: %w", wiki.Errorf(wiki.KindInvalid, "%q is not a SHA-256 in lower-case hex", sha))
	}
	var have bool
	if err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM blobs WHERE sha256 = ?)`, sha).Scan(&have); err != nil {
		return fmt.Errorf("sqlite: put blob %s: %w", sha, err)
	}
	if have {
		return nil
	}
	err := db.write(ctx, func(tx *wtx) error {
		// Stored since the read by a write that ran meanwhile.
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM blobs WHERE sha256 = ?)`, sha).Scan(&have); err != nil || have {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO blobs (sha256, size, created) VALUES (?, ?, ?)`, sha, size, ms(now(time.Time{}))); err != nil {
			return err
		}
		return store.WriteChunks(r, sha, size, func(n int64, data []byte) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO blob_chunks (sha256, n, data) VALUES (?, ?, ?)`, sha, n, data)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("sqlite: put blob %s: %w", sha, err)
	}
	return nil
}

// OpenBlob returns blob sha, whose ranges are read from the reader pool
// under ctx.
func (db *DB) OpenBlob(ctx context.Context, sha string) (wiki.Blob, error) {
	if !store.ValidSHA256(sha) {
		return nil, fmt.Errorf("sqlite: open blob %q: %w", sha, wiki.ErrNotFound)
	}
	var size int64
	if err := db.r.QueryRowContext(ctx, `SELECT size FROM blobs WHERE sha256 = ?`, sha).Scan(&size); err != nil {
		return nil, fmt.Errorf("sqlite: open blob %s: %w", sha, notFound(err))
	}
	return store.NewBlob(ctx, sha, size, func(ctx context.Context, first, last int64, fn func(int64, []byte) error) error {
		rows, err := db.r.QueryContext(ctx, blobChunksQuery, sha, first, last)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n int64
			var data []byte
			if err := rows.Scan(&n, &data); err != nil {
				return err
			}
			if err := fn(n, data); err != nil {
				return err
			}
		}
		return rows.Err()
	}), nil
}

// SaveFile records an upload in one write transaction: the File: page's
// save (savePageTx, as SavePage), the version and the upload log entry,
// and the page's search entry last (writeSearch). The version and the
// entry are stored whatever the page's save came to, a null edit included
// (the caller asks for a null revision, req.Page.NullRevision).
func (db *DB) SaveFile(ctx context.Context, req wiki.UploadRequest) (wiki.SaveResult, wiki.FileVersion, error) {
	if err := store.CheckUpload(req); err != nil {
		return wiki.SaveResult{}, wiki.FileVersion{}, fmt.Errorf("sqlite: save file %q: %w", req.Page.Title, err)
	}
	var res wiki.SaveResult
	var v wiki.FileVersion
	at := now(req.Page.Time)
	terms, text := searchTerms(req.Page), encodeText(req.Page.Text)
	err := db.write(ctx, func(tx *wtx) (err error) {
		v = req.Version
		var size int64
		if err := tx.QueryRowContext(ctx, `SELECT size FROM blobs WHERE sha256 = ?`, v.SHA256).Scan(&size); err != nil {
			return fmt.Errorf("blob %s: %w", v.SHA256, notFound(err))
		}
		if size != v.Size {
			return fmt.Errorf("the version's size is %d bytes, its blob's %d", v.Size, size)
		}
		var entry searchEntry
		if res, entry, err = savePageTx(ctx, tx, req.Page, text, terms, nil); err != nil {
			return err
		}
		// A new version is visible, whatever hides the page's older ones.
		v.PageID, v.Title, v.Time, v.Hidden = res.Page.ID, req.Page.Title, at, false
		if err := tx.QueryRowContext(ctx, `INSERT INTO file_versions
			(page_id, sha256, size, mime, width, height, user_id, user_name, comment, ts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			v.PageID, v.SHA256, v.Size, v.MIME, v.Width, v.Height, v.UserID, v.UserName, v.Comment, ms(at)).Scan(&v.ID); err != nil {
			return err
		}
		if err := insertLog(ctx, tx, store.UploadLog(req, v.PageID, at)); err != nil {
			return err
		}
		if entry.pageID == 0 {
			return nil
		}
		return writeSearch(ctx, tx, []searchEntry{entry})
	})
	if err != nil {
		return wiki.SaveResult{}, wiki.FileVersion{}, fmt.Errorf("sqlite: save file %q: %w", req.Page.Title, err)
	}
	return res, v, nil
}

// CurrentFiles returns the latest visible version of each live File: page
// among titles, in one query (the titles travel as one JSON array
// parameter).
func (db *DB) CurrentFiles(ctx context.Context, titles []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
	out := make(map[wiki.Title]wiki.FileVersion, len(titles))
	if len(titles) == 0 {
		return out, nil
	}
	arg, err := json.Marshal(titles)
	if err != nil {
		return nil, fmt.Errorf("sqlite: current files: %w", err)
	}
	vs, err := db.readVersions(ctx, currentFilesQuery, string(arg))
	if err != nil {
		return nil, fmt.Errorf("sqlite: current files: %w", err)
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
		WHERE p.title = ? ORDER BY v.id DESC`, string(t))
	if err != nil {
		return nil, fmt.Errorf("sqlite: versions of file %q: %w", t, err)
	}
	return vs, nil
}

func (db *DB) readVersions(ctx context.Context, query string, args ...any) ([]wiki.FileVersion, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wiki.FileVersion
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// FindFileVersion returns the newest visible version of file t with
// content sha, else its newest hidden one, and whether it is deleted (its
// page is, or it is hidden).
func (db *DB) FindFileVersion(ctx context.Context, t wiki.Title, sha string) (wiki.FileVersion, bool, error) {
	if !store.ValidSHA256(sha) {
		return wiki.FileVersion{}, false, fmt.Errorf("sqlite: find version %q of file %q: %w", sha, t, wiki.ErrNotFound)
	}
	var deleted bool
	v, err := scanVersion(db.r.QueryRowContext(ctx, findFileVersionQuery, string(t), sha), &deleted)
	if err != nil {
		return wiki.FileVersion{}, false, fmt.Errorf("sqlite: find version %s of file %q: %w", sha, t, notFound(err))
	}
	return v, deleted || v.Hidden, nil
}

// FileUsage lists the live pages with a file row naming t, by title.
func (db *DB) FileUsage(ctx context.Context, t wiki.Title, q wiki.ListQuery) ([]wiki.Page, error) {
	return db.listPages(ctx, fmt.Sprintf("pages showing %q", t), "",
		` AND p.id IN (SELECT from_page FROM links WHERE target_title = ? AND kind = 'file')`, q, string(t))
}

// FindThumbnail returns the thumbnail of blob source at width.
func (db *DB) FindThumbnail(ctx context.Context, source string, width int) (wiki.Thumbnail, error) {
	if !store.ValidSHA256(source) {
		return wiki.Thumbnail{}, fmt.Errorf("sqlite: find thumbnail of %q: %w", source, wiki.ErrNotFound)
	}
	var th wiki.Thumbnail
	err := db.r.QueryRowContext(ctx, `SELECT source, width, sha256, mime, height FROM thumbnails WHERE source = ? AND width = ?`,
		source, width).Scan(&th.Source, &th.Width, &th.SHA256, &th.MIME, &th.Height)
	if err != nil {
		return wiki.Thumbnail{}, fmt.Errorf("sqlite: find thumbnail of %s at %dpx: %w", source, width, notFound(err))
	}
	return th, nil
}

// SaveThumbnail records th unless a thumbnail of its source and width is
// stored (which stays); ErrNotFound when th's blob or its source's is not.
func (db *DB) SaveThumbnail(ctx context.Context, th wiki.Thumbnail) error {
	err := db.write(ctx, func(tx *wtx) error {
		if !store.ValidSHA256(th.Source) || !store.ValidSHA256(th.SHA256) {
			return wiki.ErrNotFound
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM blobs WHERE sha256 IN (?, ?)`, th.Source, th.SHA256).Scan(&n); err != nil {
			return err
		}
		if want := 2 - b2i(th.Source == th.SHA256); n != want {
			return fmt.Errorf("blob not stored: %w", wiki.ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO thumbnails (source, width, sha256, mime, height) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (source, width) DO NOTHING`, th.Source, th.Width, th.SHA256, th.MIME, th.Height)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: save thumbnail of %s at %dpx: %w", th.Source, th.Width, err)
	}
	return nil
}
