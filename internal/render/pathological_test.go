package render

import (
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/render/pathological"
	"github.com/wikid/wikid/internal/wiki"
)

// The bounds every pathological shape must keep. On this project's 2-core
// machines the slowest shapes take about 1.5 s of CPU at the page limit
// (2 MiB), the most allocating about 600 bytes per byte of source and the
// most memory-hungry hold about 400 bytes per byte at their peak; the
// bounds leave room for slower machines. The race detector makes rendering
// 5–10 times slower (the heap held does not change).
const (
	pageLimit       = pathological.PageLimit
	cpuBound        = 5 * time.Second
	raceCPUBound    = 8 * cpuBound
	allocPerByte    = 1024 // bytes allocated per byte of source, at most
	peakHeapPerByte = 512  // bytes of heap held at once per byte of source, at most
	heapSlack       = 32 << 20
)

// fullSizeUnderRace are the shapes rendered at the page limit even under the
// race detector (the others are sampled smaller there, to keep the suite's
// time): those that were quadratic in goldmark, whose regression a
// smaller size would not show within the bound.
var fullSizeUnderRace = []string{"nested-brackets", "emphasis-mismatched", "link-reference-definitions", "unclosed-links"}

// renderCPU renders src with no time limit and returns the CPU time the
// render's thread took (the wall clock where that cannot be read).
func renderCPU(tb testing.TB, r *Renderer, src string) (Result, time.Duration) {
	tb.Helper()
	now, done := cpuClock()
	defer done()
	start := now()
	res, err := r.RenderWith(context.Background(), src, func(context.Context, []wiki.Title) (map[wiki.Title]bool, error) { return nil, nil },
		Options{Files: everyFile})
	took := now() - start
	if err != nil {
		tb.Fatal(err)
	}
	if res.TimedOut {
		tb.Fatal("the render ran out of time, with no time limit set")
	}
	return res, took
}

// everyFile is an Options.Files for which every file exists, an image
// large enough for every thumbnail: the most a file embed renders.
func everyFile(_ context.Context, ts []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
	m := make(map[wiki.Title]wiki.FileVersion, len(ts))
	for _, t := range ts {
		m[t] = wiki.FileVersion{Title: t, SHA256: strings.Repeat("ab", 32), MIME: "image/png", Width: 4000, Height: 3000}
	}
	return m, nil
}

// TestPathologicalShapesAtThePageLimit renders every shape at the page
// limit, two at a time, each within cpuBound of CPU. Under the race
// detector only fullSizeUnderRace are rendered this large; under -short
// none (TestPathologicalShapesAllocation covers every shape smaller).
func TestPathologicalShapesAtThePageLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("2 MiB inputs")
	}
	bound := cpuBound
	if race.Enabled {
		bound = raceCPUBound
	}
	r := New(WithTimeout(0))
	for _, s := range pathological.Shapes() {
		if race.Enabled && !slices.Contains(fullSizeUnderRace, s.Name) {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			src := s.Gen(pageLimit)
			res, took := renderCPU(t, r, src)
			t.Logf("%d bytes in %v of CPU, %d bytes out", len(src), took.Round(time.Millisecond), len(res.HTML))
			if took > bound {
				t.Errorf("took %v of CPU for %d bytes, want at most %v", took, len(src), bound)
			}
			if max := maxOutput(len(src)); len(res.HTML) > max {
				t.Errorf("output is %d bytes, want at most %d", len(res.HTML), max)
			}
		})
	}
}

// TestPathologicalShapesAllocation renders every shape, one at a time (the
// heap figures are the process's), at an eighth of the page limit (a
// sixteenth under the race detector, a thirty-second under -short): what it allocates and the most heap it holds
// at once must stay proportional to the input, and its time under the CPU
// bound.
func TestPathologicalShapesAllocation(t *testing.T) {
	size := pageLimit / 8
	switch {
	case testing.Short():
		size = pageLimit / 32
	case race.Enabled:
		size = pageLimit / 16
	}
	bound := cpuBound
	if race.Enabled {
		bound = raceCPUBound
	}
	r := New(WithTimeout(0))
	renderCPU(t, r, "# warm *up* [[a]] <b>b</b>\n\n|t|\n|-|\n|x|\n")
	for _, s := range pathological.Shapes() {
		t.Run(s.Name, func(t *testing.T) {
			src := s.Gen(size)
			var res Result
			var took time.Duration
			alloc, peak := heapDuring(func() { res, took = renderCPU(t, r, src) })
			t.Logf("%d bytes: %v of CPU, %d MB allocated, %d MB peak heap, %d bytes out",
				len(src), took.Round(time.Millisecond), alloc>>20, peak>>20, len(res.HTML))
			if took > bound {
				t.Errorf("took %v of CPU for %d bytes, want at most %v", took, len(src), bound)
			}
			// (The race detector empties sync.Pools at random, so the
			// sanitizer's and the renderer's buffers are allocated anew.)
			if max := uint64(allocPerByte*len(src) + heapSlack); alloc > max && !race.Enabled {
				t.Errorf("allocated %d bytes for %d bytes of source, want at most %d (%d per byte)", alloc, len(src), max, allocPerByte)
			}
			if max := uint64(peakHeapPerByte*len(src) + heapSlack); peak > max {
				t.Errorf("held %d bytes of heap at once for %d bytes of source, want at most %d (%d per byte)", peak, len(src), max, peakHeapPerByte)
			}
		})
	}
}

// heapDuring runs fn and returns the bytes it allocated and the most heap
// (live and not yet collected objects) above the level before it, sampled
// every millisecond. Nothing else may allocate meanwhile.
func heapDuring(fn func()) (alloc, peak uint64) {
	runtime.GC()
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(samples)
	alloc0, base := samples[0].Value.Uint64(), samples[1].Value.Uint64()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak {
				peak = v - base
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	metrics.Read(samples)
	return samples[0].Value.Uint64() - alloc0, peak
}

// TestRenderTimeout: a render over its time limit ends, and shows the page
// as escaped text under a notice instead.
func TestRenderTimeout(t *testing.T) {
	s, _ := pathological.Find("list-items")
	src := "#REDIRECT [[Target]]\n<script>x</script>\n" + s.Gen(pageLimit/4)
	r := New(WithTimeout(time.Millisecond))
	start := time.Now()
	res, err := r.Render(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("a 1 ms limit did not stop a %d-byte render (took %v)", len(src), time.Since(start))
	}
	if !strings.Contains(res.HTML, "took too long to render") || !strings.Contains(res.HTML, "&lt;script&gt;") {
		t.Errorf("timed-out page lacks the notice or the escaped source:\n%.300s", res.HTML)
	}
	if !IsSafe(res.HTML) {
		t.Error("the timed-out page is not a sanitizer fixpoint")
	}
	if res.Links.Redirect != "Target" {
		t.Errorf("a timed-out page lost its redirect: %+v", res.Links)
	}
	if ls := r.Links(src); ls.Redirect != "Target" || len(ls.Links) != 1 {
		t.Errorf("Links of a timed-out parse = %+v, want the redirect alone", ls)
	}
	if res, err := New().Render(context.Background(), "*fine*", nil); err != nil || res.TimedOut {
		t.Errorf("the default limit stopped a small page: %+v, %v", res, err)
	}
}

// TestRenderStopsWhenContextEnds: a render whose request went away stops
// at its next check point with the context's error.
func TestRenderStopsWhenContextEnds(t *testing.T) {
	s, _ := pathological.Find("list-items")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New().Render(ctx, s.Gen(1<<20), nil)
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("Render with a cancelled context = %v, want context.Canceled", err)
	}
}
