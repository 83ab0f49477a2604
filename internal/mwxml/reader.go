// Package mwxml reads and writes MediaWiki XML export dumps (the format of
// Special:Export and dumpBackup.php, schema 0.10 and 0.11; older versions
// are read when they parse). The reader streams: its memory is bounded by
// Limits, not by the size of the dump.
package mwxml

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// SiteInfo is a dump's <siteinfo>.
type SiteInfo struct {
	SiteName   string
	DBName     string
	Base       string // URL of the main page
	Generator  string
	Case       string // first-letter or case-sensitive
	Namespaces []Namespace
}

// Namespace is one <namespace> of a dump's siteinfo: its number (key),
// its case rule and its local name ("" for the main namespace).
type Namespace struct {
	Key  int
	Case string
	Name string
}

// NamespaceByKey returns the namespace with number key.
func (s SiteInfo) NamespaceByKey(key int) (Namespace, bool) {
	for _, n := range s.Namespaces {
		if n.Key == key {
			return n, true
		}
	}
	return Namespace{}, false
}

// Page is the head of a <page>: what comes before its revisions and
// uploads, which Reader.Next returns after it.
type Page struct {
	Title        string
	NS           int
	ID           int64
	Redirect     string // the target's title when the page is a redirect
	Restrictions string // as MediaWiki writes them: edit=sysop:move=sysop
}

// Contributor is a revision's or upload's author: a user (Username, ID),
// an IP address (IP), or hidden (Deleted).
type Contributor struct {
	Username string
	ID       int64
	IP       string
	Deleted  bool
}

// Revision is one <revision> of a page.
type Revision struct {
	ID             int64
	ParentID       int64
	Timestamp      time.Time
	Contributor    Contributor
	Minor          bool
	Comment        string
	CommentDeleted bool
	Model          string // wikitext when the dump does not say
	Format         string
	Text           string
	TextDeleted    bool
	SHA1           string // base 36, as MediaWiki writes it; "" when absent
}

// Upload is one <upload> of a file page: a version of its file.
type Upload struct {
	Timestamp   time.Time
	Contributor Contributor
	Comment     string
	Filename    string
	Src         string // URL of the file on the old wiki
	Size        int64
}

// Limits bound what the reader accepts; a dump over one is an error
// naming its position and page. Zero fields take DefaultLimits' values.
type Limits struct {
	MaxTextBytes  int // a revision's text (the wiki's max_page_bytes)
	MaxTitleBytes int // a title (MediaWiki's is 255)
	MaxFieldBytes int // any other element's text (comments, names)
	MaxDepth      int // element nesting
}

// DefaultLimits are MediaWiki's: 2 MiB of text, 255-byte titles.
var DefaultLimits = Limits{MaxTextBytes: 2 << 20, MaxTitleBytes: 255, MaxFieldBytes: 64 << 10, MaxDepth: 32}

func (l Limits) or() Limits {
	d := DefaultLimits
	if l.MaxTextBytes > 0 {
		d.MaxTextBytes = l.MaxTextBytes
	}
	if l.MaxTitleBytes > 0 {
		d.MaxTitleBytes = l.MaxTitleBytes
	}
	if l.MaxFieldBytes > 0 {
		d.MaxFieldBytes = l.MaxFieldBytes
	}
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	return d
}

// Error is a dump the reader refuses: what was wrong, where (line and
// column of the XML, after decompression) and in which page.
type Error struct {
	Line, Column int
	Offset       int64  // bytes of XML read
	Page         string // the title of the page being read, if any
	Msg          string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "line %d, column %d (byte %d)", e.Line, e.Column, e.Offset)
	if e.Page != "" {
		fmt.Fprintf(&b, ", page %q", e.Page)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Compression says how a dump's bytes are compressed.
type Compression string

const (
	Plain  Compression = ""
	Gzip   Compression = "gzip"
	Bzip2  Compression = "bzip2"
	SevenZ Compression = "7z"
)

// Sniff tells a dump's compression from its first bytes.
func Sniff(head []byte) Compression {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return Gzip
	case bytes.HasPrefix(head, []byte("BZh")):
		return Bzip2
	case bytes.HasPrefix(head, []byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}):
		return SevenZ
	}
	return Plain
}

// LooksLikeXML reports whether head, a file's first bytes (decompressed),
// starts as an XML document does.
func LooksLikeXML(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) > 0 && head[0] == '<'
}

// Decompress returns r's bytes decompressed as Sniff says they are
// (gzip, bzip2, or plain), and the compression found. A 7z archive is
// refused: it cannot be read as a stream.
func Decompress(r io.Reader) (io.Reader, Compression, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(8)
	switch c := Sniff(head); c {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, c, fmt.Errorf("mwxml: gzip: %w", err)
		}
		return zr, c, nil
	case Bzip2:
		return bzip2.NewReader(br), c, nil
	case SevenZ:
		return nil, c, errors.New("mwxml: a 7z archive cannot be read as a stream; extract it first (7z x FILE.7z) and import the .xml file")
	default:
		return br, c, nil
	}
}

// countingReader counts the bytes the decoder reads, and refuses to give
// it more than budget bytes since the last reset: encoding/xml holds a
// whole run of character data in memory before returning it, so the cap
// on a text's size must act while it is read, not after.
type countingReader struct {
	r      io.Reader
	n      int64
	since  int64
	budget int64
}

var errBudget = errors.New("element too large")

func (c *countingReader) Read(p []byte) (int, error) {
	if c.since >= c.budget {
		return 0, errBudget
	}
	if rest := c.budget - c.since; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.since += int64(n)
	return n, err
}

// Reader reads a dump one page, revision and upload at a time.
type Reader struct {
	d      *xml.Decoder
	cr     *countingReader
	lim    Limits
	site   SiteInfo
	ver    string
	page   string // title of the page being read
	inPage bool
	pages  int // <page> elements started
	done   bool
	depth  int
	peeked xml.Token
}

// NewReader reads the dump's header and siteinfo from r (XML, not
// compressed: see Decompress).
func NewReader(r io.Reader, lim Limits) (*Reader, error) {
	lim = lim.or()
	// Entities make text up to six times longer than it reads.
	cr := &countingReader{r: r, budget: int64(lim.MaxTextBytes)*6 + 1<<20}
	d := xml.NewDecoder(cr)
	d.Strict = true
	rd := &Reader{d: d, cr: cr, lim: lim}
	start, err := rd.nextStart()
	if err != nil {
		return nil, err
	}
	if start.Name.Local != "mediawiki" {
		return nil, rd.errorf("the document is <%s>, not a MediaWiki export (<mediawiki>)", start.Name.Local)
	}
	for _, a := range start.Attr {
		if a.Name.Local == "version" {
			rd.ver = a.Value
		}
	}
	// siteinfo is optional: Special:Export of old versions wrote none.
	tok, err := rd.peekStart()
	if err != nil {
		return nil, err
	}
	if tok != nil && tok.Name.Local == "siteinfo" {
		rd.peeked = nil
		if err := rd.readSiteInfo(); err != nil {
			return nil, err
		}
	}
	return rd, nil
}

// SiteInfo returns the dump's siteinfo (zero when it has none).
func (r *Reader) SiteInfo() SiteInfo { return r.site }

// Version returns the schema version the dump declares ("0.11").
func (r *Reader) Version() string { return r.ver }

// Pages returns how many pages the reader has started to read, and
// whether it is inside one: after an error, the page it was reading is
// the Pages()th when InPage, else every page read was complete.
func (r *Reader) Pages() (n int, inPage bool) { return r.pages, r.inPage }

// Offset returns the bytes of XML read so far.
func (r *Reader) Offset() int64 { return r.d.InputOffset() }

func (r *Reader) errorf(format string, args ...any) error {
	line, col := r.d.InputPos()
	return &Error{Line: line, Column: col, Offset: r.d.InputOffset(), Page: r.page, Msg: fmt.Sprintf(format, args...)}
}

// wrap turns a decoder error into an Error with the position.
func (r *Reader) wrap(err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.Is(err, errBudget):
		return r.errorf("an element is longer than the limit (the text limit, max_page_bytes, is %d bytes)", r.lim.MaxTextBytes)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return r.errorf("the dump ends in the middle (truncated file?)")
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		msg := se.Msg
		if msg == "unexpected EOF" {
			return r.errorf("the dump ends in the middle (truncated file?)")
		}
		if strings.HasPrefix(msg, "invalid character entity") {
			msg += " (entities other than XML's five and character references are not read: a dump declares none)"
		}
		return r.errorf("bad XML: %s", msg)
	}
	return r.errorf("%v", err)
}

// token returns the next token, with the nesting depth checked and any
// DOCTYPE refused.
func (r *Reader) token() (xml.Token, error) {
	if t := r.peeked; t != nil {
		r.peeked = nil
		return t, nil
	}
	tok, err := r.d.Token()
	if err != nil {
		return nil, r.wrap(err)
	}
	switch t := tok.(type) {
	case xml.StartElement:
		r.depth++
		if r.depth > r.lim.MaxDepth {
			return nil, r.errorf("elements nest deeper than %d levels", r.lim.MaxDepth)
		}
		r.cr.since = 0
	case xml.EndElement:
		r.depth--
		r.cr.since = 0
	case xml.Directive:
		return nil, r.errorf("a <!%s> declaration: MediaWiki dumps have none, and entities it could declare are not read", firstWord(t))
	}
	// Character data is the decoder's buffer, valid until the next
	// token: text copies it at once, and nothing else keeps it.
	return tok, nil
}

func firstWord(b []byte) string {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// nextStart returns the next start element, skipping text, comments and
// processing instructions; nil at an end element (consumed).
func (r *Reader) nextStart() (*xml.StartElement, error) {
	for {
		tok, err := r.token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return &t, nil
		case xml.EndElement:
			return nil, nil
		}
	}
}

// peekStart is nextStart without consuming the start element.
func (r *Reader) peekStart() (*xml.StartElement, error) {
	s, err := r.nextStart()
	if s != nil {
		r.peeked = *s
	}
	return s, err
}

// text reads the text of the element just started, up to max bytes, and
// its end.
func (r *Reader) text(name string, max int) (string, error) {
	return r.sizedText(name, max, 0)
}

// sizedText is text with room made for hint bytes (a <text>'s bytes
// attribute), so that a long text is not copied as it grows.
func (r *Reader) sizedText(name string, max, hint int) (string, error) {
	var b strings.Builder
	if hint > 0 && hint <= max {
		b.Grow(hint)
	}
	for {
		tok, err := r.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if b.Len()+len(t) > max {
				return "", r.errorf("<%s> is longer than %d bytes", name, max)
			}
			b.Write(t)
		case xml.StartElement:
			return "", r.errorf("<%s> inside <%s>", t.Name.Local, name)
		case xml.EndElement:
			return b.String(), nil
		}
	}
}

// skip reads to the end of the element just started.
func (r *Reader) skip() error {
	for depth := 1; depth > 0; {
		tok, err := r.token()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return nil
}

func (r *Reader) int(name string) (int64, error) {
	s, err := r.text(name, 64)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, r.errorf("<%s> is %q, not a number", name, s)
	}
	return n, nil
}

func (r *Reader) timestamp() (time.Time, error) {
	s, err := r.text("timestamp", 64)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, r.errorf("<timestamp> is %q, not a time as MediaWiki writes them (2006-01-02T15:04:05Z)", s)
	}
	return t.UTC(), nil
}

func attr(s *xml.StartElement, name string) (string, bool) {
	for _, a := range s.Attr {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (r *Reader) readSiteInfo() error {
	for {
		s, err := r.nextStart()
		if err != nil || s == nil {
			return err
		}
		f := r.lim.MaxFieldBytes
		switch s.Name.Local {
		case "sitename":
			r.site.SiteName, err = r.text("sitename", f)
		case "dbname":
			r.site.DBName, err = r.text("dbname", f)
		case "base":
			r.site.Base, err = r.text("base", f)
		case "generator":
			r.site.Generator, err = r.text("generator", f)
		case "case":
			r.site.Case, err = r.text("case", f)
		case "namespaces":
			err = r.readNamespaces()
		default:
			err = r.skip()
		}
		if err != nil {
			return err
		}
	}
}

func (r *Reader) readNamespaces() error {
	for {
		s, err := r.nextStart()
		if err != nil || s == nil {
			return err
		}
		if s.Name.Local != "namespace" {
			if err := r.skip(); err != nil {
				return err
			}
			continue
		}
		k, _ := attr(s, "key")
		key, err := strconv.Atoi(k)
		if err != nil {
			return r.errorf("<namespace key=%q>: the key is not a number", k)
		}
		c, _ := attr(s, "case")
		name, err := r.text("namespace", r.lim.MaxTitleBytes)
		if err != nil {
			return err
		}
		r.site.Namespaces = append(r.site.Namespaces, Namespace{Key: key, Case: c, Name: name})
	}
}

// Next returns the dump's next item: a *Page (the head of a page), then
// its *Revision and *Upload items in the dump's order, then the next
// *Page; io.EOF at the end of the dump.
func (r *Reader) Next() (any, error) {
	if r.done {
		return nil, io.EOF
	}
	for {
		s, err := r.nextStart()
		if err != nil {
			return nil, err
		}
		if s == nil { // an end element
			if r.inPage {
				r.inPage, r.page = false, ""
				continue
			}
			r.done = true
			// Whatever follows </mediawiki> must still be well-formed.
			for {
				if _, err := r.d.Token(); err == io.EOF {
					return nil, io.EOF
				} else if err != nil {
					return nil, r.wrap(err)
				}
			}
		}
		switch name := s.Name.Local; {
		case !r.inPage && name == "page":
			return r.readPage()
		case r.inPage && name == "revision":
			return r.readRevision()
		case r.inPage && name == "upload":
			return r.readUpload()
		default:
			// Elements of later schemas, or of extensions
			// (discussionthreadinginfo, logitem): not Wikid's.
			if err := r.skip(); err != nil {
				return nil, err
			}
		}
	}
}

// readPage reads a page's head, up to its first revision or upload
// (peeked for Next) or its end.
func (r *Reader) readPage() (*Page, error) {
	r.inPage, r.page = true, ""
	r.pages++
	var p Page
	p.NS = -1000
	for {
		s, err := r.nextStart()
		if err != nil {
			return nil, err
		}
		if s == nil {
			// A page without revisions: its end is consumed already.
			r.peeked = xml.EndElement{Name: xml.Name{Local: "page"}}
			break
		}
		name := s.Name.Local
		if name == "revision" || name == "upload" {
			r.peeked = *s
			break
		}
		switch name {
		case "title":
			p.Title, err = r.text("title", r.lim.MaxTitleBytes)
			r.page = p.Title
		case "ns":
			var n int64
			n, err = r.int("ns")
			p.NS = int(n)
		case "id":
			p.ID, err = r.int("id")
		case "redirect":
			p.Redirect, _ = attr(s, "title")
			err = r.skip()
		case "restrictions":
			p.Restrictions, err = r.text("restrictions", r.lim.MaxFieldBytes)
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(p.Title) == "" {
		return nil, r.errorf("a <page> without a <title>")
	}
	if p.NS == -1000 {
		p.NS = r.nsOf(p.Title)
	}
	return &p, nil
}

// nsOf finds a title's namespace by its prefix, for schemas before 0.6
// that wrote no <ns>.
func (r *Reader) nsOf(title string) int {
	pre, _, ok := strings.Cut(title, ":")
	if !ok {
		return 0
	}
	for _, n := range r.site.Namespaces {
		if n.Name != "" && strings.EqualFold(n.Name, pre) {
			return n.Key
		}
	}
	return 0
}

func (r *Reader) contributor() (Contributor, error) {
	var c Contributor
	// The start element was consumed: its deleted attribute is read by
	// the caller.
	for {
		s, err := r.nextStart()
		if err != nil {
			return c, err
		}
		if s == nil {
			return c, nil
		}
		switch s.Name.Local {
		case "username":
			c.Username, err = r.text("username", r.lim.MaxTitleBytes)
		case "id":
			c.ID, err = r.int("id")
		case "ip":
			c.IP, err = r.text("ip", r.lim.MaxTitleBytes)
		default:
			err = r.skip()
		}
		if err != nil {
			return c, err
		}
	}
}

func (r *Reader) readRevision() (*Revision, error) {
	var v Revision
	hasTime := false
	for {
		s, err := r.nextStart()
		if err != nil {
			return nil, err
		}
		if s == nil {
			break
		}
		f := r.lim.MaxFieldBytes
		switch s.Name.Local {
		case "id":
			v.ID, err = r.int("id")
		case "parentid":
			v.ParentID, err = r.int("parentid")
		case "timestamp":
			v.Timestamp, err = r.timestamp()
			hasTime = true
		case "contributor":
			d, _ := attr(s, "deleted")
			v.Contributor, err = r.contributor()
			v.Contributor.Deleted = d == "deleted"
		case "minor":
			v.Minor = true
			err = r.skip()
		case "comment":
			d, _ := attr(s, "deleted")
			v.CommentDeleted = d == "deleted"
			v.Comment, err = r.text("comment", f)
		case "model":
			v.Model, err = r.text("model", f)
		case "format":
			v.Format, err = r.text("format", f)
		case "text":
			d, _ := attr(s, "deleted")
			v.TextDeleted = d == "deleted"
			if sha, ok := attr(s, "sha1"); ok && v.SHA1 == "" {
				v.SHA1 = sha
			}
			hint := 0
			if n, ok := attr(s, "bytes"); ok {
				b, perr := strconv.ParseInt(n, 10, 64)
				if perr == nil && b > int64(r.lim.MaxTextBytes) {
					return nil, r.errorf("the revision's text is %d bytes; the limit (max_page_bytes) is %d bytes", b, r.lim.MaxTextBytes)
				}
				if perr == nil && b > 0 {
					hint = int(b)
				}
			}
			v.Text, err = r.sizedText("text", r.lim.MaxTextBytes, hint)
			if err != nil && strings.Contains(err.Error(), "is longer than") {
				err = r.errorf("the revision's text is longer than the limit (max_page_bytes) of %d bytes", r.lim.MaxTextBytes)
			}
		case "sha1":
			v.SHA1, err = r.text("sha1", f)
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, err
		}
	}
	if !hasTime {
		return nil, r.errorf("a <revision> (id %d) without a <timestamp>", v.ID)
	}
	if v.Model == "" {
		v.Model = "wikitext"
	}
	return &v, nil
}

func (r *Reader) readUpload() (*Upload, error) {
	var u Upload
	for {
		s, err := r.nextStart()
		if err != nil {
			return nil, err
		}
		if s == nil {
			return &u, nil
		}
		f := r.lim.MaxFieldBytes
		switch s.Name.Local {
		case "timestamp":
			u.Timestamp, err = r.timestamp()
		case "contributor":
			d, _ := attr(s, "deleted")
			u.Contributor, err = r.contributor()
			u.Contributor.Deleted = d == "deleted"
		case "comment":
			u.Comment, err = r.text("comment", f)
		case "filename":
			u.Filename, err = r.text("filename", r.lim.MaxTitleBytes)
		case "src":
			u.Src, err = r.text("src", f)
		case "size":
			u.Size, err = r.int("size")
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, err
		}
	}
}
