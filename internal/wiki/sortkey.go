package wiki

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Category sort keys, as MediaWiki's "uppercase" collation has them. A
// category lists its members by (sort key, title). A page's key in a
// category is, in this order: the one its link gives
// ([[Category:X|key]]), its default sort key ({{DEFAULTSORT:key}}), or
// its title without the namespace prefix ("Help:Tables" sorts as
// "TABLES"; MediaWiki's Title::getCategorySortkey). Keys are stored
// folded by SortKey and compared byte by byte (code point order) in every
// backend, so that a listing's order does not depend on the database.

// MaxSortKeyBytes bounds a stored sort key (MediaWiki's cl_sortkey holds
// 230 bytes): a longer key is cut at a character boundary.
const MaxSortKeyBytes = 255

// maxSortKeyInput bounds how much of a text SortKey folds: the key keeps
// MaxSortKeyBytes, and a DEFAULTSORT can be as long as a page, folded once
// per category of the page. Folding changes a character's length by a
// small factor, so four times the key's bound is enough to fill it, but
// for a text that opens with a kilobyte of control characters.
const maxSortKeyInput = 4 * MaxSortKeyBytes

// SortKey returns s as sort keys are stored and compared: in upper case,
// in NFC, without control characters (a newline in a key is dropped, as
// MediaWiki drops it), and at most MaxSortKeyBytes bytes long. Letters are
// put in upper case decomposed (NFD), so that a combining mark with a
// case of its own (the Greek iota subscript) is too: the result is
// idempotent, a stored key folds to itself.
func SortKey(s string) string {
	if len(s) > maxSortKeyInput {
		n := maxSortKeyInput
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	s = normalizeNFC(strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return -1
		}
		return unicode.ToUpper(r)
	}, normalizeNFD(s)))
	if len(s) <= MaxSortKeyBytes {
		return s
	}
	s = s[:MaxSortKeyBytes]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// DefaultSortKey is t's sort key in a category that neither its link nor
// a DEFAULTSORT gives one for: its title without the namespace prefix,
// folded.
func (t Title) DefaultSortKey() string { return SortKey(t.Name()) }

// IsSubcategory reports whether page t, a member of a category, is listed
// among its subcategories: whether t is a category itself.
func (t Title) IsSubcategory() bool { return t.Namespace() == NSCategory }

// CategorySortKey returns page's sort key in category cat by the link set
// of page's text: the key the link to cat gives, else the DEFAULTSORT,
// else page's default key; folded by SortKey. A key that folds to nothing
// (control characters only) counts as not given.
func (ls LinkSet) CategorySortKey(page, cat Title) string {
	if k := SortKey(ls.SortKeys[cat]); k != "" {
		return k
	}
	if k := SortKey(ls.DefaultSort); k != "" {
		return k
	}
	return page.DefaultSortKey()
}

// SortKeyInitial returns the first character of a sort key, with the
// combining marks that follow it: the letter a category listing groups
// members under ("A", "B", …), as MediaWiki's first-letter headings.
func SortKeyInitial(key string) string {
	_, n := utf8.DecodeRuneInString(key)
	for n < len(key) {
		r, size := utf8.DecodeRuneInString(key[n:])
		if !unicode.Is(unicode.M, r) {
			break
		}
		n += size
	}
	return key[:n]
}

// CategoryLink is a page's membership of a category: the category, the
// page's sort key there (folded), and whether it is listed among the
// subcategories (as the page's title was when the row was written).
type CategoryLink struct {
	Category Title
	SortKey  string
	Subcat   bool
}

// CategoryCursor is a place in a category's listing, which is ordered by
// (SortKey, Title): a member is at or after the cursor when its key is
// greater, or equal with a title at or after Title. SortKey is folded
// (SortKey); Title "" is the first place of its key.
type CategoryCursor struct {
	SortKey string
	Title   Title
}

// IsZero reports whether c is the zero cursor (the listing's start).
func (c CategoryCursor) IsZero() bool { return c.SortKey == "" && c.Title == "" }

// Stored is c in the form of a stored sort column (StoredSortKey): the
// column's values at or after it are the members at or after c.
func (c CategoryCursor) Stored() string {
	if c.Title == "" {
		return c.SortKey // before every "key\n…" of its key
	}
	return StoredSortKey(c.SortKey, c.Title)
}

// StoredSortKey is a category row's sort column: the member's folded key
// (SortKey), a line break and its title, as MediaWiki's cl_sortkey. A
// folded key holds no control character, so the column's byte order is
// the order of (key, title): a page of a listing is one range of the
// index, however many members share a key.
func StoredSortKey(key string, member Title) string { return key + "\n" + string(member) }

// SortKeyOf returns the folded key of a stored sort column.
func SortKeyOf(stored string) string {
	key, _, _ := strings.Cut(stored, "\n")
	return key
}

// CategoryQuery pages through a category's members by (sort key, title):
// its subcategories (members that are categories) or its other members,
// apart, as MediaWiki lists them.
type CategoryQuery struct {
	From CategoryCursor // the members at or after it
	// Before, if not zero, keeps the members before it only.
	Before        CategoryCursor
	Limit         int
	Subcategories bool
}

// CategoryMember is a live page in a category, with its sort key there.
type CategoryMember struct {
	Page
	SortKey string
	// Added is when the page was added to the category (CategoryAdditions
	// only; zero in other listings).
	Added time.Time
}

// Cursor returns the place of m in its category's listing.
func (m CategoryMember) Cursor() CategoryCursor {
	return CategoryCursor{SortKey: m.SortKey, Title: m.Title}
}
