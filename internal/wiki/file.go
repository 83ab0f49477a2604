package wiki

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// FileVersion is one upload of a file: the bytes a File: page showed from
// Time on. Its bytes are the blob SHA256 (content-addressed, shared by
// every version and file with the same content).
type FileVersion struct {
	ID       int64
	Title    Title // "File:Name.png"
	PageID   int64 // the File: page
	SHA256   string
	Size     int64
	MIME     string // sniffed from the content at upload, never from the name
	Width    int    // pixels, for images (0 otherwise)
	Height   int
	UserID   int64
	UserName string
	Comment  string
	Time     time.Time
	// Hidden: deleted with its page and not restored since, so that only
	// administrators may see it. A deleted page's versions stay hidden
	// when the page is created again, as its revisions do; an undelete
	// shows them again.
	Hidden bool
}

// IsImage reports whether v's type is shown inline as an image (an img
// element): raster images and SVG.
func (v FileVersion) IsImage() bool { return strings.HasPrefix(v.MIME, "image/") }

// Name is the file's name: its title without the namespace, with
// underscores for spaces, as URLs carry it.
func (v FileVersion) Name() string { return FileName(v.Title) }

// FileMediaTitle names, among the titles a change purges, the responses
// that serve file t's bytes (its media URLs, Special:FilePath): an upload,
// a deletion or an undeletion of t purges them, a page starting to show
// t does not (that purges t's page, which lists the pages using it).
func FileMediaTitle(t Title) Title { return Title("Special:FilePath/" + t.Name()) }

// FileName is t's name without the namespace, spaces as underscores.
func FileName(t Title) string { return strings.ReplaceAll(t.Name(), " ", "_") }

// MediaPrefix is where file bytes are served: an original at
// MediaPrefix + sha256 + "/" + name, a thumbnail at
// MediaPrefix + sha256 + "/" + width + "px-" + ThumbName(name). Both depend on the content's hash only, so they are
// immutable: a new upload is a new URL.
const MediaPrefix = "/media/"

// OriginalURL is the URL of the bytes with hash sha of the file named
// name (FileName).
func OriginalURL(sha, name string) string {
	return MediaPrefix + sha + "/" + url.PathEscape(name)
}

// ThumbURL is the URL of the thumbnail width pixels wide of the bytes
// with hash sha of the file named name.
func ThumbURL(sha, name string, width int) string {
	return MediaPrefix + sha + "/" + strconv.Itoa(width) + "px-" + url.PathEscape(ThumbName(name))
}

// ThumbName is the name of a thumbnail of the file named name: the name,
// with ".png" added to names of formats thumbnails are not made in (GIF
// and WebP thumbnails are PNG, as MediaWiki's of SVG are).
func ThumbName(name string) string {
	lower := strings.ToLower(name)
	for _, ext := range []string{".png", ".jpg", ".jpeg"} {
		if strings.HasSuffix(lower, ext) {
			return name
		}
	}
	return name + ".png"
}

// MaxImagePixels bounds the images Wikid decodes: a thumbnail of an image
// with more pixels (width × height, read from its header) is never made,
// so a decompression bomb costs a header read. Such a file is kept and
// offered for download; pages show a link to it instead of a picture.
const MaxImagePixels = 25_000_000

// MaxImageFrames bounds the frames of an animated image Wikid reads the
// header of (thumbnails show the first frame).
const MaxImageFrames = 1000

// DefaultThumbWidth is the width of a thumbnail ([[File:X|thumb]]) when the
// page asks for none, as MediaWiki's default thumbnail size.
const DefaultThumbWidth = 220

// ThumbWidths are the standard thumbnail widths, MediaWiki's and
// Wikimedia's usual buckets: thumbnails at these widths are made for
// anyone; other widths (the exact sizes pages ask for, and their 1.5× and
// 2× for high-density screens) are made on request too, at a bounded rate
// per client.
var ThumbWidths = []int{120, 180, 220, 250, 330, 500, 960, 1280, 1920}

// Thumbable reports whether thumbnails can be made of v: a raster image
// whose size is within MaxImagePixels. SVG is shown from its original.
func (v FileVersion) Thumbable() bool {
	switch v.MIME {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return v.Width > 0 && v.Height > 0 && int64(v.Width)*int64(v.Height) <= MaxImagePixels
	}
	return false
}

// UploadRequest records an upload in one transaction (FileStore.SaveFile):
// the File: page's save, the new version of its file, and the upload log
// entry. The version's blob must have been stored (PutBlob) before.
type UploadRequest struct {
	// Page saves the File: page: its description text when it is
	// created; for a new version of an existing file the latest text
	// again, with NullRevision set, so that history, recent changes and
	// watchlists show the upload with its summary.
	Page SaveRequest
	// Version is the new version: the store sets its ID, PageID, Title
	// and Time (Page.Time); its Size must be its blob's.
	Version FileVersion
	// Action is the upload log entry's: "upload" (a new file), "overwrite"
	// (a new version) or "revert" (an older version made current).
	Action string
}

// Upload log actions.
const (
	UploadNew       = "upload"
	UploadOverwrite = "overwrite"
	UploadRevert    = "revert"
)

// Blob is the content of a stored blob, read in ranges.
type Blob interface {
	io.ReaderAt
	Size() int64
}

// Thumbnail is a stored thumbnail of blob Source at Width pixels.
type Thumbnail struct {
	Source string // the original's SHA-256
	Width  int    // requested width, the key
	SHA256 string // the thumbnail's own blob
	MIME   string
	Height int
}

// FileStore keeps uploaded files: content-addressed blobs (stored in
// chunks, deduplicated), file versions, and thumbnails. Files live in the
// database so that every node sees them and a SQLite wiki is one file to
// back up; Blob is the seam where an object store could go.
type FileStore interface {
	// PutBlob stores size bytes read from r under sha (their SHA-256,
	// lower-case hex, which the caller computed) unless a blob with that
	// hash is stored already: idempotent, and outside any page
	// transaction. A short read is an error and stores nothing.
	PutBlob(ctx context.Context, sha string, size int64, r io.Reader) error
	// OpenBlob returns blob sha; ErrNotFound when none is stored.
	OpenBlob(ctx context.Context, sha string) (Blob, error)

	// SaveFile records an upload (see UploadRequest) and returns the saved
	// page and version.
	SaveFile(ctx context.Context, req UploadRequest) (SaveResult, FileVersion, error)
	// CurrentFiles returns the latest visible (not Hidden) version of
	// each of titles that is a live (not deleted) File: page with one, in
	// one query: what a render shows.
	CurrentFiles(ctx context.Context, titles []Title) (map[Title]FileVersion, error)
	// FileVersions returns the versions of file t, newest first, whether
	// its page is deleted or not, hidden ones with Hidden set (the caller
	// decides who sees them).
	FileVersions(ctx context.Context, t Title) ([]FileVersion, error)
	// FindFileVersion returns the newest visible version of file t with
	// content sha, else its newest hidden one, and whether that is
	// deleted: t's page is, or the version is hidden. ErrNotFound when t
	// never had that content. It is what a media URL is checked against.
	FindFileVersion(ctx context.Context, t Title, sha string) (v FileVersion, deleted bool, err error)
	// FileUsage lists the live pages that show file t (their file rows,
	// LinkSet.Files), by title.
	FileUsage(ctx context.Context, t Title, q ListQuery) ([]Page, error)

	// FindThumbnail returns the stored thumbnail of blob source at width;
	// ErrNotFound when none was made.
	FindThumbnail(ctx context.Context, source string, width int) (Thumbnail, error)
	// SaveThumbnail records a thumbnail whose blob is stored: idempotent
	// (the first one saved for a source and width stays).
	SaveThumbnail(ctx context.Context, th Thumbnail) error
}

// ByteSize writes n bytes for people: "100 MiB", "3.2 KiB".
func ByteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
