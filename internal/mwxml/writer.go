package mwxml

import (
	"bufio"
	"crypto/sha1"
	"errors"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// SchemaVersion is the schema the writer writes.
const SchemaVersion = "0.11"

// Writer writes an export-0.11 dump laid out as MediaWiki's
// XmlDumpWriter lays it out, so that importDump.php reads it and a diff
// against MediaWiki's own dump shows only what differs.
type Writer struct {
	w      *bufio.Writer
	err    error
	inPage bool
}

// NewWriter writes the dump's header and site to w. Lang is the wiki's
// language code (xml:lang).
func NewWriter(w io.Writer, site SiteInfo, lang string) *Writer {
	if lang == "" {
		lang = "en"
	}
	wr := &Writer{w: bufio.NewWriterSize(w, 64<<10)}
	wr.raw(`<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.11/ http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="`)
	wr.esc(lang)
	wr.raw("\">\n  <siteinfo>\n")
	wr.elem(4, "sitename", site.SiteName)
	wr.elem(4, "dbname", site.DBName)
	wr.elem(4, "base", site.Base)
	wr.elem(4, "generator", site.Generator)
	wr.elem(4, "case", site.Case)
	wr.raw("    <namespaces>\n")
	for _, n := range site.Namespaces {
		wr.raw(`      <namespace key="` + strconv.Itoa(n.Key) + `" case="`)
		wr.esc(n.Case)
		if n.Name == "" {
			wr.raw("\" />\n")
			continue
		}
		wr.raw(`">`)
		wr.esc(n.Name)
		wr.raw("</namespace>\n")
	}
	wr.raw("    </namespaces>\n  </siteinfo>\n")
	return wr
}

func (w *Writer) raw(s string) {
	if w.err == nil {
		_, w.err = w.w.WriteString(s)
	}
}

// esc writes s escaped as MediaWiki escapes text (htmlspecialchars: the
// five XML specials); other characters pass as they are.
func (w *Writer) esc(s string) {
	if w.err != nil {
		return
	}
	last := 0
	for i := 0; i < len(s); i++ {
		var r string
		switch s[i] {
		case '&':
			r = "&amp;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		case '"':
			r = "&quot;"
		case '\r':
			// A bare CR would be read back as LF (XML end-of-line
			// handling): a character reference keeps it.
			r = "&#13;"
		default:
			continue
		}
		w.raw(s[last:i])
		w.raw(r)
		last = i + 1
	}
	w.raw(s[last:])
}

func (w *Writer) elem(indent int, name, value string) {
	w.raw(strings.Repeat(" ", indent) + "<" + name + ">")
	w.esc(value)
	w.raw("</" + name + ">\n")
}

// Page opens a page: its head. Revisions and uploads follow, then EndPage.
func (w *Writer) Page(p Page) error {
	if w.inPage {
		w.EndPage()
	}
	w.inPage = true
	w.raw("  <page>\n")
	w.elem(4, "title", p.Title)
	w.elem(4, "ns", strconv.Itoa(p.NS))
	w.elem(4, "id", strconv.FormatInt(p.ID, 10))
	if p.Redirect != "" {
		w.raw(`    <redirect title="`)
		w.esc(p.Redirect)
		w.raw("\" />\n")
	}
	if p.Restrictions != "" {
		w.elem(4, "restrictions", p.Restrictions)
	}
	return w.err
}

func (w *Writer) contributor(c Contributor) {
	switch {
	case c.Deleted:
		w.raw("      <contributor deleted=\"deleted\" />\n")
	case c.IP != "" && c.Username == "":
		w.raw("      <contributor>\n")
		w.elem(8, "ip", c.IP)
		w.raw("      </contributor>\n")
	default:
		w.raw("      <contributor>\n")
		w.elem(8, "username", c.Username)
		w.elem(8, "id", strconv.FormatInt(c.ID, 10))
		w.raw("      </contributor>\n")
	}
}

// Revision writes one revision of the open page. An empty Model is
// wikitext, an empty Format the model's (text/x-wiki for wikitext); an
// empty SHA1 is computed from Text.
func (w *Writer) Revision(v Revision) error {
	if !w.inPage {
		return errors.New("mwxml: a revision outside a page")
	}
	w.raw("    <revision>\n")
	w.elem(6, "id", strconv.FormatInt(v.ID, 10))
	if v.ParentID != 0 {
		w.elem(6, "parentid", strconv.FormatInt(v.ParentID, 10))
	}
	w.elem(6, "timestamp", v.Timestamp.UTC().Format(time.RFC3339))
	w.contributor(v.Contributor)
	if v.Minor {
		w.raw("      <minor />\n")
	}
	switch {
	case v.CommentDeleted:
		w.raw("      <comment deleted=\"deleted\" />\n")
	case v.Comment != "":
		w.elem(6, "comment", v.Comment)
	}
	w.elem(6, "origin", strconv.FormatInt(v.ID, 10))
	model, format := v.Model, v.Format
	if model == "" {
		model = "wikitext"
	}
	if format == "" {
		format = FormatOf(model)
	}
	w.elem(6, "model", model)
	w.elem(6, "format", format)
	sha := v.SHA1
	if sha == "" && !v.TextDeleted {
		sha = SHA1Base36(v.Text)
	}
	if v.TextDeleted {
		w.raw("      <text bytes=\"" + strconv.Itoa(len(v.Text)) + "\" deleted=\"deleted\" />\n")
	} else {
		w.raw("      <text bytes=\"" + strconv.Itoa(len(v.Text)) + "\" sha1=\"" + sha + "\" xml:space=\"preserve\">")
		w.esc(v.Text)
		w.raw("</text>\n")
	}
	if sha != "" {
		w.elem(6, "sha1", sha)
	} else {
		w.raw("      <sha1 />\n")
	}
	w.raw("    </revision>\n")
	return w.err
}

// Upload writes one file version of the open page.
func (w *Writer) Upload(u Upload) error {
	if !w.inPage {
		return errors.New("mwxml: an upload outside a page")
	}
	w.raw("    <upload>\n")
	w.elem(6, "timestamp", u.Timestamp.UTC().Format(time.RFC3339))
	w.contributor(u.Contributor)
	w.elem(6, "comment", u.Comment)
	w.elem(6, "filename", u.Filename)
	w.elem(6, "src", u.Src)
	w.elem(6, "size", strconv.FormatInt(u.Size, 10))
	w.raw("    </upload>\n")
	return w.err
}

// EndPage closes the open page.
func (w *Writer) EndPage() error {
	if w.inPage {
		w.raw("  </page>\n")
		w.inPage = false
	}
	return w.err
}

// Flush writes what is buffered to the underlying writer.
func (w *Writer) Flush() error {
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// Close ends the dump (closing an open page) and flushes it; it does
// not close the underlying writer.
func (w *Writer) Close() error {
	w.EndPage()
	w.raw("</mediawiki>\n")
	return w.Flush()
}

// FormatOf returns the serialization format MediaWiki names for model.
func FormatOf(model string) string {
	switch model {
	case "wikitext":
		return "text/x-wiki"
	case "markdown":
		return "text/markdown"
	case "css", "sanitized-css":
		return "text/css"
	case "javascript":
		return "text/javascript"
	case "json":
		return "application/json"
	}
	return "text/plain"
}

// SHA1Base36 returns the SHA-1 of text in base 36, 31 digits, as
// MediaWiki writes it in dumps (rev_sha1).
func SHA1Base36(text string) string {
	sum := sha1.Sum([]byte(text))
	return padBase36(new(big.Int).SetBytes(sum[:]))
}

// SHA1HexToBase36 converts a hex SHA-1 (as Wikid stores it) to
// MediaWiki's base 36.
func SHA1HexToBase36(hex string) string {
	n, ok := new(big.Int).SetString(hex, 16)
	if !ok {
		return ""
	}
	return padBase36(n)
}

func padBase36(n *big.Int) string {
	s := n.Text(36)
	if len(s) < 31 {
		s = strings.Repeat("0", 31-len(s)) + s
	}
	return s
}
