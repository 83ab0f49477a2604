package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wikid/wikid/internal/media"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/wiki"
)

// FileOptions are what the engine takes of uploads (config).
type FileOptions struct {
	// Allowed are the MIME types uploads may have, by their content
	// (default media.DefaultAllowed).
	Allowed []string
	// StripGPS removes GPS positions from the originals of uploaded
	// photos, not only from their thumbnails (which never carry any).
	StripGPS bool
	// ThumbSlots is how many thumbnails are made at once (default 1): the
	// rest wait, ThumbQueue of them at most, then get 503.
	ThumbSlots, ThumbQueue int
}

// Upload is a file to store as a new version of the File: page Title.
type Upload struct {
	Title wiki.Title // in the File namespace
	Data  []byte     // the whole file, within the configured size limit
	// Comment is the upload's summary; Description the new File: page's
	// text (the comment when empty). A new version of an existing file
	// keeps the page's text.
	Comment, Description string
	Editor               Editor
	// Revert makes an earlier version current again (its bytes, by
	// SHA-256, must be a version of this file); Data is then unused.
	Revert string
	// Time is when the upload is recorded; zero is now. An import sets
	// it to the upload's time on the wiki it comes from.
	Time time.Time
}

// UploadOutcome is what an upload did.
type UploadOutcome struct {
	Page    wiki.Page
	Version wiki.FileVersion
	Created bool // the File: page was created
}

// Errors of uploads that the forms explain.
var (
	errNotFileTitle = wiki.Errorf(wiki.KindInvalid, "a file's title must be in the File namespace, such as File:Diagram.png")
	errSameFile     = wiki.Errorf(wiki.KindConflict, "this file is identical to the current version: nothing was uploaded")
	errEmptyFile    = wiki.Errorf(wiki.KindInvalid, "the file is empty: choose a file with content")
)

// Upload checks an upload's content (its type by content, its name, its
// header), stores its bytes as a blob, and records the new version with
// the File: page's save and the upload log entry in one transaction.
// Pages showing the file are brought up to date by jobs; the file page
// itself is purged at once.
func (e *Engine) Upload(ctx context.Context, up Upload) (UploadOutcome, error) {
	if up.Title.Namespace() != wiki.NSFile {
		return UploadOutcome{}, errNotFileTitle
	}
	v := wiki.FileVersion{Title: up.Title, UserID: up.Editor.UserID, UserName: up.Editor.UserName,
		Comment: wiki.OneLine(up.Comment, 500)}
	action := wiki.UploadNew
	if up.Revert != "" {
		// A version deleted with its page (or its whole page) is not one
		// to revert to: an undelete shows it again.
		old, deleted, err := e.store.FindFileVersion(ctx, up.Title, up.Revert)
		if err == nil && deleted {
			err = &wiki.Error{Kind: wiki.KindNotFound, Msg: string(up.Title) + " has no such version", Err: wiki.ErrNotFound}
		}
		if err != nil {
			return UploadOutcome{}, err
		}
		v.SHA256, v.Size, v.MIME, v.Width, v.Height = old.SHA256, old.Size, old.MIME, old.Width, old.Height
		action = wiki.UploadRevert
	} else {
		if err := e.checkFile(&v, up.Data); err != nil {
			return UploadOutcome{}, err
		}
		if e.files.StripGPS {
			up.Data = media.StripGPS(up.Data, v.MIME)
		}
		sum := sha256.Sum256(up.Data)
		v.SHA256, v.Size = hex.EncodeToString(sum[:]), int64(len(up.Data))
		if err := e.store.PutBlob(ctx, v.SHA256, v.Size, bytes.NewReader(up.Data)); err != nil {
			return UploadOutcome{}, fmt.Errorf("engine: store the file: %w", err)
		}
	}
	for attempt := 0; attempt < 3; attempt++ {
		out, err := e.saveUpload(ctx, up, v, action)
		if errors.Is(err, wiki.ErrConflict) || errors.Is(err, wiki.ErrExists) {
			continue // another save of the page came first: read it again
		}
		return out, err
	}
	return UploadOutcome{}, wiki.Errorf(wiki.KindConflict, "the file page is being edited very often right now; try the upload again")
}

// checkFile fills v's type and size from data, refusing what the wiki
// does not take: a type not allowed (by content), a name whose extension
// says another type, a malformed image.
func (e *Engine) checkFile(v *wiki.FileVersion, data []byte) error {
	if len(data) == 0 {
		return errEmptyFile
	}
	mime, err := media.Sniff(data, e.files.Allowed)
	if err != nil {
		return mediaError(wiki.KindUnsupported, err)
	}
	if err := media.CheckName(v.Name(), mime); err != nil {
		return mediaError(wiki.KindInvalid, err)
	}
	v.MIME = mime
	if strings.HasPrefix(mime, "image/") {
		// Only the header is read: an image of any size is kept (a
		// thumbnail of one too large is refused when asked for).
		info, err := media.Probe(data, mime)
		if err != nil {
			return mediaError(wiki.KindInvalid, err)
		}
		v.Width, v.Height = info.Width, info.Height
	}
	return nil
}

// mediaError is err, a refusal of media's, as an error of kind whose
// message is media's sentence for the uploader.
func mediaError(kind wiki.Kind, err error) error {
	var me *media.Error
	if errors.As(err, &me) {
		return &wiki.Error{Kind: kind, Msg: me.Msg, Err: err}
	}
	return &wiki.Error{Kind: kind, Msg: "the file cannot be read", Err: err}
}

// saveUpload is one attempt at Upload's transaction.
func (e *Engine) saveUpload(ctx context.Context, up Upload, v wiki.FileVersion, action string) (UploadOutcome, error) {
	cur, err := e.store.FindPage(ctx, up.Title)
	if err != nil && !errors.Is(err, wiki.ErrNotFound) {
		return UploadOutcome{}, err
	}
	exists := err == nil && !cur.Deleted
	if err := e.checkProtection(ctx, up.Title, wiki.ProtectEdit, !exists, up.Editor); err != nil {
		return UploadOutcome{}, err
	}
	text := up.Description
	if strings.TrimSpace(text) == "" {
		text = v.Comment
	}
	text = normalizeText(text)
	summary := v.Comment
	var base int64
	var ids []int64
	model := e.modelOf("", cur, exists)
	if exists {
		latest, err := e.store.FindRevision(ctx, cur.LatestID)
		if err != nil {
			return UploadOutcome{}, err
		}
		versions, err := e.store.FileVersions(ctx, up.Title)
		if err != nil {
			return UploadOutcome{}, err
		}
		// The current version is the newest visible one: a page created
		// again after a deletion keeps its old versions, hidden, and an
		// upload there is a new file.
		current := slices.IndexFunc(versions, func(v wiki.FileVersion) bool { return !v.Hidden })
		if current >= 0 && versions[current].SHA256 == v.SHA256 {
			return UploadOutcome{}, errSameFile
		}
		if current >= 0 && action == wiki.UploadNew {
			action = wiki.UploadOverwrite
		}
		text, base, ids = latest.Text, cur.LatestID, []int64{cur.ID}
		what := "Uploaded a new version of “" + up.Title.Name() + "”"
		if action == wiki.UploadRevert {
			what = "Reverted “" + up.Title.Name() + "” to an earlier version"
		}
		if summary == "" {
			summary = what
		} else {
			summary = wiki.OneLine(what+": "+summary, 500)
		}
	} else if action == wiki.UploadRevert {
		return UploadOutcome{}, wiki.ErrNotFound
	}
	if err := e.checkSize(text); err != nil {
		return UploadOutcome{}, err
	}
	links, plain, err := e.analyze(ctx, up.Title, text, model)
	if err != nil {
		return UploadOutcome{}, err
	}
	also := []wiki.Title{}
	if !exists {
		also = withPair(also, up.Title)
	}
	also = append(also, purge.LogTitle, wiki.FileMediaTitle(up.Title))
	jobs := append(e.changeJobs(up.Title, !exists, false, also...), FileUsesJob(up.Title))
	jobs = append(jobs, e.purger.Outbox(ids, append([]wiki.Title{up.Title}, also...)...)...)
	res, saved, err := e.store.SaveFile(ctx, wiki.UploadRequest{
		Page: wiki.SaveRequest{
			Title: up.Title, Text: text, Summary: summary,
			UserID: up.Editor.UserID, UserName: up.Editor.UserName,
			BaseRevID: base, Links: links, SearchText: plain, Time: e.uploadTime(up), Group: up.Editor.Group,
			Jobs: jobs, NullRevision: exists, Model: model,
		},
		Version: v,
		Action:  action,
	})
	if errors.Is(err, wiki.ErrProtected) {
		if perr := e.checkProtection(ctx, up.Title, wiki.ProtectEdit, !exists, up.Editor); perr != nil {
			return UploadOutcome{}, perr
		}
	}
	if err != nil {
		if !errors.Is(err, wiki.ErrConflict) && !errors.Is(err, wiki.ErrExists) {
			e.maybeCommitted(ctx, err, ids, append([]wiki.Title{up.Title}, also...)...)
		}
		return UploadOutcome{}, err
	}
	e.afterCommit(ctx, res.Page.ID, up.Title, also...)
	return UploadOutcome{Page: res.Page, Version: saved, Created: !exists}, nil
}

// Thumbnail returns the thumbnail of version v at width pixels, making and
// storing it on its first request: one maker per (content, width) however
// many ask at once (the others wait for it), and at most ThumbSlots makers
// at a time, so a burst of new thumbnails costs bounded CPU. data is the
// thumbnail's bytes. mayMake, when not nil, is asked before a thumbnail
// is made (not when it is stored already): its error refuses the request.
func (e *Engine) Thumbnail(ctx context.Context, v wiki.FileVersion, width int, mayMake func() error) (wiki.Thumbnail, []byte, error) {
	if !v.Thumbable() {
		return wiki.Thumbnail{}, nil, wiki.Errorf(wiki.KindNotFound,
			"no thumbnail can be made of %s: only PNG, JPEG, GIF and WebP images of at most %d megapixels have them",
			v.Title, wiki.MaxImagePixels/1_000_000)
	}
	if width < 1 || width >= v.Width {
		return wiki.Thumbnail{}, nil, wiki.Errorf(wiki.KindNotFound,
			"a thumbnail must be narrower than the image (%d pixels wide); use the original instead", v.Width)
	}
	if th, err := e.store.FindThumbnail(ctx, v.SHA256, width); err == nil {
		data, err := readBlob(ctx, e.store, th.SHA256)
		return th, data, err
	} else if !errors.Is(err, wiki.ErrNotFound) {
		return wiki.Thumbnail{}, nil, err
	}
	if err := e.thumbFailures.find(v.SHA256, e.now()); err != nil {
		return wiki.Thumbnail{}, nil, err
	}
	if mayMake != nil {
		if err := mayMake(); err != nil {
			return wiki.Thumbnail{}, nil, err
		}
	}
	key := thumbKey{v.SHA256, width}
	return e.thumbs.do(ctx, key, func(ctx context.Context) (thumbResult, error) {
		release, err := e.thumbGate.acquire(ctx)
		if err != nil {
			return thumbResult{}, err
		}
		defer release()
		if th, err := e.store.FindThumbnail(ctx, v.SHA256, width); err == nil {
			data, err := readBlob(ctx, e.store, th.SHA256)
			return thumbResult{th, data}, err
		}
		src, err := readBlob(ctx, e.store, v.SHA256)
		if err != nil {
			return thumbResult{}, err
		}
		out, mime, height, err := media.Thumbnail(src, v.MIME, width)
		if err != nil {
			msg := "it cannot be read"
			var me *media.Error
			if errors.As(err, &me) {
				msg = me.Msg
			}
			err = &wiki.Error{Kind: wiki.KindNotFound, Msg: "no thumbnail can be made of " + string(v.Title) + ": " + msg, Err: err}
			// An image that cannot be decoded is not decoded again at
			// every request (at any width) for a while.
			e.thumbFailures.add(v.SHA256, err, e.now())
			return thumbResult{}, err
		}
		sum := sha256.Sum256(out)
		th := wiki.Thumbnail{Source: v.SHA256, Width: width, SHA256: hex.EncodeToString(sum[:]), MIME: mime, Height: height}
		if err := e.store.PutBlob(ctx, th.SHA256, int64(len(out)), bytes.NewReader(out)); err != nil {
			return thumbResult{}, err
		}
		if err := e.store.SaveThumbnail(ctx, th); err != nil {
			return thumbResult{}, err
		}
		return thumbResult{th, out}, nil
	}).unpack()
}

// readBlob reads a whole blob.
func readBlob(ctx context.Context, s wiki.FileStore, sha string) ([]byte, error) {
	b, err := s.OpenBlob(ctx, sha)
	if err != nil {
		return nil, err
	}
	data := make([]byte, b.Size())
	if _, err := b.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data, nil
}

type thumbKey struct {
	sha   string
	width int
}

type thumbResult struct {
	th   wiki.Thumbnail
	data []byte
}

type thumbDone struct {
	r   thumbResult
	err error
}

func (d thumbDone) unpack() (wiki.Thumbnail, []byte, error) { return d.r.th, d.r.data, d.err }

// thumbFlights runs one maker per thumbnail among concurrent callers.
type thumbFlights struct {
	mu sync.Mutex
	m  map[thumbKey]*thumbFlight
}

type thumbFlight struct {
	done chan struct{}
	r    thumbDone
}

// do runs fn once for key among the callers that arrive while it runs;
// fn's context outlives the first caller's (the others still want it),
// bounded by thumbBudget.
func (fs *thumbFlights) do(ctx context.Context, key thumbKey, fn func(context.Context) (thumbResult, error)) thumbDone {
	fs.mu.Lock()
	if fs.m == nil {
		fs.m = map[thumbKey]*thumbFlight{}
	}
	f, ok := fs.m[key]
	if !ok {
		f = &thumbFlight{done: make(chan struct{})}
		fs.m[key] = f
		go func() {
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), thumbBudget)
			defer cancel()
			r, err := fn(fctx)
			fs.mu.Lock()
			delete(fs.m, key)
			fs.mu.Unlock()
			f.r = thumbDone{r, err}
			close(f.done)
		}()
	}
	fs.mu.Unlock()
	select {
	case <-f.done:
		return f.r
	case <-ctx.Done():
		return thumbDone{err: ctx.Err()}
	}
}

// thumbBudget bounds the making of one thumbnail, waiting for a slot
// included.
const thumbBudget = 30 * time.Second

// changedFiles returns the files in one of old and new but not in both:
// the file pages whose lists of pages using them a save changes.
func changedFiles(old, new []wiki.Title) []wiki.Title {
	var out []wiki.Title
	for _, t := range old {
		if !slices.Contains(new, t) {
			out = append(out, t)
		}
	}
	for _, t := range new {
		if !slices.Contains(old, t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// thumbFailureFor is how long an image that could not be made a
// thumbnail of is refused without trying again.
const thumbFailureFor = time.Hour

// maxThumbFailures bounds the failures remembered.
const maxThumbFailures = 10_000

// thumbFailures remembers the images thumbnails could not be made of.
type thumbFailures struct {
	mu sync.Mutex
	m  map[string]thumbFailure
}

type thumbFailure struct {
	err   error
	until time.Time
}

func (f *thumbFailures) find(sha string, now time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tf, ok := f.m[sha]; ok && now.Before(tf.until) {
		return tf.err
	}
	return nil
}

func (f *thumbFailures) add(sha string, err error, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil || len(f.m) >= maxThumbFailures {
		f.m = map[string]thumbFailure{}
	}
	f.m[sha] = thumbFailure{err, now.Add(thumbFailureFor)}
}
