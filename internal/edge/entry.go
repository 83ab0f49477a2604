package edge

import (
	"bytes"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
)

// Field is one precomputed response header. Value is shared by every response
// that serves the entry: assign it into an http.Header, never modify it. Its
// capacity equals its length, so Header.Add copies instead of writing into it.
type Field struct {
	Key   string
	Value []string
}

// Variant is one stored representation of an entry: identity, gzip or brotli.
// It is immutable once stored. The fields are exported for a server that writes
// responses without net/http; everything in it is read-only.
type Variant struct {
	Encoding Encoding
	Status   int
	Body     []byte
	// Header is every header of a full response except Date, X-Cache and
	// Server-Timing, which depend on the time of serving: Content-Type,
	// Content-Length, Content-Encoding, Vary, the validators (the ETag is the
	// variant's own), Cache-Control and the handler's other safe headers. There
	// is no Age: this cache is part of the origin, its entries are fresh until
	// purged, and a cache in front must not count their time here against
	// s-maxage.
	Header []Field
	// NotModified is the header set of a 304 answer to a conditional request.
	NotModified []Field
	// Wire and WireNotModified are Header and NotModified rendered as
	// "Name: value\r\n" lines, for a server that writes the response head itself.
	Wire, WireNotModified []byte

	etag string // VariantETag of the handler's ETag
	e    *entry

	blob   atomic.Pointer[Blob] // the body in the arena, once copied there
	noBlob atomic.Bool          // copying failed: do not try again
}

// ETag returns the variant's entity tag, or "".
func (v *Variant) ETag() string { return v.etag }

// BaseETag returns the entity tag the handler gave the identity
// representation, or "".
func (v *Variant) BaseETag() string { return v.e.etag }

// Note returns the Directive.Note the handler stored with the entry.
func (v *Variant) Note() string { return v.e.note }

// LastModified returns the entry's Last-Modified header value, or "".
func (v *Variant) LastModified() string { return v.e.lastModStr }

// LastModifiedTime returns the entry's Last-Modified time, or the zero
// time when it has none or it does not parse.
func (v *Variant) LastModifiedTime() time.Time { return v.e.lastMod }

// StoredAt returns when the entry was stored.
func (v *Variant) StoredAt() time.Time { return time.Unix(0, v.e.stored) }

// IsNotModified reports whether a request with these If-None-Match and
// If-Modified-Since header values gets a 304 for this entry.
func (v *Variant) IsNotModified(ifNoneMatch, ifModifiedSince string) bool {
	return v.notModified(ifNoneMatch, ifModifiedSince)
}

// entry is one stored response with all its variants. Fields other than freq
// and the queue links are immutable after build.
type entry struct {
	key        string
	hash       uint64
	tags       []string
	note       string
	status     int
	variants   [numEncodings]*Variant
	etag       string
	lastMod    time.Time // zero when absent or unparsable
	lastModStr string
	stored     int64        // unix nanoseconds
	expires    atomic.Int64 // unix nanoseconds; Stale brings it closer
	size       int64
	seq        uint64 // the purge sequence when its render started

	freq atomic.Int32 // S3-FIFO access count, saturating at maxFreq

	arena *arena      // where large bodies go for sendfile; nil for none
	gone  atomic.Bool // left the cache: its arena copies are released

	// Guarded by the shard lock.
	prev, next *entry
	inMain     bool
	linked     bool
}

// variant picks the best stored variant the client accepts.
func (e *entry) variant(acc Accepted) *Variant {
	if acc&AcceptBrotli != 0 && e.variants[Brotli] != nil {
		return e.variants[Brotli]
	}
	if acc&AcceptGzip != 0 && e.variants[Gzip] != nil {
		return e.variants[Gzip]
	}
	return e.variants[Identity]
}

// Compression policy. Both variants are made when an entry is stored, so
// that a hit costs no compression; a miss pays for them: gzip about 7 to
// 20 µs a kilobyte, brotli about 70, most of a search's miss after the
// search itself. A body over largeBody (an old revision's raw text, a diff
// of long pages: each its own key, so that a client cycling through them
// misses every time) is compressed at the fastest levels instead, about
// 30 ms a megabyte, for a fifth more bytes. An entry that serves few hits
// for its compression (Directive.Seldom: a listing that lives seconds, a
// search's results) has no brotli variant, and brotli clients get gzip:
// on a 9 KB search page brotli took ten times gzip's time for 5% fewer
// bytes.
const (
	minCompressSize = 1024
	gzipLevel       = gzip.DefaultCompression
	brotliLevel     = 6
	largeBody       = 256 << 10
	largeGzipLevel  = gzip.BestSpeed
	largeBrotli     = 1
	entryOverhead   = 512 // structs, map slot, queue links: a rough fixed cost
)

// droppedHeaders are never stored: hop-by-hop headers, headers the edge
// computes itself, and per-render diagnostics.
var droppedHeaders = map[string]bool{
	"Connection":          true,
	"Keep-Alive":          true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Proxy-Connection":    true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
	"Content-Length":      true,
	"Content-Encoding":    true,
	"Date":                true,
	"Age":                 true,
	"Vary":                true,
	"X-Cache":             true,
	"Server-Timing":       true,
	"Set-Cookie":          true,
	"Etag":                true, // set per variant
}

// notModifiedDropped are the fields of a full response left out of a 304:
// those that describe the body that is not sent. Everything else is kept
// (RFC 9110 section 15.4.5 requires the validators, Cache-Control and Vary;
// the security fields keep their meaning for a cache that updates its stored
// header from the 304), as the response builder does.
var notModifiedDropped = map[string]bool{
	"Content-Length":   true,
	"Content-Encoding": true,
	"Content-Type":     true,
}

// storable reports whether a response with this status and header may be
// stored at all, whatever the handler asked.
func storable(status int, h http.Header) bool {
	switch status {
	case http.StatusOK, http.StatusMovedPermanently, http.StatusPermanentRedirect,
		http.StatusNotFound, http.StatusGone:
	default:
		return false
	}
	if len(h["Set-Cookie"]) > 0 {
		return false // a response that sets a cookie is never shared
	}
	if len(h["Content-Encoding"]) > 0 {
		return false // the edge compresses; handlers behind it must not
	}
	for _, v := range h["Cache-Control"] {
		for d := range strings.SplitSeq(v, ",") {
			d = strings.TrimSpace(d)
			if i := strings.IndexAny(d, "=\t "); i >= 0 {
				d = d[:i]
			}
			if strings.EqualFold(d, "private") || strings.EqualFold(d, "no-store") {
				return false
			}
		}
	}
	for _, v := range h["Vary"] {
		for f := range strings.SplitSeq(v, ",") {
			f = strings.TrimSpace(f)
			// The edge varies only on the encoding (a variant) and the
			// session bit (decided by the caller, who sends only anonymous
			// requests here); anything else cannot be honoured.
			if f != "" && !strings.EqualFold(f, "Accept-Encoding") && !strings.EqualFold(f, "Cookie") {
				return false
			}
		}
	}
	return true
}

// compressible reports whether a body of this type is worth compressing.
func compressible(contentType string) bool {
	ct, _, _ := strings.Cut(contentType, ";")
	ct = strings.ToLower(strings.TrimSpace(ct))
	switch {
	case strings.HasPrefix(ct, "text/"),
		strings.HasSuffix(ct, "+xml"), strings.HasSuffix(ct, "+json"),
		strings.HasSuffix(ct, "/xml"), strings.HasSuffix(ct, "/json"),
		strings.HasSuffix(ct, "javascript"), ct == "application/wasm",
		ct == "image/svg+xml", ct == "image/x-icon", strings.HasPrefix(ct, "font/"):
		return true
	}
	return false
}

// buildEntry turns a recorded response into an entry with all its variants.
// It compresses the body once per encoding; this is the expensive part of a
// miss after the render itself.
func buildEntry(key string, hash uint64, status int, h http.Header, body []byte, d *Directive, stored, expires int64) *entry {
	e := &entry{key: key, hash: hash, status: status, note: d.Note, stored: stored}
	e.expires.Store(expires)
	e.tags = append([]string(nil), d.Tags...)
	if len(h["Content-Type"]) == 0 && len(body) > 0 {
		h["Content-Type"] = []string{http.DetectContentType(body)}
	}
	e.etag = h.Get("Etag")
	e.lastModStr = h.Get("Last-Modified")
	if t, err := http.ParseTime(e.lastModStr); err == nil {
		e.lastMod = t
	}

	// The handler's safe headers, canonical names, copied so that nothing the
	// handler keeps a reference to is shared with stored entries.
	var base []Field
	for k, vs := range h {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if droppedHeaders[ck] || len(vs) == 0 || strings.HasPrefix(ck, "X-Edge-") {
			continue
		}
		base = append(base, Field{ck, cloneValues(vs)})
	}
	vary := varyValue(h["Vary"])

	bodies := [numEncodings][]byte{Identity: body}
	if len(body) >= minCompressSize && compressible(h.Get("Content-Type")) {
		if z := gzipBytes(body); len(z) < len(body) {
			bodies[Gzip] = z
		}
		if !d.Seldom {
			if z := brotliBytes(body); len(z) < len(body) {
				bodies[Brotli] = z
			}
		}
	}
	e.size = entryOverhead + int64(len(key)+len(d.Note))
	for _, t := range d.Tags {
		e.size += int64(len(t)) + 16
	}
	for enc, b := range bodies {
		if b == nil && Encoding(enc) != Identity {
			continue
		}
		v := &Variant{Encoding: Encoding(enc), Status: status, Body: b, etag: VariantETag(e.etag, Encoding(enc)), e: e}
		hdr := make([]Field, 0, len(base)+4)
		hdr = append(hdr, base...)
		if v.etag != "" {
			hdr = append(hdr, Field{"Etag", []string{v.etag}})
		}
		hdr = append(hdr, Field{"Content-Length", []string{strconv.Itoa(len(b))}})
		if enc != int(Identity) {
			hdr = append(hdr, Field{"Content-Encoding", []string{Encoding(enc).String()}})
		}
		hdr = append(hdr, Field{"Vary", vary})
		v.Header = hdr[:len(hdr):len(hdr)]
		for _, f := range hdr {
			if !notModifiedDropped[f.Key] {
				v.NotModified = append(v.NotModified, f)
			}
		}
		v.NotModified = v.NotModified[:len(v.NotModified):len(v.NotModified)]
		v.Wire = wire(v.Header)
		v.WireNotModified = wire(v.NotModified)
		e.variants[enc] = v
		e.size += int64(len(b)+len(v.Wire)+len(v.WireNotModified)) + 48*int64(len(v.Header)+len(v.NotModified))
	}
	return e
}

func cloneValues(vs []string) []string {
	out := make([]string, len(vs))
	copy(out, vs)
	return out
}

// varyValue is the handler's Vary with Accept-Encoding in it (appended
// when the handler did not name it), so that a stored response varies as the
// handler's own answer does.
func varyValue(vs []string) []string {
	var parts []string
	hasAE := false
	for _, v := range vs {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				parts = append(parts, f)
				hasAE = hasAE || strings.EqualFold(f, "Accept-Encoding")
			}
		}
	}
	if !hasAE {
		parts = append(parts, "Accept-Encoding")
	}
	return []string{strings.Join(parts, ", ")}
}

func wire(fs []Field) []byte {
	var b bytes.Buffer
	for _, f := range fs {
		for _, v := range f.Value {
			b.WriteString(f.Key)
			b.WriteString(": ")
			b.WriteString(headerValueReplacer.Replace(v))
			b.WriteString("\r\n")
		}
	}
	return b.Bytes()
}

// headerValueReplacer strips line breaks from header values, as net/http does.
var headerValueReplacer = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")

var gzipPool, largeGzipPool = gzipWriters(gzipLevel), gzipWriters(largeGzipLevel)

// gzipWriters pools gzip writers of a level (a valid constant: no error).
func gzipWriters(level int) *sync.Pool {
	return &sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, level)
		return w
	}}
}

// GzipBytes compresses b as the stored gzip variants are: the same bytes for
// the same input, so that a gzip response made outside the cache matches the
// variant's validator.
func GzipBytes(b []byte) []byte { return gzipBytes(b) }

func gzipBytes(b []byte) []byte {
	pool := gzipPool
	if len(b) > largeBody {
		pool = largeGzipPool
	}
	var buf bytes.Buffer
	buf.Grow(len(b) / 3)
	w := pool.Get().(*gzip.Writer)
	w.Reset(&buf)
	w.Write(b)
	w.Close()
	pool.Put(w)
	return bytes.Clone(buf.Bytes())
}

var (
	brotliPool      = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, brotliLevel) }}
	largeBrotliPool = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, largeBrotli) }}
)

func brotliBytes(b []byte) []byte {
	pool := &brotliPool
	if len(b) > largeBody {
		pool = &largeBrotliPool
	}
	var buf bytes.Buffer
	buf.Grow(len(b) / 3)
	w := pool.Get().(*brotli.Writer)
	w.Reset(&buf)
	w.Write(b)
	w.Close()
	pool.Put(w)
	return bytes.Clone(buf.Bytes())
}
