package render

import (
	"regexp"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// redirectLine matches "#REDIRECT [[Target]]" (any case, optional colon)
// on the first line, as MediaWiki accepts it.
var redirectLine = regexp.MustCompile(`(?i)^[ \t]*#REDIRECT[ \t]*:?[ \t]*\[\[([^\[\]\n|]{1,512})(?:\|[^\[\]\n]*)?\]\]`)

// splitRedirect returns the redirect target of src, if any, parsed by
// rules, and the text to render: without the redirect line when there is
// one.
func splitRedirect(src string, rules wiki.TitleRules) (wiki.Title, string) {
	if len(src) < 10 || (src[0] != '#' && src[0] != ' ' && src[0] != '\t') {
		return "", src
	}
	m := redirectLine.FindStringSubmatchIndex(src)
	if m == nil {
		return "", src
	}
	target := strings.TrimSpace(src[m[2]:m[3]])
	target = strings.TrimPrefix(target, ":")
	t, _, err := rules.ParseLink(target)
	if err != nil || t == "" {
		return "", src
	}
	rest := src[m[1]:]
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[i+1:]
	} else {
		rest = ""
	}
	return t, rest
}
