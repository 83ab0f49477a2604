package engine

import (
	"slices"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// The categories whose listings a page's new link set changes: the ones
// it joins or leaves, and the ones where its place changes.
func TestChangedCategories(t *testing.T) {
	a, b, c := wiki.Title("Category:A"), wiki.Title("Category:B"), wiki.Title("Category:C")
	old := []wiki.CategoryLink{{Category: a, SortKey: "PAGE"}, {Category: b, SortKey: "KEY"}}
	for _, tc := range []struct {
		name string
		page wiki.Title
		ls   wiki.LinkSet
		want []wiki.Title
	}{
		{"nothing changed", "Page", wiki.LinkSet{Categories: []wiki.Title{a, b}, SortKeys: map[wiki.Title]string{b: "key"}}, nil},
		{"joined and left", "Page", wiki.LinkSet{Categories: []wiki.Title{a, c}}, []wiki.Title{b, c}},
		{"a link's key changed", "Page", wiki.LinkSet{Categories: []wiki.Title{a, b}, SortKeys: map[wiki.Title]string{b: "other"}}, []wiki.Title{b}},
		{"a DEFAULTSORT moves the page where no link gives a key", "Page", wiki.LinkSet{Categories: []wiki.Title{a, b}, SortKeys: map[wiki.Title]string{b: "key"}, DefaultSort: "x"}, []wiki.Title{a}},
		{"a new title changes the default key (a move)", "Other", wiki.LinkSet{Categories: []wiki.Title{a, b}, SortKeys: map[wiki.Title]string{b: "key"}}, []wiki.Title{a}},
		{"a page that became a category moves to the subcategories", "Category:Page", wiki.LinkSet{Categories: []wiki.Title{a, b}, SortKeys: map[wiki.Title]string{b: "key"}}, []wiki.Title{a, b}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := changedCategories(old, tc.page, tc.ls)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("changed %q, want %q", got, tc.want)
			}
		})
	}
}
