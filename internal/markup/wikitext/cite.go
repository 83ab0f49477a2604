package wikitext

import (
	"strconv"
	"strings"
)

// References, as the Cite extension reads them: <ref>text</ref> is a
// numbered note, <ref name=x>text</ref> one that <ref name=x/> cites
// again, group=g numbers a group of its own; <references/> lists the
// notes cited so far (of its group), and the notes never listed are
// listed at the end of the page. The HTML is the Markdown renderer's
// footnotes' (ids and roles the sanitizer knows), numbered as Cite does.

// ref is one note.
type ref struct {
	name, group string
	text        string   // its content after the inline passes, with markers
	more        []string // the texts that follow it, each after a space
	raw         string   // its content as written, trimmed
	defined     bool
	follow      bool // text that follows another note, shown unnumbered
	clash       bool // defined again with other content
	num         int  // its number in its group
	id          int  // its number in the page: the anchors' ids
	uses        int  // how many times it is cited
}

// refList is the notes a references list shows.
type refList struct {
	group string
	refs  []*ref
}

type refGroup struct {
	refs  []*ref // cited and not listed yet
	count int
	named map[string]*ref
}

type cite struct {
	groups []string // in order of first use
	byName map[string]*refGroup
	nextID int
}

func (c *cite) group(g string) *refGroup {
	if c.byName == nil {
		c.byName = map[string]*refGroup{}
	}
	rg, ok := c.byName[g]
	if !ok {
		rg = &refGroup{named: map[string]*ref{}}
		c.byName[g] = rg
		c.groups = append(c.groups, g)
	}
	return rg
}

// lookupRef returns the note name of group g, making it when new.
func (d *doc) lookupRef(g, name string) *ref {
	rg := d.cite.group(g)
	if name != "" {
		if r, ok := rg.named[name]; ok {
			return r
		}
	}
	d.cite.nextID++
	rg.count++
	r := &ref{name: name, group: g, num: rg.count, id: d.cite.nextID}
	rg.refs = append(rg.refs, r)
	if name != "" {
		rg.named[name] = r
	}
	return r
}

// define sets the content of r.
func (d *doc) define(r *ref, content string) {
	content = strings.TrimSpace(content)
	if content == "" {
		return
	}
	if r.defined {
		r.clash = r.clash || content != r.raw
		return
	}
	r.defined, r.raw = true, content
	r.text = d.inline(d.strip(content, false), false)
}

// citeError is the mark of one of Cite's errors (its English message,
// HTML).
func (d *doc) citeError(msg string) string {
	return d.addMark(mark{kind: kindInline, html: citeErrorHTML(msg)})
}

func citeErrorHTML(msg string) string {
	return `<strong class="error">Cite error: ` + msg + `</strong>`
}

const invalidRef = "Invalid <code>&lt;ref&gt;</code> tag; "

// refAttrs are the attributes a <ref> may have.
var refAttrs = map[string]bool{"name": true, "group": true, "follow": true, "dir": true}

// ref handles a <ref> tag: the note's mark in the text.
func (d *doc) ref(attrs, content string, self bool) string {
	name := attrValue(attrs, "name")
	g := attrValue(attrs, "group")
	follow := attrValue(attrs, "follow")
	for _, a := range parseAttrs(attrs) {
		if !refAttrs[a.name] {
			return d.citeError(invalidRef + "invalid names, e.g. too many")
		}
	}
	if hasAttr(attrs, "dir") {
		if dir := strings.ToLower(attrValue(attrs, "dir")); dir != "ltr" && dir != "rtl" {
			return d.citeError("Invalid <code>dir=&#34;" + escapeText(attrValue(attrs, "dir")) + "&#34;</code>, must be <code>ltr</code> or <code>rtl</code>")
		}
	}
	switch {
	case name != "" && follow != "":
		return d.citeError(invalidRef + "invalid names, e.g. too many")
	case isInteger(name):
		return d.citeError(invalidRef + "name cannot be a simple integer. Use a descriptive title")
	case name == "" && follow == "" && self:
		return d.citeError("The opening <code>&lt;ref&gt;</code> tag is malformed or has a bad name")
	case name == "" && strings.TrimSpace(content) == "":
		return d.citeError(invalidRef + "refs with no name must have content")
	case follow != "":
		rg := d.cite.group(g)
		if p, ok := rg.named[follow]; ok && p.defined {
			// Kept apart and joined once when listed: appending to the
			// text here would copy it again for every follower.
			p.more = append(p.more, d.inline(d.strip(strings.TrimSpace(content), false), false))
			return ""
		}
		r := &ref{group: g, follow: true, defined: true, text: d.inline(d.strip(strings.TrimSpace(content), false), false)}
		rg.refs = append(rg.refs, r)
		return ""
	}
	r := d.lookupRef(g, name)
	if !self {
		d.define(r, content)
	}
	r.uses++
	id := "_fnref-" + strconv.Itoa(r.id)
	if r.uses > 1 {
		id += "-" + strconv.Itoa(r.uses)
	}
	label := strconv.Itoa(r.num)
	if g != "" {
		label = escapeText(g) + " " + label
	}
	return d.addMark(mark{kind: kindInline, html: `<sup id="` + id + `"><a href="#_fn-` + strconv.Itoa(r.id) + `" role="doc-noteref">[` + label + `]</a></sup>`})
}

// references handles a <references> tag: the list of its group's notes
// cited so far. Notes defined inside it (<ref name=x>text</ref>) give
// their text to the notes cited by name.
func (d *doc) references(attrs, content string, self bool) string {
	for _, a := range parseAttrs(attrs) {
		if a.name != "group" && a.name != "responsive" {
			return d.citeError("Invalid parameter in <code>&lt;references&gt;</code> tag")
		}
	}
	g := attrValue(attrs, "group")
	var errs []string
	if !self {
		for i := 0; i < len(content); {
			k := strings.IndexByte(content[i:], '<')
			if k < 0 {
				break
			}
			i += k
			d.b.check()
			_, a, selfRef, end, ok := startTag(content, i, []string{"ref"})
			if !ok {
				i++
				continue
			}
			if selfRef {
				i = end
				continue
			}
			cs, ce, ok := closeTag(content, end, "ref")
			if !ok {
				break
			}
			if name := attrValue(a, "name"); name != "" {
				rg := d.cite.group(g)
				switch r, ok := rg.named[name]; {
				case ok:
					d.define(r, content[end:cs])
				case len(rg.refs) == 0:
					errs = append(errs, "<code>&lt;ref&gt;</code> tag with name &#34;"+escapeText(name)+"&#34; defined in <code>&lt;references&gt;</code> has group attribute &#34;"+escapeText(g)+"&#34; which does not appear in prior text.")
				default:
					errs = append(errs, "<code>&lt;ref&gt;</code> tag with name &#34;"+escapeText(name)+"&#34; defined in <code>&lt;references&gt;</code> is not used in prior text.")
				}
			}
			i = ce
		}
	}
	var list strings.Builder
	list.WriteString(d.listRefs(g))
	for _, e := range errs {
		d.b.check()
		list.WriteString("\n" + d.citeError(e))
	}
	return list.String()
}

// listRefs returns the mark of the list of group g's notes cited since
// the last list, and starts the group afresh.
func (d *doc) listRefs(g string) string {
	rg := d.cite.group(g)
	l := &refList{group: g, refs: rg.refs}
	rg.refs, rg.count, rg.named = nil, 0, map[string]*ref{}
	if len(l.refs) == 0 {
		return ""
	}
	return d.addMark(mark{kind: kindBlock, refs: l})
}

// pendingRefs returns the list of the notes no <references> listed, as
// Cite adds it at the end of the page; notes of other groups than the
// default one are an error there.
func (d *doc) pendingRefs() string {
	var b, errs strings.Builder
	for _, g := range d.cite.groups {
		if g != "" {
			if rg := d.cite.group(g); len(rg.refs) > 0 {
				rg.refs = nil
				errs.WriteString("<br>" + citeErrorHTML("<code>&lt;ref&gt;</code> tags exist for a group named &#34;"+escapeText(g)+
					"&#34;, but no corresponding <code>&lt;references group=&#34;"+escapeText(g)+"&#34;/&gt;</code> tag was found"))
			}
			continue
		}
		if m := d.listRefs(g); m != "" {
			b.WriteString("\n" + m)
		}
	}
	if errs.Len() > 0 {
		b.WriteString("\n" + d.addMark(mark{kind: kindInline, html: errs.String()}))
	}
	return b.String()
}

// isInteger reports whether s is a number, which Cite does not take for a
// name.
func isInteger(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// refsHTML is the HTML of a list of notes, with markers.
func refsHTML(l *refList) string {
	var b strings.Builder
	b.WriteString(`<div class="footnotes" role="doc-endnotes"><ol>`)
	for _, r := range l.refs {
		if r.follow {
			b.WriteString("<p>" + r.fullText() + "</p>\n")
			continue
		}
		id := strconv.Itoa(r.id)
		b.WriteString(`<li id="_fn-` + id + `">`)
		switch {
		case r.uses == 1:
			b.WriteString(`<a href="#_fnref-` + id + `" role="doc-backlink">↑</a> `)
		case r.uses > 1:
			b.WriteString("↑")
			for k := 1; k <= r.uses; k++ {
				ref := "_fnref-" + id
				if k > 1 {
					ref += "-" + strconv.Itoa(k)
				}
				b.WriteString(` <sup><a href="#` + ref + `" role="doc-backlink">` + strconv.Itoa(k) + `</a></sup>`)
			}
			b.WriteByte(' ')
		}
		if r.defined {
			b.WriteString(r.fullText())
		} else {
			b.WriteString(citeErrorHTML(invalidRef + "no text was provided for refs named <code>" + escapeText(r.name) + "</code>"))
		}
		if r.clash {
			b.WriteString(" " + citeErrorHTML(invalidRef+"name &#34;"+escapeText(r.name)+"&#34; defined multiple times with different content"))
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ol></div>")
	return b.String()
}

// fullText is r's text and the texts that follow it.
func (r *ref) fullText() string {
	if len(r.more) == 0 {
		return r.text
	}
	return r.text + " " + strings.Join(r.more, " ")
}
