package wiki

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSortKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"apple", "APPLE"},
		{"Smith, John", "SMITH, JOHN"},
		{" ", " "},
		{"  dark red ", "  DARK RED "}, // keys are not trimmed here (the renderer trims)
		{"élan", "ÉLAN"},
		{"e\u0301lan", "ÉLAN"}, // NFC
		{"straße", "STRAßE"},   // simple case mapping: one character for one
		{"ǆungla", "ǄUNGLA"},
		{"a\nb\tc\x00d\x7f", "ABCD"},
		{"\x00\n", ""},
		{"한국어", "한국어"},
		{"", ""},
	} {
		if got := SortKey(tc.in); got != tc.want {
			t.Errorf("SortKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Cut at MaxSortKeyBytes on a character boundary.
	long := SortKey(strings.Repeat("é", 200))
	if len(long) != MaxSortKeyBytes-1 || !utf8.ValidString(long) {
		t.Errorf("a long key is %d bytes (valid %v)", len(long), utf8.ValidString(long))
	}
	if got := SortKey(strings.Repeat("a", 300)); got != strings.Repeat("A", MaxSortKeyBytes) {
		t.Errorf("a long ASCII key is %d bytes", len(got))
	}
	// A stored key folds to itself: the cursor in a URL is canonical.
	for r := rune(0); r < 0x3000; r++ {
		s := "x" + string(r) + "\u0301y"
		if k := SortKey(s); SortKey(k) != k {
			t.Fatalf("SortKey is not idempotent on %q: %q then %q", s, k, SortKey(k))
		}
	}
}

func TestCategorySortKey(t *testing.T) {
	cat, other := Title("Category:Fruit"), Title("Category:Other")
	for _, tc := range []struct {
		page Title
		ls   LinkSet
		want string
	}{
		{"Apple", LinkSet{}, "APPLE"},
		{"Help:Tables", LinkSet{}, "TABLES"},
		{"Category:Citrus fruit", LinkSet{}, "CITRUS FRUIT"},
		{"Apple/Seeds", LinkSet{}, "APPLE/SEEDS"},
		{"Apple", LinkSet{DefaultSort: "malus"}, "MALUS"},
		{"Apple", LinkSet{DefaultSort: "malus", SortKeys: map[Title]string{cat: "pome"}}, "POME"},
		{"Apple", LinkSet{DefaultSort: "malus", SortKeys: map[Title]string{other: "pome"}}, "MALUS"},
		{"Apple", LinkSet{SortKeys: map[Title]string{cat: "\n"}}, "APPLE"}, // folds to nothing: not given
		{"Apple", LinkSet{SortKeys: map[Title]string{cat: " "}}, " "},
	} {
		if got := tc.ls.CategorySortKey(tc.page, cat); got != tc.want {
			t.Errorf("%s with %+v: %q, want %q", tc.page, tc.ls, got, tc.want)
		}
	}
	if !Title("Category:X").IsSubcategory() || Title("Help:X").IsSubcategory() || Title("Category talk:X").IsSubcategory() {
		t.Error("IsSubcategory: only category pages are subcategories")
	}
}

func TestSortKeyInitial(t *testing.T) {
	for in, want := range map[string]string{
		"APPLE": "A", "ÉLAN": "É", "E\u0333X": "E\u0333", "한국어": "한", " ": " ", "": "", "1984": "1",
	} {
		if got := SortKeyInitial(in); got != want {
			t.Errorf("SortKeyInitial(%q) = %q, want %q", in, got, want)
		}
	}
}

// A page's sort key in each of its categories is made from its
// DEFAULTSORT, which a page or template can make as long as the page (a
// save, a links job and a reparse fold it once per category): folding
// it costs what the stored key holds, not what the text gave.
func TestCategorySortKeyCostIsBoundedByTheKey(t *testing.T) {
	ls := LinkSet{DefaultSort: strings.Repeat("a\u0301", 1<<19)} // 1.5 MiB
	const categories = 20
	start := time.Now()
	for i := range categories {
		if k := ls.CategorySortKey("Page", Title(fmt.Sprintf("Category:C%d", i))); len(k) > MaxSortKeyBytes || !strings.HasPrefix(k, "Á") {
			t.Fatalf("key %.20q… (%d bytes)", k, len(k))
		}
	}
	// A page of 2 MiB holds tens of thousands of category links.
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("the keys of a page with a 1.5 MiB DEFAULTSORT in %d categories took %v (%v each)", categories, d, d/categories)
	}
}
