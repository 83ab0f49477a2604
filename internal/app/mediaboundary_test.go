package app_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

// TestNoMediaRequestChangesWhatOthersRead: other spellings of a file's
// address (its name in other cases and escapes, queries, ranges, another
// hash, a thumbnail's) are redirected, answered uncached or refused, and
// never change what a plain GET of the address returns.
func TestNoMediaRequestChangesWhatOthersRead(t *testing.T) {
	t.Parallel()
	a, base := apptest.Serve(t)
	addr := strings.TrimPrefix(base, "http://")
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	img.Set(0, 0, color.White)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	out, err := a.Engine.Upload(context.Background(), engine.Upload{Title: "File:Target image.png", Data: b.Bytes(),
		Editor: engine.Editor{UserName: "Uploader", UserID: 1, Group: wiki.GroupUser}})
	if err != nil {
		t.Fatal(err)
	}
	sha := out.Version.SHA256
	orig := wiki.OriginalURL(sha, out.Version.Name())
	thumb := wiki.ThumbURL(sha, out.Version.Name(), 120)
	want := map[string]fetched{}
	for _, p := range []string{orig, thumb} {
		f := rawGet(t, addr, "GET", p)
		if f.status != http.StatusOK {
			t.Fatalf("GET %s: %d", p, f.status)
		}
		want[p] = f
	}
	check := func(after string) {
		t.Helper()
		for p, w := range want {
			for _, enc := range []string{"", "Accept-Encoding: gzip", "Accept-Encoding: br"} {
				got := rawGet(t, addr, "GET", p, enc)
				if got.status != http.StatusOK || decoded(t, got) != w.body || got.header.Get("Content-Type") != w.header.Get("Content-Type") {
					t.Fatalf("after %s, GET %s (%s) changed: %d %s", after, p, enc, got.status, got.header.Get("Content-Type"))
				}
			}
		}
	}
	check("nothing")
	prefix := "/media/" + sha + "/"
	for _, target := range []string{
		orig + "?", orig + "?x=1", orig + "?action=raw", thumb + "?width=999",
		prefix + "target_image.png", prefix + "Target%20image.png", prefix + "Target_image%2Epng", prefix + "TARGET_IMAGE.PNG",
		prefix + "120px-target_image.png", prefix + "0120px-Target_image.png", prefix + "120PX-Target_image.png",
		prefix + "121px-Target_image.png", prefix + "4097px-Target_image.png", prefix + "400px-Target_image.png",
		prefix + "120px-Target_image.png.png", prefix + "Target_image.png/", prefix + "",
		"/media/" + strings.ToUpper(sha) + "/Target_image.png", "/media/" + sha[:63] + "/Target_image.png",
		"/media//" + sha + "/Target_image.png", "/media/./" + sha + "/Target_image.png", "/media/" + sha + "/../Target_image.png",
		"http://wiki.test" + orig,
	} {
		for _, method := range []string{"GET", "HEAD"} {
			for _, extra := range []string{"", "Accept-Encoding: gzip, br", "Range: bytes=0-9", "Range: bytes=0-0,5-5,9-9", "If-None-Match: *", "If-Range: \"x\""} {
				a.Edge.PurgeAll()
				res := rawGet(t, addr, method, target, extra)
				if res.status >= 500 {
					t.Fatalf("%s %s (%s): %d", method, target, extra, res.status)
				}
				check(method + " " + target + " " + extra)
			}
		}
	}
}
