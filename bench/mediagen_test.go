package main

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"testing"
)

// TestMediaGenIsDeterministic: the same size and seed give the same bytes,
// another seed other bytes, and every image decodes at its size (a JPEG
// with a comment segment too).
func TestMediaGenIsDeterministic(t *testing.T) {
	j1, j2, j3 := photoJPEG(160, 120, 90, 1), photoJPEG(160, 120, 90, 1), photoJPEG(160, 120, 90, 2)
	if !bytes.Equal(j1, j2) || bytes.Equal(j1, j3) {
		t.Errorf("photoJPEG: same seed equal %v, other seed equal %v", bytes.Equal(j1, j2), bytes.Equal(j1, j3))
	}
	p1, p2 := drawingPNG(150, 90, 1), drawingPNG(150, 90, 1)
	if !bytes.Equal(p1, p2) {
		t.Errorf("drawingPNG differs between two calls")
	}
	for name, dec := range map[string]func() (int, int, error){
		"jpeg": func() (int, int, error) { m, err := jpeg.Decode(bytes.NewReader(j1)); return size(m, err) },
		"jpeg with a comment": func() (int, int, error) {
			m, err := jpeg.Decode(bytes.NewReader(withComment(j1, "bench")))
			return size(m, err)
		},
		"png": func() (int, int, error) { m, err := png.Decode(bytes.NewReader(p1)); return size(m, err) },
	} {
		w, h, err := dec()
		want := [2]int{160, 120}
		if name == "png" {
			want = [2]int{150, 90}
		}
		if err != nil || [2]int{w, h} != want {
			t.Errorf("%s: %d×%d (%v), want %d×%d", name, w, h, err, want[0], want[1])
		}
	}
	if c := withComment(j1, "x"); len(c) != len(j1)+5 || bytes.Equal(c, j1) {
		t.Errorf("withComment: %d bytes from %d", len(c), len(j1))
	}
}

// size is the size of a decoded image.
func size(m image.Image, err error) (int, int, error) {
	if err != nil {
		return 0, 0, err
	}
	return m.Bounds().Dx(), m.Bounds().Dy(), nil
}
