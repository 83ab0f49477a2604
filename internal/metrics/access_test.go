package metrics

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// writes records each Write call.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

func (w *writes) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

func TestAccessLogBatches(t *testing.T) {
	var out writes
	a := NewAccessLog(&out, 1000)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 100 {
		a.Log(Entry{Time: at.Add(time.Duration(i) * time.Microsecond), Method: "GET", Path: "/wiki/Page_" + string(rune('A'+i%26)), Status: 200, Bytes: 1234,
			Duration: 1500 * time.Microsecond, Cache: "hit", Remote: "127.0.0.1:5555"})
	}
	// The batch is written after AccessBatchDelay, in one call (a few
	// if this goroutine was held up for longer than that midway).
	lines := func() []string {
		return strings.Split(strings.TrimSuffix(strings.Join(out.get(), ""), "\n"), "\n")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(lines()) < 100 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := len(out.get()); n > 3 {
		t.Fatalf("%d writes for 100 entries logged together, want 1", n)
	}
	if n := len(lines()); n != 100 {
		t.Fatalf("%d lines, want 100", n)
	}
	writes := len(out.get())
	want := `time=2026-01-02T03:04:05.000Z level=INFO msg=access method=GET path=/wiki/Page_A status=200 bytes=1234 dur=1.500ms cache=hit remote=127.0.0.1:5555`
	if got := lines()[0]; got != want {
		t.Fatalf("line = %s\nwant   %s", got, want)
	}
	for i, l := range lines() {
		if w := "path=/wiki/Page_" + string(rune('A'+i%26)) + " "; !strings.Contains(l, w) {
			t.Fatalf("line %d out of order: %s", i, l)
		}
	}
	// Entries after the first batch make the next one; Close writes
	// what is held at once.
	a.Log(Entry{Time: at, Method: "HEAD", Path: "/", Status: 304})
	a.Close()
	if calls := out.get(); len(calls) != writes+1 || !strings.Contains(calls[writes], "method=HEAD") {
		t.Fatalf("after Close: %q", calls)
	}
	a.Log(Entry{Method: "GET"})
	if a.Dropped() != 1 {
		t.Fatalf("an entry after Close: dropped = %d, want 1", a.Dropped())
	}
}

func TestAccessLogDropsWhenFull(t *testing.T) {
	var out writes
	a := NewAccessLog(&out, 80) // 10 in each buffer
	for range 250 {
		a.Log(Entry{Method: "GET", Path: "/"})
	}
	a.Close()
	n := 0
	for _, c := range out.get() {
		n += strings.Count(c, "\n")
	}
	if n != 80 || a.Dropped() != 170 {
		t.Fatalf("wrote %d lines and dropped %d of 250 with room for 80", n, a.Dropped())
	}
}
