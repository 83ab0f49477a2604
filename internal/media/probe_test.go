package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/jpeg"
	"runtime"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// sofSize sets the size in a JPEG's frame header, leaving its scan as it
// is: a header that claims any size.
func sofSize(tb testing.TB, j []byte, w, h int) []byte {
	tb.Helper()
	segs, _, _ := jpegSegments(j)
	for _, s := range segs {
		if s.marker == 0xc0 {
			out := append([]byte(nil), j...)
			binary.BigEndian.PutUint16(out[s.start+5:], uint16(h))
			binary.BigEndian.PutUint16(out[s.start+7:], uint16(w))
			return out
		}
	}
	tb.Fatal("no SOF0 segment")
	return nil
}

func TestProbeReadsTheSizeFromTheHeader(t *testing.T) {
	j := encodeJPEG(t, quadrants(64, 32))
	apng := insertPNGChunk(encodePNG(t, quadrants(8, 6)), "acTL", []byte{0, 0, 0, 3, 0, 0, 0, 0})
	tests := []struct {
		name string
		data []byte
		mime string
		want Info
	}{
		{"a PNG", encodePNG(t, quadrants(40, 30)), mimePNG, Info{40, 30, 1}},
		{"an APNG of three frames", apng, mimePNG, Info{8, 6, 3}},
		{"a JPEG", j, mimeJPEG, Info{64, 32, 1}},
		{"a JPEG with Exif but no orientation", withExif(j, binary.LittleEndian, 0, true), mimeJPEG, Info{64, 32, 1}},
		{"a JPEG of orientation 3 (upside down)", withExif(j, binary.BigEndian, 3, false), mimeJPEG, Info{64, 32, 1}},
		{"a JPEG of orientation 6, little-endian Exif", withExif(j, binary.LittleEndian, 6, false), mimeJPEG, Info{32, 64, 1}},
		{"a JPEG of orientation 8, big-endian Exif", withExif(j, binary.BigEndian, 8, true), mimeJPEG, Info{32, 64, 1}},
		{"a JPEG of a nonsense orientation", withExif(j, binary.BigEndian, 9, false), mimeJPEG, Info{64, 32, 1}},
		{"a JPEG with a garbage Exif segment", withAPP1(j, []byte("Exif\x00\x00MM\x00*\xff\xff\xff\xff")), mimeJPEG, Info{64, 32, 1}},
		{"a GIF of three frames", encodeGIF(t, 5, 7, red, green, blue), mimeGIF, Info{5, 7, 3}},
		{"a lossless WebP", solidWebP(300, 200, blue8), mimeWebP, Info{300, 200, 1}},
		{"an extended WebP", webpFile(vp8x(0x10, 30, 20), riffChunk("VP8L", solidVP8L(30, 20, blue8))), mimeWebP, Info{30, 20, 1}},
		{"an animated WebP", animatedWebP(4), mimeWebP, Info{16, 16, 4}},
		{"a 20,000×20,000 PNG bomb, which is not refused", bombPNG(t, 20000, 20000), mimePNG, Info{20000, 20000, 1}},
		{"a JPEG claiming 65,000×60,000", sofSize(t, j, 65000, 60000), mimeJPEG, Info{65000, 60000, 1}},
		{"a PDF, which has no size", []byte("%PDF-1.4"), mimePDF, Info{}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" measures "+sizeOf(tt.want), func(t *testing.T) {
			got, err := Probe(tt.data, tt.mime)
			if err != nil || got != tt.want {
				t.Errorf("Probe = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func sizeOf(i Info) string {
	return strings.ReplaceAll(image.Pt(i.Width, i.Height).String(), ",", "×")
}

func TestProbeRefusesMalformedHeaders(t *testing.T) {
	p := encodePNG(t, quadrants(4, 4))
	badCRC := append([]byte(nil), p...)
	badCRC[20]++ // the height, under the IHDR checksum
	tests := []struct {
		name string
		data []byte
		mime string
		want string
	}{
		{"a truncated PNG", p[:20], mimePNG, "not a valid PNG image: the file is too short"},
		{"a PNG whose IHDR checksum is wrong", badCRC, mimePNG, "not a valid PNG image: the IHDR chunk's checksum is wrong"},
		{"a PNG without image data", append(append([]byte(nil), p[:33]...), pngChunk("IEND", nil)...), mimePNG, "not a valid PNG image: it has no image data"},
		{"a JPEG cut before its frame header", encodeJPEG(t, quadrants(4, 4))[:30], mimeJPEG, "not a valid JPEG image"},
		{"a JPEG that is only a start-of-image marker", []byte{0xff, 0xd8}, mimeJPEG, "not a valid JPEG image"},
		{"a GIF without frames", gifScreen(4, 4)[:19], mimeGIF, "not a valid GIF image: it has no complete frame"},
		{"a GIF whose frame is outside its screen", gifScreen(0, 0), mimeGIF, "does not fit"},
		{"a WebP of the wrong form", []byte("RIFF\x04\x00\x00\x00WAVE"), mimeWebP, "not a valid WebP image"},
		{"a truncated WebP", solidWebP(3, 3, blue8)[:22], mimeWebP, "not a valid WebP image"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			_, err := Probe(tt.data, tt.mime)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Probe: %v; want ErrInvalid saying %q", err, tt.want)
			}
		})
	}
}

func TestProbeRefusesTooManyFramesCheaply(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		mime string
	}{
		{"a GIF of 100,000 frames", manyFrameGIF(100_000), mimeGIF},
		{"an APNG claiming 100,000 frames", insertPNGChunk(encodePNG(t, quadrants(2, 2)), "acTL", []byte{0, 1, 0x86, 0xa0, 0, 0, 0, 0}), mimePNG},
		{"an animated WebP of 1,001 frames", animatedWebP(wiki.MaxImageFrames + 1), mimeWebP},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Probe(tt.data, tt.mime)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 1000 frames") {
				t.Errorf("Probe: %v; want ErrTooLarge", err)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
				t.Errorf("Probe allocated %d bytes", d)
			}
		})
	}
	if _, err := Probe(manyFrameGIF(wiki.MaxImageFrames), mimeGIF); err != nil {
		t.Errorf("a GIF of exactly MaxImageFrames frames: %v", err)
	}
}

// TestScanBomb: a JPEG of many scans (each a pass over every pixel) is
// refused at upload and never decoded.
func TestScanBomb(t *testing.T) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 64, 64)), nil); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	if _, err := Probe(data, "image/jpeg"); err != nil {
		t.Fatalf("an ordinary JPEG: %v", err)
	}
	bomb := append(bytes.Clone(data[:len(data)-2]), bytes.Repeat([]byte{0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00}, MaxJPEGScans)...)
	bomb = append(bomb, 0xFF, 0xD9)
	if _, err := Probe(bomb, "image/jpeg"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Probe of %d scans: %v", MaxJPEGScans+1, err)
	}
	if _, _, _, err := Thumbnail(bomb, "image/jpeg", 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Thumbnail of %d scans: %v", MaxJPEGScans+1, err)
	}
}
