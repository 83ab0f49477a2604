package media

import (
	"encoding/binary"
	"errors"
	"image/color"
	"testing"
)

// seeds are small files of every kind the fuzzers start from.
func seeds(tb testing.TB) [][]byte {
	j := encodeJPEG(tb, quadrants(16, 8))
	p := encodePNG(tb, quadrants(6, 4))
	return [][]byte{
		p,
		insertPNGChunk(p, "eXIf", exifTIFF(binary.BigEndian, 6, true)),
		insertPNGChunk(p, "acTL", []byte{0, 0, 0, 2, 0, 0, 0, 0}),
		j,
		withExif(j, binary.LittleEndian, 6, true),
		withExif(j, binary.BigEndian, 8, true),
		encodeGIF(tb, 3, 2, red, green),
		manyFrameGIF(3),
		gifScreen(4, 4),
		solidWebP(5, 3, color.NRGBA{1, 2, 3, 4}),
		webpFile(vp8x(0x18, 5, 3), riffChunk("VP8L", solidVP8L(5, 3, blue8)), riffChunk("EXIF", exifTIFF(binary.LittleEndian, 1, true))),
		animatedWebP(2),
		[]byte(`<?xml version="1.0"?><!-- c --><svg xmlns="http://www.w3.org/2000/svg" width="10" viewBox="0 0 2 1"><a href="#x"><rect fill="url(#g)"/></a></svg>`),
		[]byte(`<svg onload="alert(1)"><script>alert(1)</script></svg>`),
		[]byte("<!DOCTYPE html><html><body>hi</body></html>"),
		[]byte("plain text, café\n"),
		[]byte("%PDF-1.7\n"),
		zipOf(tb, "", "[Content_Types].xml", "word/document.xml"),
		zipOf(tb, mimeODT, "content.xml"),
		oleFile("WordDocument"),
		gzipOf("x"),
		tarOf(tb),
	}
}

var fuzzTypes = []string{mimePNG, mimeJPEG, mimeGIF, mimeWebP, mimeSVG, mimePDF}

func FuzzSniff(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		mime, err := Sniff(head, every)
		if (mime == "") == (err == nil) {
			t.Fatalf("Sniff = %q, %v", mime, err)
		}
		if err != nil && !errors.Is(err, ErrType) {
			t.Fatalf("Sniff error of another kind: %v", err)
		}
		if mime != "" && Extensions(mime) == nil {
			t.Fatalf("Sniff reports %q, which has no extensions", mime)
		}
	})
}

func FuzzProbe(f *testing.F) {
	for _, s := range seeds(f) {
		for i := range fuzzTypes {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, typ uint8) {
		mime := fuzzTypes[int(typ)%len(fuzzTypes)]
		info, err := Probe(data, mime)
		if err != nil {
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("Probe error is not an *Error: %v", err)
			}
			return
		}
		if mime == mimePDF {
			return
		}
		if info.Width < 1 || info.Height < 1 || info.Frames < 1 {
			t.Fatalf("Probe = %+v without error", info)
		}
		// Thumbnails of what Probe accepts must not panic either; small
		// ones only, to keep each run fast.
		if mime != mimeSVG && info.Width*info.Height <= 1<<16 {
			_, _, h, err := Thumbnail(data, mime, max(1, info.Width/3))
			if err == nil && h < 1 {
				t.Fatalf("Thumbnail height %d", h)
			}
		}
	})
}

func FuzzStripGPS(f *testing.F) {
	for _, s := range seeds(f) {
		for i := range fuzzTypes {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, typ uint8) {
		mime := fuzzTypes[int(typ)%len(fuzzTypes)]
		in := append([]byte(nil), data...)
		out := StripGPS(data, mime)
		if len(out) > len(data) {
			t.Fatalf("StripGPS grew %d bytes to %d", len(data), len(out))
		}
		if string(in) != string(data) {
			t.Fatal("StripGPS changed its input")
		}
		if again := StripGPS(out, mime); len(again) > len(out) {
			t.Fatalf("StripGPS grew its own output")
		}
	})
}
