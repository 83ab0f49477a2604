package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestUsedBy(t *testing.T) {
	for _, c := range []struct {
		name, form string
		want       int
	}{
		{"no notice", `<form method="post"><textarea name="wpTextbox1"></textarea></form>`, 0},
		{"one page", `<div class="notice" role="note">One page uses this page as a template (<a href="/wiki/Special:WhatLinksHere/Template:Stamp">list</a>).`, 1},
		{"many pages", `<div class="notice" role="note">10000 pages use this page as a template (<a href="x">list</a>). Saving brings them up to date`, 10000},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := usedBy(c.form); got != c.want {
				t.Errorf("usedBy = %d, want %d", got, c.want)
			}
		})
	}
}

func TestRenderDur(t *testing.T) {
	for _, c := range []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"cache;desc=miss, db;dur=0.412, render;dur=153.250, app;dur=160.100", 153250 * time.Microsecond, true},
		{"cache;desc=hit", 0, false},
		{"cache;desc=miss, db;dur=1.000, app;dur=2.000", 0, false},
	} {
		got, ok := renderDur(c.header)
		if got != c.want || ok != c.ok {
			t.Errorf("renderDur(%q) = %v, %v; want %v, %v", c.header, got, ok, c.want, c.ok)
		}
	}
}

func TestInWindowAndCacheMisses(t *testing.T) {
	t0 := time.Unix(100, 0)
	var ss []sample
	for i, cache := range []string{"HIT", "MISS", "SPLICE", "", "MISS"} {
		ss = append(ss, sample{due: t0.Add(time.Duration(i) * time.Second), ok: cache != "", cache: cache})
	}
	win := inWindow(ss, t0.Add(time.Second), t0.Add(4*time.Second))
	if len(win) != 3 || win[0].cache != "MISS" || win[2].cache != "" {
		t.Fatalf("window holds %+v", win)
	}
	// The failed request is an error, not a miss.
	if n := cacheMisses(win); n != 1 {
		t.Errorf("cacheMisses = %d, want 1", n)
	}
}

func TestManySource(t *testing.T) {
	src := manySource(5000)
	if n := strings.Count(src, "{{Small|"); n != 5000 {
		t.Errorf("%d calls, want 5000", n)
	}
	for _, arg := range []string{"a", "e"} {
		if !strings.Contains(src, "{{Small|"+arg+"}}") {
			t.Errorf("no call with argument %s", arg)
		}
	}
	if strings.Contains(src, "{{Small|f}}") {
		t.Error("more than five distinct arguments")
	}
}

func TestTemplatesCorpusCallsTheTemplateOnEveryPage(t *testing.T) {
	pages := templatesCorpus(50)
	for i, p := range pages {
		if strings.Count(p.source, "{{Stamp|") != 1 || !strings.HasSuffix(p.source, "{{Stamp|"+strconv.Itoa(i)+"}}\n") {
			t.Fatalf("page %d (%s) does not end with its one call: %q", i, p.title, p.source[max(0, len(p.source)-40):])
		}
		if strings.Contains(p.source, "STAMP-v") {
			t.Fatalf("page %d shows the marker without the template", i)
		}
	}
}

func TestForEach(t *testing.T) {
	t.Run("visits every index once", func(t *testing.T) {
		seen := make([]atomic.Int32, 100)
		if err := forEach(context.Background(), 100, 8, func(i int) error { seen[i].Add(1); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("index %d visited %d times", i, seen[i].Load())
			}
		}
	})
	t.Run("stops at the first error and returns it", func(t *testing.T) {
		boom := errors.New("boom")
		var calls atomic.Int32
		err := forEach(context.Background(), 1000, 1, func(i int) error {
			calls.Add(1)
			if i == 3 {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) || calls.Load() != 4 {
			t.Errorf("err %v after %d calls, want boom after 4", err, calls.Load())
		}
	})
}
