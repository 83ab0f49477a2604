package purge

import (
	"regexp"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

func TestSurrogateKeysAreHeaderTokens(t *testing.T) {
	tok := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for _, tag := range []string{"Main Page", ListsTag, "Ünïcode/Sub page:x", string(make([]byte, 300))} {
		if k := SurrogateKey(tag); !tok.MatchString(k) {
			t.Errorf("SurrogateKey(%q) = %q, want 16 hex digits", tag, k)
		}
	}
	got := SurrogateKeys([]string{"A", "B", "A"})
	want := SurrogateKey("A") + " " + SurrogateKey("B")
	if got != want {
		t.Errorf("SurrogateKeys dropped no duplicate or changed order: %q, want %q", got, want)
	}
}

func TestTagsIncludeListings(t *testing.T) {
	tags := Tags(wiki.MustTitle("Foo"), wiki.MustTitle("Bar"))
	if len(tags) != 3 || tags[0] != "Foo" || tags[1] != "Bar" || tags[2] != ListsTag {
		t.Errorf("Tags = %q", tags)
	}
}
