package edge

import (
	lrulist "container/list"
	"math/rand"
	"strconv"
	"testing"
)

// The eviction policy is judged by hit ratio on a skewed workload, against a
// plain byte-bounded LRU with the same budget.

type trace struct {
	keys  []string
	sizes map[string]int64
}

// zipfTrace draws n requests over a catalogue of items with Zipf popularity
// (s=1.01) and sizes between 2 and 66 KiB; a share of the requests (crawlers,
// old revisions) go to items requested only once.
func zipfTrace(n, items int, oneHitShare float64) trace {
	rnd := rand.New(rand.NewSource(1))
	z := rand.NewZipf(rnd, 1.01, 1, uint64(items-1))
	tr := trace{sizes: make(map[string]int64)}
	perm := rnd.Perm(items) // popularity rank is not key order
	for i := range n {
		var k string
		if rnd.Float64() < oneHitShare {
			k = "/once/" + strconv.Itoa(i)
		} else {
			k = "/wiki/" + strconv.Itoa(perm[z.Uint64()])
		}
		if _, ok := tr.sizes[k]; !ok {
			tr.sizes[k] = 2<<10 + rnd.Int63n(64<<10)
		}
		tr.keys = append(tr.keys, k)
	}
	return tr
}

func s3fifoHitRatio(tr trace, budget int64) float64 {
	s := newShard(budget)
	hits := 0
	for _, k := range tr.keys {
		if e := s.m[k]; e != nil {
			e.touch()
			hits++
			continue
		}
		e := &entry{key: k, hash: hashString(k), size: tr.sizes[k]}
		if e.size <= s.budget {
			s.insert(e)
		}
	}
	return float64(hits) / float64(len(tr.keys))
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

type lruItem struct {
	key  string
	size int64
}

func lruHitRatio(tr trace, budget int64) float64 {
	l := lrulist.New()
	m := make(map[string]*lrulist.Element)
	var bytes int64
	hits := 0
	for _, k := range tr.keys {
		if el := m[k]; el != nil {
			l.MoveToFront(el)
			hits++
			continue
		}
		size := tr.sizes[k]
		m[k] = l.PushFront(lruItem{k, size})
		bytes += size
		for bytes > budget {
			old := l.Remove(l.Back()).(lruItem)
			delete(m, old.key)
			bytes -= old.size
		}
	}
	return float64(hits) / float64(len(tr.keys))
}

var policyWorkloads = []struct {
	name    string
	oneHit  float64
	budgetB int64
}{
	{"zipf", 0, 32 << 20},
	{"zipf+20%-one-hit-wonders", 0.2, 32 << 20},
	{"zipf-small-cache", 0, 8 << 20},
}

func TestS3FIFOBeatsLRUOnZipf(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	for _, w := range policyWorkloads {
		t.Run(w.name, func(t *testing.T) {
			tr := zipfTrace(300_000, 50_000, w.oneHit)
			s3, lru := s3fifoHitRatio(tr, w.budgetB), lruHitRatio(tr, w.budgetB)
			t.Logf("hit ratio: S3-FIFO %.4f, LRU %.4f", s3, lru)
			if s3 < lru {
				t.Fatalf("S3-FIFO %.4f < LRU %.4f", s3, lru)
			}
		})
	}
}

// BenchmarkPolicyHitRatio reports the hit ratio of each policy as a metric.
func BenchmarkPolicyHitRatio(b *testing.B) {
	for _, w := range policyWorkloads {
		tr := zipfTrace(300_000, 50_000, w.oneHit)
		b.Run(w.name+"/s3fifo", func(b *testing.B) {
			var r float64
			for b.Loop() {
				r = s3fifoHitRatio(tr, w.budgetB)
			}
			b.ReportMetric(100*r, "hit%")
		})
		b.Run(w.name+"/lru", func(b *testing.B) {
			var r float64
			for b.Loop() {
				r = lruHitRatio(tr, w.budgetB)
			}
			b.ReportMetric(100*r, "hit%")
		})
	}
}
