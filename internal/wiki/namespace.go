package wiki

import (
	"slices"
	"strconv"
	"strings"
)

// Namespaces known to the wiki, by canonical name (the prefix of a title in
// them, and the pages.ns column). The main namespace has no prefix.
const (
	NSMain         = ""
	NSTalk         = "Talk"
	NSUser         = "User"
	NSUserTalk     = "User talk"
	NSProject      = "Project"
	NSProjectTalk  = "Project talk"
	NSFile         = "File" // reserved for uploads: its pages are plain pages until then
	NSFileTalk     = "File talk"
	NSTemplate     = "Template"
	NSTemplateTalk = "Template talk"
	NSHelp         = "Help"
	NSHelpTalk     = "Help talk"
	NSCategory     = "Category"
	NSCategoryTalk = "Category talk"
	NSSpecial      = "Special"
)

// Namespace is a namespace pages can be in. ID is MediaWiki's number for
// it, which URLs carry (namespace=1): a subject namespace has an even ID
// and its talk namespace the next one, as in MediaWiki.
type Namespace struct {
	ID   int
	Name string // canonical name; "" for the main namespace
}

// Namespaces are the namespaces pages can be in, by ID. Special is not one
// of them: its pages are generated.
var Namespaces = []Namespace{
	{0, NSMain}, {1, NSTalk},
	{2, NSUser}, {3, NSUserTalk},
	{4, NSProject}, {5, NSProjectTalk},
	{6, NSFile}, {7, NSFileTalk},
	{10, NSTemplate}, {11, NSTemplateTalk},
	{12, NSHelp}, {13, NSHelpTalk},
	{14, NSCategory}, {15, NSCategoryTalk},
}

// namespaceAliases are other names a title may use for a namespace, lower
// case: Wikid's old name for the project namespace, so that old links keep
// working, and MediaWiki's Image for File.
var namespaceAliases = map[string]string{
	"wikid":      NSProject,
	"wikid talk": NSProjectTalk,
	"image":      NSFile,
	"image talk": NSFileTalk,
}

// NamespaceByID returns the namespace with MediaWiki's number id.
func NamespaceByID(id int) (Namespace, bool) {
	for _, n := range Namespaces {
		if n.ID == id {
			return n, true
		}
	}
	return Namespace{}, false
}

// NamespaceByName returns the namespace with canonical name name ("" is
// the main namespace).
func NamespaceByName(name string) (Namespace, bool) {
	for _, n := range Namespaces {
		if n.Name == name {
			return n, true
		}
	}
	return Namespace{}, false
}

// IsTalk reports whether n is a talk namespace.
func (n Namespace) IsTalk() bool { return n.ID%2 == 1 }

// Talk returns the talk namespace of subject namespace n, or n itself when
// it is one.
func (n Namespace) Talk() Namespace { t, _ := NamespaceByID(n.ID | 1); return t }

// Subject returns the subject namespace of talk namespace n, or n itself
// when it is one.
func (n Namespace) Subject() Namespace { s, _ := NamespaceByID(n.ID &^ 1); return s }

// Label names n in lists and filters: its name, "(Main)" for the main
// namespace, as MediaWiki shows it.
func (n Namespace) Label() string {
	if n.Name == "" {
		return "(Main)"
	}
	return n.Name
}

// Param is n as a URL parameter value: its ID in decimal.
func (n Namespace) Param() string { return strconv.Itoa(n.ID) }

// Prefixes returns the title prefixes ("Talk:") of the names a title may
// give n in stored titles: its canonical name and its aliases as they are
// spelled when capitalized as a title's first letter is. Empty for the main
// namespace, which has none.
func (n Namespace) Prefixes() []string {
	if n.Name == "" {
		return nil
	}
	out := []string{n.Name + ":"}
	for alias, name := range namespaceAliases {
		if name == n.Name {
			out = append(out, upperFirst(alias)+":")
		}
	}
	slices.Sort(out[1:])
	return out
}

// lookupNamespace returns the canonical name of the namespace a title
// prefix names, ignoring case, with its aliases; ok is false when the
// prefix names none. Special is one here: titles can name it.
func lookupNamespace(prefix string) (string, bool) {
	if strings.EqualFold(prefix, NSSpecial) {
		return NSSpecial, true
	}
	for _, n := range Namespaces {
		if n.Name != "" && strings.EqualFold(prefix, n.Name) {
			return n.Name, true
		}
	}
	for alias, name := range namespaceAliases {
		if strings.EqualFold(prefix, alias) {
			return name, true
		}
	}
	return "", false
}
