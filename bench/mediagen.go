package main

// The media part's images, generated rather than committed: a photo-like
// picture (a sky and ground gradient, soft-edged shapes, cloud- and
// terrain-like value noise at two scales, and per-pixel sensor grain, so
// that a JPEG of it has the size and the entropy of a camera's) and a
// drawing-like one for PNG (flat shapes and gradients with a little grain,
// as screenshots and diagrams are). The same size and seed always give the
// same bytes.

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
)

// photoImage draws a w×h photo-like picture from seed.
func photoImage(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	coarse, fine, leaf := newValueNoise(r, w, h, 96), newValueNoise(r, w, h, 18), newValueNoise(r, w, h, 3)
	horizon := float32(h) * (0.38 + 0.15*r.Float32())
	sky0, sky1 := rgbf{60, 110, 190}, rgbf{205, 220, 235}
	ground0, ground1 := rgbf{120, 130, 70}, rgbf{55, 70, 35}
	for y := range h {
		fy := float32(y)
		for x := range w {
			var c rgbf
			n := coarse.at(x, y)
			if fy < horizon {
				t := fy / horizon
				c = sky0.mix(sky1, t)
				// Clouds: the coarse noise, where it is high, towards white.
				if cl := (n - 0.55) * 2.5; cl > 0 {
					c = c.mix(rgbf{245, 245, 248}, min(cl, 1))
				}
			} else {
				t := (fy - horizon) / (float32(h) - horizon)
				c = ground0.mix(ground1, t)
				c = c.scale(0.75 + 0.5*n)
				// Grass and foliage: detail at a few pixels.
				c = c.scale(0.7 + 0.6*leaf.at(x, y))
			}
			c = c.scale(0.9 + 0.2*fine.at(x, y))
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = clamp8(c.r), clamp8(c.g), clamp8(c.b), 255
		}
	}
	// Soft-edged shapes: trees, rocks, buildings seen out of focus.
	for range 14 {
		cx, cy := r.Float32()*float32(w), horizon+(r.Float32()-0.3)*float32(h)*0.5
		rx, ry := float32(w)*(0.03+0.08*r.Float32()), float32(h)*(0.04+0.12*r.Float32())
		col := rgbf{40 + 150*r.Float32(), 40 + 120*r.Float32(), 30 + 100*r.Float32()}
		for y := max(0, int(cy-ry)); y < min(h, int(cy+ry)+1); y++ {
			for x := max(0, int(cx-rx)); x < min(w, int(cx+rx)+1); x++ {
				dx, dy := (float32(x)-cx)/rx, (float32(y)-cy)/ry
				d := dx*dx + dy*dy
				if d >= 1 {
					continue
				}
				a := min(1, (1-d)*3) // the edge fades over its outer third
				shade := 0.7 + 0.5*(1-dy)/2
				i := img.PixOffset(x, y)
				old := rgbf{float32(img.Pix[i]), float32(img.Pix[i+1]), float32(img.Pix[i+2])}
				c := old.mix(col.scale(shade), a)
				img.Pix[i], img.Pix[i+1], img.Pix[i+2] = clamp8(c.r), clamp8(c.g), clamp8(c.b)
			}
		}
	}
	addGrain(img, r.Uint64(), 14)
	return img
}

// drawingImage draws a w×h drawing-like picture from seed: a gradient
// background, flat rectangles and discs, thin lines, and a photo.
func drawingImage(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	top, bottom := rgbf{240, 244, 250}, rgbf{200, 212, 230}
	for y := range h {
		c := top.mix(bottom, float32(y)/float32(h))
		for x := range w {
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = clamp8(c.r), clamp8(c.g), clamp8(c.b), 255
		}
	}
	fill := func(x0, y0, x1, y1 int, inside func(x, y int) bool, c rgbf) {
		for y := max(0, y0); y < min(h, y1); y++ {
			for x := max(0, x0); x < min(w, x1); x++ {
				if inside(x, y) {
					i := img.PixOffset(x, y)
					img.Pix[i], img.Pix[i+1], img.Pix[i+2] = clamp8(c.r), clamp8(c.g), clamp8(c.b)
				}
			}
		}
	}
	all := func(int, int) bool { return true }
	for range 40 {
		c := rgbf{255 * r.Float32(), 255 * r.Float32(), 255 * r.Float32()}
		x, y := r.IntN(w), r.IntN(h)
		if r.IntN(2) == 0 {
			fill(x, y, x+w/20+r.IntN(w/6), y+h/20+r.IntN(h/6), all, c)
		} else {
			rad := w/60 + r.IntN(w/12)
			fill(x-rad, y-rad, x+rad+1, y+rad+1, func(px, py int) bool {
				return (px-x)*(px-x)+(py-y)*(py-y) <= rad*rad
			}, c)
		}
	}
	for range 120 { // text-like lines
		x, y, n := r.IntN(w), r.IntN(h), w/10+r.IntN(w/4)
		fill(x, y, x+n, y+2, func(px, _ int) bool { return (px/7)%5 != 4 }, rgbf{30, 30, 40})
	}
	// A photo in it, a third of its width, as screenshots and slides have.
	pw, ph := w/3, h/3
	photo := photoImage(pw, ph, r.Uint64())
	x0, y0 := w/2, h/2
	for y := range ph {
		copy(img.Pix[img.PixOffset(x0, y0+y):img.PixOffset(x0+pw, y0+y)], photo.Pix[photo.PixOffset(0, y):photo.PixOffset(pw, y)])
	}
	return img
}

// photoJPEG is photoImage encoded as a JPEG of the given quality.
func photoJPEG(w, h, quality int, seed uint64) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, photoImage(w, h, seed), &jpeg.Options{Quality: quality}); err != nil {
		panic(err) // encoding to memory fails only on a bug
	}
	return b.Bytes()
}

// drawingPNG is drawingImage encoded as a PNG (default compression).
func drawingPNG(w, h int, seed uint64) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, drawingImage(w, h, seed)); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// withComment returns a copy of the JPEG j with a comment segment (COM)
// holding text right after its start marker: a valid JPEG with the same
// pixels and other bytes.
func withComment(j []byte, text string) []byte {
	out := make([]byte, 0, len(j)+len(text)+4)
	out = append(out, j[:2]...) // SOI
	n := len(text) + 2
	out = append(out, 0xFF, 0xFE, byte(n>>8), byte(n))
	out = append(out, text...)
	return append(out, j[2:]...)
}

type rgbf struct{ r, g, b float32 }

func (c rgbf) mix(d rgbf, t float32) rgbf {
	return rgbf{c.r + (d.r-c.r)*t, c.g + (d.g-c.g)*t, c.b + (d.b-c.b)*t}
}

func (c rgbf) scale(f float32) rgbf { return rgbf{c.r * f, c.g * f, c.b * f} }

func clamp8(v float32) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return uint8(v + 0.5)
}

// valueNoise is smooth noise in [0, 1): random values on a grid of cell
// pixels, interpolated with a smoothstep between them.
type valueNoise struct {
	cell, cols int
	v          []float32
}

func newValueNoise(r *rand.Rand, w, h, cell int) *valueNoise {
	cols, rows := w/cell+2, h/cell+2
	n := &valueNoise{cell: cell, cols: cols, v: make([]float32, cols*rows)}
	for i := range n.v {
		n.v[i] = r.Float32()
	}
	return n
}

func (n *valueNoise) at(x, y int) float32 {
	gx, gy := x/n.cell, y/n.cell
	tx := smooth(float32(x-gx*n.cell) / float32(n.cell))
	ty := smooth(float32(y-gy*n.cell) / float32(n.cell))
	i := gy*n.cols + gx
	a := n.v[i] + (n.v[i+1]-n.v[i])*tx
	b := n.v[i+n.cols] + (n.v[i+n.cols+1]-n.v[i+n.cols])*tx
	return a + (b-a)*ty
}

func smooth(t float32) float32 { return t * t * (3 - 2*t) }

// addGrain adds to every channel of img a triangular noise of at most amp
// levels, from a xorshift generator (a rand call per pixel would dominate
// the drawing's time).
func addGrain(img *image.RGBA, seed uint64, amp int) {
	s := seed | 1
	span := uint64(amp + 1)
	for i := 0; i < len(img.Pix); i += 4 {
		for k := range 3 {
			s ^= s << 13
			s ^= s >> 7
			s ^= s << 17
			d := int(s%span) - int((s>>32)%span) // triangular in [-amp, amp]
			v := int(img.Pix[i+k]) + d
			img.Pix[i+k] = uint8(max(0, min(255, v)))
		}
	}
}

// megapixels of a w×h image.
func megapixels(w, h int) float64 { return float64(w) * float64(h) / 1e6 }
