package edge

import (
	"net/http"
	"strings"
)

// notModified evaluates If-None-Match and If-Modified-Since (RFC 9110 section
// 13.2.2) against the entry for a GET or HEAD. Only 200 responses are
// validated. If-None-Match, when present, takes precedence; it matches with the
// weak comparison, accepts lists and "*".
func (e *entry) notModified(ifNoneMatch, ifModifiedSince string) bool {
	if e.status != http.StatusOK {
		return false
	}
	if ifNoneMatch != "" {
		return etagListMatches(ifNoneMatch, e.etag)
	}
	if ifModifiedSince == "" || e.lastModStr == "" {
		return false
	}
	if ifModifiedSince == e.lastModStr {
		return true // the browser echoes Last-Modified: skip parsing
	}
	if e.lastMod.IsZero() {
		return false
	}
	t, err := http.ParseTime(ifModifiedSince)
	if err != nil {
		return false
	}
	return !e.lastMod.Truncate(1e9).After(t)
}

// etagListMatches reports whether an If-None-Match value matches etag with the
// weak comparison: W/ prefixes are ignored, the opaque tags must be equal.
func etagListMatches(list, etag string) bool {
	want := opaqueTag(etag) // "" when the entry has no usable ETag: only "*" matches
	for s := list; ; {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return false
		}
		if s[0] == '*' {
			return true // any current representation
		}
		s = strings.TrimPrefix(s, "W/")
		if s == "" || s[0] != '"' {
			return false // malformed: stop rather than guess
		}
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return false
		}
		if want != "" && s[:end+2] == want {
			return true
		}
		s = s[end+2:]
	}
}

// opaqueTag returns the quoted part of an entity tag, without W/.
func opaqueTag(etag string) string {
	etag = strings.TrimPrefix(strings.TrimSpace(etag), "W/")
	if len(etag) < 2 || etag[0] != '"' || etag[len(etag)-1] != '"' {
		return ""
	}
	return etag
}
