package wiki

//go:generate go run gen_confusables.go

import (
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// confusable is one line of confusables.txt: r looks like s.
type confusable struct {
	r rune
	s string
}

// prototype returns what r maps to in confusables.txt, or r itself.
func prototype(r rune) (string, bool) {
	i := sort.Search(len(confusables), func(i int) bool { return confusables[i].r >= r })
	if i < len(confusables) && confusables[i].r == r {
		return confusables[i].s, true
	}
	return "", false
}

// skeleton is UTS #39's skeleton(X): NFD, each character replaced by its
// prototype, NFD again. Default-ignorable characters (the joiners a name may
// keep) are dropped first, as the current UTS #39 does: they draw nothing.
func skeleton(s string) string {
	s = norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 0x200C || r == 0x200D || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Cf, r) {
			continue
		}
		if p, ok := prototype(r); ok {
			b.WriteString(p)
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFD.String(b.String())
}

// UserNameSkeleton returns the key under which user names that look alike
// collide: "Admin", "admin", "Аdmin" (Cyrillic А) and "Adrnin" share one.
// It is the UTS #39 skeleton of the case-folded skeleton, so that letters
// whose capitals or small forms are confusable (I, l, 1) meet whichever
// case they were typed in, as MediaWiki's AntiSpoof compares case-normalized
// names. Stores keep it in an indexed column; two accounts whose skeletons
// are equal may not both be created.
func UserNameSkeleton(name string) string {
	return skeleton(cases.Fold().String(skeleton(name)))
}

// UserNameLookAlikeKeys returns the skeletons to look up before creating
// name: its own, and the skeleton of its case-folded form. The second finds
// an account of which name is a look-alike up to case ("АDMIN" with a
// Cyrillic А for an existing "Admin"), which the stored skeleton alone
// misses because a capital I's prototype is l while a small i's is i.
func UserNameLookAlikeKeys(name string) []string {
	k1, k2 := UserNameSkeleton(name), skeleton(cases.Fold().String(name))
	if k1 == k2 {
		return []string{k1}
	}
	return []string{k1, k2}
}

// TooSimilarError is the error for a new user name whose skeleton is that of
// an existing account.
func TooSimilarError(name, existing string) error {
	return Errorf(KindConflict, "The name “%s” is too similar to the existing account “%s”. Choose another name.", name, existing)
}
