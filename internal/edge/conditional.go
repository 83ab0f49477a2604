package edge

import (
	"net/http"
	"strings"
	"time"
)

// NotModified evaluates If-None-Match and If-Modified-Since (RFC 9110 section
// 13.2.2) for a GET or HEAD of a 200 response with these validators: etag is
// the entity tag of the representation that would be sent (its variant's),
// lastMod its modification time (zero when unknown). If-None-Match, when
// present, takes precedence; it matches with the weak comparison and accepts
// lists and "*". It is the one conditional matcher of Wikid's responses.
func NotModified(ifNoneMatch, ifModifiedSince, etag string, lastMod time.Time) bool {
	if ifNoneMatch != "" {
		return etagListMatches(ifNoneMatch, etag)
	}
	if ifModifiedSince == "" || lastMod.IsZero() {
		return false
	}
	t, err := http.ParseTime(ifModifiedSince)
	if err != nil {
		return false
	}
	return !lastMod.Truncate(time.Second).After(t)
}

// notModified is NotModified for a stored variant.
func (v *Variant) notModified(ifNoneMatch, ifModifiedSince string) bool {
	e := v.e
	if e.status != http.StatusOK {
		return false
	}
	if ifNoneMatch == "" && ifModifiedSince != "" && ifModifiedSince == e.lastModStr {
		return true // the browser echoes Last-Modified: skip parsing
	}
	return NotModified(ifNoneMatch, ifModifiedSince, v.etag, e.lastMod)
}

// VariantETag is the entity tag of a representation in content coding enc,
// given the tag of the identity representation: each coding is a different
// representation and gets its own strong validator ("abc" → "abc-gz").
func VariantETag(etag string, enc Encoding) string {
	if etag == "" || enc == Identity || len(etag) < 2 || etag[len(etag)-1] != '"' {
		return etag
	}
	suffix := "-gz"
	if enc == Brotli {
		suffix = "-br"
	}
	return etag[:len(etag)-1] + suffix + `"`
}

// etagListMatches reports whether an If-None-Match value matches etag with the
// weak comparison: W/ prefixes are ignored, the opaque tags must be equal.
func etagListMatches(list, etag string) bool {
	want := opaqueTag(etag) // "" when there is no usable ETag: only "*" matches
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
