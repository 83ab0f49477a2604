package media

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"

	"golang.org/x/image/webp"

	"github.com/wikid/wikid/internal/wiki"
)

// Info is what Probe reads of an image: its size as displayed (after
// EXIF orientation) and its number of frames.
type Info struct {
	Width, Height, Frames int
}

// Probe reads an image's displayed size and frames from its headers alone (Info{} for
// other types), refusing malformed headers, too many frames and unsafe SVGs, not huge sizes.
func Probe(data []byte, mime string) (Info, error) {
	switch mime {
	case mimePNG, mimeJPEG, mimeGIF, mimeWebP:
		h, err := readHeader(data, mime)
		if err == nil && mime == mimeJPEG {
			err = checkScans(data)
		}
		return h.Info, err
	case mimeSVG:
		return probeSVG(data)
	}
	return Info{}, nil
}

// header is a raster image's header: Info, and what a thumbnail needs.
type header struct {
	Info
	w, h        int // as stored, before orientation
	orientation int // EXIF, 1 to 8
	// frame is the first frame's rectangle on a GIF's logical screen.
	frameX, frameY, frameW, frameH int
	animated                       bool // an animated WebP
}

func readHeader(data []byte, mime string) (header, error) {
	var h header
	var err error
	switch mime {
	case mimePNG:
		h, err = pngHeader(data)
	case mimeJPEG:
		h, err = jpegHeader(data)
	case mimeGIF:
		h, err = gifHeader(data)
	case mimeWebP:
		h, err = webpHeader(data)
	}
	if err != nil {
		return header{}, err
	}
	if h.w <= 0 || h.h <= 0 {
		return header{}, refuse(ErrInvalid, "not a valid %s: it has no pixels (%d×%d)", imageName(mime), h.w, h.h)
	}
	if h.orientation == 0 {
		h.orientation = 1
	}
	if h.Frames == 0 {
		h.Frames = 1
	}
	h.Width, h.Height = h.w, h.h
	if h.orientation >= 5 {
		h.Width, h.Height = h.h, h.w
	}
	return h, nil
}

func imageName(mime string) string {
	switch mime {
	case mimePNG:
		return "PNG image"
	case mimeJPEG:
		return "JPEG image"
	case mimeGIF:
		return "GIF image"
	case mimeWebP:
		return "WebP image"
	}
	return "SVG image"
}

func invalid(mime, format string, args ...any) error {
	return refuse(ErrInvalid, "not a valid "+imageName(mime)+": "+format, args...)
}

func tooManyFrames(mime string) error {
	return refuse(ErrTooLarge, "the %s has more than %d frames", imageName(mime), wiki.MaxImageFrames)
}

// pngHeader reads IHDR and, up to the first IDAT, an APNG's frame count.
func pngHeader(b []byte) (header, error) {
	if len(b) < 33 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		return header{}, invalid(mimePNG, "the file is too short")
	}
	if binary.BigEndian.Uint32(b[8:]) != 13 || string(b[12:16]) != "IHDR" {
		return header{}, invalid(mimePNG, "it does not begin with an IHDR chunk")
	}
	if crc32.ChecksumIEEE(b[12:29]) != binary.BigEndian.Uint32(b[29:]) {
		return header{}, invalid(mimePNG, "the IHDR chunk's checksum is wrong")
	}
	w, hh := binary.BigEndian.Uint32(b[16:]), binary.BigEndian.Uint32(b[20:])
	if w == 0 || hh == 0 || w > 1<<31-1 || hh > 1<<31-1 {
		return header{}, invalid(mimePNG, "its size %d×%d is out of range", w, hh)
	}
	depth, color := b[24], b[25]
	ok := false
	switch color {
	case 0:
		ok = depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16
	case 3:
		ok = depth == 1 || depth == 2 || depth == 4 || depth == 8
	case 2, 4, 6:
		ok = depth == 8 || depth == 16
	}
	if !ok {
		return header{}, invalid(mimePNG, "bit depth %d with colour type %d", depth, color)
	}
	h := header{w: int(w), h: int(hh)}
	for p := 33; ; {
		if p+8 > len(b) {
			return header{}, invalid(mimePNG, "it has no image data")
		}
		n := int64(binary.BigEndian.Uint32(b[p:]))
		typ := string(b[p+4 : p+8])
		if typ == "IDAT" {
			break
		}
		if typ == "acTL" && n >= 8 && int64(p)+16 <= int64(len(b)) {
			frames := binary.BigEndian.Uint32(b[p+8:])
			if frames > wiki.MaxImageFrames {
				return header{}, tooManyFrames(mimePNG)
			}
			h.Frames = int(frames)
		}
		next := int64(p) + 12 + n
		if n > 1<<31-1 || next > int64(len(b)) {
			return header{}, invalid(mimePNG, "its %q chunk is cut short", typ)
		}
		p = int(next)
	}
	return h, nil
}

// jpegSegment is one marker segment before a JPEG's scan: b[start] is its
// first 0xFF and the payload, after the length, is b[start+4:end].
type jpegSegment struct {
	marker     byte
	start, end int
}

// jpegSegments walks the marker segments of a JPEG up to its first scan
// (SOS) and returns them, with the offset of the SOS marker (or of the end
// of what could be read) and whether the walk ended cleanly there.
func jpegSegments(b []byte) (segs []jpegSegment, sos int, ok bool) {
	if len(b) < 2 || b[0] != 0xff || b[1] != 0xd8 {
		return nil, 0, false
	}
	p := 2
	for len(segs) < 4096 {
		start := p
		if p >= len(b) || b[p] != 0xff {
			return segs, start, false
		}
		for p < len(b) && b[p] == 0xff {
			p++ // fill bytes
		}
		if p >= len(b) {
			return segs, start, false
		}
		m := b[p]
		p++
		switch {
		case m == 0xda:
			return segs, start, true
		case m == 0xd9 || m == 0x00 || m == 0xd8:
			return segs, start, false
		case m == 0x01 || m >= 0xd0 && m <= 0xd7:
			continue // no payload
		}
		if p+2 > len(b) {
			return segs, start, false
		}
		n := int(binary.BigEndian.Uint16(b[p:]))
		if n < 2 || p+n > len(b) {
			return segs, start, false
		}
		p += n
		// Keep the segment's own bytes from its last fill byte.
		segs = append(segs, jpegSegment{marker: m, start: p - n - 2, end: p})
	}
	return segs, p, false
}

// jpegHeader reads a JPEG's size from its frame header and its orientation
// from its Exif segment.
func jpegHeader(b []byte) (header, error) {
	segs, _, ok := jpegSegments(b)
	if len(b) < 2 || b[0] != 0xff || b[1] != 0xd8 {
		return header{}, invalid(mimeJPEG, "it does not begin with a start-of-image marker")
	}
	var h header
	sof := false
	for _, s := range segs {
		p := b[s.start+4 : s.end]
		switch {
		case s.marker == 0xe1 && h.orientation == 0 && bytes.HasPrefix(p, []byte("Exif\x00\x00")):
			h.orientation = exifOrientation(p[6:])
		case s.marker >= 0xc0 && s.marker <= 0xcf && s.marker != 0xc4 && s.marker != 0xc8 && s.marker != 0xcc && !sof:
			if len(p) < 6 {
				return header{}, invalid(mimeJPEG, "its frame header is too short")
			}
			h.h = int(binary.BigEndian.Uint16(p[1:]))
			h.w = int(binary.BigEndian.Uint16(p[3:]))
			if h.h == 0 {
				return header{}, invalid(mimeJPEG, "its height is not in its frame header")
			}
			sof = true
		}
	}
	if !sof {
		if !ok {
			return header{}, invalid(mimeJPEG, "its markers are broken before the frame header")
		}
		return header{}, invalid(mimeJPEG, "it has no frame header")
	}
	return h, nil
}

// tiff is an Exif TIFF structure: offsets count from its first byte.
type tiff struct {
	b  []byte
	bo binary.ByteOrder
}

// parseTIFF reads a TIFF header; the offset of IFD0 is checked against b.
func parseTIFF(b []byte) (t tiff, ifd0 int, ok bool) {
	if len(b) < 8 {
		return t, 0, false
	}
	switch string(b[:4]) {
	case "II*\x00":
		t.bo = binary.LittleEndian
	case "MM\x00*":
		t.bo = binary.BigEndian
	default:
		return t, 0, false
	}
	t.b = b
	off := int64(t.bo.Uint32(b[4:]))
	if off < 8 || off+2 > int64(len(b)) {
		return t, 0, false
	}
	return t, int(off), true
}

// entries returns the number of 12-byte entries of the IFD at off that
// lie within the structure.
func (t tiff) entries(off int) int {
	if off < 0 || off+2 > len(t.b) {
		return 0
	}
	n := int(t.bo.Uint16(t.b[off:]))
	return min(n, (len(t.b)-off-2)/12)
}

// find returns the offset of the entry for tag in the IFD at off, or -1.
func (t tiff) find(off int, tag uint16) int {
	for i := range t.entries(off) {
		e := off + 2 + 12*i
		if t.bo.Uint16(t.b[e:]) == tag {
			return e
		}
	}
	return -1
}

const (
	tagOrientation = 0x0112
	tagGPSInfo     = 0x8825
)

// exifOrientation returns the orientation (1 to 8) in the IFD0 of an Exif
// TIFF structure, 1 when it is absent or malformed.
func exifOrientation(b []byte) int {
	t, ifd0, ok := parseTIFF(b)
	if !ok {
		return 1
	}
	e := t.find(ifd0, tagOrientation)
	if e < 0 || t.bo.Uint16(t.b[e+2:]) != 3 || t.bo.Uint32(t.b[e+4:]) != 1 {
		return 1
	}
	if v := int(t.bo.Uint16(t.b[e+8:])); v >= 1 && v <= 8 {
		return v
	}
	return 1
}

// gifHeader reads a GIF's logical screen and walks its blocks, without
// decoding them, to count its frames and find the first.
func gifHeader(b []byte) (header, error) {
	if len(b) < 13 || !(bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))) {
		return header{}, invalid(mimeGIF, "the file is too short")
	}
	h := header{w: int(binary.LittleEndian.Uint16(b[6:])), h: int(binary.LittleEndian.Uint16(b[8:]))}
	p := 13
	if flags := b[10]; flags&0x80 != 0 {
		p += 3 << (flags&7 + 1)
	}
	// skip passes the data sub-blocks at p; -1 when they are cut short.
	skip := func(p int) int {
		for p < len(b) {
			n := int(b[p])
			p++
			if n == 0 {
				return p
			}
			p += n
		}
		return -1
	}
	frames := 0
walk:
	for p >= 0 && p < len(b) {
		switch b[p] {
		case 0x21: // extension: label, then sub-blocks
			p = skip(p + 2)
		case 0x2c: // image descriptor, local colour table, LZW code size, sub-blocks
			if p+11 > len(b) {
				break walk
			}
			d := b[p+1 : p+10]
			if frames == 0 {
				h.frameX = int(binary.LittleEndian.Uint16(d[0:]))
				h.frameY = int(binary.LittleEndian.Uint16(d[2:]))
				h.frameW = int(binary.LittleEndian.Uint16(d[4:]))
				h.frameH = int(binary.LittleEndian.Uint16(d[6:]))
			}
			p += 10
			if d[8]&0x80 != 0 {
				p += 3 << (d[8]&7 + 1)
			}
			if p >= len(b) {
				break walk
			}
			if lzw := b[p]; lzw < 2 || lzw > 8 {
				if frames == 0 {
					return header{}, invalid(mimeGIF, "its first frame's LZW code size %d is out of range", lzw)
				}
				break walk
			}
			if p = skip(p + 1); p < 0 {
				break walk
			}
			frames++
			if frames > wiki.MaxImageFrames {
				return header{}, tooManyFrames(mimeGIF)
			}
		case 0x3b: // trailer
			break walk
		default:
			if frames == 0 {
				return header{}, invalid(mimeGIF, "unknown block 0x%02x", b[p])
			}
			break walk
		}
	}
	if frames == 0 {
		return header{}, invalid(mimeGIF, "it has no complete frame")
	}
	if h.frameW == 0 || h.frameH == 0 || h.frameX+h.frameW > h.w || h.frameY+h.frameH > h.h {
		return header{}, invalid(mimeGIF, "its first frame (%d×%d at %d,%d) does not fit its %d×%d screen",
			h.frameW, h.frameH, h.frameX, h.frameY, h.w, h.h)
	}
	h.Frames = frames
	return h, nil
}

// webpHeader reads the canvas of an extended WebP (VP8X) and counts its
// animation frames; a simple WebP's size is in its VP8 or VP8L header.
func webpHeader(b []byte) (header, error) {
	if len(b) < 16 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return header{}, invalid(mimeWebP, "it does not begin with a RIFF WEBP header")
	}
	if string(b[12:16]) != "VP8X" {
		c, err := webp.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			return header{}, invalid(mimeWebP, "%v", err)
		}
		return header{w: c.Width, h: c.Height}, nil
	}
	if len(b) < 30 || binary.LittleEndian.Uint32(b[16:]) != 10 {
		return header{}, invalid(mimeWebP, "its VP8X chunk is malformed")
	}
	x := b[20:30]
	h := header{
		w:        int(uint32(x[4])|uint32(x[5])<<8|uint32(x[6])<<16) + 1,
		h:        int(uint32(x[7])|uint32(x[8])<<8|uint32(x[9])<<16) + 1,
		animated: x[0]&0x02 != 0,
	}
	if !h.animated {
		return h, nil
	}
	frames := 0
	for p := int64(30); p+8 <= int64(len(b)); {
		if string(b[p:p+4]) == "ANMF" {
			frames++
			if frames > wiki.MaxImageFrames {
				return header{}, tooManyFrames(mimeWebP)
			}
		}
		n := int64(binary.LittleEndian.Uint32(b[p+4:]))
		p += 8 + n + n&1
	}
	if frames == 0 {
		return header{}, invalid(mimeWebP, "it is animated but has no frame")
	}
	h.Frames = frames
	return h, nil
}
