package wiki

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTitleBytes is the longest title accepted, in bytes of UTF-8 (as MediaWiki).
const MaxTitleBytes = 255

// Title is a normalized page title in display form: "Category:Foo bar".
// Spaces, never underscores; namespace prefix canonical; Unicode NFC; the
// first letter of the name upper-cased unless the wiki's TitleRules keep
// it as written (never in the User, User talk and Special namespaces).
// The zero Title is invalid. Only ParseTitle or TitleRules.Parse (or a
// trusted store) should produce one.
type Title string

// TitleRules are the settings of one wiki that decide how text becomes a
// Title: whether the first letter of a name is upper-cased (MediaWiki's
// $wgCapitalLinks). The zero value is MediaWiki's default, which
// ParseTitle applies: "apple" and "Apple" are the same page. Pass a
// wiki's rules down to everything that reads titles from people or from
// page text.
type TitleRules struct {
	// caseSensitive keeps the first letter of names as written, outside
	// the namespaces that are always capitalized ($wgCapitalLinks =
	// false). Negated so that the zero value is the default.
	caseSensitive bool
}

// NewTitleRules returns the rules of a wiki whose capital_links setting
// is capitalLinks: true upper-cases the first letter of every title's name,
// false keeps it as written except for user pages and special pages.
func NewTitleRules(capitalLinks bool) TitleRules { return TitleRules{caseSensitive: !capitalLinks} }

// CapitalLinks reports whether r upper-cases the first letter of every
// title's name.
func (r TitleRules) CapitalLinks() bool { return !r.caseSensitive }

// Capitalized reports whether r upper-cases the first letter of names in
// the namespace named ns (canonical, "" for the main namespace). As in
// MediaWiki (NamespaceInfo::isCapitalized), User, User talk and Special
// always are: a user name is capitalized, and so is its page.
func (r TitleRules) Capitalized(ns string) bool {
	return !r.caseSensitive || ns == NSUser || ns == NSUserTalk || ns == NSSpecial
}

// keepCase are the rules that leave the first letter of a name as it is:
// for titles derived from titles already normalized by some wiki's rules
// (a talk page, a subject, a parent), which must keep the case they have.
var keepCase = TitleRules{caseSensitive: true}

// ParseTitle normalizes s the way MediaWiki does by default (TitleRules's
// zero value: first letters upper-cased) and rejects what cannot be a
// title, with an error that says which character or rule was at fault.
// Underscores and runs of white space become single spaces. Invisible,
// bidirectional-control, private-use and unassigned characters are refused
// (see checkCharacters): every path that accepts a title comes through here
// or through TitleRules.Parse. Text from people or pages of a wiki whose
// rules may differ goes through the wiki's TitleRules.Parse instead.
func ParseTitle(s string) (Title, error) { return TitleRules{}.parse(s, true) }

// Parse is ParseTitle by the rules r.
func (r TitleRules) Parse(s string) (Title, error) { return r.parse(s, true) }

// parse is Parse; chars false skips the character rules, for looking up
// names stored before them (LookupUserName).
func (r TitleRules) parse(s string, chars bool) (Title, error) {
	if !utf8.ValidString(s) {
		return "", Errorf(KindInvalid, "the title is not valid UTF-8; use plain Unicode text")
	}
	s = normalizeNFC(s)
	if chars {
		if err := checkCharacters(s, "title", true); err != nil {
			return "", err
		}
	} else if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", Errorf(KindInvalid, "the name contains a control character; remove it")
	}
	s = spaced(s)
	if s == "" {
		return "", Errorf(KindInvalid, "the title is empty; give the page a name")
	}
	for i, r := range s {
		switch {
		case r == '#' || r == '<' || r == '>' || r == '[' || r == ']' || r == '|' || r == '{' || r == '}':
			return "", Errorf(KindInvalid, "the title %q contains the character %q, which titles may not contain (forbidden: # < > [ ] | { })", s, string(r))
		case r == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			return "", Errorf(KindInvalid, "the title %q contains a percent-encoded sequence (%s); decode it or write the character itself", s, s[i:i+3])
		}
	}
	ns, name := splitNamespace(s)
	if ns != "" && name == "" {
		return "", Errorf(KindInvalid, "the title %q names the %s namespace but no page in it", s, ns)
	}
	// As in MediaWiki: Talk:User:X would be the talk page of User:X, which
	// is User talk:X.
	if ns == NSTalk {
		switch inner, _ := splitNamespace(name); inner {
		case "":
		case NSSpecial:
			return "", Errorf(KindInvalid, "the title %q puts a special page in the Talk namespace; special pages have no talk pages", s)
		case talkName(inner):
			return "", Errorf(KindInvalid, "the title %q puts a %s page in the Talk namespace; a talk page has no talk page of its own", s, inner)
		default:
			return "", Errorf(KindInvalid, "the title %q puts a %s page in the Talk namespace; the talk page of a %s page is in %s (%s:…)",
				s, inner, inner, talkName(inner), talkName(inner))
		}
	}
	if name == "." || name == ".." || strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") ||
		strings.Contains(name, "/./") || strings.Contains(name, "/../") || strings.HasSuffix(name, "/.") || strings.HasSuffix(name, "/..") {
		return "", Errorf(KindInvalid, "the title %q contains a relative path (. or ..); titles may not", s)
	}
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, ":") {
		return "", Errorf(KindInvalid, "the title %q may not start with %q", s, name[:1])
	}
	if strings.Contains(name, "~~~") {
		return "", Errorf(KindInvalid, "the title %q may not contain three tildes (~~~)", s)
	}
	if strings.Contains(name, "//") {
		return "", Errorf(KindInvalid, "the title %q contains two slashes in a row; a subpage needs a name between them", s)
	}
	// Upper-casing the first letter can leave a sequence that is not in NFC
	// (a dotless i before a combining dot becomes I and the dot): normalize
	// again, so that a title's own key parses to the same title.
	if r.Capitalized(ns) {
		name = normalizeNFC(upperFirst(name))
	}
	t := name
	if ns != "" {
		t = ns + ":" + name
	}
	if len(t) > MaxTitleBytes {
		return "", Errorf(KindInvalid, "the title is %d bytes long; the limit is %d bytes", len(t), MaxTitleBytes)
	}
	return Title(t), nil
}

// MustTitle is ParseTitle for constants in code and tests; it panics on error.
func MustTitle(s string) Title {
	t, err := ParseTitle(s)
	if err != nil {
		panic(err)
	}
	return t
}

// ParseLink splits a link target "Page#Section" into its title, parsed by
// r, and fragment. A bare "#Section" returns an empty title: a link within
// the current page.
func (r TitleRules) ParseLink(s string) (Title, string, error) {
	target, frag, _ := strings.Cut(s, "#")
	frag = strings.TrimSpace(frag)
	if strings.TrimSpace(target) == "" {
		if frag == "" {
			return "", "", Errorf(KindInvalid, "the link is empty")
		}
		return "", frag, nil
	}
	t, err := r.Parse(target)
	return t, frag, err
}

// spaced returns s with each run of underscores and white space as one
// space, and none at either end.
func spaced(s string) string {
	if isSpaced(s) {
		return s // most titles, and every link to one written as it is
	}
	return respace(s)
}

// respace is spaced, rune by rune.
func respace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if r == '_' || unicode.IsSpace(r) || r == '\u00a0' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// isSpaced reports whether s is ASCII that spaced leaves as it is: no
// underscore, no white space but single spaces between other bytes.
func isSpaced(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf, c == '_', c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			return false
		}
	}
	return true
}

// splitNamespace splits s at its namespace prefix, if the part before its
// first colon names a namespace (any case, or an alias): the canonical name
// and the rest. Otherwise s is in the main namespace.
func splitNamespace(s string) (ns, name string) {
	prefix, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", s
	}
	if n, ok := lookupNamespace(strings.TrimSpace(prefix)); ok {
		return n, strings.TrimSpace(rest)
	}
	return "", s
}

// talkName is the name of the talk namespace of the namespace named ns
// (Special has none: Special itself).
func talkName(ns string) string {
	if n, ok := NamespaceByName(ns); ok {
		return n.Talk().Name
	}
	return ns
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	u := unicode.ToUpper(r)
	if u == r {
		return s
	}
	return string(u) + s[n:]
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// String returns the display form, with spaces.
func (t Title) String() string { return string(t) }

// Namespace returns the canonical namespace name, "" for the main namespace.
func (t Title) Namespace() string { ns, _ := splitNamespace(string(t)); return ns }

// Name returns the title without its namespace prefix.
func (t Title) Name() string { _, n := splitNamespace(string(t)); return n }

// IsSpecial reports whether t names a special page (Special:…).
func (t Title) IsSpecial() bool { return t.Namespace() == NSSpecial }

// IsTalk reports whether t is a talk page (Talk:…, User talk:…).
func (t Title) IsTalk() bool {
	n, ok := NamespaceByName(t.Namespace())
	return ok && n.IsTalk()
}

// Talk returns the talk page of subject page t: "Foo" → "Talk:Foo",
// "User:Bob" → "User talk:Bob". ok is false for a talk page, a special
// page, and a title whose talk page would be longer than MaxTitleBytes.
func (t Title) Talk() (Title, bool) {
	n, ok := NamespaceByName(t.Namespace())
	if !ok || n.IsTalk() {
		return "", false
	}
	talk, err := keepCase.Parse(n.Talk().Name + ":" + t.Name())
	if err != nil {
		return "", false
	}
	return talk, true
}

// Subject returns the page talk page t is about ("User talk:Bob" →
// "User:Bob"); any other title is its own subject.
func (t Title) Subject() Title {
	n, ok := NamespaceByName(t.Namespace())
	if !ok || !n.IsTalk() {
		return t
	}
	s := t.Name()
	if sub := n.Subject(); sub.Name != "" {
		s = sub.Name + ":" + s
	}
	subject, err := keepCase.Parse(s)
	if err != nil {
		return t
	}
	return subject
}

// Pair returns the other page of t's subject and talk pair, whose tab t's
// page views show: the talk page of a subject page, the subject of a talk
// page. ok is false for special pages (and a subject whose talk page would
// be too long).
func (t Title) Pair() (Title, bool) {
	if t.IsTalk() {
		s := t.Subject()
		return s, s != t
	}
	return t.Talk()
}

// Key returns the URL form: underscores for spaces ("Main_Page").
func (t Title) Key() string { return strings.ReplaceAll(string(t), " ", "_") }

// URL returns the escaped path of the page's view: "/wiki/Main_Page".
func (t Title) URL() string { return "/wiki/" + EscapeKey(t.Key()) }

// EscapeKey escapes a title key for a URL path, keeping '/' and ':' readable.
func EscapeKey(key string) string {
	var b strings.Builder
	for _, seg := range strings.SplitAfter(key, "/") {
		last := strings.HasSuffix(seg, "/")
		seg = strings.TrimSuffix(seg, "/")
		b.WriteString(strings.ReplaceAll(url.PathEscape(seg), "%3A", ":"))
		if last {
			b.WriteByte('/')
		}
	}
	return b.String()
}

// Parents returns the existing-or-not ancestors of a subpage title, nearest last:
// "A/B/C" → ["A", "A/B"]. Special pages and titles without '/' have none.
func (t Title) Parents() []Title {
	if t.IsSpecial() {
		return nil
	}
	s := string(t)
	var out []Title
	for i := 0; i < len(s); i++ {
		if s[i] == '/' && i > 0 {
			if p, err := keepCase.Parse(s[:i]); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// Subpage returns the part after the last '/', or the whole name.
func (t Title) Subpage() string {
	n := t.Name()
	if i := strings.LastIndexByte(n, '/'); i >= 0 && i < len(n)-1 {
		return n[i+1:]
	}
	return n
}

// GoString helps tests print titles.
func (t Title) GoString() string { return fmt.Sprintf("wiki.Title(%q)", string(t)) }
