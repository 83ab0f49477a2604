package wiki

import (
	"slices"
	"strings"
	"testing"
)

func TestUserNameSkeleton(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"a Cyrillic capital A looks like a Latin one", "Admin", "\u0410dmin", true},
		{"a Cyrillic small a looks like a Latin one", "Paypal", "P\u0430yp\u0430l", true},
		{"a Greek capital omicron looks like O", "Otto", "\u039ftto", true},
		{"case does not tell names apart", "Admin", "admin", true},
		{"rn looks like m", "Admin", "Adrnin", true},
		{"capital I looks like small l", "Ian", "lan", true},
		{"digit one looks like small l", "Bill", "Bi1l", true},
		{"digit zero looks like capital O", "Bob", "B0b", true},
		{"a fullwidth letter looks like its ASCII form", "Alice", "\uff21lice", true},
		{"an accent written apart is the same accent", "Ren\u00e9", "Rene\u0301", true},
		{"a ZWNJ draws nothing", "علی\u200cرضا", "علیرضا", true},
		{"different names differ", "Alice", "Alicia", false},
		{"an accent is not nothing", "Rene", "René", false},
		{"Korean names differ", "김철수", "김영희", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sa, sb := UserNameSkeleton(tc.a), UserNameSkeleton(tc.b)
			if (sa == sb) != tc.same {
				t.Fatalf("skeleton(%q) = %q, skeleton(%q) = %q; same = %v, want %v", tc.a, sa, tc.b, sb, sa == sb, tc.same)
			}
		})
	}
}

func TestConfusablesTable(t *testing.T) {
	if len(confusables) < 6000 || confusablesVersion == "" {
		t.Fatalf("%d mappings, version %q: regenerate with go generate", len(confusables), confusablesVersion)
	}
	for i := 1; i < len(confusables); i++ {
		if confusables[i-1].r >= confusables[i].r {
			t.Fatalf("the table is not sorted at %U", confusables[i].r)
		}
	}
	if p, ok := prototype(0x0410); !ok || p != "A" {
		t.Fatalf("prototype(U+0410) = %q, %v; want A", p, ok)
	}
}

func TestTooSimilarError(t *testing.T) {
	err := TooSimilarError("\u0410dmin", "Admin")
	if KindOf(err) != KindConflict || !strings.Contains(Message(err), "The name “\u0410dmin” is too similar to the existing account “Admin”. Choose another name.") {
		t.Fatalf("%v", err)
	}
}

func TestUserNameLookAlikeKeys(t *testing.T) {
	existing := UserNameSkeleton("Admin")
	for _, name := range []string{"\u0410dmin", "\u0410DMIN", "Adrnin", "AdmIn"} {
		if !slices.Contains(UserNameLookAlikeKeys(name), existing) {
			t.Errorf("the keys of %q %q miss Admin's skeleton %q", name, UserNameLookAlikeKeys(name), existing)
		}
	}
	if slices.Contains(UserNameLookAlikeKeys("Adminka"), existing) {
		t.Error("Adminka looks like Admin")
	}
}
