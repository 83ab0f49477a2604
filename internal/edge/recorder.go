package edge

import (
	"bytes"
	"net/http"
	"time"
)

// Directive is what a handler tells the edge about its response: store it, with
// these tags, for this long.
type Directive struct {
	// Tags name what the response depends on, e.g. the page title; Purge(tag)
	// removes every entry carrying it.
	Tags []string
	// TTL bounds how long the entry is served; zero means Config.DefaultTTL.
	// Pages are purged on edit and may live long; lists such as RecentChanges
	// should use a few seconds.
	TTL time.Duration
	// Note is kept with the entry for the caller (Variant.Note); the edge
	// does not read it.
	Note string
	// Seldom: the entry serves few hits for its compression, because it
	// lives seconds (a listing, a feed) or few readers ask for it (a
	// search's results): it has no brotli variant, the slowest to make.
	Seldom bool
}

// Mark asks the edge cache to store the response being written to w. Call it
// before WriteHeader or the first Write; the response is stored only if it is
// also storable (status 200, 301, 308, 404 or 410; no Set-Cookie; no
// Content-Encoding; Cache-Control neither private nor no-store; Vary on nothing
// but Accept-Encoding and Cookie). It finds the edge's writer through
// wrappers that implement Unwrap() http.ResponseWriter, and reports false when
// w is not being recorded by the edge (the request bypassed the cache) or the
// header was already written.
func Mark(w http.ResponseWriter, d Directive) bool {
	for {
		if rec, ok := w.(*recorder); ok {
			return rec.mark(d)
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// recorder is the ResponseWriter a fill writes to. It buffers a marked,
// storable response; anything else goes straight through to the client, and so
// does a response that outgrows the largest storable entry.
type recorder struct {
	w      http.ResponseWriter
	header http.Header
	head   bool // the client's request is HEAD: pass-through writes no body
	limit  int

	dir         *Directive
	status      int
	wroteHeader bool
	passing     bool // streaming to w; the response will not be stored
	buf         bytes.Buffer
}

func (r *recorder) mark(d Directive) bool {
	if r.wroteHeader {
		return false
	}
	r.dir = &d
	return true
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.wroteHeader {
		return
	}
	if code < 200 {
		return // informational responses are dropped; the final one decides
	}
	r.wroteHeader = true
	r.status = code
	if r.dir == nil || !storable(code, r.header) {
		r.passThrough()
	}
}

// passThrough starts streaming the response to the client.
func (r *recorder) passThrough() {
	r.passing = true
	h := r.w.Header()
	for k, v := range r.header {
		h[k] = v
	}
	h["X-Cache"] = xCacheMiss
	r.header = h
	r.w.WriteHeader(r.status)
	if r.buf.Len() > 0 && !r.head {
		r.w.Write(r.buf.Bytes())
	}
	r.buf = bytes.Buffer{}
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.wroteHeader {
		if len(r.header["Content-Type"]) == 0 && len(p) > 0 {
			r.header["Content-Type"] = []string{http.DetectContentType(p)}
		}
		r.WriteHeader(http.StatusOK)
	}
	if r.passing {
		if r.head {
			return len(p), nil
		}
		return r.w.Write(p)
	}
	if r.buf.Len()+len(p) > r.limit {
		r.passThrough()
		if r.head {
			return len(p), nil
		}
		return r.w.Write(p)
	}
	return r.buf.Write(p)
}

// Flush is a no-op while the response is buffered for storing.
func (r *recorder) Flush() {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if r.passing {
		http.NewResponseController(r.w).Flush()
	}
}

// Unwrap lets http.ResponseController reach the client's writer, for
// deadlines; Flush is answered by the recorder itself.
func (r *recorder) Unwrap() http.ResponseWriter { return r.w }

// storing reports whether the recorded response is to be stored.
func (r *recorder) storing() bool {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	return !r.passing
}
