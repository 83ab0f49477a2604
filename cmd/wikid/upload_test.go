package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

// TestUploadCommand: wikid upload stores each file as File:its name (or
// --title), reports the ones refused and goes on, exit status 1.
func TestUploadCommand(t *testing.T) {
	t.Parallel()
	data, dir := t.TempDir(), t.TempDir()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 40, 30))); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	grey := write("grey square.png", img.Bytes())
	notes := write("notes.txt", []byte("Plain notes.\n"))
	evil := write("evil.png", []byte("<html><script>alert(1)</script></html>"))

	out, errOut, err := wikid(t, "", nil, "upload", grey, notes, evil, "--summary", "bulk", "--data", data)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 files were not uploaded") {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"File:Grey square.png (image/png", "File:Notes.txt (text/plain", "new file"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "evil.png") || !strings.Contains(errOut, "HTML") {
		t.Errorf("the refusal is not reported:\n%s", errOut)
	}
	if _, _, err := wikid(t, "", nil, "upload", notes, "--title", "Renamed.txt", "--data", data); err != nil {
		t.Fatalf("--title: %v", err)
	}
	if _, _, err := wikid(t, "", nil, "upload", notes, grey, "--title", "X.txt", "--data", data); err == nil {
		t.Errorf("--title with two files: no error")
	}

	db, err := sqlite.Open(context.Background(), filepath.Join(data, "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := db.CurrentFiles(context.Background(), []wiki.Title{"File:Grey square.png", "File:Notes.txt", "File:Renamed.txt", "File:Evil.png"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files["File:Grey square.png"].Width != 40 || files["File:Renamed.txt"].SHA256 != files["File:Notes.txt"].SHA256 {
		t.Errorf("stored files: %+v", files)
	}
}
