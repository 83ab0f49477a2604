package wikitext

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	xhtml "golang.org/x/net/html"

	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// maxWikiLink bounds how far the link pass looks for "]]" (maxFileEmbed
// for a file with its caption), so that unclosed "[[" cost linear time.
const (
	maxWikiLink  = 1024
	maxFileEmbed = 4096
)

// fileEmbed is [[File:…]] or [[Media:…]]: rendered by the Markdown
// renderer, which shows files the same way in both markups.
type fileEmbed struct {
	src   string     // the embed as the Markdown renderer reads it
	title wiki.Title // the file
	links []wiki.Title
	block bool // a thumbnail or a floated image: a block of its own
}

// internalLinks replaces [[…]] links by link markers around their label
// (and link trail), takes categories out and files in as markers.
func (d *doc) internalLinks(s string) string {
	if !strings.Contains(s, "[[") {
		return s
	}
	// A byte slice, not a strings.Builder: a category trims the white
	// space before it in place, where a builder would be copied.
	b := make([]byte, 0, len(s)+len(s)/8)
	last := 0
	for i := 0; i < len(s); {
		k := strings.Index(s[i:], "[[")
		if k < 0 {
			break
		}
		i += k
		d.b.check()
		inner, ok := enclosed(s[i+2:], maxWikiLink)
		if ok && strings.Contains(inner, "[[") {
			ok = false
		}
		if !ok && isFilePrefix(s[i+2:]) {
			inner, ok = enclosedNested(s[i+2:], maxFileEmbed)
		}
		if !ok {
			// "[[" with no "]]" before the next "[[" is text.
			b = append(b, s[last:i+2]...)
			i += 2
			last = i
			continue
		}
		end := i + 2 + len(inner) + 2
		out, consumed, handled := d.link(inner, s[end:])
		if !handled {
			b = append(b, s[last:i+2]...)
			i += 2
			last = i
			continue
		}
		b = append(b, s[last:i]...)
		if out == categoryDrop {
			// A category takes the white space before it, and the line
			// after it when nothing else stands there before the next link.
			for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n') {
				b = b[:len(b)-1]
			}
			j := end
			for j < len(s) && s[j] == '\n' {
				j++
			}
			if j == len(s) || strings.HasPrefix(s[j:], "[[") {
				end = j
			}
			out = ""
		}
		b = append(b, out...)
		i = end + consumed
		last = i
	}
	b = append(b, s[last:]...)
	return string(b)
}

// categoryDrop is link's result for a category link.
const categoryDrop = "\x00category"

// enclosed returns what stands before the first "]]" of s, looking at most
// max bytes ahead.
func enclosed(s string, max int) (string, bool) {
	if len(s) > max {
		s = s[:max]
	}
	end := strings.Index(s, "]]")
	if end < 0 {
		return "", false
	}
	return s[:end], true
}

// enclosedNested is enclosed for a file embed, whose caption may hold
// links one level deep: what stands before the "]]" that closes s's link,
// looking at most max bytes ahead. A "[[" inside a nested link ends the
// search, as in MediaWiki, which gives such an embed up as text: so every
// search stops at the second "[[" it meets unless a "]]" closed the first,
// and the searches of a line of many unclosed embeds cost linear time
// together, where nesting without a bound made each read max bytes.
func enclosedNested(s string, max int) (string, bool) {
	nested := false
	for i := 0; i+1 < len(s) && i < max; i++ {
		switch {
		case s[i] == '[' && s[i+1] == '[':
			if nested {
				return "", false
			}
			nested = true
			i++
		case s[i] == ']' && s[i+1] == ']':
			if !nested {
				return s[:i], true
			}
			nested = false
			i++
		}
	}
	return "", false
}

// isFilePrefix reports whether s (after "[[") names a file or media.
func isFilePrefix(s string) bool {
	s = strings.TrimLeft(s[:min(len(s), 16)], " ")
	p, _, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(p)) {
	case "file", "image", "media":
		return true
	}
	return false
}

// link interprets the inside of [[…]], after which comes after: the HTML
// (with markers) to write, and how many bytes of after (the link trail)
// it took. handled is false when it is no link: the brackets are text.
func (d *doc) link(inner, after string) (out string, consumed int, handled bool) {
	target, label, piped := strings.Cut(inner, "|")
	if strings.ContainsAny(target, "\n<>{}") || strings.IndexByte(target, markerChar) >= 0 {
		return "", 0, false
	}
	written := xhtml.UnescapeString(target)
	if strings.IndexByte(written, '%') >= 0 {
		if u, err := url.PathUnescape(written); err == nil && utf8.ValidString(u) {
			written = u
		}
	}
	written = strings.Trim(written, " \t")
	target = strings.TrimSpace(written)
	colon := strings.HasPrefix(target, ":")
	name := target
	if colon {
		name = strings.TrimSpace(name[1:])
	}
	if !colon {
		if prefix, rest, ok := strings.Cut(name, ":"); ok {
			switch strings.ToLower(strings.TrimSpace(prefix)) {
			case "image", "file":
				return d.file("File:"+rest, inner[strings.Index(inner, ":")+1:], piped, false)
			case "media":
				return d.file("Media:"+rest, inner[strings.Index(inner, ":")+1:], piped, true)
			}
		}
	}
	t, frag, err := d.r.rules.ParseLink(name)
	if err != nil || (t == "" && frag == "") {
		return "", 0, false
	}
	if !colon && t.Namespace() == wiki.NSCategory {
		if !d.inCategory[t] {
			if d.inCategory == nil {
				d.inCategory = map[wiki.Title]bool{}
			}
			d.inCategory[t] = true
			d.categories = append(d.categories, t)
		}
		if piped && label != "" {
			if d.sortKeys == nil {
				d.sortKeys = map[wiki.Title]string{}
			}
			key := strings.TrimSpace(label)
			if key == "" {
				key = " "
			}
			d.sortKeys[t] = key
		}
		return categoryDrop, 0, true
	}
	extra := 0 // a bracket of the label's after "]]"
	switch {
	case piped && label == "":
		return "", 0, false // the pipe trick is a save's, not the parser's
	case !piped:
		// The target (its references and % escapes resolved) is the
		// label, and no markup: its apostrophes stay.
		label = escapeText(strings.TrimPrefix(written, ":"))
	case strings.IndexByte(label, '[') >= 0 && strings.HasPrefix(after, "]"):
		// [[A|[b]]]: the label's bracket closes inside it.
		label += "]"
		after = after[1:]
		extra = 1
	}
	if piped && strings.Contains(label, "''") {
		// A label's bold and italic are its own, apart from the line's.
		label = d.quotes(label)
	}
	trail := 0
	for trail < len(after) && 'a' <= after[trail] && after[trail] <= 'z' {
		trail++
	}
	d.links = append(d.links, &link{target: t, fragment: frag})
	n := len(d.links) - 1
	return marker(kindLinkOpen, n) + label + after[:trail] + marker(kindLinkClose, n), trail + extra, true
}

// file makes a marker of a file embed or media link: the Markdown renderer
// reads the same syntax, with the caption's bold and italic in its own.
func (d *doc) file(name, rest string, piped, media bool) (string, int, bool) {
	t, _, err := d.r.rules.ParseLink("File:" + strings.TrimSpace(xhtml.UnescapeString(strings.SplitN(name, ":", 2)[1])))
	if err != nil || t.Namespace() != wiki.NSFile {
		return "", 0, false
	}
	_, opts, _ := strings.Cut(rest, "|")
	src := "[[" + name
	if piped {
		src += "|" + markdownQuotes(xhtml.UnescapeString(stripMarkers(opts)))
	}
	src += "]]"
	e := &fileEmbed{src: src, title: t}
	if !media {
		for _, o := range strings.Split(opts, "|") {
			switch strings.ToLower(strings.TrimSpace(o)) {
			case "thumb", "thumbnail", "frame", "framed", "left", "right", "center", "centre":
				e.block = true
			}
		}
	}
	ls := d.r.md.Links(src)
	e.links = ls.Links
	d.files = append(d.files, e)
	kind := byte(kindInline)
	if e.block {
		kind = kindBlock
	}
	return d.addMark(mark{kind: kind, file: e}), 0, true
}

// markdownQuotes writes wikitext bold and italic the Markdown way.
func markdownQuotes(s string) string {
	if !strings.Contains(s, "''") {
		return s
	}
	return quotesToMarkdown.Replace(s)
}

var quotesToMarkdown = strings.NewReplacer("'''''", "***", "'''", "**", "''", "*")

// quotes applies bold and italic, line by line.
func (d *doc) quotes(s string) string {
	if !strings.Contains(s, "''") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/16)
	for line := range lines(s) {
		d.b.check()
		body := strings.TrimSuffix(line, "\n")
		if strings.Contains(body, "''") {
			body = doQuotes(body)
		}
		b.WriteString(body)
		if len(body) < len(line) || strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// doQuotes is MediaWiki's doQuotes for one line: runs of two apostrophes
// are italic, three bold, five both; four are an apostrophe and bold, more
// than five apostrophes and both. When both bold and italic are unbalanced,
// one bold is taken for an apostrophe and italic: preferably one after a
// single-letter word, then one after a longer word, then one after a space.
func doQuotes(text string) string {
	// Split into text, run, text, run, … text.
	var arr []string
	last := 0
	for i := 0; i < len(text); {
		if text[i] != '\'' || i+1 >= len(text) || text[i+1] != '\'' {
			i++
			continue
		}
		j := i
		for j < len(text) && text[j] == '\'' {
			j++
		}
		arr = append(arr, text[last:i], text[i:j])
		i, last = j, j
	}
	arr = append(arr, text[last:])
	if len(arr) == 1 {
		return text
	}
	numBold, numItalics := 0, 0
	for i := 1; i < len(arr); i += 2 {
		n := len(arr[i])
		switch {
		case n == 4:
			arr[i-1] += "'"
			arr[i] = "'''"
			n = 3
		case n > 5:
			arr[i-1] += strings.Repeat("'", n-5)
			arr[i] = "'''''"
			n = 5
		}
		switch n {
		case 2:
			numItalics++
		case 3:
			numBold++
		case 5:
			numItalics++
			numBold++
		}
	}
	if numBold%2 == 1 && numItalics%2 == 1 {
		firstSingle, firstMulti, firstSpace := -1, -1, -1
		for i := 1; i < len(arr); i += 2 {
			if len(arr[i]) != 3 {
				continue
			}
			prev := arr[i-1]
			var x1, x2 byte
			if len(prev) >= 1 {
				x1 = prev[len(prev)-1]
			}
			if len(prev) >= 2 {
				x2 = prev[len(prev)-2]
			}
			switch {
			case x1 == ' ':
				if firstSpace == -1 {
					firstSpace = i
				}
			case x2 == ' ':
				firstSingle = i
			default:
				if firstMulti == -1 {
					firstMulti = i
				}
			}
			if firstSingle != -1 {
				break
			}
		}
		fix := firstSpace
		if firstSingle > -1 {
			fix = firstSingle
		} else if firstMulti > -1 {
			fix = firstMulti
		}
		if fix > -1 {
			arr[fix] = "''"
			arr[fix-1] += "'"
		}
	}
	var out, buffer strings.Builder
	state := ""
	for i, r := range arr {
		if i%2 == 0 {
			if state == "both" {
				buffer.WriteString(r)
			} else {
				out.WriteString(r)
			}
			continue
		}
		switch len(r) {
		case 2:
			switch state {
			case "i":
				out.WriteString("</i>")
				state = ""
			case "bi":
				out.WriteString("</i>")
				state = "b"
			case "ib":
				out.WriteString("</b></i><b>")
				state = "b"
			case "both":
				out.WriteString("<b><i>" + buffer.String() + "</i>")
				state = "b"
			default:
				out.WriteString("<i>")
				state += "i"
			}
		case 3:
			switch state {
			case "b":
				out.WriteString("</b>")
				state = ""
			case "bi":
				out.WriteString("</i></b><i>")
				state = "i"
			case "ib":
				out.WriteString("</b>")
				state = "i"
			case "both":
				out.WriteString("<i><b>" + buffer.String() + "</b>")
				state = "i"
			default:
				out.WriteString("<b>")
				state += "b"
			}
		case 5:
			switch state {
			case "b":
				out.WriteString("</b><i>")
				state = "i"
			case "i":
				out.WriteString("</i><b>")
				state = "b"
			case "bi":
				out.WriteString("</i></b>")
				state = ""
			case "ib":
				out.WriteString("</b></i>")
				state = ""
			case "both":
				out.WriteString("<i><b>" + buffer.String() + "</b></i>")
				state = ""
			default:
				buffer.Reset()
				state = "both"
			}
		}
	}
	if state == "b" || state == "ib" {
		out.WriteString("</b>")
	}
	if state == "i" || state == "bi" || state == "ib" {
		out.WriteString("</i>")
	}
	if state == "bi" {
		out.WriteString("</b>")
	}
	if state == "both" && buffer.Len() > 0 {
		out.WriteString("<b><i>" + buffer.String() + "</i></b>")
	}
	return out.String()
}

// urlProtocols are the schemes of external links MediaWiki recognizes by
// default (the sanitizer keeps links of http, https and mailto only).
var urlProtocols = []string{"https://", "http://", "ftp://", "ftps://", "mailto:", "irc://", "ircs://", "news:", "//"}

// protocolAt returns the length of the protocol s starts with (any case).
func protocolAt(s string) int {
	for _, p := range urlProtocols {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return len(p)
		}
	}
	return 0
}

// urlChar reports whether c may be part of a URL (MediaWiki's
// EXT_LINK_URL_CLASS, for ASCII).
func urlChar(c byte) bool {
	return c > 0x20 && c != 0x7f && c != '[' && c != ']' && c != '<' && c != '>' && c != '"' && c != '\\'
}

// urlEnd returns the end of the URL starting at s[0] (protocol known),
// which stops at "&lt;" and "&gt;" too (the tag pass escaped those).
func urlEnd(s string, from int) int {
	i := from
	for i < len(s) && urlChar(s[i]) {
		if s[i] == '&' {
			// A reference is read as its character: one that ends a URL
			// ends it before the reference.
			n := entityLen(s[i:])
			if n == 0 {
				i++
				continue
			}
			r, _ := utf8.DecodeRuneInString(xhtml.UnescapeString(s[i : i+n]))
			if r < 0x80 && !urlChar(byte(r)) || r >= 0x80 && unicode.Is(unicode.Zs, r) {
				break
			}
			i += n
			continue
		}
		if s[i] >= 0x80 {
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.Is(unicode.Zs, r) || r == utf8.RuneError {
				break
			}
			i += n
			continue
		}
		i++
	}
	return i
}

// trimURL returns the length of url once the punctuation that ends a
// sentence is taken off its end ("," ";" "." ":" "!" "?", and ")" when
// the URL has no "("), but not the ';' that ends a reference.
func trimURL(url string) int {
	punct := ",;.:!?"
	if !strings.Contains(url, "(") {
		punct += ")"
	}
	end := len(url)
	amp := strings.LastIndexByte(url, '&') // the last '&' before end, moved left with it
	for end > 0 && strings.IndexByte(punct, url[end-1]) >= 0 {
		if url[end-1] == ';' {
			for amp >= end {
				amp = strings.LastIndexByte(url[:amp], '&')
			}
			if amp >= 0 && entityLen(url[amp:end]) == end-amp {
				break
			}
		}
		end--
	}
	return end
}

// externalLinks turns [url label] and [url] into links.
func (d *doc) externalLinks(s string) string {
	if !strings.Contains(s, "[") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	last := 0
	inLink := 0 // depth of internal link labels: no links in them
	for i := 0; i < len(s); {
		k := strings.IndexAny(s[i:], "[\x7f")
		if k < 0 {
			break
		}
		i += k
		if s[i] == markerChar {
			if kind, _, end, ok := readMarker(s, i); ok {
				switch kind {
				case kindLinkOpen:
					inLink++
				case kindLinkClose:
					inLink = max(0, inLink-1)
				}
				i = end
				continue
			}
			i++
			continue
		}
		p := protocolAt(s[i+1:])
		if inLink > 0 {
			p = 0
		}
		if p == 0 {
			i++
			continue
		}
		d.b.check()
		ue := urlEnd(s, i+1+p)
		if ue == i+1+p {
			i++
			continue
		}
		j := ue
		for j < len(s) {
			if s[j] == ' ' || s[j] == '\t' {
				j++
				continue
			}
			if r, n := utf8.DecodeRuneInString(s[j:]); r >= 0x80 && unicode.Is(unicode.Zs, r) {
				j += n
				continue
			}
			break
		}
		le := j
		for le < len(s) && le-j < maxWikiLink && s[le] != ']' && s[le] != '\n' {
			le++
		}
		if le >= len(s) || s[le] != ']' {
			i++
			continue
		}
		url := xhtml.UnescapeString(s[i+1 : ue])
		label := s[j:le]
		open := externalOpen(url)
		if open == "" {
			i++
			continue
		}
		b.WriteString(s[last:i])
		if label == "" {
			d.autoNum++
			label = "[" + strconv.Itoa(d.autoNum) + "]"
		}
		b.WriteString(open + label + "</a>")
		i = le + 1
		last = i
	}
	b.WriteString(s[last:])
	return b.String()
}

// bareURLs links the URLs written as text, outside tags, links and link
// labels. Trailing punctuation is not part of one, nor a ')' when the URL
// has no '('.
func (d *doc) bareURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	last := 0
	inA := 0    // depth of <a> elements
	inLink := 0 // depth of internal link labels
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<':
			e := strings.IndexByte(s[i:], '>')
			if e < 0 {
				i = len(s)
				continue
			}
			t := s[i : i+e+1]
			switch {
			case strings.HasPrefix(t, "<a "), t == "<a>":
				inA++
			case t == "</a>":
				inA = max(0, inA-1)
			}
			i += e
		case c == markerChar:
			if kind, _, end, ok := readMarker(s, i); ok {
				switch kind {
				case kindLinkOpen:
					inLink++
				case kindLinkClose:
					inLink = max(0, inLink-1)
				}
				i = end - 1
			}
		case (c == 'h' || c == 'H' || c == 'f' || c == 'F') && inA == 0 && inLink == 0:
			if i > 0 {
				if r, _ := utf8.DecodeLastRuneInString(s[:i]); unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
					continue
				}
			}
			p := protocolAt(s[i:])
			if p == 0 || !strings.Contains(s[i:i+p], "://") || p == 2 {
				continue
			}
			d.b.check()
			ue := urlEnd(s, i+p)
			url := s[i:ue]
			url = url[:trimURL(url)]
			if len(url) <= p {
				continue
			}
			open := externalOpen(xhtml.UnescapeString(url))
			if open == "" {
				// The URL is read once, as MediaWiki's pattern reads it: a
				// protocol inside it starts no other, or a run of refused
				// URLs is read again from each of them (quadratic).
				i += len(url) - 1
				continue
			}
			b.WriteString(s[last:i])
			b.WriteString(open + url + "</a>")
			i += len(url) - 1
			last = i + 1
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// externalOpen is the <a> start tag of a link out to url, "" when the
// sanitizer would drop it.
func externalOpen(url string) string { return render.ExternalLinkOpen(url) }
