package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/webp"
)

func TestStripGPSFromJPEG(t *testing.T) {
	j := encodeJPEG(t, quadrants(64, 32))
	for _, bo := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(fmt.Sprintf("a %v Exif segment loses its GPS and keeps its orientation", bo), func(t *testing.T) {
			data := withExif(j, bo, 6, true)
			orig := bytes.Clone(data)
			out := StripGPS(data, mimeJPEG)
			if !bytes.Equal(data, orig) {
				t.Error("StripGPS changed its input")
			}
			if len(out) != len(data) {
				t.Errorf("len = %d; want %d (the segment is blanked in place)", len(out), len(data))
			}
			if bytes.Contains(out, gpsSecret) || bytes.Contains(out, []byte("N\x00\x00\x00")) {
				t.Error("the GPS position is still there")
			}
			segs, _, _ := jpegSegments(out)
			for _, s := range segs {
				if p := out[s.start+4 : s.end]; s.marker == 0xe1 {
					tf, ifd0, ok := parseTIFF(p[6:])
					if !ok || tf.find(ifd0, tagGPSInfo) >= 0 || tf.entries(ifd0) != 1 {
						t.Errorf("IFD0 still points to GPS or lost its entries (ok %v)", ok)
					}
				}
			}
			if info, err := Probe(out, mimeJPEG); err != nil || info.Width != 32 || info.Height != 64 {
				t.Errorf("Probe = %+v, %v; want the orientation kept (32×64)", info, err)
			}
			if _, err := jpeg.Decode(bytes.NewReader(out)); err != nil {
				t.Errorf("the stripped JPEG does not decode: %v", err)
			}
			if again := StripGPS(out, mimeJPEG); &again[0] != &out[0] {
				t.Error("stripping twice copied the file")
			}
		})
	}
	t.Run("an XMP segment naming a GPS property is dropped", func(t *testing.T) {
		xmp := append(bytes.Clone(xmpPrefix), `<x:xmpmeta><rdf:Description exif:GPSLatitude="52,31.2N"/></x:xmpmeta>`...)
		other := append(bytes.Clone(xmpPrefix), `<x:xmpmeta><rdf:Description dc:creator="Ada"/></x:xmpmeta>`...)
		out := StripGPS(withAPP1(withAPP1(j, other), xmp), mimeJPEG)
		if bytes.Contains(out, []byte("GPSLatitude")) || !bytes.Contains(out, []byte("Ada")) {
			t.Error("want the GPS packet gone and the other kept")
		}
	})
	t.Run("a JPEG without GPS comes back as it is", func(t *testing.T) {
		data := withExif(j, binary.BigEndian, 3, false)
		if out := StripGPS(data, mimeJPEG); &out[0] != &data[0] || len(out) != len(data) {
			t.Error("StripGPS copied a file it had nothing to remove from")
		}
	})
	t.Run("an unreadable Exif segment is dropped", func(t *testing.T) {
		data := withAPP1(j, []byte("Exif\x00\x00garbage that is not TIFF"))
		if out := StripGPS(data, mimeJPEG); len(out) != len(j) || bytes.Contains(out, []byte("garbage")) {
			t.Errorf("len = %d; want the segment gone (%d)", len(out), len(j))
		}
	})
}

func TestStripGPSFromPNG(t *testing.T) {
	p := encodePNG(t, quadrants(8, 8))
	data := insertPNGChunk(p, "eXIf", exifTIFF(binary.BigEndian, 1, true))
	data = insertPNGChunk(data, "tEXt", []byte("Raw profile type exif\x00\nexif\n   12\n4d4d002a"))
	data = insertPNGChunk(data, "tEXt", []byte("Comment\x00kept"))
	out := StripGPS(data, mimePNG)
	if bytes.Contains(out, gpsSecret) || bytes.Contains(out, []byte("eXIf")) || bytes.Contains(out, []byte("Raw profile")) {
		t.Error("the Exif chunks are still there")
	}
	if !bytes.Contains(out, []byte("Comment\x00kept")) {
		t.Error("a text chunk without Exif went too")
	}
	if _, err := png.Decode(bytes.NewReader(out)); err != nil {
		t.Errorf("the stripped PNG does not decode: %v", err)
	}
}

func TestStripGPSFromWebP(t *testing.T) {
	exif := riffChunk("EXIF", exifTIFF(binary.LittleEndian, 1, true))
	data := webpFile(vp8x(0x18, 5, 3), riffChunk("VP8L", solidVP8L(5, 3, blue8)), exif)
	out := StripGPS(data, mimeWebP)
	if bytes.Contains(out, gpsSecret) || len(out) != len(data)-len(exif) {
		t.Errorf("len = %d; want the EXIF chunk (%d bytes) gone", len(out), len(exif))
	}
	if got := binary.LittleEndian.Uint32(out[4:]); int(got) != len(out)-8 {
		t.Errorf("RIFF size = %d; want %d", got, len(out)-8)
	}
	if out[20]&0x08 != 0 || out[20]&0x10 == 0 {
		t.Errorf("VP8X flags = %#x; want the Exif flag cleared and the alpha flag kept", out[20])
	}
	if m, err := webp.Decode(bytes.NewReader(out)); err != nil || m.Bounds().Dx() != 5 {
		t.Errorf("the stripped WebP: %v", err)
	}
}

func TestStripGPSLeavesOtherFilesAlone(t *testing.T) {
	for _, tt := range []struct {
		name, mime string
		data       []byte
	}{
		{"a GIF", mimeGIF, encodeGIF(t, 2, 2, red)},
		{"a PDF", mimePDF, []byte("%PDF-1.4 GPS")},
		{"a truncated JPEG", mimeJPEG, withExif(encodeJPEG(t, quadrants(8, 8)), binary.BigEndian, 6, true)[:20]},
		{"a truncated PNG", mimePNG, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")},
		{"a truncated WebP", mimeWebP, []byte("RIFF\xff\xff\xff\xffWEBPEXIF\xff\xff")},
	} {
		t.Run(tt.name+" comes back unchanged", func(t *testing.T) {
			if out := StripGPS(tt.data, tt.mime); !bytes.Equal(out, tt.data) {
				t.Errorf("StripGPS changed it")
			}
		})
	}
}
