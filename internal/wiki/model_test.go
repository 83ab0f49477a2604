package wiki

import (
	"slices"
	"testing"
)

func TestLinkSetTargets(t *testing.T) {
	ls := LinkSet{Links: []Title{"A"}, Categories: []Title{"Category:C"}, Templates: []Title{"Template:T"}, Files: []Title{"File:F.png"}, Redirect: "R"}
	var got []Title
	for t := range ls.Targets() {
		got = append(got, t)
	}
	if want := []Title{"A", "Category:C", "Template:T", "File:F.png", "R"}; !slices.Equal(got, want) {
		t.Errorf("Targets = %v, want %v", got, want)
	}
	for range ls.Targets() {
		break // stopping early must not panic
	}
}
