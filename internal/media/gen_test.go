package media

// Test files are made here, in code, rather than kept in testdata.

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"testing"
)

var (
	red   = color.RGBA{0xff, 0, 0, 0xff}
	green = color.RGBA{0, 0xff, 0, 0xff}
	blue  = color.RGBA{0, 0, 0xff, 0xff}
	white = color.RGBA{0xff, 0xff, 0xff, 0xff}
	blue8 = color.NRGBA{0, 0, 0xff, 0xff}
)

// quadrants is a w×h image whose top-left quarter is red, top-right
// green, bottom-left blue and bottom-right white.
func quadrants(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := red
			switch {
			case x >= w/2 && y < h/2:
				c = green
			case x < w/2 && y >= h/2:
				c = blue
			case x >= w/2 && y >= h/2:
				c = white
			}
			m.SetRGBA(x, y, c)
		}
	}
	return m
}

func encodePNG(tb testing.TB, m image.Image) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(tb testing.TB, m image.Image) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 95}); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// encodeGIF makes a GIF of the given frames, each a solid colour over the
// whole w×h screen.
func encodeGIF(tb testing.TB, w, h int, colors ...color.Color) []byte {
	tb.Helper()
	g := &gif.GIF{}
	for _, c := range colors {
		m := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{c, color.Black})
		g.Image = append(g.Image, m)
		g.Delay = append(g.Delay, 10)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// manyFrameGIF writes a 1×1 GIF of n frames by hand, about 16 bytes each.
func manyFrameGIF(n int) []byte {
	b := []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff")
	frame := []byte("\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00")
	for range n {
		b = append(b, frame...)
	}
	return append(b, 0x3b)
}

// gifScreen writes a GIF with a w×h logical screen and one 1×1 frame.
func gifScreen(w, h int) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, uint16(w))
	b = binary.LittleEndian.AppendUint16(b, uint16(h))
	b = append(b, 0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff)
	b = append(b, "\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00\x3b"...)
	return b
}

// pngChunk encodes one PNG chunk with its checksum.
func pngChunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// insertPNGChunk adds a chunk right after a PNG's IHDR.
func insertPNGChunk(p []byte, typ string, data []byte) []byte {
	out := append([]byte(nil), p[:33]...)
	out = append(out, pngChunk(typ, data)...)
	return append(out, p[33:]...)
}

// bombPNG writes a w×h 1-bit greyscale PNG whose header is complete and
// whose image data holds the first rows only (zeros, streamed into the
// compressor): a file of a few kilobytes that claims w×h pixels, which is
// all a decoder allocates for. Thumbnail must refuse it from its header.
func bombPNG(tb testing.TB, w, h int) []byte { return bombPNGOf(tb, w, h, 1, 0, 1) }

// bombPNGOf is bombPNG of another bit depth and colour type, whose pixels
// take bits bits.
func bombPNGOf(tb testing.TB, w, h int, depth, colorType byte, bits int) []byte {
	tb.Helper()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, depth, colorType, 0, 0, 0)
	out.Write(pngChunk("IHDR", ihdr))
	var idat bytes.Buffer
	z, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	row := make([]byte, 1+(w*bits+7)/8) // the filter byte and the row's bits
	for range min(h, 64) {
		z.Write(row)
	}
	if err := z.Close(); err != nil {
		tb.Fatal(err)
	}
	out.Write(pngChunk("IDAT", idat.Bytes()))
	out.Write(pngChunk("IEND", nil))
	return out.Bytes()
}

// byteOrder reads and appends in one byte order.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// exifTIFF builds an Exif TIFF structure in byte order bo with an IFD0
// holding the orientation (when not 0) and, when gps is set, a GPS IFD
// with a latitude whose value bytes are gpsSecret.
func exifTIFF(bo byteOrder, orientation int, gps bool) []byte {
	var b []byte
	if bo == binary.BigEndian {
		b = append(b, "MM\x00*"...)
	} else {
		b = append(b, "II*\x00"...)
	}
	b = bo.AppendUint32(b, 8)
	n := 0
	if orientation != 0 {
		n++
	}
	if gps {
		n++
	}
	ifd0End := 8 + 2 + 12*n + 4
	b = bo.AppendUint16(b, uint16(n))
	if orientation != 0 {
		b = bo.AppendUint16(b, tagOrientation)
		b = bo.AppendUint16(b, 3)
		b = bo.AppendUint32(b, 1)
		b = bo.AppendUint16(b, uint16(orientation))
		b = bo.AppendUint16(b, 0)
	}
	if gps {
		b = bo.AppendUint16(b, tagGPSInfo)
		b = bo.AppendUint16(b, 4)
		b = bo.AppendUint32(b, 1)
		b = bo.AppendUint32(b, uint32(ifd0End))
	}
	b = bo.AppendUint32(b, 0) // no IFD1
	if gps {
		gpsEnd := ifd0End + 2 + 12*2 + 4
		b = bo.AppendUint16(b, 2)
		b = bo.AppendUint16(b, 1) // GPSLatitudeRef "N"
		b = bo.AppendUint16(b, 2)
		b = bo.AppendUint32(b, 2)
		b = append(b, 'N', 0, 0, 0)
		b = bo.AppendUint16(b, 2) // GPSLatitude, three rationals
		b = bo.AppendUint16(b, 5)
		b = bo.AppendUint32(b, 3)
		b = bo.AppendUint32(b, uint32(gpsEnd))
		b = bo.AppendUint32(b, 0)
		b = append(b, gpsSecret...)
	}
	return b
}

// gpsSecret is the value of the latitude exifTIFF writes: bytes that occur
// nowhere else.
var gpsSecret = []byte("\xc0\xff\xee\x01\x00\x00\x00\x01\xc0\xff\xee\x02\x00\x00\x00\x01\xc0\xff\xee\x03\x00\x00\x00\x01")

// withAPP1 inserts an APP1 segment holding payload right after a JPEG's
// start-of-image marker.
func withAPP1(j, payload []byte) []byte {
	seg := []byte{0xff, 0xe1}
	seg = binary.BigEndian.AppendUint16(seg, uint16(len(payload)+2))
	seg = append(seg, payload...)
	out := append([]byte(nil), j[:2]...)
	out = append(out, seg...)
	return append(out, j[2:]...)
}

// withExif adds an Exif segment to a JPEG.
func withExif(j []byte, bo byteOrder, orientation int, gps bool) []byte {
	return withAPP1(j, append([]byte("Exif\x00\x00"), exifTIFF(bo, orientation, gps)...))
}

// bitWriter writes bits least significant first, as VP8L reads them.
type bitWriter struct {
	b     []byte
	nbits uint
}

func (w *bitWriter) write(v uint32, n uint) {
	for i := range n {
		if w.nbits%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>i&1) << (w.nbits % 8)
		w.nbits++
	}
}

// solidVP8L encodes a w×h lossless WebP bitstream of one colour: every
// prefix code has a single symbol, so the pixels take no bits at all.
func solidVP8L(w, h int, c color.NRGBA) []byte {
	var bw bitWriter
	bw.write(0x2f, 8)
	bw.write(uint32(w-1), 14)
	bw.write(uint32(h-1), 14)
	bw.write(1, 1) // alpha is used
	bw.write(0, 3) // version
	bw.write(0, 1) // no transform
	bw.write(0, 1) // no colour cache
	bw.write(0, 1) // no meta prefix codes
	for _, v := range []uint8{c.G, c.R, c.B, c.A} {
		bw.write(1, 1) // simple code
		bw.write(0, 1) // one symbol
		bw.write(1, 1) // of eight bits
		bw.write(uint32(v), 8)
	}
	bw.write(1, 1) // the distance code: one symbol, one bit, 0
	bw.write(0, 1)
	bw.write(0, 1)
	bw.write(0, 1)
	return bw.b
}

// riffChunk encodes a RIFF chunk, padded to an even length.
func riffChunk(id string, data []byte) []byte {
	b := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	b = append(b, data...)
	if len(data)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// webpFile wraps chunks in a RIFF WEBP container.
func webpFile(chunks ...[]byte) []byte {
	body := []byte("WEBP")
	for _, c := range chunks {
		body = append(body, c...)
	}
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// vp8x is an extended WebP header for a w×h canvas with the given flags.
func vp8x(flags byte, w, h int) []byte {
	d := []byte{flags, 0, 0, 0}
	d = append(d, byte(w-1), byte((w-1)>>8), byte((w-1)>>16))
	d = append(d, byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	return riffChunk("VP8X", d)
}

func solidWebP(w, h int, c color.NRGBA) []byte {
	return webpFile(riffChunk("VP8L", solidVP8L(w, h, c)))
}

// animatedWebP has n animation frames (whose contents Probe does not read).
func animatedWebP(n int) []byte {
	chunks := [][]byte{vp8x(0x02, 16, 16), riffChunk("ANIM", make([]byte, 6))}
	for range n {
		chunks = append(chunks, riffChunk("ANMF", make([]byte, 16)))
	}
	return webpFile(chunks...)
}

// zipOf writes a ZIP archive of the named entries (each holding its name);
// an ODF "mimetype" entry is stored uncompressed, first, as ODF requires.
func zipOf(tb testing.TB, mimetype string, names ...string) []byte {
	tb.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	if mimetype != "" {
		w, err := z.CreateHeader(&zip.FileHeader{Name: "mimetype", Method: zip.Store})
		if err != nil {
			tb.Fatal(err)
		}
		io.WriteString(w, mimetype)
	}
	for _, n := range names {
		w, err := z.Create(n)
		if err != nil {
			tb.Fatal(err)
		}
		io.WriteString(w, n)
	}
	if err := z.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// oleFile writes the header and first directory sector of a compound file
// whose directory holds a root and one stream called name.
func oleFile(name string) []byte {
	b := make([]byte, 1024)
	copy(b, "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
	binary.LittleEndian.PutUint16(b[0x1a:], 3)
	binary.LittleEndian.PutUint16(b[0x1c:], 0xfffe)
	binary.LittleEndian.PutUint16(b[0x1e:], 9)
	binary.LittleEndian.PutUint32(b[0x30:], 0) // the directory is sector 0, at 512
	entry := func(at int, name string, typ byte) {
		for i, r := range name {
			binary.LittleEndian.PutUint16(b[at+2*i:], uint16(r))
		}
		binary.LittleEndian.PutUint16(b[at+0x40:], uint16(2*len(name)+2))
		b[at+0x42] = typ
	}
	entry(512, "Root Entry", 5)
	entry(512+128, name, 2)
	return b
}

func gzipOf(s string) []byte {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	io.WriteString(z, s)
	z.Close()
	return b.Bytes()
}

func tarOf(tb testing.TB) []byte {
	tb.Helper()
	var b bytes.Buffer
	t := tar.NewWriter(&b)
	t.WriteHeader(&tar.Header{Name: "a.txt", Mode: 0o644, Size: 2})
	t.Write([]byte("hi"))
	if err := t.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
