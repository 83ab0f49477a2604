package wikitext

import "github.com/wikid/wikid/internal/render"

// externalOpen is the <a> start tag of a link out to url, "" when the
// sanitizer would drop it.
func externalOpen(url string) string { return render.ExternalLinkOpen(url) }
