package purge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wikid/wikid/internal/wiki"
)

// purgeLog is a cache in front that records the purge requests it gets.
type purgeLog struct {
	mu     sync.Mutex
	status int
	reqs   []*http.Request
	keys   []string // X-Purge-Keys of each request
}

func newPurgeLog(t *testing.T, status int) (*purgeLog, *httptest.Server) {
	t.Helper()
	p := &purgeLog{status: status}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.reqs = append(p.reqs, r)
		p.keys = append(p.keys, r.Header.Get("X-Purge-Keys"))
		p.mu.Unlock()
		w.WriteHeader(p.status)
		io.WriteString(w, http.StatusText(p.status))
	}))
	t.Cleanup(srv.Close)
	return p, srv
}

// get returns the requests and their keys so far.
func (p *purgeLog) get() ([]*http.Request, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs), slices.Clone(p.keys)
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// counter reads a counter (of label result, when given) from reg.
func counter(t *testing.T, reg *prometheus.Registry, name, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if result == "" || (len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == result) {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no metric %s{result=%q}", name, result)
	return 0
}

func TestCDNSendsOnePurgeRequestWithTheSurrogateKeys(t *testing.T) {
	p, srv := newPurgeLog(t, http.StatusOK)
	reg := prometheus.NewRegistry()
	c := NewCDN([]string{srv.URL}, nil, reg, quietLog())
	titles := []wiki.Title{wiki.MustTitle("Main Page"), wiki.MustTitle("Ünïcode/Sub page")}
	if err := c.PurgeExternal(context.Background(), titles...); err != nil {
		t.Fatal(err)
	}
	reqs, keys := p.get()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "PURGE" || r.URL.Path != "/" || r.URL.RawQuery != "" {
		t.Errorf("request %s %s, want PURGE /", r.Method, r.URL)
	}
	if want := SurrogateKeys(Tags(titles...)); keys[0] != want {
		t.Errorf("X-Purge-Keys %q, want %q", keys[0], want)
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}( [0-9a-f]{16})*$`).MatchString(keys[0]) {
		t.Errorf("X-Purge-Keys %q is not space-separated keys of 16 hex digits", keys[0])
	}
	if n := counter(t, reg, "wikid_cdn_purge_requests_total", "ok"); n != 1 {
		t.Errorf("ok requests = %v, want 1", n)
	}
	if n := counter(t, reg, "wikid_cdn_purged_keys_total", ""); n != 3 {
		t.Errorf("purged keys = %v, want 3 (two titles and the listings)", n)
	}
}

func TestCDNSplitsLargePurgesIntoBatches(t *testing.T) {
	p, srv := newPurgeLog(t, http.StatusOK)
	c := NewCDN([]string{srv.URL + "/"}, nil, nil, quietLog()) // a trailing slash is not doubled
	var tags []string
	for i := range 2*MaxKeysPerRequest + 50 {
		tags = append(tags, fmt.Sprintf("Page %d", i))
	}
	tags = append(tags, "Page 7", "Page 7") // duplicates are sent once
	if err := c.PurgeTags(context.Background(), tags...); err != nil {
		t.Fatal(err)
	}
	reqs, keys := p.get()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	var got []string
	for i, h := range keys {
		if reqs[i].URL.Path != "/" {
			t.Errorf("request %d to %q, want /", i, reqs[i].URL.Path)
		}
		ks := strings.Split(h, " ")
		if len(ks) > MaxKeysPerRequest {
			t.Errorf("request %d carries %d keys, want at most %d", i, len(ks), MaxKeysPerRequest)
		}
		if len(h) > 4<<10 {
			t.Errorf("request %d: X-Purge-Keys is %d bytes; Varnish refuses headers over 8 KB", i, len(h))
		}
		got = append(got, ks...)
	}
	want := strings.Split(SurrogateKeys(tags[:2*MaxKeysPerRequest+50]), " ")
	if !slices.Equal(got, want) {
		t.Errorf("keys sent differ from the tags' keys: %d sent, %d wanted", len(got), len(want))
	}
	if err := c.PurgeTags(context.Background()); err != nil {
		t.Errorf("purging no tags: %v", err)
	}
	if reqs, _ := p.get(); len(reqs) != 3 {
		t.Errorf("purging no tags sent %d requests, want none", len(reqs)-3)
	}
}

func TestCDNFailsUnlessEveryCacheAnswers2xx(t *testing.T) {
	_, ok := newPurgeLog(t, http.StatusOK)
	_, refused := newPurgeLog(t, http.StatusForbidden)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // connection refused
	reg := prometheus.NewRegistry()
	c := NewCDN([]string{ok.URL, refused.URL, gone.URL}, nil, reg, quietLog())
	err := c.PurgeExternal(context.Background(), wiki.MustTitle("Foo"))
	if err == nil {
		t.Fatal("no error when one cache refused the purge and another was down")
	}
	msg := err.Error()
	if !strings.Contains(msg, refused.URL+"/") || !strings.Contains(msg, "403") {
		t.Errorf("error %q does not name the cache that answered 403", msg)
	}
	if !strings.Contains(msg, gone.URL+"/") {
		t.Errorf("error %q does not name the cache that was down", msg)
	}
	if strings.Contains(msg, ok.URL+"/ ") {
		t.Errorf("error %q names the cache that purged", msg)
	}
	if n := counter(t, reg, "wikid_cdn_purge_requests_total", "error"); n != 2 {
		t.Errorf("error requests = %v, want 2", n)
	}
	if n := counter(t, reg, "wikid_cdn_purge_requests_total", "ok"); n != 1 {
		t.Errorf("ok requests = %v, want 1", n)
	}
}

func TestCDNStopsAtTheContextDeadline(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(block); srv.Close() })
	c := NewCDN([]string{srv.URL}, nil, nil, quietLog())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.PurgeTags(ctx, "Foo"); err == nil {
		t.Fatal("a cancelled purge reported success")
	}
}
