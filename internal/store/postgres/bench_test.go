package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

// BenchmarkConcurrentSaves: saves of different pages from several
// goroutines (4 per CPU), each with no purge log event, with its event
// appended after the commit in a transaction of its own, or with the event
// in the save's transaction (wiki.PurgeSpec, as the engine saves): the
// log's lock serializes the last two.
//
//	go test -run '^$' -bench ConcurrentSaves ./internal/store/postgres/
func BenchmarkConcurrentSaves(b *testing.B) {
	for _, mode := range []string{"no-event", "event-after", "event-in-transaction"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			db := pgtest.Open(b)
			var next atomic.Int64
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				title := wiki.Title(fmt.Sprintf("Page %d", next.Add(1)))
				var base int64
				for i := 0; pb.Next(); i++ {
					ev := wiki.PurgeEvent{Origin: "bench", Titles: []wiki.Title{title}, Time: time.Now()}
					var jobs []wiki.JobSpec
					if mode == "event-in-transaction" {
						jobs = []wiki.JobSpec{wiki.PurgeSpec(ev)}
					}
					r, err := db.SavePage(ctx, wiki.SaveRequest{Title: title, Text: fmt.Sprintf("Text %d.", i), UserName: "U", BaseRevID: base, Jobs: jobs, Time: time.Now()})
					if err != nil {
						b.Error(err)
						return
					}
					base = r.Revision.ID
					if mode == "event-after" {
						if err := db.AppendPurges(ctx, []wiki.PurgeEvent{ev}); err != nil {
							b.Error(err)
							return
						}
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "saves/s")
		})
	}
}
