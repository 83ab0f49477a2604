package media

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxSVGTokens bounds the XML tokens Probe reads of an SVG: a drawing of
// a million elements is not one to show on a wiki page.
const maxSVGTokens = 2_000_000

// defaultSVGSize is the size of an SVG that states none, as a browser
// would show it.
const defaultSVGSize = 512

const xhtmlNS = "http://www.w3.org/1999/xhtml"

func unsafeSVG(what string, args ...any) error {
	return refuse(ErrUnsafe, "this SVG contains script or external references and cannot be uploaded ("+what+")", args...)
}

// probeSVG checks that an SVG can be shown safely and reads its size.
func probeSVG(data []byte) (Info, error) {
	if indexFold(data, "<!entity") >= 0 {
		return Info{}, unsafeSVG("an entity declaration")
	}
	if indexFold(data, "javascript:") >= 0 {
		return Info{}, unsafeSVG("a javascript: URL")
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = charsetReader
	var (
		info            Info
		depth, inStyle  int
		rootSeen, ended bool
	)
	for n := 0; ; n++ {
		if n == maxSVGTokens {
			return Info{}, invalid(mimeSVG, "it has more than %d XML tokens", maxSVGTokens)
		}
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var me *Error
			if errors.As(err, &me) {
				return Info{}, err
			}
			return Info{}, invalid(mimeSVG, "%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if ended {
				return Info{}, invalid(mimeSVG, "it has an element after its root element")
			}
			if !rootSeen {
				if t.Name.Local != "svg" {
					return Info{}, invalid(mimeSVG, "its root element is %q, not svg", t.Name.Local)
				}
				rootSeen = true
				info = svgSize(t)
			}
			if err := checkSVGElement(t); err != nil {
				return Info{}, err
			}
			if strings.EqualFold(t.Name.Local, "style") {
				inStyle++
			}
			depth++
		case xml.EndElement:
			if strings.EqualFold(t.Name.Local, "style") {
				inStyle--
			}
			depth--
			ended = depth == 0
		case xml.CharData:
			if inStyle > 0 {
				if err := checkCSS(string(t)); err != nil {
					return Info{}, err
				}
			}
		case xml.ProcInst:
			if t.Target != "xml" {
				return Info{}, unsafeSVG("a processing instruction <?%s?>", t.Target)
			}
		}
	}
	if !ended {
		return Info{}, invalid(mimeSVG, "it has no complete svg element")
	}
	return info, nil
}

// checkSVGElement refuses elements that run script, embed other documents
// or load other resources, and such attributes.
func checkSVGElement(t xml.StartElement) error {
	name := strings.ToLower(t.Name.Local)
	if t.Name.Space == xhtmlNS {
		return unsafeSVG("an HTML element <%s>", t.Name.Local)
	}
	switch name {
	case "script", "foreignobject", "handler", "listener", "iframe", "embed", "object", "applet", "frame", "frameset":
		return unsafeSVG("a <%s> element", t.Name.Local)
	}
	animation := name == "set" || strings.HasPrefix(name, "animate")
	for _, a := range t.Attr {
		local := strings.ToLower(a.Name.Local)
		switch {
		case strings.HasPrefix(local, "on"):
			return unsafeSVG("an event handler attribute %s", a.Name.Local)
		case local == "href":
			if !localRef(a.Value) {
				return unsafeSVG("a reference to %q", clip(a.Value))
			}
		case animation && local == "attributename" && strings.HasSuffix(strings.ToLower(strings.TrimSpace(a.Value)), "href"):
			return unsafeSVG("an animation of a link")
		}
		if scriptURL(a.Value) {
			return unsafeSVG("a script URL in %s", a.Name.Local)
		}
		if local == "style" {
			if err := checkCSS(a.Value); err != nil {
				return err
			}
		} else if err := checkURLs(a.Value); err != nil {
			return err
		}
	}
	return nil
}

// localRef reports whether a link stays within the SVG: a fragment, or a
// raster image embedded as a data: URL.
func localRef(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || v[0] == '#' {
		return true
	}
	lower := strings.ToLower(v)
	for _, t := range []string{"png", "jpeg", "gif", "webp"} {
		p := "data:image/" + t
		if strings.HasPrefix(lower, p) && len(lower) > len(p) && (lower[len(p)] == ';' || lower[len(p)] == ',') {
			return true
		}
	}
	return false
}

// scriptURL reports whether v holds a script URL, however a browser would
// read it: ignoring case, whitespace and control characters.
func scriptURL(v string) bool {
	if strings.IndexByte(v, ':') < 0 {
		return false
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if c := v[i]; c > ' ' {
			b.WriteByte(lowerASCII(c))
		}
	}
	s := b.String()
	return strings.Contains(s, "javascript:") || strings.Contains(s, "vbscript:") || strings.Contains(s, "livescript:")
}

// checkCSS refuses style sheets that import others, load resources from
// elsewhere or run script.
func checkCSS(css string) error {
	lower := strings.ToLower(css)
	for _, bad := range []string{"@import", "expression(", "-moz-binding", "behavior:"} {
		if strings.Contains(lower, bad) {
			return unsafeSVG("%s in a style", bad)
		}
	}
	return checkURLs(css)
}

// checkURLs refuses url(…) references in v other than local ones.
func checkURLs(v string) error {
	lower := strings.ToLower(v)
	for {
		i := strings.Index(lower, "url(")
		if i < 0 {
			return nil
		}
		lower = lower[i+4:]
		ref := strings.TrimLeft(lower, " \t\r\n\f\"'")
		if end := strings.IndexAny(ref, ")\"'"); end >= 0 {
			ref = ref[:end]
		}
		if ref == "" || !localRef(ref) {
			return unsafeSVG("a reference to url(%s)", clip(ref))
		}
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// svgSize reads the size of an SVG from its root: width and height, one of
// them and the aspect of the viewBox, the viewBox alone, or 512×512.
func svgSize(root xml.StartElement) Info {
	var w, h, vw, vh float64
	var wok, hok, vbok bool
	for _, a := range root.Attr {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "width":
			w, wok = svgLength(a.Value)
		case "height":
			h, hok = svgLength(a.Value)
		case "viewBox":
			f := strings.FieldsFunc(a.Value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
			if len(f) == 4 {
				x, err1 := strconv.ParseFloat(f[2], 64)
				y, err2 := strconv.ParseFloat(f[3], 64)
				vbok = err1 == nil && err2 == nil && x > 0 && y > 0 && !math.IsInf(x, 0) && !math.IsInf(y, 0)
				vw, vh = x, y
			}
		}
	}
	switch {
	case wok && hok:
	case wok && vbok:
		h = w * vh / vw
	case hok && vbok:
		w = h * vw / vh
	case vbok:
		w, h = vw, vh
	default:
		if !wok {
			w = defaultSVGSize
		}
		if !hok {
			h = defaultSVGSize
		}
	}
	return Info{Width: pixels(w), Height: pixels(h), Frames: 1}
}

// pixels rounds a length to a whole number of pixels, at least 1.
func pixels(f float64) int {
	switch {
	case !(f >= 1): // also NaN
		return 1
	case f >= math.MaxInt32:
		return math.MaxInt32
	}
	return int(math.Round(f))
}

// svgLength reads an absolute CSS length in pixels (96 per inch); relative
// ones (percentages) are not a size.
func svgLength(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	unit := 1.0
	for _, u := range []struct {
		suffix string
		px     float64
	}{{"px", 1}, {"pt", 96.0 / 72}, {"pc", 16}, {"mm", 96 / 25.4}, {"cm", 96 / 2.54}, {"in", 96}, {"em", 16}, {"ex", 8}} {
		if strings.HasSuffix(strings.ToLower(s), u.suffix) {
			s, unit = strings.TrimSpace(s[:len(s)-2]), u.px
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return 0, false
	}
	return f * unit, true
}

// indexFold returns the index of the first occurrence of pat (lower-case
// ASCII) in b, ignoring ASCII case; -1 when there is none.
func indexFold(b []byte, pat string) int {
	if len(pat) == 0 {
		return 0
	}
	first := pat[0]
	for i := 0; i+len(pat) <= len(b); i++ {
		if lowerASCII(b[i]) != first {
			continue
		}
		j := 1
		for j < len(pat) && lowerASCII(b[i+j]) == pat[j] {
			j++
		}
		if j == len(pat) {
			return i
		}
	}
	return -1
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
