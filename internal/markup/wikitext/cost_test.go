package wikitext

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/render"
)

// maxPage is the largest page the wiki stores (max_page_bytes).
const maxPage = 2 << 20

// fillPage repeats unit up to the largest page.
func fillPage(unit string) string { return strings.Repeat(unit, maxPage/len(unit)) }

// TestFollowNotesLinear: text that follows another note is added to it; many
// of them must cost linear memory, not a copy of the note per follower.
func TestFollowNotesLinear(t *testing.T) {
	src := "<ref name=a>x</ref>" + strings.Repeat("<ref follow=a>y</ref>", 40000)
	r := New(WithTimeout(30 * time.Second))
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	res := mustRender(t, r, src, render.Options{})
	runtime.ReadMemStats(&m1)
	if res.TimedOut {
		t.Fatal("timed out")
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 200*uint64(len(src))+64<<20 {
		t.Errorf("%d MB allocated for %d bytes of source", alloc>>20, len(src))
	}
}
