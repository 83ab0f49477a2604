package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/wikid/wikid/internal/search"
	"github.com/wikid/wikid/internal/wiki"
)

// The Skips kept stay within skipsCacheBytes however many lists ask,
// go with their segments, and only phrases' lists get them.
func TestSegcacheSkips(t *testing.T) {
	var c segcache
	first := c.listSkips(1, "a", 100_000)
	if c.listSkips(1, "a", 100_000) != first {
		t.Fatal("the same list got two Skips")
	}
	for i := range 1000 {
		c.listSkips(int64(2+i%3), fmt.Sprint("k", i), 100_000)
		if c.skipBytes > skipsCacheBytes {
			t.Fatalf("after %d lists, %d bytes of Skips", i+1, c.skipBytes)
		}
	}
	sum := 0
	for _, e := range c.skips {
		sum += e.bytes
	}
	if sum != c.skipBytes || len(c.skips) > skipsCacheBytes/search.SkipsBytes(100_000) {
		t.Fatalf("%d entries of %d bytes, counted %d", len(c.skips), sum, c.skipBytes)
	}
	c.segs = map[int64]*segment{2: {}, 3: {}, 4: {}}
	c.keepOnly([]segmentInfo{{id: 3}})
	for k := range c.skips {
		if k.seg != 3 {
			t.Fatalf("segment %d's Skips kept after it went", k.seg)
		}
	}

	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var reqs []wiki.SaveRequest
	for i := range 2 * search.SkipsMin {
		text := fmt.Sprintf("red blue page%d", i)
		reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %04d", i)), Text: text, SearchText: text, UserName: "U"})
	}
	if _, err := db.ImportPages(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		db.segcache.mu.Lock()
		defer db.segcache.mu.Unlock()
		return len(db.segcache.skips)
	}
	for _, q := range []struct {
		text string
		want int
	}{{"red blue", 0}, {`"red blue"`, 2}} {
		if _, err := db.Search(ctx, wiki.SearchQuery{Text: q.text, Limit: 5}); err != nil {
			t.Fatal(err)
		}
		if got := count(); got != q.want {
			t.Fatalf("after %s: %d lists with Skips, want %d", q.text, got, q.want)
		}
	}
}
