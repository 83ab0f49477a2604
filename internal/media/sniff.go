package media

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Sniff returns a file's type from its first 4 KiB or more (all of a shorter
// file), refusing HTML and types unknown or not allowed; Probe vets SVGs.
func Sniff(head []byte, allowed []string) (mime string, err error) {
	if len(head) == 0 {
		return "", refuse(ErrType, "the file is empty")
	}
	mime = sniffBinary(head)
	if mime == "" {
		mime, err = sniffText(head)
		if err != nil {
			return "", err
		}
	}
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSpace(a), mime) {
			return mime, nil
		}
	}
	return "", refuse(ErrType, "the file is %s (%s), a type this wiki does not accept", describe(mime), mime)
}

// sniffBinary recognises the formats that begin with a signature; "" when
// head begins with none.
func sniffBinary(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return mimePNG
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return mimeJPEG
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return mimeGIF
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return mimeWebP
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return mimeWAV
	case bytes.HasPrefix(b, []byte("%PDF-")):
		return mimePDF
	case bytes.HasPrefix(b, []byte("PK\x03\x04")), bytes.HasPrefix(b, []byte("PK\x05\x06")):
		return sniffZip(b)
	case bytes.HasPrefix(b, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")):
		return sniffOLE(b)
	case bytes.HasPrefix(b, []byte("\x1f\x8b\x08")):
		return mimeGzip
	case bytes.HasPrefix(b, []byte("7z\xbc\xaf\x27\x1c")):
		return mimeSevenZip
	case len(b) >= 263 && string(b[257:262]) == "ustar":
		return mimeTar
	case len(b) >= 12 && string(b[4:8]) == "ftyp":
		return sniffFtyp(string(b[8:12]))
	case bytes.HasPrefix(b, []byte("\x1a\x45\xdf\xa3")):
		return sniffEBML(b)
	case bytes.HasPrefix(b, []byte("OggS\x00")):
		if bytes.Contains(b[:min(len(b), 128)], []byte("\x80theora")) {
			return mimeOGV
		}
		return mimeOgg
	case bytes.HasPrefix(b, []byte("fLaC")):
		return mimeFLAC
	case len(b) >= 4 && string(b[:3]) == "ID3" && b[3] >= 2 && b[3] <= 4:
		return mimeMP3
	case len(b) >= 3 && isMP3Frame(b):
		return mimeMP3
	}
	return ""
}

// isMP3Frame reports whether b begins with the header of an MPEG audio
// layer III frame (the sync bits, a bitrate and a sampling rate that are
// not reserved). Layer III only, so that a UTF-16 byte-order mark (FF FE)
// is not taken for a frame.
func isMP3Frame(b []byte) bool {
	return b[0] == 0xff && b[1]&0xe0 == 0xe0 && b[1]&0x06 == 0x02 && b[1]&0x18 != 0x08 &&
		b[2]>>4 != 0x0f && b[2]>>4 != 0 && (b[2]>>2)&3 != 3
}

// sniffFtyp maps an ISO base media file's major brand to a type.
func sniffFtyp(brand string) string {
	switch brand {
	case "isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ", "mmp4", "msnv":
		return mimeMP4
	case "M4A ", "M4B ":
		return mimeM4A
	case "qt  ":
		return mimeMOV
	}
	return ""
}

// sniffEBML tells WebM from other Matroska files by the DocType near the
// start of the EBML header.
func sniffEBML(b []byte) string {
	h := b[:min(len(b), 64)]
	switch {
	case bytes.Contains(h, []byte("webm")):
		return mimeWebM
	case bytes.Contains(h, []byte("matroska")):
		return mimeMKV
	}
	return ""
}

// sniffZip tells office documents from other ZIP archives by their
// entries: an ODF file's first entry is "mimetype", stored, holding its
// type; an OOXML file has "[Content_Types].xml" and a word/, xl/ or ppt/
// folder. The central directory is read when head is the whole file,
// otherwise the local headers within head.
func sniffZip(b []byte) string {
	if m := odfType(b); m != "" {
		return m
	}
	// The local headers of the first entries, not the central directory:
	// a crafted archive's directory of millions of entries would cost
	// memory to read, and office files name their parts first.
	names := zipLocalNames(b)
	types := false
	office := ""
	for _, n := range names {
		switch {
		case n == "[Content_Types].xml":
			types = true
		case office == "" && strings.HasPrefix(n, "word/"):
			office = mimeDOCX
		case office == "" && strings.HasPrefix(n, "xl/"):
			office = mimeXLSX
		case office == "" && strings.HasPrefix(n, "ppt/"):
			office = mimePPTX
		}
	}
	if types && office != "" {
		return office
	}
	return mimeZIP
}

// odfType returns the type an OpenDocument file names in its first entry.
func odfType(b []byte) string {
	const hdr = 30
	if len(b) < hdr || string(b[:4]) != "PK\x03\x04" {
		return ""
	}
	method := binary.LittleEndian.Uint16(b[8:])
	nameLen := int(binary.LittleEndian.Uint16(b[26:]))
	extraLen := int(binary.LittleEndian.Uint16(b[28:]))
	if method != 0 || nameLen != len("mimetype") || len(b) < hdr+nameLen || string(b[hdr:hdr+nameLen]) != "mimetype" {
		return ""
	}
	start := hdr + nameLen + extraLen
	if start > len(b) {
		return ""
	}
	data := b[start:min(len(b), start+100)]
	switch m := string(data[:min(len(data), localSize(b))]); m {
	case mimeODT, mimeODS, mimeODP, mimeODG:
		return m
	}
	return ""
}

// localSize returns the data length of the entry whose local header
// begins b: from the header, or, when a data descriptor follows the data
// instead, up to the next signature.
func localSize(b []byte) int {
	size := int64(binary.LittleEndian.Uint32(b[18:]))
	if binary.LittleEndian.Uint16(b[6:])&0x08 == 0 || size != 0 {
		return int(min(size, 1<<31-1))
	}
	start := 30 + int(binary.LittleEndian.Uint16(b[26:])) + int(binary.LittleEndian.Uint16(b[28:]))
	if start > len(b) {
		return 0
	}
	i := bytes.Index(b[start:], []byte("PK\x07\x08"))
	if j := bytes.Index(b[start:], []byte("PK\x03\x04")); i < 0 || j >= 0 && j < i {
		i = j
	}
	if i < 0 {
		return len(b) - start
	}
	return i
}

// zipLocalNames lists the entries whose local headers lie within b.
func zipLocalNames(b []byte) []string {
	var names []string
	for p := 0; len(names) < 64 && p+30 <= len(b); {
		if string(b[p:p+4]) == "PK\x07\x08" { // a data descriptor
			p += 16
			continue
		}
		if string(b[p:p+4]) != "PK\x03\x04" {
			break
		}
		nameLen := int(binary.LittleEndian.Uint16(b[p+26:]))
		extraLen := int(binary.LittleEndian.Uint16(b[p+28:]))
		if p+30+nameLen > len(b) {
			break
		}
		names = append(names, string(b[p+30:p+30+nameLen]))
		next := int64(p) + 30 + int64(nameLen) + int64(extraLen) + int64(localSize(b[p:]))
		if next > int64(len(b)) {
			break
		}
		p = int(next)
	}
	return names
}

// sniffOLE tells old Word, Excel and PowerPoint files apart by the streams
// in the directory of their compound file, when its first directory sector
// lies within b; otherwise it reports the container's type.
func sniffOLE(b []byte) string {
	if len(b) < 512 {
		return mimeOLE
	}
	shift := binary.LittleEndian.Uint16(b[0x1e:])
	if shift != 9 && shift != 12 {
		return mimeOLE
	}
	dir := (int64(binary.LittleEndian.Uint32(b[0x30:])) + 1) << shift
	for p := dir; p >= 0 && p+128 <= int64(len(b)); p += 128 {
		e := b[p : p+128]
		n := int(binary.LittleEndian.Uint16(e[0x40:]))
		if e[0x42] != 2 || n < 2 || n > 64 || n%2 != 0 {
			continue
		}
		var name []byte
		for i := 0; i+1 < n-2; i += 2 {
			if e[i+1] != 0 {
				name = nil
				break
			}
			name = append(name, e[i])
		}
		switch string(name) {
		case "WordDocument":
			return mimeDOC
		case "Workbook", "Book":
			return mimeXLS
		case "PowerPoint Document":
			return mimePPT
		}
	}
	return mimeOLE
}

// sniffText returns Text for UTF-8 text that is not markup, or the error
// that refuses it.
func sniffText(head []byte) (string, error) {
	b := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	t := bytes.TrimLeft(b, " \t\r\n\f")
	if len(t) > 1 && t[0] == '<' {
		root, ok := xmlRoot(t)
		if ok && root.Name.Local == "svg" {
			return mimeSVG, nil
		}
		if strings.HasPrefix(http.DetectContentType(head), "text/html") || htmlTags[tagName(t)] {
			return "", refuse(ErrType, "the file is an HTML document, and HTML cannot be uploaded")
		}
		if ok && isXHTML(root) {
			return "", refuse(ErrType, "the file is an XHTML document, and HTML cannot be uploaded")
		}
		if ok {
			return "", refuse(ErrType, "the file is an XML document whose root element is %q; of XML, only SVG images can be uploaded", root.Name.Local)
		}
	}
	if !isText(b) {
		return "", refuse(ErrType, "the wiki cannot tell what type of file this is from its content, so it cannot be uploaded")
	}
	return mimeText, nil
}

// isXHTML reports whether an XML root element is HTML's.
func isXHTML(root xml.StartElement) bool {
	if strings.EqualFold(root.Name.Local, "html") {
		return true
	}
	for _, a := range root.Attr {
		if (a.Name.Space == "" && a.Name.Local == "xmlns" || a.Name.Space == "xmlns") &&
			strings.TrimSpace(a.Value) == "http://www.w3.org/1999/xhtml" {
			return true
		}
	}
	return false
}

// tagName returns the lower-case name of the tag t begins with ("" when t
// does not begin with one).
func tagName(t []byte) string {
	if len(t) < 2 || t[0] != '<' {
		return ""
	}
	i := 1
	for i < len(t) && i < 20 && (isLetter(t[i]) || i > 1 && t[i] >= '0' && t[i] <= '9') {
		i++
	}
	if i == 1 || i < len(t) && !(t[i] == '>' || t[i] == '/' || t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r' || t[i] == '\f') {
		return ""
	}
	return strings.ToLower(string(t[1:i]))
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// htmlTags are the elements whose opening tag at the start of a file makes
// it HTML to a browser that sniffs.
var htmlTags = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(`html head body script iframe frame frameset object embed applet
		meta link style title base form input button textarea select img image a b i u p br hr div span
		font table pre xmp plaintext listing noscript noembed template math video audio source marquee
		isindex h1 h2 h3 h4 h5 h6 ul ol li dl section article nav header footer main center svg`) {
		m[t] = true
	}
	return m
}()

// xmlRoot returns the first element of b parsed as XML, allowing an XML
// declaration, comments, processing instructions and a DOCTYPE before it.
func xmlRoot(b []byte) (xml.StartElement, bool) {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false
	d.CharsetReader = charsetReader
	for range 64 {
		tok, err := d.RawToken()
		if err != nil {
			return xml.StartElement{}, false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, true
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.StartElement{}, false
			}
		case xml.EndElement:
			return xml.StartElement{}, false
		}
	}
	return xml.StartElement{}, false
}

// charsetReader reads the single-byte encodings an XML declaration may
// name besides UTF-8.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii":
		return r, nil
	case "iso-8859-1", "iso_8859-1", "latin1", "latin-1", "l1":
		return &latin1Reader{r: r}, nil
	}
	return nil, refuse(ErrInvalid, "the XML is in the encoding %q; use UTF-8", label)
}

// latin1Reader decodes ISO 8859-1 to UTF-8.
type latin1Reader struct {
	r    io.Reader
	in   [256]byte
	out  [512]byte
	pend []byte // decoded, not yet read
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(l.pend) == 0 {
		n, err := l.r.Read(l.in[:])
		if n == 0 {
			return 0, err
		}
		l.pend = l.out[:0]
		for _, c := range l.in[:n] {
			l.pend = utf8.AppendRune(l.pend, rune(c))
		}
	}
	n := copy(p, l.pend)
	l.pend = l.pend[n:]
	return n, nil
}

// isText reports whether b is UTF-8 text: valid (but for a character cut
// at its end), with no NUL nor other control characters than whitespace
// and escape.
func isText(b []byte) bool {
	if i := lastRuneStart(b); i >= 0 && !utf8.FullRune(b[i:]) {
		b = b[:i]
	}
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' && c != 0x1b {
			return false
		}
	}
	return true
}

// lastRuneStart returns the index of the first byte of b's last UTF-8
// sequence, -1 when b is empty.
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return len(b) - 1
}
