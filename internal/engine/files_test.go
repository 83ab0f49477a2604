package engine_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// pngOf is a small PNG filled with c.
func pngOf(t *testing.T, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for y := range 3 {
		for x := range 4 {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestUploadAfterDeletion: versions hidden by a deletion are not the
// current version of a File: page created again (an upload of their bytes
// is a new file, not "identical") and are no version to revert to, until
// an undelete.
func TestUploadAfterDeletion(t *testing.T) {
	db := sqlitetest.Open(t)
	e := engine.New(engine.Options{Store: db, Renderer: render.New()})
	const title = wiki.Title("File:Bird.png")
	ed := engine.Editor{UserID: 1, UserName: "Alice", Group: wiki.GroupAdmin}
	a, b := pngOf(t, color.White), pngOf(t, color.Black)
	upload := func(data []byte, revert string) (engine.UploadOutcome, error) {
		t.Helper()
		return e.Upload(ctx, engine.Upload{Title: title, Data: data, Revert: revert, Comment: "a bird", Editor: ed})
	}
	va, err := upload(a, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := upload(b, ""); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete(ctx, title, "copyright", ed); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Save(ctx, engine.Edit{Title: title, Text: "Words only.", Editor: ed}); err != nil {
		t.Fatal(err)
	}

	if _, err := upload(nil, va.Version.SHA256); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("a revert to a hidden version: %v, want ErrNotFound", err)
	}
	// The newest version's bytes, hidden: a new file, not the current one.
	out, err := upload(b, "")
	if err != nil {
		t.Fatalf("an upload of a hidden version's bytes: %v", err)
	}
	if out.Version.Hidden {
		t.Errorf("the new version is hidden: %+v", out.Version)
	}
	entries, err := db.Log(ctx, wiki.LogQuery{Type: wiki.LogUpload, Limit: 1})
	if err != nil || len(entries) != 1 || entries[0].Action != wiki.UploadNew {
		t.Errorf("upload log = %+v, %v; want a new file's entry", entries, err)
	}
	if _, err := upload(b, ""); wiki.KindOf(err) != wiki.KindConflict {
		t.Errorf("the current version's bytes again: %v, want a conflict", err)
	}

	if _, err := e.Undelete(ctx, title, "licensed", ed); err != nil {
		t.Fatal(err)
	}
	if out, err := upload(nil, va.Version.SHA256); err != nil || out.Version.SHA256 != va.Version.SHA256 {
		t.Errorf("a revert to a version shown again: %+v, %v", out.Version, err)
	}
}
