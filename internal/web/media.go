package web

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// Media: a file's bytes at /media/SHA256/Name and its thumbnails at
// /media/SHA256/WIDTHpx-Name (wiki.OriginalURL, wiki.ThumbURL). The URL
// names the content, so the answer never changes: it is kept a year by
// browsers and caches ("immutable"), and the edge serves it as it serves
// pages. What may change is whether it may be seen: the answers carry
// the tag of wiki.FileMediaTitle, so that deleting the file's page purges
// them here, on the other nodes and in the caches in front. On a wiki anonymous readers may
// not read, they are private (and never shared), and refused to readers
// without the right.
//
// A thumbnail is made on its first request and stored (engine.Thumbnail).
// Standard widths (wiki.ThumbWidths) are made for anyone; other widths,
// which pages ask for exactly, are made at most thumbsPerMinute per
// client (one made already is served to anyone), so that no one can make
// the server compute every width of every file. Each width decodes the
// whole image: a thumbnail counts one per started megapixel of its image
// (a 25 megapixel photo, one to three seconds of CPU a width, counts 25).

// thumbsPerMinute bounds the thumbnails of non-standard widths one client
// has made (MediaWiki's renderfile-nonstandard rate limit), in thumbnails
// of images of up to a megapixel.
const thumbsPerMinute = 70

// maxThumbWidth bounds the widths thumbnails are made at.
const maxThumbWidth = 4096

// maxMediaInEdge bounds the files the edge keeps and Write sends from
// memory; larger ones are read in ranges from the store (WriteContent).
const maxMediaInEdge = 8 << 20

// mediaInEdge is the largest file sent from memory: maxMediaInEdge, or
// less when the edge keeps only smaller responses.
func (s *Server) mediaInEdge() int64 {
	if s.edge != nil {
		return min(maxMediaInEdge, s.edge.MaxEntry())
	}
	return maxMediaInEdge
}

var (
	shaPattern   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	thumbPattern = regexp.MustCompile(`^([1-9][0-9]{0,4})px-(.+)$`)
	mediaSpec    = &httpx.Spec{Name: "media"}
)

// mediaTarget is what a media URL names: a version of a file, and a
// thumbnail width (0: the original).
type mediaTarget struct {
	version wiki.FileVersion
	deleted bool
	width   int
}

// media serves a file's bytes or a thumbnail.
func (s *Server) media(w http.ResponseWriter, r *http.Request) {
	sha, name := r.PathValue("sha"), r.PathValue("name")
	httpx.SetRoute(r, "media")
	if s.mediaHit(w, r) {
		return
	}
	if !shaPattern.MatchString(sha) {
		s.writeError(w, r, wiki.Errorf(wiki.KindNotFound, "there is no file at this address: a file's address holds its SHA-256 in lower-case hex"))
		return
	}
	// Who may not read the wiki learns nothing of its files, not even
	// which exist.
	if err := s.requireRead(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	target, err := s.mediaTargetOf(r, sha, name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	path := wiki.OriginalURL(sha, target.version.Name())
	if target.width > 0 {
		path = wiki.ThumbURL(sha, target.version.Name(), target.width)
	}
	q, err := httpx.Parse(r, mediaSpec, path, s.titles)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// A range of a file is answered from the store, 206: the edge keeps
	// and sends whole answers. Several ranges in one request are answered
	// with the whole file (HTTP allows it): each range costs a read of
	// the chunks it covers, so thousands of tiny ranges would cost
	// thousands of reads. A file too large for the edge is answered from
	// the store too, conditional requests and HEAD included.
	if rg := r.Header.Get("Range"); strings.Contains(rg, ",") {
		r.Header.Del("Range")
	}
	o := routeOpts{noEdge: len(r.Header["Range"]) > 0 || target.version.Size > s.mediaInEdge()}
	s.serve(w, withTags(r, wiki.FileMediaTitle(target.version.Title)), q, o, func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return methodNotAllowed(w, "GET, HEAD")
		}
		if err := s.requireRead(r); err != nil {
			return err
		}
		if target.deleted && !viewerOf(r).Group().AtLeast(wiki.GroupAdmin) {
			return wiki.Errorf(wiki.KindNotFound, "this file was deleted")
		}
		return s.serveMedia(w, r, target)
	})
}

// mediaHit answers an anonymous GET or HEAD of a media URL from the edge,
// before the store is asked which file the URL names, when the edge holds
// an answer under the target as sent: what the front server does on the
// connections it serves, done for those it handed to net/http (after a
// miss or a logged-in request on them). serve stores a media answer only
// under the canonical target that produced it (q.AsSent: the request's
// target is the key), and only when it may be shared (q.Shared); purges
// of the file's tag (an upload, a deletion) remove it. A Range is answered
// from the store, as serve's caller decides.
func (s *Server) mediaHit(w http.ResponseWriter, r *http.Request) bool {
	if s.edge == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) ||
		len(r.Header["Range"]) > 0 || len(r.Header["Authorization"]) > 0 {
		return false
	}
	if _, refresh := r.Context().Value(refreshKey).(*refreshReq); refresh {
		return false
	}
	if viewerOf(r).LoggedIn || !s.canRead(Viewer{}) {
		return false
	}
	return s.edge.ServeStored(w, r, r.RequestURI, nil)
}

// mediaTargetOf finds the version a media URL names: name is the file's
// name, or WIDTHpx- and its thumbnail's name.
func (s *Server) mediaTargetOf(r *http.Request, sha, name string) (mediaTarget, error) {
	ctx := r.Context()
	find := func(n string, width int) (mediaTarget, bool, error) {
		t, err := s.titles.Parse("File:" + n)
		if err != nil || t.Namespace() != wiki.NSFile {
			return mediaTarget{}, false, nil
		}
		v, deleted, err := s.store.FindFileVersion(ctx, t, sha)
		if errors.Is(err, wiki.ErrNotFound) {
			return mediaTarget{}, false, nil
		}
		if err != nil {
			return mediaTarget{}, false, err
		}
		return mediaTarget{version: v, deleted: deleted, width: width}, true, nil
	}
	if m := thumbPattern.FindStringSubmatch(name); m != nil {
		width, _ := strconv.Atoi(m[1])
		// The thumbnail of a GIF or WebP is named with ".png" added.
		for _, n := range []string{m[2], strings.TrimSuffix(m[2], ".png")} {
			if wiki.ThumbName(n) != m[2] {
				continue
			}
			if tg, ok, err := find(n, width); err != nil || ok {
				return tg, err
			}
		}
	}
	if tg, ok, err := find(name, 0); err != nil || ok {
		return tg, err
	}
	return mediaTarget{}, wiki.Errorf(wiki.KindNotFound, "there is no such file: it may have been renamed, or the address is mistyped")
}

// serveMedia writes target's bytes.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request, target mediaTarget) error {
	v := target.version
	q := httpx.From(r)
	cache := httpx.Immutable
	if !q.Shared {
		cache = httpx.PrivateImmutable
	}
	if target.deleted {
		cache = httpx.NoStore // an administrator's look at a deleted file
	}
	resp := &httpx.Response{Cache: cache, Tags: tagsOf(r), Header: http.Header{}}
	if target.width > 0 {
		if target.width > maxThumbWidth {
			return wiki.Errorf(wiki.KindNotFound, "thumbnails are at most %d pixels wide", maxThumbWidth)
		}
		var mayMake func() error
		if !slices.Contains(wiki.ThumbWidths, target.width) {
			mayMake = func() error {
				cost := int((int64(v.Width)*int64(v.Height) + 999_999) / 1_000_000)
				if wait, ok := s.thumbs.allowN(clientKey(s.client(r).Addr), max(cost, 1)); !ok {
					return &wiki.Error{Kind: wiki.KindTooMany, RetryAfter: wait,
						Msg: "you have asked for many new thumbnails of unusual sizes in the last minute; wait a minute and try again"}
				}
				return nil
			}
		}
		th, data, err := s.eng.Thumbnail(r.Context(), v, target.width, mayMake)
		if err != nil {
			return err
		}
		resp.Type, resp.Body, resp.ETag = th.MIME, data, `"`+th.SHA256[:32]+`"`
		resp.Header.Set("Content-Disposition", "inline; filename*=UTF-8''"+escapeFilename(wiki.ThumbName(v.Name())))
		if len(r.Header["Range"]) > 0 {
			// A range bypassed the edge (media): answer it, as an
			// original's, rather than send the whole thumbnail uncached.
			httpx.WriteContent(w, r, resp, bytes.NewReader(data))
			return nil
		}
		httpx.Write(w, r, resp)
		return nil
	}
	resp.Type, resp.ETag = contentTypeOf(v.MIME), `"`+v.SHA256[:32]+`"`
	resp.Header.Set("Content-Disposition", dispositionOf(v))
	if v.MIME == "image/svg+xml" {
		// An SVG opened on its own is a document: no script, no plugin,
		// no form, nothing loaded from elsewhere.
		resp.Header.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'")
	}
	blob, err := s.store.OpenBlob(r.Context(), v.SHA256)
	if err != nil {
		return err
	}
	if len(r.Header["Range"]) > 0 || blob.Size() > s.mediaInEdge() {
		httpx.WriteContent(w, r, resp, io.NewSectionReader(blob, 0, blob.Size()))
		return nil
	}
	data := make([]byte, blob.Size())
	if _, err := blob.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	resp.Body = data
	httpx.Write(w, r, resp)
	return nil
}

// contentTypeOf is the Content-Type a file is served with: its sniffed
// type (text with its charset).
func contentTypeOf(mime string) string {
	if mime == "text/plain" {
		return "text/plain; charset=utf-8"
	}
	return mime
}

// inlineTypes are the types a browser shows without running anything of
// the file's: every other type is sent as an attachment (downloaded).
var inlineTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml", "application/pdf", "text/plain",
	"video/mp4", "video/webm", "audio/mpeg", "audio/ogg"}

// dispositionOf is the Content-Disposition of file version v.
func dispositionOf(v wiki.FileVersion) string {
	kind := "attachment"
	if slices.Contains(inlineTypes, v.MIME) {
		kind = "inline"
	}
	return kind + "; filename*=UTF-8''" + escapeFilename(v.Name())
}

// escapeFilename writes name for filename* (RFC 8187): every byte but
// unreserved ones percent-encoded.
func escapeFilename(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatInt(int64(c)|0x100, 16)[1:]))
	}
	return b.String()
}

// filePath answers Special:FilePath/Name, MediaWiki's address of a file
// by name: a redirect to its current version's bytes. It follows the
// file page (purged with it).
func (s *Server) filePath(w http.ResponseWriter, r *http.Request, arg string) error {
	if arg == "" {
		return wiki.Errorf(wiki.KindInvalid, "give a file name: Special:FilePath/Name.png")
	}
	t, err := s.titles.Parse("File:" + arg)
	if err != nil || t.Namespace() != wiki.NSFile {
		return wiki.Errorf(wiki.KindInvalid, "%q is not a file name", sanitizeLine(arg))
	}
	addTag(r, wiki.FileMediaTitle(t))
	files, err := s.store.CurrentFiles(r.Context(), []wiki.Title{t})
	if err != nil {
		return err
	}
	v, ok := files[t]
	if !ok {
		return wiki.Errorf(wiki.KindNotFound, "there is no file %q; upload it at Special:Upload", t.Name())
	}
	to := wiki.OriginalURL(v.SHA256, v.Name())
	httpx.Write(w, r, &httpx.Response{Status: http.StatusFound, Type: "text/plain; charset=utf-8", Body: []byte("Found: " + to + "\n"),
		Cache: httpx.Public, SMaxAge: s.cfg.SMaxAge, Tags: tagsOf(r), Header: http.Header{"Location": {to}}})
	return nil
}

// clientKey is the rate limits' key of a client address: an IPv6 client
// has its /64 (a host gets a whole one), an IPv4 client its address.
func clientKey(a netip.Addr) string {
	if a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
