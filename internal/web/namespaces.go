package web

import (
	"net/http"

	"github.com/wikid/wikid/internal/httpx"
	"github.com/wikid/wikid/internal/wiki"
)

// namespaceParam filters a listing by namespace, by MediaWiki's numbers
// (namespace=1 is Talk), so that MediaWiki's URLs work.
var namespaceParam = httpx.Param{Name: "namespace", Kind: httpx.Namespace}

// nsOption is one choice of a listing's namespace filter.
type nsOption struct {
	Value    string // the namespace parameter; "" for all namespaces
	Label    string
	Selected bool
}

// namespaceOptions returns the choices of the namespace filter of r's
// listing, the one its request selects marked.
func namespaceOptions(r *http.Request) []nsOption {
	cur := httpx.From(r).Get(namespaceParam.Name)
	out := make([]nsOption, 0, len(wiki.Namespaces)+1)
	out = append(out, nsOption{Value: "", Label: "all", Selected: cur == ""})
	for _, n := range wiki.Namespaces {
		out = append(out, nsOption{Value: n.Param(), Label: n.Label(), Selected: cur == n.Param()})
	}
	return out
}

// namespaceFilter returns the namespace filter of r's listing (nil: all
// namespaces), and its canonical parameter value for links.
func namespaceFilter(r *http.Request) ([]string, string) {
	q := httpx.From(r)
	return q.Namespaces(namespaceParam.Name), q.Get(namespaceParam.Name)
}
