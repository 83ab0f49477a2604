package main

import (
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/render/pathological"
)

func TestPathologicalTable(t *testing.T) {
	s, ok := pathological.Find("nested-brackets")
	if !ok {
		t.Fatal("no shape nested-brackets")
	}
	res, err := measureShape(s, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes == 0 || res.Bytes > 4096 || res.OutBytes == 0 || res.Alloc == 0 {
		t.Errorf("figures %+v", res)
	}
	after := pathoRun{Commit: "new", Size: 4096, Results: []pathoResult{res}}
	before := pathoRun{Commit: "old", Size: 4096, Timeout: time.Minute,
		Results: []pathoResult{{Shape: s.Name, Killed: true, Took: time.Minute, MaxRSS: 500 << 20}}}
	table := pathoTable(after, &before)
	for _, want := range []string{"| nested-brackets | > 60 s (killed) |", "≥ 500 MB", "commit new", "Before: commit old"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
