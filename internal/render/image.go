package render

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/wiki"
)

// filePathURL is where the wiki serves the file named after it, MediaWiki's
// Special:FilePath: an image's URL that depends on nothing but the file's
// name, on the wiki's own origin (the CSP allows images from 'self' only).
const filePathURL = "/wiki/Special:FilePath/"

// fileImageSrc resolves the destination of a Markdown image that names a
// file of this wiki: a relative path ("Diagram.png", "./img/a.png") or a
// wiki-style "File:Diagram.png" (or "Image:…"). The image is requested from
// Special:FilePath, whatever page shows it. The path loses "./" and
// anything after '?' or '#', and its name is normalized as a title is
// (underscores as spaces, the first letter upper case); a path that climbs
// out ("../a.png") or could not be a title names no file and gets no
// source. ok is false for a destination that names no file of the wiki:
// an absolute path, a URL, empty.
func fileImageSrc(dest []byte) (src string, ok bool) {
	for _, prefix := range []string{"file:", "image:"} {
		if hasPrefixFold(dest, prefix) && len(dest) > len(prefix) && dest[len(prefix)] != '/' {
			dest = dest[len(prefix):]
			break
		}
	}
	if len(dest) == 0 || dest[0] == '/' || dest[0] == '\\' || isExternal(dest) {
		return "", false
	}
	p := string(dest)
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	p, err := url.PathUnescape(p)
	if err != nil {
		return "", true
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", true
		}
	}
	// The prefix keeps a name such as "Help:x.png" out of the namespaces.
	t, err := wiki.ParseTitle("File:" + p)
	if err != nil {
		return "", true
	}
	name := strings.TrimPrefix(string(t), "File:")
	if r, n := utf8.DecodeRuneInString(name); unicode.IsLower(r) {
		name = string(unicode.ToUpper(r)) + name[n:]
	}
	return filePathURL + wiki.EscapeKey(strings.ReplaceAll(name, " ", "_")), true
}
