package media

import (
	"bytes"
	"encoding/binary"
)

// StripGPS removes the GPS position from a JPEG's, PNG's or WebP's Exif and XMP, keeping
// the orientation. It returns data itself when it removes nothing, else a copy no longer.
func StripGPS(data []byte, mime string) []byte {
	switch mime {
	case mimeJPEG:
		return stripJPEG(data)
	case mimePNG:
		return stripPNG(data)
	case mimeWebP:
		return stripWebP(data)
	}
	return data
}

var (
	xmpPrefix    = []byte("http://ns.adobe.com/xap/1.0/\x00")
	xmpExtPrefix = []byte("http://ns.adobe.com/xmp/extension/\x00")
)

// stripJPEG blanks the GPS IFD of each Exif segment and drops the XMP
// segments that name a GPS property. An extended XMP packet is split over
// several segments, so all of them go when one names GPS.
func stripJPEG(data []byte) []byte {
	segs, _, _ := jpegSegments(data)
	extGPS := false
	for _, s := range segs {
		p := data[s.start+4 : s.end]
		if s.marker == 0xe1 && bytes.HasPrefix(p, xmpExtPrefix) && bytes.Contains(p, []byte("GPS")) {
			extGPS = true
		}
	}
	var out []byte
	copied := 0
	for _, s := range segs {
		if s.marker != 0xe1 {
			continue
		}
		p := data[s.start+4 : s.end]
		var keep []byte
		switch {
		case bytes.HasPrefix(p, []byte("Exif\x00\x00")):
			seg := bytes.Clone(data[s.start:s.end])
			changed, ok := blankGPS(seg[4+6:])
			if ok && !changed {
				continue
			}
			if ok {
				keep = seg
			}
		case bytes.HasPrefix(p, xmpPrefix) && bytes.Contains(p, []byte("GPS")):
		case bytes.HasPrefix(p, xmpExtPrefix) && extGPS:
		default:
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(data))
		}
		out = append(out, data[copied:s.start]...)
		out = append(out, keep...)
		copied = s.end
	}
	if out == nil {
		return data
	}
	return append(out, data[copied:]...)
}

// blankGPS removes the GPSInfo entry from IFD0 and IFD1 of an Exif TIFF
// structure and zeroes the GPS IFD it points to, with the values that IFD
// points to. Nothing moves, so every other offset stays valid. ok is
// false when t is not a TIFF structure.
func blankGPS(t []byte) (changed, ok bool) {
	tf, off, ok := parseTIFF(t)
	if !ok {
		return false, false
	}
	for range 2 {
		if e := tf.find(off, tagGPSInfo); e >= 0 {
			n := tf.entries(off)
			blankIFD(tf, int64(tf.bo.Uint32(t[e+8:])))
			tail := min(off+2+12*n+4, len(t)) // the entries and the next IFD's offset
			copy(t[e:], t[e+12:tail])
			clear(t[tail-12 : tail])
			tf.bo.PutUint16(t[off:], uint16(n-1))
			changed = true
		}
		end := off + 2 + 12*tf.entries(off)
		if end+4 > len(t) {
			break
		}
		next := int(tf.bo.Uint32(t[end:]))
		if next <= off || next+2 > len(t) {
			break
		}
		off = next
	}
	return changed, true
}

// blankIFD zeroes the IFD at off and the values its entries point to.
func blankIFD(tf tiff, off int64) {
	if off < 8 || off+2 > int64(len(tf.b)) {
		return
	}
	n := tf.entries(int(off))
	for i := range n {
		e := int(off) + 2 + 12*i
		size := typeSize(tf.bo.Uint16(tf.b[e+2:])) * int64(tf.bo.Uint32(tf.b[e+4:]))
		if size <= 4 {
			continue
		}
		if v := int64(tf.bo.Uint32(tf.b[e+8:])); v+size <= int64(len(tf.b)) {
			clear(tf.b[v : v+size])
		}
	}
	clear(tf.b[off:min(off+2+12*int64(n)+4, int64(len(tf.b)))])
}

// typeSize is the size in bytes of one value of a TIFF field type.
func typeSize(typ uint16) int64 {
	switch typ {
	case 1, 2, 6, 7:
		return 1
	case 3, 8:
		return 2
	case 4, 9, 11, 13:
		return 4
	case 5, 10, 12:
		return 8
	}
	return 0
}

// pngMetadata are the keywords of the PNG text chunks that carry Exif or
// XMP, as ImageMagick and Adobe write them.
var pngMetadata = []string{"Raw profile type exif", "Raw profile type APP1", "Raw profile type xmp", "XML:com.adobe.xmp"}

// stripPNG drops the eXIf chunk and the text chunks holding Exif or XMP
// (compressed, so not searched: all of them go).
func stripPNG(data []byte) []byte {
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		return data
	}
	var out []byte
	copied := 0
	for p := 8; p+12 <= len(data); {
		n := int64(binary.BigEndian.Uint32(data[p:]))
		typ := string(data[p+4 : p+8])
		end := int64(p) + 12 + n
		if end > int64(len(data)) {
			break
		}
		drop := typ == "eXIf"
		if typ == "tEXt" || typ == "zTXt" || typ == "iTXt" {
			body := data[p+8 : p+8+int(n)]
			if i := bytes.IndexByte(body, 0); i >= 0 {
				for _, k := range pngMetadata {
					drop = drop || string(body[:i]) == k
				}
			}
		}
		if drop {
			if out == nil {
				out = make([]byte, 0, len(data))
			}
			out = append(out, data[copied:p]...)
			copied = int(end)
		}
		p = int(end)
		if typ == "IEND" {
			break
		}
	}
	if out == nil {
		return data
	}
	return append(out, data[copied:]...)
}

// stripWebP drops an extended WebP's EXIF chunk, and its XMP chunk when
// it names a GPS property, and clears their flags in the VP8X chunk.
func stripWebP(data []byte) []byte {
	if len(data) < 12 || string(data[:4]) != "RIFF" || string(data[8:12]) != "WEBP" {
		return data
	}
	limit := min(int64(len(data)), 8+int64(binary.LittleEndian.Uint32(data[4:])))
	var out []byte
	copied := 0
	var flags byte
	for p := int64(12); p+8 <= limit; {
		typ := string(data[p : p+4])
		n := int64(binary.LittleEndian.Uint32(data[p+4:]))
		end := min(p+8+n+n&1, limit)
		if p+8+n > limit {
			break
		}
		drop := false
		switch typ {
		case "EXIF":
			drop, flags = true, flags|0x08
		case "XMP ":
			if bytes.Contains(data[p+8:p+8+n], []byte("GPS")) {
				drop, flags = true, flags|0x04
			}
		}
		if drop {
			if out == nil {
				out = make([]byte, 0, len(data))
			}
			out = append(out, data[copied:p]...)
			copied = int(end)
		}
		p = end
	}
	if out == nil {
		return data
	}
	out = append(out, data[copied:]...)
	removed := len(data) - len(out)
	binary.LittleEndian.PutUint32(out[4:], binary.LittleEndian.Uint32(data[4:])-uint32(removed))
	if len(out) >= 30 && string(out[12:16]) == "VP8X" {
		out[20] &^= flags
	}
	return out
}
