// Package purge is the one owner of invalidation: it turns a change into
// what it invalidates (tags naming the pages and listings that showed it)
// and tells the caches. Responses are tagged with what they depend on; a
// purge of a tag drops every response carrying it, in the in-process edge
// cache at once and in caches in front (Varnish, a CDN) through jobs.
package purge

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// ListsTag is carried by responses that list pages (RecentChanges,
// AllPages, search, the live macros); every change purges it.
const ListsTag = "~lists"

// StaticTag is carried by the embedded assets. They are immutable under
// content-hashed names and never purged; the tag only marks them.
const StaticTag = "~static"

// LogTitle names Special:Log among the titles a change purges. Its
// responses carry TitleTag(LogTitle), so a change that writes a log entry
// (a deletion, a move, a protection, a block…) purges the log by naming
// LogTitle beside its pages: locally, on other nodes and, through the same
// cdnpurge jobs as any title, in the caches in front.
const LogTitle wiki.Title = "Special:Log"

// Tags returns the tags a change of these titles purges: each title, and
// the listings.
func Tags(titles ...wiki.Title) []string {
	return append(TitleTags(titles...), ListsTag)
}

// TitleTags returns the tags of the responses that show the titles,
// without the listings.
func TitleTags(titles ...wiki.Title) []string {
	out := make([]string, 0, len(titles))
	for _, t := range titles {
		out = append(out, TitleTag(t))
	}
	return out
}

// TitleTag is the tag of the responses that show title t.
func TitleTag(t wiki.Title) string { return string(t) }

// SurrogateKey is the form of a tag in the Surrogate-Key response header
// and in purge requests to caches in front: 16 hex digits (the first 8
// bytes of the tag's SHA-256), so that any title fits in a header token and
// in a ban expression without escaping.
func SurrogateKey(tag string) string {
	sum := sha256.Sum256([]byte(tag))
	return hex.EncodeToString(sum[:8])
}

// SurrogateKeys is the Surrogate-Key header value for tags: their keys,
// space-separated, without duplicates, in the order given.
func SurrogateKeys(tags []string) string {
	var b strings.Builder
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		k := SurrogateKey(t)
		if seen[k] {
			continue
		}
		seen[k] = true
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
	}
	return b.String()
}
