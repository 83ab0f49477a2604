package store

import (
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// The namespace filters of listings, as SQL both engines run. param adds
// a value to the query's arguments and returns its placeholder (? or $n).

// PageNamespaces returns the condition that the page in table alias p is
// in one of namespaces, by its ns column: " AND p.ns IN (…)", or "" when
// namespaces is empty (every namespace).
func PageNamespaces(namespaces []string, param func(any) string) string {
	if len(namespaces) == 0 {
		return ""
	}
	marks := make([]string, len(namespaces))
	for i, ns := range namespaces {
		marks[i] = param(ns)
	}
	return " AND p.ns IN (" + strings.Join(marks, ", ") + ")"
}

// NamespaceTitleRange returns the range of titles [lo, hi) that pages of
// namespaces can have when that is one namespace other than the main one:
// its titles start with its prefix ("Talk:" ≤ title < "Talk;"), so that a
// listing of it reads one range of the title index rather than filtering
// all of it. ok is false otherwise.
func NamespaceTitleRange(namespaces []string) (lo, hi string, ok bool) {
	if len(namespaces) != 1 || namespaces[0] == "" {
		return "", "", false
	}
	p := namespaces[0] + ":"
	return p, prefixEnd(p), true
}

// ChangeNamespaces returns the condition that the title in column col is
// in one of namespaces, by its prefix: " AND (…)", or "" when namespaces
// is empty. It is for the changes table, which records titles as they
// were, without a namespace column. A namespace's titles are those starting
// with one of its prefixes (wiki.Namespace.Prefixes: its name and its
// aliases, as older titles may spell it), each one range of titles; the
// main namespace's are those starting with none of any namespace.
func ChangeNamespaces(col string, namespaces []string, param func(any) string) string {
	if len(namespaces) == 0 {
		return ""
	}
	ranges := func(n wiki.Namespace) []string {
		var out []string
		for _, p := range n.Prefixes() {
			out = append(out, col+" >= "+param(p)+" AND "+col+" < "+param(prefixEnd(p)))
		}
		return out
	}
	var alts []string
	for _, name := range namespaces {
		n, ok := wiki.NamespaceByName(name)
		switch {
		case !ok:
			alts = append(alts, "FALSE") // no title is in a namespace that does not exist
		case name == "":
			var others []string
			for _, o := range wiki.Namespaces {
				others = append(others, ranges(o)...)
			}
			alts = append(alts, "NOT ("+strings.Join(others, " OR ")+")")
		default:
			alts = append(alts, ranges(n)...)
		}
	}
	return " AND (" + strings.Join(alts, " OR ") + ")"
}

// prefixEnd is the least string after every string that starts with p, a
// namespace prefix: its colon becomes the next character, a semicolon.
func prefixEnd(p string) string { return strings.TrimSuffix(p, ":") + ";" }
