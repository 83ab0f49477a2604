package media

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/wikid/wikid/internal/wiki"
)

// Thumbnail scales a PNG, JPEG, GIF (first frame) or WebP upright to width pixels, as a
// JPEG (of JPEGs) or PNG without metadata; it refuses with ErrTooLarge or ErrTooWide.
func Thumbnail(data []byte, mime string, width int) (out []byte, outMIME string, height int, err error) {
	switch mime {
	case mimeJPEG:
		outMIME = mimeJPEG
	case mimePNG, mimeGIF, mimeWebP:
		outMIME = mimePNG
	default:
		return nil, "", 0, refuse(ErrType, "thumbnails are made of PNG, JPEG, GIF and WebP images, not of %s", describe(mime))
	}
	h, err := readHeader(data, mime)
	if err != nil {
		return nil, "", 0, err
	}
	if err := checkPixels(data, mime, h); err != nil {
		return nil, "", 0, err
	}
	if h.animated {
		return nil, "", 0, refuse(ErrType, "thumbnails of animated WebP images are not made")
	}
	if width < 1 {
		return nil, "", 0, refuse(ErrInvalid, "a thumbnail is at least 1 pixel wide, not %d", width)
	}
	if width > h.Width {
		return nil, "", 0, refuse(ErrTooWide, "the image is %d pixels wide: a thumbnail %d pixels wide would enlarge it", h.Width, width)
	}
	height = max(1, int((2*int64(width)*int64(h.Height)+int64(h.Width))/(2*int64(h.Width))))

	img, err := decode(data, mime)
	if err != nil {
		return nil, "", 0, err
	}
	canvas := img.Bounds()
	if mime == mimeGIF {
		canvas = image.Rect(0, 0, h.w, h.h) // the first frame may cover part of it
	}
	w, hh := width, height
	if h.orientation >= 5 {
		w, hh = height, width
	}
	thumb := orient(resize(img, canvas, w, hh), h.orientation)

	var buf bytes.Buffer
	if outMIME == mimeJPEG {
		err = jpeg.Encode(&buf, thumb, &jpeg.Options{Quality: 85})
	} else {
		err = (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, thumb)
	}
	if err != nil {
		return nil, "", 0, err
	}
	return buf.Bytes(), outMIME, height, nil
}

// checkPixels refuses an image whose header, as the decoder itself reads
// it, has more than wiki.MaxImagePixels pixels or disagrees with ours.
func checkPixels(data []byte, mime string, h header) error {
	if int64(h.w)*int64(h.h) > wiki.MaxImagePixels {
		return refuse(ErrTooLarge, "the image has %d×%d pixels, more than the %d thumbnails are made of", h.w, h.h, wiki.MaxImagePixels)
	}
	if mime == mimeJPEG {
		if err := checkScans(data); err != nil {
			return err
		}
	}
	var c image.Config
	var err error
	r := bytes.NewReader(data)
	switch mime {
	case mimePNG:
		c, err = png.DecodeConfig(r)
	case mimeJPEG:
		c, err = jpeg.DecodeConfig(r)
	case mimeGIF:
		c, err = gif.DecodeConfig(r)
	case mimeWebP:
		c, err = webp.DecodeConfig(r)
	}
	if err != nil {
		return invalid(mime, "%v", err)
	}
	if int64(c.Width)*int64(c.Height) > wiki.MaxImagePixels {
		return refuse(ErrTooLarge, "the image has %d×%d pixels, more than the %d thumbnails are made of", c.Width, c.Height, wiki.MaxImagePixels)
	}
	// Decoded, a pixel of 16 bits a channel takes 8 bytes, not 4: a 25
	// megapixel PNG of them took 200 MB, and 2 GB of memory to thumbnail.
	if n := int64(c.Width) * int64(c.Height) * bytesPerPixel(c.ColorModel); n > maxDecodedBytes {
		return refuse(ErrTooLarge, "the image has %d×%d pixels of %d bytes once decoded, more than the %d MB thumbnails are made of; save it with 8 bits a channel",
			c.Width, c.Height, bytesPerPixel(c.ColorModel), maxDecodedBytes>>20)
	}
	if c.Width != h.w || c.Height != h.h {
		return invalid(mime, "its headers disagree on its size (%d×%d or %d×%d)", h.w, h.h, c.Width, c.Height)
	}
	return nil
}

// maxDecodedBytes bounds an image's pixels once decoded: MaxImagePixels of
// 8 bits a channel with alpha.
const maxDecodedBytes = 4 * wiki.MaxImagePixels

// bytesPerPixel is how many bytes a pixel of m takes decoded.
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	case color.Gray16Model:
		return 2
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.YCbCrModel:
		return 3
	}
	return 4
}

// MaxJPEGScans bounds the scans of a JPEG Wikid decodes. A progressive
// JPEG has about ten; each scan costs a pass over the whole image, so a
// small file of thousands of empty scans would cost minutes to decode.
const MaxJPEGScans = 100

// checkScans refuses a JPEG with more than MaxJPEGScans scans (counted as
// start-of-scan markers: in entropy-coded data a 0xFF byte is always
// followed by 0x00 or a restart marker, never by 0xDA).
func checkScans(data []byte) error {
	if n := bytes.Count(data, []byte{0xFF, 0xDA}); n > MaxJPEGScans {
		return refuse(ErrTooLarge, "the JPEG image has %d scans, more than the %d Wikid decodes; save it again as a baseline or ordinary progressive JPEG", n, MaxJPEGScans)
	}
	return nil
}

// decode decodes an image whose size was checked; of a GIF, the first
// frame only.
func decode(data []byte, mime string) (image.Image, error) {
	var m image.Image
	var err error
	r := bytes.NewReader(data)
	switch mime {
	case mimePNG:
		m, err = png.Decode(r)
	case mimeJPEG:
		m, err = jpeg.Decode(r)
	case mimeGIF:
		m, err = gif.Decode(r)
	case mimeWebP:
		m, err = webp.Decode(r)
	}
	if err != nil {
		return nil, invalid(mime, "%v", err)
	}
	return m, nil
}

// resize scales the canvas rectangle of m (pixels of the canvas outside
// m are transparent) to w×h with Catmull-Rom. A canvas more than four
// times larger is first reduced by a box filter to between two and four
// times the size, which costs one pass over the pixels.
func resize(m image.Image, canvas image.Rectangle, w, h int) *image.RGBA {
	var src image.Image = m
	if k := min(canvas.Dx()/(2*w), canvas.Dy()/(2*h)); k >= 2 {
		src = boxReduce(m, canvas, k)
	} else if m.Bounds() != canvas || !scalesFast(m) {
		src = toRGBA(m, canvas)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

// scalesFast reports whether x/image/draw has a specialised path for m's
// type.
func scalesFast(m image.Image) bool {
	switch m := m.(type) {
	case *image.RGBA, *image.NRGBA, *image.Gray:
		return true
	case *image.YCbCr:
		switch m.SubsampleRatio {
		case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440:
			return true
		}
	}
	return false
}

// boxReduce averages the k×k blocks of the canvas rectangle of m (the
// last row and column of blocks may be smaller) into a premultiplied RGBA
// image.
func boxReduce(m image.Image, canvas image.Rectangle, k int) *image.RGBA {
	if y, ok := m.(*image.YCbCr); ok && y.Rect == canvas && y.Rect.Min == (image.Point{}) {
		if hs, vs, ok := chromaShift(y.SubsampleRatio); ok {
			return boxReduceYCbCr(y, k, hs, vs)
		}
	}
	cw, ch := canvas.Dx(), canvas.Dy()
	ow, oh := (cw+k-1)/k, (ch+k-1)/k
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	row := make([]byte, 4*cw)
	acc := make([]uint64, 4*ow)
	for oy := range oh {
		y0, y1 := oy*k, min((oy+1)*k, ch)
		clear(acc)
		for y := y0; y < y1; y++ {
			rowRGBA(m, canvas, canvas.Min.Y+y, row)
			for ox := range ow {
				x0, x1 := ox*k, min((ox+1)*k, cw)
				var r, g, b, a uint64
				for i := 4 * x0; i < 4*x1; i += 4 {
					r += uint64(row[i])
					g += uint64(row[i+1])
					b += uint64(row[i+2])
					a += uint64(row[i+3])
				}
				acc[4*ox] += r
				acc[4*ox+1] += g
				acc[4*ox+2] += b
				acc[4*ox+3] += a
			}
		}
		dst := out.Pix[oy*out.Stride:]
		for ox := range ow {
			n := uint64((min((ox+1)*k, cw) - ox*k) * (y1 - y0))
			for c := range 4 {
				dst[4*ox+c] = uint8((acc[4*ox+c] + n/2) / n)
			}
		}
	}
	return out
}

// chromaShift returns how many bits a YCbCr image's chroma planes are
// subsampled by, horizontally and vertically.
func chromaShift(r image.YCbCrSubsampleRatio) (hs, vs uint, ok bool) {
	switch r {
	case image.YCbCrSubsampleRatio444:
		return 0, 0, true
	case image.YCbCrSubsampleRatio422:
		return 1, 0, true
	case image.YCbCrSubsampleRatio420:
		return 1, 1, true
	case image.YCbCrSubsampleRatio440:
		return 0, 1, true
	case image.YCbCrSubsampleRatio411:
		return 2, 0, true
	case image.YCbCrSubsampleRatio410:
		return 2, 1, true
	}
	return 0, 0, false
}

// boxReduceYCbCr is boxReduce for a decoded JPEG: it averages the luma and
// chroma samples (the conversion to RGB is affine, so averaging first
// gives the same colours) and converts each block once. Subsampled chroma
// is summed at its own resolution, each sample weighted by the pixels it
// covers in the block.
func boxReduceYCbCr(m *image.YCbCr, k int, hs, vs uint) *image.RGBA {
	cw, ch := m.Rect.Dx(), m.Rect.Dy()
	ow, oh := (cw+k-1)/k, (ch+k-1)/k
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	acc := make([]uint64, 3*ow)
	for oy := range oh {
		y0, y1 := oy*k, min((oy+1)*k, ch)
		clear(acc)
		for y := y0; y < y1; y++ {
			row := m.Y[y*m.YStride : y*m.YStride+cw]
			for ox := range ow {
				var s uint32
				for _, v := range row[ox*k : min((ox+1)*k, cw)] {
					s += uint32(v)
				}
				acc[3*ox] += uint64(s)
			}
		}
		for cy := y0 >> vs; cy <= (y1-1)>>vs; cy++ {
			wy := uint64(min(y1, (cy+1)<<vs) - max(y0, cy<<vs))
			cb, cr := m.Cb[cy*m.CStride:], m.Cr[cy*m.CStride:]
			for ox := range ow {
				x0, x1 := ox*k, min((ox+1)*k, cw)
				acc[3*ox+1] += wy * chromaSum(cb, x0, x1, hs)
				acc[3*ox+2] += wy * chromaSum(cr, x0, x1, hs)
			}
		}
		dst := out.Pix[oy*out.Stride:]
		for ox := range ow {
			n := uint64((min((ox+1)*k, cw) - ox*k) * (y1 - y0))
			r, g, b := color.YCbCrToRGB(uint8((acc[3*ox]+n/2)/n), uint8((acc[3*ox+1]+n/2)/n), uint8((acc[3*ox+2]+n/2)/n))
			dst[4*ox], dst[4*ox+1], dst[4*ox+2], dst[4*ox+3] = r, g, b, 0xff
		}
	}
	return out
}

// chromaSum sums a chroma row over the pixel columns [x0, x1), where each
// sample covers 1<<hs columns.
func chromaSum(c []uint8, x0, x1 int, hs uint) uint64 {
	first, last := x0>>hs, (x1-1)>>hs
	if first == last {
		return uint64(x1-x0) * uint64(c[first])
	}
	var mid uint32
	for _, v := range c[first+1 : last] {
		mid += uint32(v)
	}
	return uint64(mid)<<hs + uint64((first+1)<<hs-x0)*uint64(c[first]) + uint64(x1-last<<hs)*uint64(c[last])
}

// toRGBA copies the canvas rectangle of m into a premultiplied RGBA image.
func toRGBA(m image.Image, canvas image.Rectangle) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, canvas.Dx(), canvas.Dy()))
	for y := range canvas.Dy() {
		rowRGBA(m, canvas, canvas.Min.Y+y, out.Pix[y*out.Stride:y*out.Stride+4*canvas.Dx()])
	}
	return out
}

// rowRGBA writes row y of the canvas into buf as premultiplied 8-bit
// RGBA, transparent where m has no pixels.
func rowRGBA(m image.Image, canvas image.Rectangle, y int, buf []byte) {
	b := m.Bounds()
	clear(buf)
	if y < b.Min.Y || y >= b.Max.Y {
		return
	}
	x0, x1 := max(canvas.Min.X, b.Min.X), min(canvas.Max.X, b.Max.X)
	if x0 >= x1 {
		return
	}
	dst := buf[4*(x0-canvas.Min.X) : 4*(x1-canvas.Min.X)]
	switch m := m.(type) {
	case *image.RGBA:
		i := m.PixOffset(x0, y)
		copy(dst, m.Pix[i:i+len(dst)])
	case *image.NRGBA:
		i := m.PixOffset(x0, y)
		src := m.Pix[i : i+len(dst)]
		for j := 0; j < len(dst); j += 4 {
			a := uint32(src[j+3])
			dst[j] = uint8((uint32(src[j])*a + 127) / 255)
			dst[j+1] = uint8((uint32(src[j+1])*a + 127) / 255)
			dst[j+2] = uint8((uint32(src[j+2])*a + 127) / 255)
			dst[j+3] = uint8(a)
		}
	case *image.Gray:
		i := m.PixOffset(x0, y)
		for j, v := range m.Pix[i : i+len(dst)/4] {
			dst[4*j], dst[4*j+1], dst[4*j+2], dst[4*j+3] = v, v, v, 0xff
		}
	case *image.Paletted:
		var pal [256][4]uint8
		for i, c := range m.Palette {
			if i == len(pal) {
				break
			}
			r, g, b, a := c.RGBA()
			pal[i] = [4]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
		}
		i := m.PixOffset(x0, y)
		for j, v := range m.Pix[i : i+len(dst)/4] {
			copy(dst[4*j:4*j+4], pal[v][:])
		}
	case image.RGBA64Image:
		for x := x0; x < x1; x++ {
			c := m.RGBA64At(x, y)
			j := 4 * (x - x0)
			dst[j], dst[j+1], dst[j+2], dst[j+3] = uint8(c.R>>8), uint8(c.G>>8), uint8(c.B>>8), uint8(c.A>>8)
		}
	default:
		for x := x0; x < x1; x++ {
			r, g, b, a := m.At(x, y).RGBA()
			j := 4 * (x - x0)
			dst[j], dst[j+1], dst[j+2], dst[j+3] = uint8(r>>8), uint8(g>>8), uint8(b>>8), uint8(a>>8)
		}
	}
}

// orient turns an image as EXIF orientation o says it is to be shown.
func orient(m *image.RGBA, o int) *image.RGBA {
	if o < 2 || o > 8 {
		return m
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for dy := range dh {
		for dx := range dw {
			var sx, sy int
			switch o {
			case 2: // mirrored
				sx, sy = w-1-dx, dy
			case 3: // upside down
				sx, sy = w-1-dx, h-1-dy
			case 4: // mirrored upside down
				sx, sy = dx, h-1-dy
			case 5: // mirrored about the main diagonal
				sx, sy = dy, dx
			case 6: // to be turned a quarter clockwise
				sx, sy = dy, h-1-dx
			case 7: // mirrored about the other diagonal
				sx, sy = w-1-dy, h-1-dx
			case 8: // to be turned a quarter anticlockwise
				sx, sy = w-1-dy, dx
			}
			copy(out.Pix[dy*out.Stride+4*dx:dy*out.Stride+4*dx+4], m.Pix[sy*m.Stride+4*sx:])
		}
	}
	return out
}
