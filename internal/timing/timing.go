// Package timing collects where a request's time went (database, render)
// for its Server-Timing header. Cheap enough for every request: two atomics.
package timing

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Timing accumulates durations for one request.
type Timing struct {
	Start  time.Time
	db     atomic.Int64
	render atomic.Int64
}

type key struct{}

// With returns ctx carrying a new Timing that starts now.
func With(ctx context.Context, now time.Time) (context.Context, *Timing) {
	t := &Timing{Start: now}
	return context.WithValue(ctx, key{}, t), t
}

// From returns ctx's Timing or nil; methods on nil do nothing.
func From(ctx context.Context) *Timing {
	t, _ := ctx.Value(key{}).(*Timing)
	return t
}

// AddDB records time spent in the store.
func (t *Timing) AddDB(d time.Duration) {
	if t != nil {
		t.db.Add(int64(d))
	}
}

// AddRender records time spent rendering markup.
func (t *Timing) AddRender(d time.Duration) {
	if t != nil {
		t.render.Add(int64(d))
	}
}

// Header returns the Server-Timing value: cache status, db, render, total.
func (t *Timing) Header(cache string, now time.Time) string {
	var b strings.Builder
	b.WriteString("cache;desc=")
	b.WriteString(cache)
	if t == nil {
		return b.String()
	}
	ms := func(name string, d time.Duration) {
		b.WriteString(", ")
		b.WriteString(name)
		b.WriteString(";dur=")
		b.WriteString(strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64))
	}
	if d := t.db.Load(); d > 0 {
		ms("db", time.Duration(d))
	}
	if d := t.render.Load(); d > 0 {
		ms("render", time.Duration(d))
	}
	ms("app", now.Sub(t.Start))
	return b.String()
}
