package edge

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// discardWriter is a ResponseWriter that reuses its header map, so that a
// benchmark measures the cache and not net/http's per-response map.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
func (w *discardWriter) reset()                      { clear(w.h); w.status, w.n = 0, 0 }

func warm(b *testing.B, c *Cache, target string) {
	b.Helper()
	get(b, c, newPage(), "GET", target)
	if c.Stats().Entries == 0 {
		b.Fatal("not stored")
	}
}

// BenchmarkHit measures Key plus Serve on a hit, in parallel, for the three
// encodings and a 304.
func BenchmarkHit(b *testing.B) {
	for _, bc := range []struct {
		name string
		hdr  []string
	}{
		{"identity", nil},
		{"gzip", []string{"Accept-Encoding", "gzip, deflate"}},
		{"br", []string{"Accept-Encoding", "gzip, deflate, br, zstd"}},
		{"304", []string{"Accept-Encoding", "gzip, deflate, br", "If-None-Match", pageETag}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := New(Config{})
			warm(b, c, "/wiki/Main_Page")
			next := newPage()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := httptest.NewRequest("GET", "/wiki/Main_Page", nil)
				for i := 0; i+1 < len(bc.hdr); i += 2 {
					r.Header.Set(bc.hdr[i], bc.hdr[i+1])
				}
				w := &discardWriter{h: make(http.Header)}
				for pb.Next() {
					w.reset()
					key := r.URL.RequestURI()
					c.Serve(w, r, key, next)
				}
			})
			if next.renders.Load() != 0 {
				b.Fatal("a hit rendered")
			}
		})
	}
}

// BenchmarkHitFreshHeader is BenchmarkHit/br with a new header map per
// response, as net/http does: the allocations it adds are net/http's.
func BenchmarkHitFreshHeader(b *testing.B) {
	c := New(Config{})
	warm(b, c, "/wiki/Main_Page")
	next := newPage()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest("GET", "/wiki/Main_Page", nil)
		r.Header.Set("Accept-Encoding", "gzip, deflate, br")
		w := &discardWriter{}
		for pb.Next() {
			w.h = make(http.Header)
			key := r.URL.RequestURI()
			c.Serve(w, r, key, next)
		}
	})
}

// BenchmarkHitManyKeys spreads hits over 10,000 keys, so that shards and
// cache lines are shared the way they are under real traffic.
func BenchmarkHitManyKeys(b *testing.B) {
	c, reqs := manyKeys()
	next := newPage()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := &discardWriter{h: make(http.Header)}
		i := 0
		for pb.Next() {
			i = (i + 7919) % len(reqs)
			w.reset()
			r := reqs[i]
			key := r.URL.RequestURI()
			c.Serve(w, r, key, next)
		}
	})
	if next.renders.Load() != 0 {
		b.Fatal("a hit rendered")
	}
}

// manyKeys builds, once, a cache holding 2,000 pages and requests for them.
var manyKeys = sync.OnceValues(func() (*Cache, []*http.Request) {
	c := New(Config{})
	const n = 2000
	reqs := make([]*http.Request, n)
	p := newPage()
	for i := range reqs {
		target := "/wiki/Page_" + strconv.Itoa(i)
		r := httptest.NewRequest("GET", target, nil)
		c.Serve(&discardWriter{h: make(http.Header)}, r, target, p)
		r.Header.Set("Accept-Encoding", "gzip, br")
		reqs[i] = r
	}
	return c, reqs
})

// BenchmarkLookup is the accessor a server without net/http would use.
func BenchmarkLookup(b *testing.B) {
	c := New(Config{})
	warm(b, c, "/wiki/Main_Page")
	acc := ParseAcceptEncoding("gzip, deflate, br")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := c.Lookup("/wiki/Main_Page", acc); !ok {
				b.Fatal("miss")
			}
		}
	})
}

// BenchmarkFill is a miss: render (a constant body), record, compress twice, store.
func BenchmarkFill(b *testing.B) {
	c := New(Config{})
	next := newPage()
	r := httptest.NewRequest("GET", "/wiki/Main_Page", nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(pageBody)))
	for b.Loop() {
		c.PurgeKey("/wiki/Main_Page")
		w := &discardWriter{h: make(http.Header)}
		c.Serve(w, r, "/wiki/Main_Page", next)
	}
}
