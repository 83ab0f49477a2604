package web_test

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/web"
	"github.com/wikid/wikid/internal/wiki"
)

// testPNG is a w×h PNG, filled with c.
func testPNG(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bombPNG is a PNG whose header says w×h pixels, in a few hundred bytes:
// its pixel data is a short run of zeros (decoding it would need w×h
// bytes first).
func bombPNG(t testing.TB, w, h uint32) []byte {
	t.Helper()
	chunk := func(b *bytes.Buffer, typ string, data []byte) {
		binary.Write(b, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.Write(b, binary.BigEndian, crc.Sum32())
	}
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 0 // 8-bit grey
	chunk(&out, "IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 4096))
	zw.Close()
	chunk(&out, "IDAT", z.Bytes())
	chunk(&out, "IEND", nil)
	return out.Bytes()
}

func shaOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

var imgSrcRE = regexp.MustCompile(`<img[^>]* src="(/media/[0-9a-f]{64}/[^"]+)"`)

// TestUploads: a file uploaded through the form is served under its
// content's hash, immutable, with its sniffed type and nosniff, in
// ranges, from the edge; its page shows it, its versions and the pages
// using it; thumbnails are made on request.
func TestUploads(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Uploader", wiki.GroupUser)
	up := w.Login(t, "Uploader", pw)
	anon := w.Client(t)

	red := testPNG(t, 600, 400, color.RGBA{200, 0, 0, 255})
	up.Upload("Red.png", red, "A red square")
	sha := shaOf(red)
	orig := "/media/" + sha + "/Red.png"

	res := anon.Get(orig)
	if res.StatusCode != http.StatusOK || res.Body != string(red) {
		t.Fatalf("GET %s: %d, %d bytes", orig, res.StatusCode, len(res.Body))
	}
	for k, want := range map[string]string{
		"Content-Type":           "image/png",
		"Cache-Control":          "public, max-age=31536000, immutable",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if res.Header.Get("ETag") == "" || res.Header.Get("Surrogate-Key") == "" {
		t.Errorf("no ETag or Surrogate-Key: %v", res.Header)
	}
	if again := anon.Get(orig); !strings.Contains(again.Header.Get("Server-Timing"), "hit") {
		t.Errorf("the second GET is not an edge hit: %q", again.Header.Get("Server-Timing"))
	}

	// A range, 206, from the store.
	req := anon.NewRequest(http.MethodGet, orig, nil)
	req.Header.Set("Range", "bytes=8-15")
	if res := anon.Do(req); res.StatusCode != http.StatusPartialContent || res.Body != string(red[8:16]) {
		t.Errorf("Range: %d %q", res.StatusCode, res.Body)
	}

	// Another spelling of the name, another hash, a query: not served as the file.
	for path, want := range map[string]int{
		"/media/" + sha + "/Blue.png":                    http.StatusNotFound,
		"/media/" + strings.Repeat("0", 64) + "/Red.png": http.StatusNotFound,
		"/media/" + strings.ToUpper(sha) + "/Red.png":    http.StatusNotFound,
		"/media/" + sha + "/Red.png?x=1":                 http.StatusMovedPermanently,
		"/media/" + sha + "/99999px-Red.png":             http.StatusNotFound,
		"/media/" + sha + "/600px-Red.png":               http.StatusNotFound, // not narrower than the original
	} {
		if res := anon.Get(path); res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}

	// A thumbnail at a standard width: made once, a PNG 220 wide.
	thumb := anon.Get("/media/" + sha + "/220px-Red.png")
	if thumb.StatusCode != http.StatusOK || thumb.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("thumbnail: %d %s", thumb.StatusCode, thumb.Header.Get("Content-Type"))
	}
	cfg, err := png.DecodeConfig(strings.NewReader(thumb.Body))
	if err != nil || cfg.Width != 220 || cfg.Height != 147 {
		t.Fatalf("thumbnail is %dx%d (%v), want 220x147", cfg.Width, cfg.Height, err)
	}
	// A range of it, 206, as of an original.
	req = anon.NewRequest(http.MethodGet, "/media/"+sha+"/220px-Red.png", nil)
	req.Header.Set("Range", "bytes=8-15")
	if res := anon.Do(req); res.StatusCode != http.StatusPartialContent || res.Body != thumb.Body[8:16] ||
		res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("Range of a thumbnail: %d %q %q", res.StatusCode, res.Body, res.Header.Get("Cache-Control"))
	}

	// The file page: the preview, the history, the usage.
	up.Edit("Gallery", "Look: [[File:Red.png|thumb|240px|right|A red square]]\n")
	w.Settle(t)
	page := anon.Get("/wiki/File:Red.png").Body
	for _, want := range []string{"File history", "600 × 400", "A red square", `href="/wiki/Gallery"`, orig} {
		if !strings.Contains(page, want) {
			t.Errorf("the file page lacks %q", want)
		}
	}
	gallery := anon.Get("/wiki/Gallery").Body
	m := imgSrcRE.FindStringSubmatch(gallery)
	if m == nil || !strings.Contains(m[1], sha) {
		t.Fatalf("the gallery does not show the file:\n%s", gallery)
	}
	if res := anon.Get(m[1]); res.StatusCode != http.StatusOK {
		t.Errorf("the gallery's image %s: %d", m[1], res.StatusCode)
	}

	// A new version: the page showing the file shows it once the jobs ran,
	// the old bytes stay at their address, the history lists both.
	blue := testPNG(t, 600, 400, color.RGBA{0, 0, 200, 255})
	up.Upload("Red.png", blue, "Blue now")
	w.Settle(t)
	gallery = anon.Get("/wiki/Gallery").Body
	if !strings.Contains(gallery, shaOf(blue)) || strings.Contains(gallery, sha) {
		t.Errorf("the gallery does not show the new version")
	}
	if res := anon.Get(orig); res.StatusCode != http.StatusOK {
		t.Errorf("the old version's bytes: %d", res.StatusCode)
	}
	page = anon.Get("/wiki/File:Red.png").Body
	if strings.Count(page, "/media/"+sha) == 0 || !strings.Contains(page, "Blue now") {
		t.Errorf("the file history does not list both versions")
	}
	if h := anon.Get("/wiki/File:Red.png?action=history").Body; !strings.Contains(h, "Uploaded a new version") {
		t.Errorf("the page history does not show the new version")
	}
	if log := anon.Get("/wiki/Special:Log/upload").Body; !strings.Contains(log, "Red.png") {
		t.Errorf("the upload log does not show the uploads")
	}

	// The same bytes again: refused, nothing stored.
	csrf := up.CSRF("/wiki/Special:Upload")
	res = up.Multipart("/wiki/Special:Upload", map[string]string{"csrf": csrf, "wpDestFile": "Red.png"}, "Red.png", blue, nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(res.Body, "identical to the current version") {
		t.Errorf("re-upload of the same bytes: %d", res.StatusCode)
	}

	// Special:FilePath follows the current version.
	fp := anon.Get("/wiki/Special:FilePath/Red.png")
	if fp.StatusCode != http.StatusFound || !strings.Contains(fp.Header.Get("Location"), shaOf(blue)) {
		t.Errorf("Special:FilePath: %d %s", fp.StatusCode, fp.Header.Get("Location"))
	}
}

// TestMediaHitsSkipTheStore: an anonymous GET or HEAD of a media URL the
// edge holds is answered from it without the store being asked which file
// the URL names, by the handlers as by the front server; a logged-in
// reader's request (a private answer) and a range still look the file up.
func TestMediaHitsSkipTheStore(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	var lookups atomic.Int64
	web.CountFileLookups(w.App.Web, &lookups)
	_, pw := w.CreateUser(t, "Uploader", wiki.GroupUser)
	up := w.Login(t, "Uploader", pw)
	anon := w.Client(t)
	img := testPNG(t, 600, 400, color.RGBA{0, 120, 0, 255})
	up.Upload("Green.png", img, "")
	sha := shaOf(img)
	for _, p := range []string{"/media/" + sha + "/Green.png", "/media/" + sha + "/220px-Green.png"} {
		first := anon.Get(p)
		if first.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", p, first.StatusCode)
		}
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			before := lookups.Load()
			res := anon.Do(anon.NewRequest(method, p, nil))
			if res.StatusCode != http.StatusOK || xcache(res) != "HIT" || (method == http.MethodGet && res.Body != first.Body) {
				t.Errorf("%s %s again: %d, X-Cache %q, same body %v", method, p, res.StatusCode, xcache(res), res.Body == first.Body)
			}
			if n := lookups.Load() - before; n != 0 {
				t.Errorf("%s %s again, a hit: the file was looked up %d times", method, p, n)
			}
		}
		before := lookups.Load()
		if res := up.Get(p); res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "private, max-age=31536000, immutable" {
			t.Errorf("a logged-in GET %s: %d %q", p, res.StatusCode, res.Header.Get("Cache-Control"))
		}
		req := anon.NewRequest(http.MethodGet, p, nil)
		req.Header.Set("Range", "bytes=0-7")
		// (Of an original, 206; a thumbnail is sent whole.)
		if res := anon.Do(req); (res.StatusCode != http.StatusPartialContent && res.StatusCode != http.StatusOK) || !strings.HasPrefix(first.Body, res.Body) {
			t.Errorf("a range of %s: %d, %d bytes", p, res.StatusCode, len(res.Body))
		}
		if n := lookups.Load() - before; n != 2 {
			t.Errorf("%s: a logged-in GET and a range looked the file up %d times, want 2", p, n)
		}
	}
}

// TestUploadRefusals: what the wiki does not take is refused with a
// message that says why, and nothing a file holds can run script on the
// wiki's origin.
// formSentence is the upload form's error box holding a sentence.
var formSentence = regexp.MustCompile(`id="upload-error">\p{Lu}[^<]*[.!?]</div>`)

func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) { c.MaxUploadBytes = 64 << 10 })
	_, pw := w.CreateUser(t, "Uploader", wiki.GroupUser)
	up := w.Login(t, "Uploader", pw)
	anon := w.Client(t)
	post := func(name string, data []byte) *apptest.Response {
		t.Helper()
		csrf := up.CSRF("/wiki/Special:Upload")
		return up.Multipart("/wiki/Special:Upload", map[string]string{"csrf": csrf, "wpDestFile": name}, name, data, nil)
	}
	html := []byte("<!DOCTYPE html><html><script>alert(document.cookie)</script></html>")
	for _, tc := range []struct {
		name, file string
		data       []byte
		status     int
		says       string
	}{
		{"an HTML file renamed .png", "Evil.png", html, http.StatusUnsupportedMediaType, "HTML"},
		{"an SVG with a script", "Evil.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), http.StatusBadRequest, "script"},
		{"an SVG with an event handler", "Evil2.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), http.StatusBadRequest, "script"},
		{"a PNG named .jpg", "Red.jpg", testPNG(t, 4, 4, color.Black), http.StatusBadRequest, ".png"},
		{"a file over the limit", "Big.txt", bytes.Repeat([]byte("a"), 65<<10), http.StatusRequestEntityTooLarge, "64 KiB"},
		{"an empty file", "Empty.txt", []byte{}, http.StatusBadRequest, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := post(tc.file, tc.data)
			if res.StatusCode != tc.status || !strings.Contains(res.Body, tc.says) {
				t.Errorf("status %d, want %d saying %q:\n%.2000s", res.StatusCode, tc.status, tc.says, res.Body)
			}
			// The engine's message, worded for the API, is a sentence in the form.
			if !formSentence.MatchString(res.Body) {
				t.Errorf("the form's message is no sentence:\n%.2000s", res.Body)
			}
		})
	}
	if res := anon.Get("/wiki/File:Evil.png"); res.StatusCode != http.StatusNotFound {
		t.Errorf("a refused file has a page: %d", res.StatusCode)
	}

	// A GIF followed by HTML is a GIF: served as one, never sniffed.
	poly := append([]byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"), html...)
	up.Upload("Poly.gif", poly, "")
	res := anon.Get("/media/" + shaOf(poly) + "/Poly.gif")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/gif" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("the polyglot: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("X-Content-Type-Options"))
	}

	// A clean SVG is served in a sandbox.
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 50"><rect width="100" height="50" fill="teal"/></svg>`)
	up.Upload("Teal.svg", svg, "")
	res = anon.Get("/media/" + shaOf(svg) + "/Teal.svg")
	if csp := res.Header.Get("Content-Security-Policy"); res.StatusCode != http.StatusOK || !strings.HasPrefix(csp, "sandbox") {
		t.Errorf("the SVG: %d, CSP %q", res.StatusCode, csp)
	}

	// A zip is a download.
	zip := []byte("PK\x05\x06" + strings.Repeat("\x00", 18))
	up.Upload("Empty.zip", zip, "")
	res = anon.Get("/media/" + shaOf(zip) + "/Empty.zip")
	if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
		t.Errorf("the zip's Content-Disposition: %q", cd)
	}
}

// TestUploadBomb: an image of 400 megapixels in a few hundred bytes is
// kept, but never decoded: the page says why it shows no picture, and
// its thumbnails are refused at once.
func TestUploadBomb(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Uploader", wiki.GroupUser)
	up := w.Login(t, "Uploader", pw)
	bomb := bombPNG(t, 20000, 20000)
	up.Upload("Bomb.png", bomb, "")
	page := w.Client(t).Get("/wiki/File:Bomb.png").Body
	if !strings.Contains(page, "20000 × 20000") || !strings.Contains(page, "No preview") {
		t.Errorf("the bomb's page does not say why there is no preview:\n%s", page)
	}
	res := w.Client(t).Get("/media/" + shaOf(bomb) + "/220px-Bomb.png")
	if res.StatusCode != http.StatusNotFound || !strings.Contains(res.Body, "megapixels") {
		t.Errorf("a thumbnail of the bomb: %d\n%.500s", res.StatusCode, res.Body)
	}
	up.Edit("Shows bomb", "[[File:Bomb.png|thumb]]\n")
	if body := w.Client(t).Get("/wiki/Shows_bomb").Body; strings.Contains(body, "px-Bomb.png") {
		t.Errorf("a page shows a thumbnail of the bomb")
	}
}

// TestPrivateWikiFiles: on a wiki only users may read, files are refused
// to anonymous readers and private to the others.
func TestPrivateWikiFiles(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) { c.ReadGroup = wiki.GroupUser })
	_, pw := w.CreateUser(t, "Member", wiki.GroupUser)
	member := w.Login(t, "Member", pw)
	img := testPNG(t, 300, 200, color.White)
	member.Upload("Secret.png", img, "")
	path := "/media/" + shaOf(img) + "/Secret.png"
	for _, p := range []string{path, "/media/" + shaOf(img) + "/120px-Secret.png", "/wiki/Special:FilePath/Secret.png", "/w/rest.php/v1/file/File:Secret.png"} {
		if res := w.Client(t).Get(p); res.StatusCode != http.StatusUnauthorized || strings.Contains(res.Body, string(img[:16])) {
			t.Errorf("anonymous GET %s: %d", p, res.StatusCode)
		}
	}
	res := member.Get(path)
	if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "private, max-age=31536000, immutable" {
		t.Errorf("a member's GET: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
}

// TestDeletedFiles: deleting a file page hides every version from all
// but administrators, at once (the edge's copies are purged).
func TestDeletedFiles(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	admin := w.Login(t, "Boss", apw)
	anon := w.Client(t)
	v1, v2 := testPNG(t, 300, 200, color.White), testPNG(t, 300, 200, color.Black)
	admin.Upload("Gone.png", v1, "")
	admin.Upload("Gone.png", v2, "")
	paths := []string{"/media/" + shaOf(v1) + "/Gone.png", "/media/" + shaOf(v2) + "/Gone.png", "/media/" + shaOf(v2) + "/120px-Gone.png"}
	for _, p := range paths {
		if res := anon.Get(p); res.StatusCode != http.StatusOK {
			t.Fatalf("before the deletion, GET %s: %d", p, res.StatusCode)
		}
	}
	csrf := admin.CSRF("/wiki/File:Gone.png?action=delete")
	if res := admin.PostForm("/wiki/File:Gone.png?action=delete", map[string][]string{"csrf": {csrf}, "reason": {"test"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	for _, p := range paths {
		if res := anon.Get(p); res.StatusCode != http.StatusNotFound {
			t.Errorf("after the deletion, anonymous GET %s: %d", p, res.StatusCode)
		}
	}
	if res := admin.Get(paths[0]); res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("an administrator's GET of a deleted version: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
}

// TestFileRecreatedAfterDeletion: a File: page deleted and created again
// (as text, by anyone) keeps its old versions hidden: their bytes are 404
// for all but administrators and its page shows no file, a new upload
// shows only itself, and an administrator's undelete shows them again.
func TestFileRecreatedAfterDeletion(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	admin := w.Login(t, "Boss", apw)
	_, upw := w.CreateUser(t, "Writer", wiki.GroupUser)
	writer := w.Login(t, "Writer", upw)
	anon := w.Client(t)
	old, fresh := testPNG(t, 300, 200, color.White), testPNG(t, 300, 200, color.Black)
	oldPaths := []string{"/media/" + shaOf(old) + "/Phoenix.png", "/media/" + shaOf(old) + "/120px-Phoenix.png"}
	freshPath := "/media/" + shaOf(fresh) + "/Phoenix.png"
	status := func(c *apptest.Client, path string) int {
		t.Helper()
		return c.Get(path).StatusCode
	}
	writer.Upload("Phoenix.png", old, "the first picture")
	for _, p := range oldPaths {
		if got := status(anon, p); got != http.StatusOK {
			t.Fatalf("before the deletion, GET %s: %d", p, got)
		}
	}

	csrf := admin.CSRF("/wiki/File:Phoenix.png?action=delete")
	if res := admin.PostForm("/wiki/File:Phoenix.png?action=delete", map[string][]string{"csrf": {csrf}, "reason": {"copyright"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	writer.Edit("File:Phoenix.png", "Only words here now.")
	w.Settle(t)
	for _, p := range oldPaths {
		if got := status(anon, p); got != http.StatusNotFound {
			t.Errorf("created again as text: anonymous GET %s: %d, want 404", p, got)
		}
	}
	if res := admin.Get(oldPaths[0]); res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("created again as text: an administrator's GET of the hidden version: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	for who, c := range map[string]*apptest.Client{"anonymous": anon, "administrator": admin} {
		page := c.Get("/wiki/File:Phoenix.png").Body
		if !strings.Contains(page, "Only words here now.") || strings.Contains(page, "File history") || strings.Contains(page, shaOf(old)) {
			t.Errorf("created again as text, the page as %s sees it shows a file:\n%s", who, page)
		}
	}
	if got := status(anon, "/wiki/Special:FilePath/Phoenix.png"); got != http.StatusNotFound {
		t.Errorf("created again as text: Special:FilePath: %d, want 404", got)
	}
	if got := status(admin, "/wiki/File:Phoenix.png?action=filerevert&oldimage="+shaOf(old)); got != http.StatusNotFound {
		t.Errorf("created again as text: the revert form of a hidden version: %d, want 404", got)
	}

	writer.Upload("Phoenix.png", fresh, "a new picture")
	w.Settle(t)
	if got := status(anon, freshPath); got != http.StatusOK {
		t.Errorf("the new version: GET %s: %d", freshPath, got)
	}
	for _, p := range oldPaths {
		if got := status(anon, p); got != http.StatusNotFound {
			t.Errorf("after a new upload: anonymous GET %s: %d, want 404", p, got)
		}
	}
	page := anon.Get("/wiki/File:Phoenix.png").Body
	if !strings.Contains(page, freshPath) || strings.Contains(page, shaOf(old)) || strings.Count(page, `class="current-version"`) != 1 {
		t.Errorf("after a new upload, the file page does not show the new version alone:\n%s", page)
	}
	if log := anon.Get("/wiki/Special:Log/upload").Body; strings.Count(log, "Phoenix.png") < 2 {
		t.Errorf("the upload log lacks the uploads:\n%s", log)
	}

	csrf = admin.CSRF("/wiki/File:Phoenix.png?action=undelete")
	if res := admin.PostForm("/wiki/File:Phoenix.png?action=undelete", map[string][]string{"csrf": {csrf}, "reason": {"licensed"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("undelete: %d", res.StatusCode)
	}
	w.Settle(t)
	for _, p := range append(oldPaths, freshPath) {
		if got := status(anon, p); got != http.StatusOK {
			t.Errorf("after the undelete, anonymous GET %s: %d", p, got)
		}
	}
	page = anon.Get("/wiki/File:Phoenix.png").Body
	if !strings.Contains(page, "/media/"+shaOf(old)) || !strings.Contains(page, freshPath) {
		t.Errorf("after the undelete, the file page does not list both versions:\n%s", page)
	}
	if fp := anon.Get("/wiki/Special:FilePath/Phoenix.png"); fp.StatusCode != http.StatusFound || !strings.Contains(fp.Header.Get("Location"), shaOf(fresh)) {
		t.Errorf("after the undelete, Special:FilePath: %d %s, want the newest version", fp.StatusCode, fp.Header.Get("Location"))
	}
}

// TestRESTUpload: POST /w/rest.php/v1/file/{title} with a bearer token,
// and GET of the file's description as MediaWiki's REST API has it.
func TestRESTUpload(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Bot", wiki.GroupUser)
	bot := w.Login(t, "Bot", pw)
	img := testPNG(t, 500, 250, color.White)
	res := bot.Multipart("/w/rest.php/v1/file/File:Api.png", map[string]string{"comment": "from the API", "text": "An image."}, "x.png", img,
		http.Header{"X-CSRF-Token": {bot.CSRF("/wiki/Special:Upload")}})
	if res.StatusCode != http.StatusCreated || !strings.Contains(res.Body, `"url":"/media/`+shaOf(img)) {
		t.Fatalf("REST upload: %d\n%s", res.StatusCode, res.Body)
	}
	got := w.Client(t).Get("/w/rest.php/v1/file/Api.png")
	for _, want := range []string{`"title":"Api.png"`, `"mediatype":"BITMAP"`, `"width":500`, `"height":250`, `220px-Api.png`} {
		if !strings.Contains(got.Body, want) {
			t.Errorf("GET file lacks %s:\n%s", want, got.Body)
		}
	}
	if res := w.Client(t).Multipart("/w/rest.php/v1/file/File:Anon.png", nil, "a.png", img, nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous REST upload: %d", res.StatusCode)
	}
}

// TestUploadsOneAfterAnother: an uploader whose next file goes out as soon
// as the previous one's answer is in finds its turn free every time (one
// upload at a time means one at a time, not one per some interval after).
func TestUploadsOneAfterAnother(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Bot", wiki.GroupUser)
	bot := w.Login(t, "Bot", pw)
	h := http.Header{"X-CSRF-Token": {bot.CSRF("/wiki/Special:Upload")}}
	for i := range 25 {
		img := testPNG(t, 10+i, 10, color.White)
		name := fmt.Sprintf("Seq %d.png", i)
		if res := bot.Multipart("/w/rest.php/v1/file/File:"+url.PathEscape(name), nil, name, img, h); res.StatusCode != http.StatusCreated {
			t.Fatalf("upload %d right after the one before: %d\n%s", i, res.StatusCode, res.Body)
		}
	}
}

// unusualWidths uploads img as name and asks for thumbnails of it, as an
// anonymous client, at widths 20, 21, … up to 119 until one is refused:
// it returns the client, the uploader, the image's media address, how many
// were made before the refusal, and the refusal (nil if none).
func unusualWidths(t *testing.T, img []byte, name string) (anon, up *apptest.Client, base string, made int, refused *apptest.Response) {
	t.Helper()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Uploader", wiki.GroupUser)
	up = w.Login(t, "Uploader", pw)
	up.Upload(name, img, "")
	base = "/media/" + shaOf(img) + "/"
	anon = w.Client(t)
	for width := 20; width < 120; width++ {
		switch res := anon.Get(base + strconv.Itoa(width) + "px-" + name); res.StatusCode {
		case http.StatusOK:
			made++
		case http.StatusTooManyRequests:
			return anon, up, base, made, res
		default:
			t.Fatalf("width %d: %d", width, res.StatusCode)
		}
	}
	return anon, up, base, made, nil
}

// TestThumbnailRate: a client makes a bounded number of thumbnails of
// unusual widths a minute; thumbnails made already, and standard widths,
// are served to anyone.
func TestThumbnailRate(t *testing.T) {
	t.Parallel()
	anon, up, base, made, refused := unusualWidths(t, testPNG(t, 300, 200, color.RGBA{0, 120, 0, 255}), "Green.png")
	if refused == nil || made < 50 {
		t.Fatalf("made %d thumbnails of unusual widths before a refusal (%v)", made, refused != nil)
	}
	if refused.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	// Made already: served (a session reads it through the handler, from the store).
	if res := up.Get(base + "20px-Green.png"); res.StatusCode != http.StatusOK {
		t.Errorf("a thumbnail made already, after the limit: %d", res.StatusCode)
	}
	if res := anon.Get(base + "250px-Green.png"); res.StatusCode != http.StatusOK {
		t.Errorf("a standard width after the limit: %d", res.StatusCode)
	}
}

// TestThumbnailRateByPixels: every width decodes the whole image, so a
// thumbnail of a large image counts one per started megapixel of it: of an
// image a row of pixels over one megapixel, a client makes half as many
// widths (35 of the 70 a minute: a third, 23, were it counted as three;
// all 70 as one).
func TestThumbnailRateByPixels(t *testing.T) {
	t.Parallel()
	_, _, _, made, _ := unusualWidths(t, testPNG(t, 1000, 1001, color.RGBA{0, 0, 120, 255}), "Blue.png")
	if made < 28 || made > 45 {
		t.Fatalf("made %d thumbnails of unusual widths of a 1.001 megapixel image before a refusal, want about 35", made)
	}
}

// TestFileRevert: an administrator makes an older version current again;
// others may not.
func TestFileRevert(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	admin := w.Login(t, "Boss", apw)
	_, upw := w.CreateUser(t, "Someone", wiki.GroupUser)
	user := w.Login(t, "Someone", upw)
	v1, v2 := testPNG(t, 300, 200, color.White), testPNG(t, 300, 200, color.Black)
	user.Upload("Flip.png", v1, "first")
	user.Upload("Flip.png", v2, "second")
	link := "/wiki/File:Flip.png?action=filerevert&oldimage=" + shaOf(v1)
	if strings.Contains(w.Client(t).Get("/wiki/File:Flip.png").Body, "filerevert") {
		t.Errorf("the shared file page offers a revert")
	}
	if !strings.Contains(admin.Get("/wiki/File:Flip.png").Body, `?action=filerevert">Revert file`) {
		t.Errorf("an administrator's file page has no Revert file tab")
	}
	if list := admin.Get("/wiki/File:Flip.png?action=filerevert").Body; !strings.Contains(list, strings.ReplaceAll(link, "&", "&amp;")) {
		t.Errorf("the revert form does not offer the first version")
	}
	if res := user.Get("/wiki/File:Flip.png?action=filerevert"); res.StatusCode != http.StatusForbidden {
		t.Errorf("a user's revert list: %d", res.StatusCode)
	}
	if res := user.Get(link); res.StatusCode != http.StatusForbidden {
		t.Errorf("a user's revert form: %d", res.StatusCode)
	}
	csrf := admin.CSRF(link)
	if res := user.PostForm(link, map[string][]string{"csrf": {user.CSRF("/wiki/Special:Upload")}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a user's revert: %d", res.StatusCode)
	}
	if res := admin.PostForm(link, map[string][]string{"csrf": {csrf}, "comment": {"vandalism"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revert: %d\n%s", res.StatusCode, res.Body)
	}
	fp := w.Client(t).Get("/wiki/Special:FilePath/Flip.png")
	if !strings.Contains(fp.Header.Get("Location"), shaOf(v1)) {
		t.Errorf("after the revert, Special:FilePath leads to %s", fp.Header.Get("Location"))
	}
	if log := w.Client(t).Get("/wiki/Special:Log/upload").Body; !strings.Contains(log, "reverted") {
		t.Errorf("the upload log does not show the revert")
	}
	bogus := "/wiki/File:Flip.png?action=filerevert&oldimage=" + strings.Repeat("a", 64)
	if res := admin.Get(bogus); res.StatusCode != http.StatusNotFound {
		t.Errorf("a revert to a version the file never had: %d", res.StatusCode)
	}
}
