package render

import (
	"net/url"
	"strings"

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
// by rules (underscores as spaces, the first letter upper case unless
// capital_links is off); a path that climbs out ("../a.png") or could not
// be a title names no file and gets no source. ok is false for a
// destination that names no file of the wiki: an absolute path, a URL,
// empty.
func fileImageSrc(dest []byte, rules wiki.TitleRules) (src string, ok bool) {
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
	t, err := rules.Parse("File:" + p)
	if err != nil {
		return "", true
	}
	return filePathURL + wiki.EscapeKey(strings.ReplaceAll(t.Name(), " ", "_")), true
}
