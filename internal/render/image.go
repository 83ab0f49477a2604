package render

import (
	"net/url"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// fileImageTitle resolves the destination of a Markdown image that names a
// file of this wiki: a relative path ("Diagram.png", "./img/a.png") or a
// wiki-style "File:Diagram.png" (or "Image:…"), to the file's title. The
// path loses "./" and anything after '?' or '#', and its name is
// normalized as a title is by rules (underscores as spaces, the first
// letter upper case unless capital_links is off); a path that climbs out
// ("../a.png") or could not be a title names no file: t is empty. ok is
// false for a destination that names no file of the wiki: an absolute
// path, a URL, empty.
func fileImageTitle(dest []byte, rules wiki.TitleRules) (t wiki.Title, ok bool) {
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
	t, err = rules.Parse("File:" + p)
	if err != nil || t.Namespace() != wiki.NSFile {
		return "", true
	}
	return t, true
}
