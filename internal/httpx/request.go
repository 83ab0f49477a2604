package httpx

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// Kind is how a parameter's value is read and written.
type Kind uint8

// The parameter kinds.
const (
	// Text is any UTF-8 text, trimmed of surrounding white space; at most
	// Max bytes (default 1024).
	Text Kind = iota
	// ID is a positive integer in plain decimal (or one of Values).
	ID
	// Offset is a non-negative integer; 0 is the default and is dropped.
	Offset
	// Limit is a count from 1 to Max: a larger value becomes Max, a smaller
	// one is dropped (the handler's default applies).
	Limit
	// TitleKey is a page title, by the wiki's title rules, written in its
	// key form (underscores).
	TitleKey
	// Enum is one of Values.
	Enum
	// Flag is present or not: any value is written "1".
	Flag
	// Namespace is a namespace by MediaWiki's number (namespace=1 is
	// Talk), written in plain decimal; "all" is every namespace, the same
	// as no value, and is dropped.
	Namespace
	// SortCursor is a place in a category listing, as MediaWiki's
	// pagefrom: a sort key, folded (wiki.SortKey: "b" is "B"), optionally
	// followed by a line break and a title in its key form ("B\nBanana_split",
	// the member to start at among those of that key). It is not trimmed
	// of white space, which a key may be (" " lists a page first); a
	// control character other than that line break is refused.
	SortCursor
	// Index is a non-negative integer in plain decimal, 0 included (a
	// section number), or one of Values.
	Index
)

// Param is one parameter a route reads.
type Param struct {
	Name    string
	Alias   string // another name read as this one (MediaWiki's "search" for "q")
	Kind    Kind
	What    string   // what the value is, for error messages: "a revision number"
	Values  []string // Enum: the accepted values; ID: words accepted besides numbers
	Max     int64    // Limit: the largest count; Text: the longest value in bytes
	Default string   // a value equal to this (after normalization) is dropped
}

// Spec is what one route reads from the URL. Its Name labels metrics.
type Spec struct {
	Name   string
	Params []Param
}

// Canonical normalizes q by s: parameters s does not read and empty ones are
// dropped, each value is put in canonical form (titles by rules, the
// wiki's), and the result is sorted by name. A value that cannot be read,
// or a name given twice with different values, is an error the user can
// act on.
func (s *Spec) Canonical(q Query, rules wiki.TitleRules) (Params, error) {
	var out Params
	for _, p := range q {
		i := slices.IndexFunc(s.Params, func(x Param) bool { return x.Name == p.Name || x.Alias != "" && x.Alias == p.Name })
		if i < 0 {
			continue
		}
		p.Name = s.Params[i].Name
		v, err := s.Params[i].normalize(p.Value, rules)
		if err != nil {
			return nil, err
		}
		if v == "" {
			continue
		}
		// Repeats are compared before defaults are dropped: "view" and
		// "history" for action contradict each other.
		if j := slices.IndexFunc(out, func(x Pair) bool { return x.Name == p.Name }); j >= 0 {
			if out[j].Value != v {
				return nil, wiki.Errorf(wiki.KindInvalid, "the parameter %q is given twice with different values (%.40q and %.40q); give it once", p.Name, out[j].Value, v)
			}
			continue
		}
		out = append(out, Pair{p.Name, v})
	}
	out = slices.DeleteFunc(out, func(x Pair) bool {
		i := slices.IndexFunc(s.Params, func(p Param) bool { return p.Name == x.Name })
		return x.Value == s.Params[i].Default
	})
	slices.SortFunc(out, func(a, b Pair) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// maxIndex bounds an Index: no page has more sections.
const maxIndex = 1 << 30

// Normalize returns v in p's canonical form ("" for an empty value), or an
// error the user can act on: for a value read from elsewhere than the URL
// (a form field, a JSON body) by the rules of the URL's parameter.
func (p *Param) Normalize(v string, rules wiki.TitleRules) (string, error) {
	return p.normalize(v, rules)
}

func (p *Param) normalize(v string, rules wiki.TitleRules) (string, error) {
	if p.Kind == SortCursor {
		return p.sortCursor(v)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	what := p.What
	if what == "" {
		what = "a number"
	}
	bad := func() (string, error) {
		return "", wiki.Errorf(wiki.KindInvalid, "the parameter %s must be %s, not %.40q; fix the link", p.Name, what, v)
	}
	switch p.Kind {
	case Text:
		max := p.Max
		if max == 0 {
			max = 1024
		}
		if int64(len(v)) > max {
			return "", wiki.Errorf(wiki.KindInvalid, "the parameter %s is longer than %d bytes; shorten it", p.Name, max)
		}
		if strings.IndexFunc(v, isControl) >= 0 {
			return "", wiki.Errorf(wiki.KindInvalid, "the parameter %s contains a control character; remove it", p.Name)
		}
		return v, nil
	case ID:
		if slices.Contains(p.Values, v) {
			return v, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return bad()
		}
		return strconv.FormatInt(n, 10), nil
	case Index:
		if slices.Contains(p.Values, v) {
			return v, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > maxIndex {
			return bad()
		}
		return strconv.FormatInt(n, 10), nil
	case Offset:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return bad()
		}
		if p.Max > 0 && n > p.Max {
			n = p.Max
		}
		if n == 0 {
			return "", nil
		}
		return strconv.FormatInt(n, 10), nil
	case Limit:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad()
		}
		if n < 1 {
			return "", nil
		}
		return strconv.FormatInt(min(n, p.Max), 10), nil
	case TitleKey:
		t, err := rules.Parse(v)
		if err != nil {
			return "", wiki.Errorf(wiki.KindInvalid, "the parameter %s is not a valid title: %s", p.Name, wiki.Message(err))
		}
		return t.Key(), nil
	case Flag:
		return "1", nil
	case Namespace:
		if strings.EqualFold(v, "all") {
			return "", nil
		}
		id, err := strconv.Atoi(v)
		n, ok := wiki.NamespaceByID(id)
		if err != nil || !ok {
			return "", wiki.Errorf(wiki.KindInvalid, "the parameter %s must be the number of a namespace (%s) or all, not %.40q; fix the link",
				p.Name, namespaceNumbers, v)
		}
		return n.Param(), nil
	case Enum:
		if slices.Contains(p.Values, v) {
			return v, nil
		}
		return "", wiki.Errorf(wiki.KindInvalid, "the parameter %s has the unknown value %.40q; known: %s", p.Name, v, strings.Join(p.Values, ", "))
	}
	return "", nil
}

// maxCursorTitle bounds the title of a SortCursor (titles are at most 255
// bytes; a cursor's need be no longer).
const maxCursorTitle = 255

// sortCursor normalizes a SortCursor value: the key folded, the title in
// its key form (underscores for spaces, as Title.Key). The title is not
// checked against the title rules: it only places the cursor among the
// members of its key, by the bytes of their titles.
func (p *Param) sortCursor(v string) (string, error) {
	key, title, hasTitle := strings.Cut(v, "\n")
	if strings.IndexFunc(key, isControl) >= 0 || strings.IndexFunc(title, isControl) >= 0 {
		return "", wiki.Errorf(wiki.KindInvalid, "the parameter %s must be a sort key, optionally followed by a line break (%%0A) and a title, without other control characters, not %.40q; fix the link", p.Name, v)
	}
	title = strings.ReplaceAll(strings.TrimSpace(strings.ReplaceAll(title, "_", " ")), " ", "_")
	if len(title) > maxCursorTitle {
		return "", wiki.Errorf(wiki.KindInvalid, "the title in the parameter %s is longer than %d bytes; a title is never longer, fix the link", p.Name, maxCursorTitle)
	}
	key = wiki.SortKey(key)
	if !hasTitle || title == "" {
		return key, nil
	}
	return key + "\n" + title, nil
}

// namespaceNumbers lists the namespaces' numbers for error messages:
// "0 (Main), 1 Talk, …".
var namespaceNumbers = func() string {
	parts := make([]string, len(wiki.Namespaces))
	for i, n := range wiki.Namespaces {
		parts[i] = n.Param() + " " + n.Label()
	}
	return strings.Join(parts, ", ")
}()

func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 }

// Request is a parsed request: the one value handlers read the URL from.
type Request struct {
	Spec   *Spec
	Path   string // canonical escaped path
	Params Params // canonical parameters
	// AsSent reports that the request target as sent is exactly Key: only
	// then may the edge cache serve or store the response.
	AsSent bool
	// Moved reports that the target differs from Key in a way a redirect
	// fixes (a GET or HEAD then gets a 301 to Key).
	Moved bool
	// Shared is set by the handler layer when the response may be shared
	// by every reader (an anonymous request on a wiki anyone may read).
	Shared bool
	// Rules are the wiki's title rules, by which title parameters were
	// put in canonical form and are read back (Title, Link).
	Rules wiki.TitleRules
}

// Parse reads r's query by spec, titles by rules, the wiki's; path is the
// canonical escaped path of the resource r names (its title parsed by the
// same rules). Bad parameter values are errors (a 400).
func Parse(r *http.Request, spec *Spec, path string, rules wiki.TitleRules) (*Request, error) {
	q, err := ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	return ParseQueryFor(r, q, spec, path, rules)
}

// ParseQueryFor is Parse with the query already decoded (a router that
// chooses the route by a parameter decodes it first).
func ParseQueryFor(r *http.Request, q Query, spec *Spec, path string, rules wiki.TitleRules) (*Request, error) {
	params, err := spec.Canonical(q, rules)
	if err != nil {
		return nil, err
	}
	req := &Request{Spec: spec, Path: path, Params: params, Rules: rules}
	key := req.Key()
	req.AsSent = r.RequestURI == key
	req.Moved = !req.AsSent && originForm(r.URL) != key
	return req, nil
}

// originForm is u's path and query as the client could send them again.
func originForm(u *url.URL) string {
	s := u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		s += "?" + u.RawQuery
	}
	return s
}

// Key is the canonical target: the edge cache key, and the URL a
// non-canonical request is redirected to.
func (q *Request) Key() string { return URL(q.Path, q.Params) }

// Get returns the canonical value of a parameter, or "".
func (q *Request) Get(name string) string { return q.Params.Get(name) }

// Has reports whether the parameter is present.
func (q *Request) Has(name string) bool { return q.Params.Has(name) }

// Int returns an ID, Offset or Limit parameter, or def when absent.
func (q *Request) Int(name string, def int64) int64 {
	v := q.Params.Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def
	}
	return n
}

// Namespaces returns a Namespace parameter as a namespace filter: the
// canonical name of the namespace it names, or nil (every namespace) when
// it is absent.
func (q *Request) Namespaces(name string) []string {
	id, err := strconv.Atoi(q.Params.Get(name))
	if err != nil {
		return nil
	}
	n, ok := wiki.NamespaceByID(id)
	if !ok {
		return nil
	}
	return []string{n.Name}
}

// Title returns a TitleKey parameter, or "" when absent.
func (q *Request) Title(name string) wiki.Title {
	v := q.Params.Get(name)
	if v == "" {
		return ""
	}
	t, err := q.Rules.Parse(v)
	if err != nil {
		return ""
	}
	return t
}

// SortCursor returns a SortCursor parameter as a category cursor, or the
// zero cursor (the listing's start) when it is absent.
func (q *Request) SortCursor(name string) wiki.CategoryCursor {
	key, title, _ := strings.Cut(q.Params.Get(name), "\n")
	return wiki.CategoryCursor{SortKey: key, Title: wiki.Title(strings.ReplaceAll(title, "_", " "))}
}

// SortCursorValue is the value of a SortCursor parameter that names c:
// for links to a place in a category listing.
func SortCursorValue(c wiki.CategoryCursor) string {
	if c.Title == "" {
		return c.SortKey
	}
	return c.SortKey + "\n" + c.Title.Key()
}

type ctxKey int

const (
	requestKey ctxKey = iota
	routeKey
)

// With returns r carrying q, for From.
func With(r *http.Request, q *Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), requestKey, q))
}

// From returns the parsed request r carries, or nil.
func From(r *http.Request) *Request {
	q, _ := r.Context().Value(requestKey).(*Request)
	return q
}

// routeNote is where the handler layer writes the matched route's name for
// the metrics middleware, which runs outside it.
type routeNote struct{ name string }

// NoteRoute returns a context in which SetRoute records a route name.
func NoteRoute(ctx context.Context) context.Context {
	return context.WithValue(ctx, routeKey, &routeNote{})
}

// SetRoute records the route that r matched (see NoteRoute).
func SetRoute(r *http.Request, name string) {
	if n, ok := r.Context().Value(routeKey).(*routeNote); ok {
		n.name = name
	}
}

// RouteOf returns the route recorded in ctx, or "other".
func RouteOf(ctx context.Context) string {
	if n, ok := ctx.Value(routeKey).(*routeNote); ok && n.name != "" {
		return n.name
	}
	return "other"
}

// Link returns the canonical URL of path with the given parameters (name,
// value pairs) as q's route normalizes them, titles by q's rules: links
// the server writes are canonical, so following them never costs a
// redirect.
func (q *Request) Link(path string, nameValues ...string) string {
	return q.Spec.Link(path, q.Rules, nameValues...)
}

// Link is Request.Link for route s of a wiki whose title rules are rules.
func (s *Spec) Link(path string, rules wiki.TitleRules, nameValues ...string) string {
	q := make(Query, 0, len(nameValues)/2)
	for i := 0; i+1 < len(nameValues); i += 2 {
		q = append(q, Pair{nameValues[i], nameValues[i+1]})
	}
	p, err := s.Canonical(q, rules)
	if err != nil {
		return path
	}
	return URL(path, p)
}
