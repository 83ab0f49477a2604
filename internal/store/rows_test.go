package store

import (
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// Same compares a page's rows as the table keeps them: in any order,
// duplicates once, sort keys and the subcategory flag included.
func TestLinkRowsSame(t *testing.T) {
	ls := wiki.LinkSet{
		Links:      []wiki.Title{"B", "A", "A"},
		Categories: []wiki.Title{"Category:C"},
		SortKeys:   map[wiki.Title]string{"Category:C": "Key"},
		Templates:  []wiki.Title{"Template:T"},
	}
	var want LinkRows
	want.Add(7, "Category:Page", ls)
	stored := []LinkRow{
		{From: 7, Kind: "template", Title: "Template:T"},
		{From: 7, Kind: "category", Title: "Category:C", SortKey: wiki.StoredSortKey(wiki.SortKey("Key"), "Category:Page"), Subcat: true},
		{From: 7, Kind: "link", Title: "A"},
		{From: 7, Kind: "link", Title: "B"},
	}
	if !want.Same(7, stored) {
		t.Fatalf("the same rows in another order are not Same: %+v vs %+v", want.Rows, stored)
	}
	for name, change := range map[string]func([]LinkRow){
		"another sort key":  func(rs []LinkRow) { rs[1].SortKey = "OTHER" },
		"not a subcategory": func(rs []LinkRow) { rs[1].Subcat = false },
		"another kind":      func(rs []LinkRow) { rs[2].Kind = "redirect" },
	} {
		rs := append([]LinkRow(nil), stored...)
		change(rs)
		if want.Same(7, rs) {
			t.Errorf("%s: Same", name)
		}
	}
	if want.Same(7, stored[:3]) || want.Same(7, append(stored, LinkRow{From: 7, Kind: "link", Title: "D"})) {
		t.Error("a row more or less is Same")
	}
}
