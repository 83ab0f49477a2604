package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"path"
	"runtime"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

// decodeThumb decodes a thumbnail, checking that it is of type mime.
func decodeThumb(tb testing.TB, b []byte, mime string) image.Image {
	tb.Helper()
	var m image.Image
	var err error
	switch mime {
	case mimeJPEG:
		m, err = jpeg.Decode(bytes.NewReader(b))
	case mimePNG:
		m, err = png.Decode(bytes.NewReader(b))
	default:
		tb.Fatalf("thumbnail of type %q", mime)
	}
	if err != nil {
		tb.Fatalf("decoding the %s thumbnail: %v", mime, err)
	}
	return m
}

// near reports whether c is within a JPEG's error of want.
func near(c color.Color, want color.RGBA) bool {
	r, g, b, a := c.RGBA()
	d := func(x uint32, y uint8) bool { return int(x>>8)-int(y) < 24 && int(y)-int(x>>8) < 24 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B) && d(a, want.A)
}

func TestThumbnailSizes(t *testing.T) {
	q := quadrants(400, 300)
	images := []struct {
		mime, outMIME string
		data          []byte
	}{
		{mimePNG, mimePNG, encodePNG(t, q)},
		{mimeJPEG, mimeJPEG, encodeJPEG(t, q)},
		{mimeGIF, mimePNG, encodeGIF(t, 400, 300, red)},
		{mimeWebP, mimePNG, solidWebP(400, 300, blue8)},
	}
	for _, im := range images {
		for _, tc := range []struct{ width, height int }{{1, 1}, {120, 90}, {133, 100}, {220, 165}, {250, 188}, {399, 299}, {400, 300}} {
			t.Run(fmt.Sprintf("a 400×300 %s at %dpx is %d high", im.mime, tc.width, tc.height), func(t *testing.T) {
				out, outMIME, h, err := Thumbnail(im.data, im.mime, tc.width)
				if err != nil {
					t.Fatal(err)
				}
				if outMIME != im.outMIME || h != tc.height {
					t.Errorf("Thumbnail = %s, height %d; want %s, %d", outMIME, h, im.outMIME, tc.height)
				}
				if b := decodeThumb(t, out, outMIME).Bounds(); b.Dx() != tc.width || b.Dy() != tc.height {
					t.Errorf("thumbnail is %v", b)
				}
			})
		}
	}
}

func TestThumbnailKeepsTheImage(t *testing.T) {
	// A thumbnail a quarter of the size goes through the box reduction.
	for _, tt := range []struct {
		mime string
		data []byte
	}{
		{mimePNG, encodePNG(t, quadrants(800, 600))},
		{mimeJPEG, encodeJPEG(t, quadrants(800, 600))},
	} {
		t.Run("a reduced "+tt.mime+" keeps its quadrants", func(t *testing.T) {
			out, outMIME, _, err := Thumbnail(tt.data, tt.mime, 100)
			if err != nil {
				t.Fatal(err)
			}
			m := decodeThumb(t, out, outMIME)
			for _, c := range []struct {
				x, y int
				want color.RGBA
			}{{2, 2, red}, {97, 2, green}, {2, 72, blue}, {97, 72, white}} {
				if got := m.At(c.x, c.y); !near(got, c.want) {
					t.Errorf("pixel (%d,%d) = %v; want %v", c.x, c.y, got, c.want)
				}
			}
		})
	}
}

func TestThumbnailTurnsJPEGsAsTheirOrientationSays(t *testing.T) {
	j := encodeJPEG(t, quadrants(64, 32)) // stored: red green / blue white
	tests := []struct {
		orientation    int
		tl, tr, bl, br color.RGBA // as shown
	}{
		{1, red, green, blue, white},
		{2, green, red, white, blue},
		{3, white, blue, green, red},
		{4, blue, white, red, green},
		{5, red, blue, green, white},
		{6, blue, red, white, green},
		{7, white, green, blue, red},
		{8, green, white, red, blue},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("orientation %d", tt.orientation), func(t *testing.T) {
			data := withExif(j, binary.LittleEndian, tt.orientation, false)
			info, err := Probe(data, mimeJPEG)
			if err != nil {
				t.Fatal(err)
			}
			w, h := 64, 32
			if tt.orientation >= 5 {
				w, h = 32, 64
			}
			if info.Width != w || info.Height != h {
				t.Errorf("Probe = %+v; want %d×%d", info, w, h)
			}
			out, _, th, err := Thumbnail(data, mimeJPEG, w/2)
			if err != nil {
				t.Fatal(err)
			}
			m := decodeThumb(t, out, mimeJPEG)
			if b := m.Bounds(); b.Dx() != w/2 || b.Dy() != h/2 || th != h/2 {
				t.Fatalf("thumbnail is %v (height %d); want %d×%d", b, th, w/2, h/2)
			}
			mx, my := w/2-2, h/2-2
			for _, c := range []struct {
				x, y int
				want color.RGBA
			}{{1, 1, tt.tl}, {mx, 1, tt.tr}, {1, my, tt.bl}, {mx, my, tt.br}} {
				if got := m.At(c.x, c.y); !near(got, c.want) {
					t.Errorf("pixel (%d,%d) = %v; want %v", c.x, c.y, got, c.want)
				}
			}
		})
	}
}

func TestThumbnailOfAnAnimatedGIFIsItsFirstFrame(t *testing.T) {
	out, outMIME, _, err := Thumbnail(encodeGIF(t, 40, 40, red, blue, green), mimeGIF, 20)
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeThumb(t, out, outMIME).At(10, 10); !near(got, red) {
		t.Errorf("pixel = %v; want the first frame's red", got)
	}
}

func TestThumbnailOfAGIFFrameSmallerThanItsScreen(t *testing.T) {
	// A 1×1 white frame in the corner of a 40×20 screen: the rest is
	// transparent.
	g := gifScreen(40, 20)
	out, outMIME, h, err := Thumbnail(g, mimeGIF, 40)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeThumb(t, out, outMIME)
	if h != 20 || m.Bounds().Dx() != 40 {
		t.Errorf("thumbnail is %v", m.Bounds())
	}
	if _, _, _, a := m.At(30, 10).RGBA(); a != 0 {
		t.Errorf("outside the frame alpha = %d; want transparent", a)
	}
}

func TestThumbnailRefusesBombsWithoutDecoding(t *testing.T) {
	j := encodeJPEG(t, quadrants(16, 16))
	tests := []struct {
		name string
		data []byte
		mime string
	}{
		{"a 20,000×20,000 PNG", bombPNG(t, 20000, 20000), mimePNG},
		{"a 5,000×5,000 PNG of 16 bits a channel", bombPNGOf(t, 5000, 5000, 16, 6, 64), mimePNG},
		{"a JPEG claiming 65,000×60,000", sofSize(t, j, 65000, 60000), mimeJPEG},
		{"a GIF with a 65,535×65,535 screen", gifScreen(65535, 65535), mimeGIF},
		{"a 16,384×16,384 WebP", solidWebP(16384, 16384, blue8), mimeWebP},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is too large", func(t *testing.T) {
			if len(tt.data) > 8<<10 {
				t.Errorf("the bomb is %d bytes; want a few KB", len(tt.data))
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, _, err := Thumbnail(tt.data, tt.mime, 120)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("Thumbnail: %v; want ErrTooLarge", err)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
				t.Errorf("Thumbnail allocated %d bytes before refusing", d)
			}
		})
	}
}

func TestThumbnailRefuses(t *testing.T) {
	p := encodePNG(t, quadrants(40, 30))
	tests := []struct {
		name  string
		data  []byte
		mime  string
		width int
		kind  error
	}{
		{"a width above the image's", p, mimePNG, 41, ErrTooWide},
		{"a width above a turned JPEG's displayed width", withExif(encodeJPEG(t, quadrants(64, 32)), binary.BigEndian, 6, false), mimeJPEG, 33, ErrTooWide},
		{"a width of zero", p, mimePNG, 0, ErrInvalid},
		{"an SVG", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`), mimeSVG, 5, ErrType},
		{"an animated WebP", animatedWebP(2), mimeWebP, 5, ErrType},
		{"a PNG whose data is cut short", p[:len(p)-30], mimePNG, 20, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			_, _, _, err := Thumbnail(tt.data, tt.mime, tt.width)
			if !errors.Is(err, tt.kind) {
				t.Errorf("Thumbnail: %v; want %v", err, tt.kind)
			}
		})
	}
}

func TestThumbnailsCarryNoMetadata(t *testing.T) {
	for _, bo := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(fmt.Sprintf("a %v JPEG with GPS yields a thumbnail without it", bo), func(t *testing.T) {
			data := withExif(encodeJPEG(t, quadrants(64, 32)), bo, 6, true)
			if !bytes.Contains(data, gpsSecret) {
				t.Fatal("the test JPEG has no GPS position")
			}
			out, _, _, err := Thumbnail(data, mimeJPEG, 16)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out, gpsSecret) || bytes.Contains(out, []byte("Exif")) {
				t.Error("the thumbnail carries the Exif segment")
			}
			segs, _, ok := jpegSegments(out)
			for _, s := range segs {
				if !ok || s.marker >= 0xe0 && s.marker <= 0xef || s.marker == 0xfe {
					t.Errorf("the thumbnail has marker 0x%02x", s.marker)
				}
			}
		})
	}
}

func TestThumbnailTypeFollowsThumbName(t *testing.T) {
	data := map[string][]byte{
		mimePNG:  encodePNG(t, quadrants(8, 8)),
		mimeJPEG: encodeJPEG(t, quadrants(8, 8)),
		mimeGIF:  encodeGIF(t, 8, 8, red),
		mimeWebP: solidWebP(8, 8, blue8),
	}
	for mime, d := range data {
		for _, ext := range Extensions(mime) {
			t.Run("a thumbnail of X"+ext+" is named as its type", func(t *testing.T) {
				_, outMIME, _, err := Thumbnail(d, mime, 4)
				if err != nil {
					t.Fatal(err)
				}
				got := strings.ToLower(path.Ext(wiki.ThumbName("X" + ext)))
				if !strings.EqualFold(got, Extensions(outMIME)[0]) && !(outMIME == mimeJPEG && got == ".jpeg") {
					t.Errorf("ThumbName says %q, Thumbnail made %s", got, outMIME)
				}
			})
		}
	}
}

// photo is a w×h image with the detail of a photograph: gradients and
// noise, which a JPEG encoder cannot squeeze to nothing.
func photo(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			n := uint8(r.IntN(32))
			i := m.PixOffset(x, y)
			m.Pix[i] = uint8(x*255/w) ^ n
			m.Pix[i+1] = uint8(y*255/h) + n
			m.Pix[i+2] = uint8((x+y)/16) - n
			m.Pix[i+3] = 0xff
		}
	}
	return m
}

// BenchmarkThumbnail makes the 250px thumbnail of a 12-megapixel photo
// (4000×3000 JPEG) and reports the time per megapixel of the original.
func BenchmarkThumbnail(b *testing.B) {
	data := encodeJPEG(b, photo(4000, 3000))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, _, _, err := Thumbnail(data, mimeJPEG, 250); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/12, "ms/MP")
}

func TestBoxReduceAveragesEverySubsampling(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	} {
		t.Run(ratio.String()+" blocks average to their mean colour", func(t *testing.T) {
			m := image.NewYCbCr(image.Rect(0, 0, 37, 23), ratio)
			for _, p := range [][]uint8{m.Y, m.Cb, m.Cr} {
				for i := range p {
					p[i] = uint8(r.IntN(256))
				}
			}
			const k = 5
			got := boxReduce(m, m.Bounds(), k)
			for oy := range got.Rect.Dy() {
				for ox := range got.Rect.Dx() {
					var sy, sb, sr, n int
					for y := oy * k; y < min(oy*k+k, 23); y++ {
						for x := ox * k; x < min(ox*k+k, 37); x++ {
							c := m.YCbCrAt(x, y)
							sy, sb, sr, n = sy+int(c.Y), sb+int(c.Cb), sr+int(c.Cr), n+1
						}
					}
					want := color.YCbCr{uint8((sy + n/2) / n), uint8((sb + n/2) / n), uint8((sr + n/2) / n)}
					wr, wg, wb := color.YCbCrToRGB(want.Y, want.Cb, want.Cr)
					if c := got.RGBAAt(ox, oy); c != (color.RGBA{wr, wg, wb, 0xff}) {
						t.Fatalf("block (%d,%d) = %v; want %v", ox, oy, c, color.RGBA{wr, wg, wb, 0xff})
					}
				}
			}
		})
	}
}

func TestBoxReduceAveragesPremultipliedColours(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rect := image.Rect(0, 0, 29, 17)
	nrgba := image.NewNRGBA(rect)
	gray := image.NewGray(rect)
	pal := image.NewPaletted(rect, color.Palette{color.NRGBA{10, 200, 30, 255}, color.NRGBA{0, 0, 0, 0}, color.NRGBA{255, 255, 0, 128}})
	rgba64 := image.NewRGBA64(rect)
	for _, p := range [][]uint8{nrgba.Pix, gray.Pix, rgba64.Pix} {
		for i := range p {
			p[i] = uint8(r.IntN(256))
		}
	}
	for i := range pal.Pix {
		pal.Pix[i] = uint8(r.IntN(3))
	}
	for i := 0; i < len(rgba64.Pix); i += 8 { // premultiplied: colour at most alpha
		for c := range 6 {
			rgba64.Pix[i+c] = min(rgba64.Pix[i+c], rgba64.Pix[i+6])
		}
	}
	for _, m := range []image.Image{nrgba, gray, pal, rgba64} {
		t.Run(fmt.Sprintf("%T blocks average to their mean colour", m), func(t *testing.T) {
			const k = 4
			got := boxReduce(m, rect, k)
			for oy := range got.Rect.Dy() {
				for ox := range got.Rect.Dx() {
					var s [4]int
					n := 0
					for y := oy * k; y < min(oy*k+k, rect.Dy()); y++ {
						for x := ox * k; x < min(ox*k+k, rect.Dx()); x++ {
							c := color.RGBAModel.Convert(m.At(x, y)).(color.RGBA)
							s[0], s[1], s[2], s[3], n = s[0]+int(c.R), s[1]+int(c.G), s[2]+int(c.B), s[3]+int(c.A), n+1
						}
					}
					c := got.RGBAAt(ox, oy)
					for i, v := range []uint8{c.R, c.G, c.B, c.A} {
						if want := (s[i] + n/2) / n; int(v) < want-1 || int(v) > want+1 {
							t.Fatalf("block (%d,%d) = %v; want channel %d near %d", ox, oy, c, i, want)
						}
					}
				}
			}
		})
	}
}
