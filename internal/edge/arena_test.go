//go:build linux

package edge

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// readBlob reads a blob's bytes from the arena as sendfile would.
func readBlob(t *testing.T, b *Blob) string {
	t.Helper()
	buf := make([]byte, b.Len())
	if n, err := unix.Pread(b.FD(), buf, b.Offset()); err != nil || int64(n) != b.Len() {
		t.Fatalf("pread: %d, %v", n, err)
	}
	return string(buf)
}

func TestArenaBlobOutlivesItsEntryWhileAcquired(t *testing.T) {
	c := newCache(t, Config{})
	p := newPage()
	p.body = strings.Repeat("x", DefaultArenaMin) + "first"
	get(t, c, p, "GET", "/big")

	v, ok := c.Lookup("/big", 0)
	if !ok {
		t.Fatal("not stored")
	}
	b := v.AcquireFile()
	if b == nil {
		t.Fatal("no arena copy of a body at the threshold")
	}
	if again := v.AcquireFile(); again != b {
		t.Fatal("a second request copied the body again")
	} else {
		again.Release()
	}
	if got := readBlob(t, b); got != p.body {
		t.Fatal("arena bytes differ from the body")
	}
	held := c.Stats().ArenaBytes

	c.Purge("Main Page")
	if v.AcquireFile() != nil {
		t.Fatal("a purged entry handed out its arena copy")
	}
	p.body = strings.Repeat("y", DefaultArenaMin) + "second"
	get(t, c, p, "GET", "/big")
	v2, _ := c.Lookup("/big", 0)
	b2 := v2.AcquireFile()
	if b2 == nil || b2.Offset() == b.Offset() {
		t.Fatal("the new body did not get a region of its own")
	}
	if got := readBlob(t, b); got != strings.Repeat("x", DefaultArenaMin)+"first" {
		t.Fatal("the old body changed while a send held it")
	}
	if c.Stats().ArenaBytes <= held {
		t.Fatal("the old body's region was freed while held")
	}
	b.Release()
	b2.Release()
	if got, want := c.Stats().ArenaBytes, pageRound(int64(len(p.body))); got != want {
		t.Fatalf("arena holds %d bytes after the old body was released, want %d", got, want)
	}
	c.PurgeAll()
	if got := c.Stats().ArenaBytes; got != 0 {
		t.Fatalf("arena holds %d bytes after PurgeAll", got)
	}
	// The memory itself goes back to the system: the file keeps no blocks.
	var st unix.Stat_t
	if err := unix.Fstat(b.FD(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks != 0 {
		t.Fatalf("the arena file still has %d blocks after every body was released", st.Blocks)
	}
}

func TestArenaSkipsSmallBodiesAndCanBeOff(t *testing.T) {
	c := newCache(t, Config{})
	get(t, c, newPage(), "GET", "/small")
	v, _ := c.Lookup("/small", 0)
	if v.AcquireFile() != nil {
		t.Fatal("a small body went to the arena")
	}
	off := newCache(t, Config{ArenaMin: -1})
	p := newPage()
	p.body = strings.Repeat("x", 1<<20)
	get(t, off, p, "GET", "/big")
	v, _ = off.Lookup("/big", 0)
	if v.AcquireFile() != nil {
		t.Fatal("ArenaMin -1 still used the arena")
	}
}
