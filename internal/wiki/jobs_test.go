package wiki_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// A batch's backlinks jobs become jobs of BatchBacklinksTitles titles at
// most, in the order they first came, each title once; other jobs, and a
// backlinks job without its title's key, are left to the caller.
func TestBatchBacklinks(t *testing.T) {
	var b wiki.BatchBacklinks
	if jobs := b.Jobs(); jobs != nil {
		t.Fatalf("no job taken: %v, want none", jobs)
	}
	if b.Take(wiki.JobSpec{Kind: wiki.JobSearch, Key: "search:A"}) || b.Take(wiki.JobSpec{Kind: wiki.JobBacklinks, Payload: []byte(`{"title":"A"}`)}) {
		t.Fatal("took a search job, or a backlinks job without its key")
	}
	n := 2*wiki.BatchBacklinksTitles + 7
	var want []wiki.Title
	take := func(title wiki.Title) {
		t.Helper()
		if !b.Take(wiki.JobSpec{Kind: wiki.JobBacklinks, Key: "backlinks:" + string(title)}) {
			t.Fatalf("did not take the backlinks job of %q", title)
		}
	}
	for i := range n {
		title := wiki.Title(fmt.Sprintf("T %d \"quoted\" ü", i))
		want = append(want, title)
		take(title)
		if i > 0 && i%3 == 0 {
			take(want[i/2]) // a title saved again later in the batch
		}
	}
	var got []wiki.Title
	jobs := b.Jobs()
	for _, j := range jobs {
		var p struct {
			Titles []wiki.Title `json:"titles"`
		}
		if err := json.Unmarshal(j.Payload, &p); err != nil || j.Kind != wiki.JobBatchBacklinks || j.Key != "" || len(p.Titles) > wiki.BatchBacklinksTitles {
			t.Fatalf("job %+v (%s): %v", j, j.Payload, err)
		}
		got = append(got, p.Titles...)
	}
	if len(jobs) != 3 || !slices.Equal(got, want) {
		t.Fatalf("%d jobs with titles %q, want 3 with %q", len(jobs), got, want)
	}
}
