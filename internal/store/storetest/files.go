package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/store/dump"
	"github.com/wikid/wikid/internal/wiki"
)

func shaOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// putBlob stores b and returns its SHA-256.
func putBlob(t *testing.T, s wiki.Store, b []byte) string {
	t.Helper()
	sha := shaOf(b)
	if err := s.PutBlob(ctx, sha, int64(len(b)), bytes.NewReader(b)); err != nil {
		t.Fatalf("put blob of %d bytes: %v", len(b), err)
	}
	return sha
}

// randomBytes returns n bytes of a sequence seed chooses.
func randomBytes(seed byte, n int) []byte {
	b := make([]byte, n)
	var key [32]byte
	key[0] = seed
	rand.NewChaCha8(key).Read(b)
	return b
}

// rowCount counts the rows of a table through the copy's interface
// (package dump), which both engines implement: the contract has no
// reader of its own for how many blobs are stored. ok is false for a
// store without it.
func rowCount(t *testing.T, s wiki.Store, table string) (n int64, ok bool) {
	t.Helper()
	ds, ok := s.(dump.Store)
	if !ok {
		return 0, false
	}
	for _, tb := range dump.Tables {
		if tb.Name == table {
			return must[int64](t)(ds.CountRows(ctx, tb)), true
		}
	}
	t.Fatalf("no table %s in dump.Tables", table)
	return 0, false
}

// wantRows fails t unless table holds n rows (when the store can tell).
func wantRows(t *testing.T, s wiki.Store, table string, n int64) {
	t.Helper()
	if got, ok := rowCount(t, s, table); ok && got != n {
		t.Errorf("%s holds %d rows, want %d", table, got, n)
	}
}

// unread is a reader that fails the test when it is read.
type unread struct{ t *testing.T }

func (u unread) Read([]byte) (int, error) {
	u.t.Error("a blob stored already was read again")
	return 0, io.EOF
}

// failingReader yields what r holds, then fails instead of ending.
type failingReader struct {
	r io.Reader
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errors.New("the disk went away")
	}
	return n, err
}

func testBlobs(t *testing.T, s wiki.Store) {
	png := []byte("\x89PNG\r\n\x1a\n a small picture")
	sha := putBlob(t, s, png)
	t.Run("a stored blob is put again without its reader being read", func(t *testing.T) {
		if err := s.PutBlob(ctx, sha, int64(len(png)), unread{t}); err != nil {
			t.Fatal(err)
		}
		wantRows(t, s, "blobs", 1)
		wantRows(t, s, "blob_chunks", 1)
	})
	t.Run("concurrent puts of the same bytes store one blob", func(t *testing.T) {
		b := randomBytes(7, 3000)
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Go(func() { errs[i] = s.PutBlob(ctx, shaOf(b), int64(len(b)), bytes.NewReader(b)) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		wantRows(t, s, "blobs", 2)
		blob := must[wiki.Blob](t)(s.OpenBlob(ctx, shaOf(b)))
		got := make([]byte, len(b))
		if n, err := blob.ReadAt(got, 0); n != len(b) || (err != nil && err != io.EOF) || !bytes.Equal(got, b) {
			t.Fatalf("read back %d bytes, %v", n, err)
		}
	})
	t.Run("a reader of other bytes than said stores nothing", func(t *testing.T) {
		big := randomBytes(1, store.ChunkSize+store.ChunkSize/2)
		for _, c := range []struct {
			name string
			sha  string
			size int64
			r    io.Reader
		}{
			{"shorter", shaOf(png[:10]), 10, bytes.NewReader(png[:5])},
			{"longer", shaOf(png[:5]), 5, bytes.NewReader(png[:10])},
			{"other bytes", shaOf([]byte("other")), 5, strings.NewReader("right")},
			{"failing after a chunk", shaOf(big), int64(len(big)), &failingReader{bytes.NewReader(big[:store.ChunkSize+10])}},
			{"shorter by a chunk", shaOf(big), int64(len(big)), bytes.NewReader(big[:store.ChunkSize])},
		} {
			if err := s.PutBlob(ctx, c.sha, c.size, c.r); err == nil {
				t.Errorf("%s: no error", c.name)
			}
			if _, err := s.OpenBlob(ctx, c.sha); !errors.Is(err, wiki.ErrNotFound) {
				t.Errorf("%s: open: %v, want ErrNotFound", c.name, err)
			}
		}
		wantRows(t, s, "blobs", 2)
		wantRows(t, s, "blob_chunks", 2)
	})
	t.Run("a hash that is not lower-case hex is refused and names no blob", func(t *testing.T) {
		for _, bad := range []string{"", "abc", strings.ToUpper(sha), sha[:63] + "g", sha + "0"} {
			if err := s.PutBlob(ctx, bad, 1, strings.NewReader("x")); wiki.KindOf(err) != wiki.KindInvalid {
				t.Errorf("put %q: %v, want KindInvalid", bad, err)
			}
			if _, err := s.OpenBlob(ctx, bad); !errors.Is(err, wiki.ErrNotFound) {
				t.Errorf("open %q: %v, want ErrNotFound", bad, err)
			}
		}
	})
	t.Run("an empty blob is stored and read", func(t *testing.T) {
		empty := putBlob(t, s, nil)
		b := must[wiki.Blob](t)(s.OpenBlob(ctx, empty))
		if n, err := b.ReadAt(make([]byte, 4), 0); b.Size() != 0 || n != 0 || err != io.EOF {
			t.Fatalf("size %d, read %d, %v", b.Size(), n, err)
		}
	})
	if _, err := s.OpenBlob(ctx, shaOf([]byte("never stored"))); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("open a missing blob: %v, want ErrNotFound", err)
	}
}

func testBlobRanges(t *testing.T, s wiki.Store) {
	const cs = store.ChunkSize
	data := randomBytes(42, 2*cs+cs/2)
	size := int64(len(data))
	sha := putBlob(t, s, data)
	wantRows(t, s, "blob_chunks", 3)
	b := must[wiki.Blob](t)(s.OpenBlob(ctx, sha))
	if b.Size() != size {
		t.Fatalf("size = %d, want %d", b.Size(), size)
	}
	for _, c := range []struct {
		name    string
		off     int64
		n       int
		want    int  // bytes read
		wantEOF bool // io.EOF required (else nil, or io.EOF at the very end)
	}{
		{"the start", 0, 100, 100, false},
		{"within a chunk", 1000, 5000, 5000, false},
		{"the end of a chunk", cs - 10, 10, 10, false},
		{"across a boundary", cs - 10, 20, 20, false},
		{"from a boundary", cs, 10, 10, false},
		{"a whole chunk", cs, cs, cs, false},
		{"across three chunks", cs / 2, 2 * cs, 2 * cs, false},
		{"everything", 0, int(size), int(size), false},
		{"up to the end", size - 10, 10, 10, false},
		{"past the end", size - 10, 20, 10, true},
		{"from the end", size, 1, 0, true},
		{"beyond the end", size + 5, 1, 0, true},
		{"everything and more", 0, int(size) + 100, int(size), true},
		{"nothing", 10, 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := make([]byte, c.n)
			n, err := b.ReadAt(p, c.off)
			if n != c.want {
				t.Fatalf("read %d bytes, want %d (%v)", n, c.want, err)
			}
			atEnd := c.off+int64(n) == size
			switch {
			case c.wantEOF && err != io.EOF:
				t.Fatalf("error %v, want io.EOF", err)
			case !c.wantEOF && err != nil && !(atEnd && err == io.EOF):
				t.Fatalf("error %v", err)
			}
			if n > 0 && !bytes.Equal(p[:n], data[c.off:c.off+int64(n)]) {
				t.Fatal("the bytes read are not the blob's")
			}
		})
	}
	t.Run("a negative offset is an error", func(t *testing.T) {
		if _, err := b.ReadAt(make([]byte, 1), -1); err == nil || err == io.EOF {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("read through in small pieces, as a response is copied", func(t *testing.T) {
		got, err := io.ReadAll(io.NewSectionReader(b, 0, size))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes, %v", len(got), err)
		}
	})
	t.Run("concurrent reads of one blob", func(t *testing.T) {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 9))
				for range 8 {
					off := r.Int64N(size)
					p := make([]byte, r.IntN(cs)+1)
					n, err := b.ReadAt(p, off)
					if err != nil && err != io.EOF {
						t.Errorf("read %d at %d: %v", len(p), off, err)
						return
					}
					if n != int(min(int64(len(p)), size-off)) || !bytes.Equal(p[:n], data[off:off+int64(n)]) {
						t.Errorf("read %d at %d: wrong bytes (%d)", len(p), off, n)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

// upload is an upload request of content (stored as a blob, named by sha)
// to title at minute n.
func upload(title string, text, sha string, size int, action string, base int64, n int) wiki.UploadRequest {
	return wiki.UploadRequest{
		Page: wiki.SaveRequest{Title: wiki.MustTitle(title), Text: text, Summary: action + " " + title, UserID: 1, UserName: "Alice",
			BaseRevID: base, SearchText: text, Time: at(n), NullRevision: base != 0},
		Version: wiki.FileVersion{SHA256: sha, Size: int64(size), MIME: "image/png", Width: 40, Height: 30,
			UserID: 1, UserName: "Alice", Comment: action + " " + title},
		Action: action,
	}
}

// saveFile runs SaveFile and fails the test on error.
func saveFile(t *testing.T, s wiki.Store, req wiki.UploadRequest) (wiki.SaveResult, wiki.FileVersion) {
	t.Helper()
	res, v, err := s.SaveFile(ctx, req)
	if err != nil {
		t.Fatalf("save file %q: %v", req.Page.Title, err)
	}
	return res, v
}

// uploadNew uploads content as a new file title at minute n.
func uploadNew(t *testing.T, s wiki.Store, title string, content []byte, n int) (wiki.SaveResult, wiki.FileVersion) {
	t.Helper()
	sha := putBlob(t, s, content)
	return saveFile(t, s, upload(title, "About "+title, sha, len(content), wiki.UploadNew, 0, n))
}

func logActions(es []wiki.LogEntry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Action)
	}
	return strings.Join(out, ",")
}

func versionIDs(vs []wiki.FileVersion) []int64 {
	var out []int64
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}

func testUpload(t *testing.T, s wiki.Store) {
	const title = "File:Cat.png"
	one, two := []byte("first picture of a cat"), []byte("second picture of a cat, larger")
	sha1, sha2 := putBlob(t, s, one), putBlob(t, s, two)

	req := upload(title, "A cat on a mat.", sha1, len(one), wiki.UploadNew, 0, 1)
	req.Page.Links = wiki.LinkSet{Categories: []wiki.Title{"Category:Cats"}}
	req.Page.Jobs = []wiki.JobSpec{spec("search", `{"title":"File:Cat.png"}`)}
	res, v := saveFile(t, s, req)
	if !res.Created || res.Unchanged || res.Page.ID == 0 || res.Revision.ID == 0 || res.Page.Title != title {
		t.Fatalf("result = %+v", res)
	}
	want := req.Version
	want.ID, want.PageID, want.Title, want.Time = v.ID, res.Page.ID, title, at(1)
	if v.ID == 0 || !reflect.DeepEqual(v, want) {
		t.Fatalf("version =\n%+v, want\n%+v", v, want)
	}
	if vs := must[[]wiki.FileVersion](t)(s.FileVersions(ctx, title)); !reflect.DeepEqual(vs, []wiki.FileVersion{v}) {
		t.Fatalf("versions = %+v", vs)
	}
	t.Run("the page is saved as SavePage saves it", func(t *testing.T) {
		if n := jobCount(t, s); n != 1 {
			t.Errorf("%d jobs, want 1", n)
		}
		if m := must[[]wiki.CategoryMember](t)(s.CategoryMembers(ctx, "Category:Cats", wiki.CategoryQuery{})); members(m) != title {
			t.Errorf("members = %s", members(m))
		}
		if hits := searchTitles(t, s, "mat"); hitTitles(hits) != title {
			t.Errorf("search = %s", hitTitles(hits))
		}
		r := must[wiki.Revision](t)(s.FindRevision(ctx, res.Revision.ID))
		if r.Text != "A cat on a mat." || r.Summary != "upload "+title {
			t.Errorf("revision = %+v", r)
		}
	})
	le := must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogUpload}))
	if len(le) != 1 {
		t.Fatalf("upload log = %+v", le)
	}
	wantLog := wiki.LogEntry{ID: le[0].ID, Type: wiki.LogUpload, Action: wiki.UploadNew, Time: at(1), UserID: 1, UserName: "Alice",
		Target: title, PageID: res.Page.ID, Comment: "upload " + title,
		Params: map[string]string{"sha256": sha1, "size": fmt.Sprint(len(one))}}
	if !reflect.DeepEqual(le[0], wantLog) {
		t.Fatalf("log entry =\n%+v, want\n%+v", le[0], wantLog)
	}

	// A new version: the page's text again, as a null revision.
	res2, v2 := saveFile(t, s, upload(title, "A cat on a mat.", sha2, len(two), wiki.UploadOverwrite, res.Revision.ID, 2))
	if res2.Created || res2.Unchanged || res2.Revision.ID <= res.Revision.ID || res2.Revision.ParentID != res.Revision.ID ||
		res2.Revision.SHA1 != res.Revision.SHA1 || res2.Revision.Summary != "overwrite "+title || res2.Page.LatestID != res2.Revision.ID {
		t.Fatalf("overwrite result = %+v", res2)
	}
	if v2.ID <= v.ID || v2.PageID != v.PageID || v2.SHA256 != sha2 || v2.Size != int64(len(two)) || !v2.Time.Equal(at(2)) {
		t.Fatalf("new version = %+v", v2)
	}
	hist := must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: res.Page.ID}))
	if len(hist) != 2 || hist[0].ID != res2.Revision.ID || hist[0].Summary != "overwrite "+title || hist[0].Size != hist[1].Size {
		t.Fatalf("history = %+v", hist)
	}
	rc := must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{}))
	if len(rc) != 2 || rc[0].Kind != wiki.ChangeEdit || rc[0].RevID != res2.Revision.ID || rc[0].OldRevID != res.Revision.ID ||
		rc[0].Summary != "overwrite "+title || rc[1].Kind != wiki.ChangeNew {
		t.Fatalf("recent changes = %+v", rc)
	}
	if got := logActions(must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Target: title}))); got != "overwrite,upload" {
		t.Fatalf("log of %s = %s", title, got)
	}

	// A revert makes an older content current again, as a new version.
	res3, v3 := saveFile(t, s, upload(title, "A cat on a mat.", sha1, len(one), wiki.UploadRevert, res2.Revision.ID, 3))
	if v3.SHA256 != sha1 || v3.ID <= v2.ID || res3.Revision.ParentID != res2.Revision.ID {
		t.Fatalf("revert: %+v, %+v", res3, v3)
	}
	if vs := must[[]wiki.FileVersion](t)(s.FileVersions(ctx, title)); !reflect.DeepEqual(vs, []wiki.FileVersion{v3, v2, v}) {
		t.Fatalf("versions = %v, want %v", versionIDs(vs), []int64{v3.ID, v2.ID, v.ID})
	}
	if cur := must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, []wiki.Title{title})); !reflect.DeepEqual(cur[title], v3) {
		t.Fatalf("current = %+v", cur)
	}
	if got := logActions(must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{Type: wiki.LogUpload}))); got != "revert,overwrite,upload" {
		t.Fatalf("upload log = %s", got)
	}
	if n := len(must[[]wiki.Revision](t)(s.History(ctx, wiki.HistoryQuery{PageID: res.Page.ID}))); n != 3 {
		t.Fatalf("%d revisions after the revert, want 3", n)
	}

	t.Run("a failed upload stores nothing", func(t *testing.T) {
		logBefore := len(must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{})))
		missing := shaOf([]byte("not stored"))
		_, _, err := s.SaveFile(ctx, upload("File:Dog.png", "A dog.", missing, 10, wiki.UploadNew, 0, 4))
		wantErr(t, err, wiki.ErrNotFound)
		if _, err := s.FindPage(ctx, "File:Dog.png"); !errors.Is(err, wiki.ErrNotFound) {
			t.Errorf("the page of an upload without its blob: %v", err)
		}
		// A stale base: a conflict, and no version.
		_, _, err = s.SaveFile(ctx, upload(title, "A cat on a mat.", sha2, len(two), wiki.UploadOverwrite, res.Revision.ID, 4))
		wantErr(t, err, wiki.ErrConflict)
		_, _, err = s.SaveFile(ctx, upload(title, "Again", sha2, len(two), wiki.UploadNew, 0, 4))
		wantErr(t, err, wiki.ErrExists)
		// A size other than the blob's.
		if _, _, err := s.SaveFile(ctx, upload("File:Dog.png", "A dog.", sha2, len(two)+1, wiki.UploadNew, 0, 4)); err == nil {
			t.Error("a version of another size than its blob's was saved")
		}
		for name, req := range map[string]wiki.UploadRequest{
			"not a File: page":  upload("Cat.png", "x", sha1, len(one), wiki.UploadNew, 0, 4),
			"an unknown action": upload("File:Dog.png", "x", sha1, len(one), "replace", 0, 4),
			"a bad hash":        upload("File:Dog.png", "x", "xyz", len(one), wiki.UploadNew, 0, 4),
		} {
			if _, _, err := s.SaveFile(ctx, req); wiki.KindOf(err) != wiki.KindInvalid {
				t.Errorf("%s: %v, want KindInvalid", name, err)
			}
		}
		if vs := must[[]wiki.FileVersion](t)(s.FileVersions(ctx, title)); len(vs) != 3 {
			t.Errorf("%d versions, want 3", len(vs))
		}
		if n := len(must[[]wiki.LogEntry](t)(s.Log(ctx, wiki.LogQuery{}))); n != logBefore {
			t.Errorf("%d log entries, want %d", n, logBefore)
		}
		if _, err := s.FindPage(ctx, "File:Dog.png"); !errors.Is(err, wiki.ErrNotFound) {
			t.Errorf("the page of a failed upload: %v", err)
		}
	})
}

func testCurrentFiles(t *testing.T, s wiki.Store) {
	_, live := uploadNew(t, s, "File:Live.png", []byte("live"), 1)
	_, gone := uploadNew(t, s, "File:Gone.png", []byte("gone"), 1)
	create(t, s, "File:Plain.png", "a File: page without an upload")
	create(t, s, "Live.png", "a page of another namespace")
	if err := s.DeletePage(ctx, "File:Gone.png", 2, "Admin", "copyright", at(2)); err != nil {
		t.Fatal(err)
	}
	all := []wiki.Title{"File:Live.png", "File:Gone.png", "File:Plain.png", "File:Missing.png", "Live.png"}
	cur := must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, all))
	if len(cur) != 1 || !reflect.DeepEqual(cur["File:Live.png"], live) {
		t.Fatalf("current files = %+v", cur)
	}
	if cur := must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, nil)); len(cur) != 0 {
		t.Fatalf("current files of none = %+v", cur)
	}
	must[wiki.Page](t)(s.UndeletePage(ctx, "File:Gone.png", 2, "Admin", "licensed after all", at(3)))
	cur = must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, all))
	if len(cur) != 2 || !reflect.DeepEqual(cur["File:Gone.png"], gone) {
		t.Fatalf("current files after the undelete = %+v", cur)
	}
}

func testFileVersions(t *testing.T, s wiki.Store) {
	const title = "File:V.png"
	a, b := []byte("content a"), []byte("content b")
	res, va := uploadNew(t, s, title, a, 1)
	shaA, shaB := va.SHA256, putBlob(t, s, b)
	res2, vb := saveFile(t, s, upload(title, "About "+title, shaB, len(b), wiki.UploadOverwrite, res.Revision.ID, 2))
	_, va2 := saveFile(t, s, upload(title, "About "+title, shaA, len(a), wiki.UploadRevert, res2.Revision.ID, 3))
	if vs := must[[]wiki.FileVersion](t)(s.FileVersions(ctx, title)); !reflect.DeepEqual(versionIDs(vs), []int64{va2.ID, vb.ID, va.ID}) {
		t.Fatalf("versions = %v", versionIDs(vs))
	}
	find := func(title wiki.Title, sha string, wantDeleted bool) wiki.FileVersion {
		t.Helper()
		v, deleted, err := s.FindFileVersion(ctx, title, sha)
		if err != nil || deleted != wantDeleted {
			t.Fatalf("find %s of %s: deleted %v, %v", sha[:8], title, deleted, err)
		}
		return v
	}
	if v := find(title, shaA, false); !reflect.DeepEqual(v, va2) {
		t.Fatalf("version with content a = %+v, want the newest, %+v", v, va2)
	}
	if v := find(title, shaB, false); !reflect.DeepEqual(v, vb) {
		t.Fatalf("version with content b = %+v", v)
	}
	other := putBlob(t, s, []byte("content c"))
	uploadNew(t, s, "File:Other.png", []byte("content c"), 4)
	for _, c := range []struct {
		title wiki.Title
		sha   string
	}{{title, other}, {"File:Other.png", shaA}, {"File:None.png", shaA}, {title, "not-a-hash"}, {title, strings.ToUpper(shaA)}} {
		if _, _, err := s.FindFileVersion(ctx, c.title, c.sha); !errors.Is(err, wiki.ErrNotFound) {
			t.Errorf("find %q of %s: %v, want ErrNotFound", c.sha, c.title, err)
		}
	}

	t.Run("a deleted file keeps its versions, hidden and reported deleted", func(t *testing.T) {
		if err := s.DeletePage(ctx, title, 2, "Admin", "gone", at(5)); err != nil {
			t.Fatal(err)
		}
		if v := find(title, shaA, true); v.ID != va2.ID || !v.Hidden {
			t.Fatalf("version = %+v", v)
		}
		if got := hiddenOf(must[[]wiki.FileVersion](t)(s.FileVersions(ctx, title))); got != "hidden,hidden,hidden" {
			t.Fatalf("versions of the deleted file: %s", got)
		}
		must[wiki.Page](t)(s.UndeletePage(ctx, title, 2, "Admin", "back", at(6)))
		if v := find(title, shaA, false); v.Hidden {
			t.Fatalf("undeleted version = %+v", v)
		}
		if got := hiddenOf(must[[]wiki.FileVersion](t)(s.FileVersions(ctx, title))); got != "shown,shown,shown" {
			t.Fatalf("versions of the undeleted file: %s", got)
		}
	})
	t.Run("a move takes the versions along, and one onto a deleted file absorbs its versions, hidden", func(t *testing.T) {
		_, vx := uploadNew(t, s, "File:X.png", []byte("content x"), 7)
		if err := s.DeletePage(ctx, "File:X.png", 2, "Admin", "gone", at(8)); err != nil {
			t.Fatal(err)
		}
		must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: title, To: "File:W.png", Reason: "rename", UserID: 2, UserName: "Admin",
			LeaveRedirect: true, RedirectText: "#REDIRECT [[File:W.png]]", RedirectLinks: wiki.LinkSet{Redirect: "File:W.png"}, Time: at(9), Group: wiki.GroupAdmin}))
		if vs := must[[]wiki.FileVersion](t)(s.FileVersions(ctx, title)); len(vs) != 0 {
			t.Fatalf("the redirect left behind has versions %v", versionIDs(vs))
		}
		if v := find("File:W.png", shaA, false); v.ID != va2.ID || v.Title != "File:W.png" {
			t.Fatalf("moved version = %+v", v)
		}
		must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "File:W.png", To: "File:X.png", Reason: "again", UserID: 2, UserName: "Admin",
			Time: at(10), Group: wiki.GroupAdmin}))
		vs := must[[]wiki.FileVersion](t)(s.FileVersions(ctx, "File:X.png"))
		if !reflect.DeepEqual(versionIDs(vs), []int64{vx.ID, va2.ID, vb.ID, va.ID}) || vs[0].Title != "File:X.png" {
			t.Fatalf("versions after the move onto a deleted file = %v", versionIDs(vs))
		}
		// The absorbed page's version, the newest, stays hidden: the
		// moved page's newest is current.
		if got := hiddenOf(vs); got != "hidden,shown,shown,shown" {
			t.Fatalf("versions after the move onto a deleted file: %s", got)
		}
		if cur := must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, []wiki.Title{"File:X.png"})); cur["File:X.png"].ID != va2.ID {
			t.Fatalf("current = %+v", cur)
		}
		find("File:X.png", vx.SHA256, true)
		// An undelete at the new title shows it again, as it restores the
		// absorbed revisions: the newest version is current.
		must[wiki.Page](t)(s.UndeletePage(ctx, "File:X.png", 2, "Admin", "back", at(11)))
		if cur := must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, []wiki.Title{"File:X.png"})); cur["File:X.png"].ID != vx.ID {
			t.Fatalf("current after the undelete = %+v", cur)
		}
		find("File:X.png", vx.SHA256, false)
	})
}

// hiddenOf lists, newest first, whether each version is hidden.
func hiddenOf(vs []wiki.FileVersion) string {
	var out []string
	for _, v := range vs {
		out = append(out, map[bool]string{false: "shown", true: "hidden"}[v.Hidden])
	}
	return strings.Join(out, ",")
}

func testHiddenFiles(t *testing.T, s wiki.Store) {
	const title = "File:H.png"
	a, b, c := []byte("hidden a"), []byte("hidden b"), []byte("after the deletion")
	res, va := uploadNew(t, s, title, a, 1)
	shaB := putBlob(t, s, b)
	_, vb := saveFile(t, s, upload(title, "About "+title, shaB, len(b), wiki.UploadOverwrite, res.Revision.ID, 2))
	current := func() map[wiki.Title]wiki.FileVersion {
		t.Helper()
		return must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, []wiki.Title{title}))
	}
	// want checks what FindFileVersion answers for each content, by the
	// ID of the version it finds and whether that is deleted.
	type found struct {
		id      int64
		deleted bool
	}
	want := func(what string, cases map[string]found) {
		t.Helper()
		for sha, w := range cases {
			v, deleted, err := s.FindFileVersion(ctx, title, sha)
			if err != nil || v.ID != w.id || deleted != w.deleted {
				t.Errorf("%s: find %s: version %d, deleted %v, %v; want version %d, deleted %v", what, sha[:8], v.ID, deleted, err, w.id, w.deleted)
			}
		}
	}
	versions := func(what, wantHidden string, ids ...int64) {
		t.Helper()
		vs := must[[]wiki.FileVersion](t)(s.FileVersions(ctx, title))
		if got := hiddenOf(vs); got != wantHidden || !reflect.DeepEqual(versionIDs(vs), ids) {
			t.Errorf("%s: versions %v %s, want %v %s", what, versionIDs(vs), got, ids, wantHidden)
		}
	}

	if err := s.DeletePage(ctx, title, 2, "Admin", "copyright", at(3)); err != nil {
		t.Fatal(err)
	}
	want("deleted", map[string]found{va.SHA256: {va.ID, true}, vb.SHA256: {vb.ID, true}})
	if cur := current(); len(cur) != 0 {
		t.Errorf("deleted: current files = %+v", cur)
	}
	versions("deleted", "hidden,hidden", vb.ID, va.ID)

	// Anyone may create the page again, as text: its old versions stay
	// hidden, as its old revisions do, and it has no file.
	recreated := create(t, s, title, "Not a file any more")
	want("created again", map[string]found{va.SHA256: {va.ID, true}, vb.SHA256: {vb.ID, true}})
	if cur := current(); len(cur) != 0 {
		t.Errorf("created again: current files = %+v", cur)
	}
	versions("created again", "hidden,hidden", vb.ID, va.ID)

	// A new upload is visible and current; the old versions stay hidden.
	shaC := putBlob(t, s, c)
	res3, vc := saveFile(t, s, upload(title, "Not a file any more", shaC, len(c), wiki.UploadNew, recreated.Revision.ID, 4))
	if vc.Hidden {
		t.Fatalf("new version = %+v", vc)
	}
	if cur := current(); !reflect.DeepEqual(cur[title], vc) {
		t.Errorf("after an upload: current = %+v, want %+v", cur, vc)
	}
	want("after an upload", map[string]found{va.SHA256: {va.ID, true}, vb.SHA256: {vb.ID, true}, shaC: {vc.ID, false}})
	versions("after an upload", "shown,hidden,hidden", vc.ID, vb.ID, va.ID)

	// The same bytes as a hidden version, uploaded again: a visible
	// version, which a media URL of those bytes finds.
	_, va2 := saveFile(t, s, upload(title, "Not a file any more", va.SHA256, len(a), wiki.UploadOverwrite, res3.Revision.ID, 5))
	want("after the hidden bytes are uploaded again", map[string]found{va.SHA256: {va2.ID, false}, vb.SHA256: {vb.ID, true}})
	versions("after the hidden bytes are uploaded again", "shown,shown,hidden,hidden", va2.ID, vc.ID, vb.ID, va.ID)

	// An undelete shows the old versions again; the newest is current.
	must[wiki.Page](t)(s.UndeletePage(ctx, title, 2, "Admin", "licensed after all", at(6)))
	want("undeleted", map[string]found{va.SHA256: {va2.ID, false}, vb.SHA256: {vb.ID, false}, shaC: {vc.ID, false}})
	versions("undeleted", "shown,shown,shown,shown", va2.ID, vc.ID, vb.ID, va.ID)
	if cur := current(); cur[title].ID != va2.ID {
		t.Errorf("undeleted: current = %+v", cur)
	}
	if _, err := s.UndeletePage(ctx, title, 2, "Admin", "again", at(7)); !errors.Is(err, wiki.ErrNotFound) {
		t.Errorf("an undelete with nothing left to restore: %v, want ErrNotFound", err)
	}

	t.Run("a hidden version newer than a visible one with the same bytes is found second", func(t *testing.T) {
		// File:Dst.png had the bytes of File:Src.png's version (and
		// others) when it was deleted; Src moved onto it absorbs them,
		// hidden, with IDs above Src's own.
		p, q := []byte("moved p"), []byte("absorbed q")
		_, vs := uploadNew(t, s, "File:Src.png", p, 10)
		res, vd1 := uploadNew(t, s, "File:Dst.png", p, 11)
		shaQ := putBlob(t, s, q)
		_, vd2 := saveFile(t, s, upload("File:Dst.png", "About File:Dst.png", shaQ, len(q), wiki.UploadOverwrite, res.Revision.ID, 12))
		if err := s.DeletePage(ctx, "File:Dst.png", 2, "Admin", "gone", at(13)); err != nil {
			t.Fatal(err)
		}
		must[wiki.Page](t)(s.MovePage(ctx, wiki.MoveRequest{From: "File:Src.png", To: "File:Dst.png", Reason: "rename",
			UserID: 2, UserName: "Admin", Time: at(14), Group: wiki.GroupAdmin}))
		dst := wiki.Title("File:Dst.png")
		find := func(sha string, wantID int64, wantDeleted bool) {
			t.Helper()
			v, deleted, err := s.FindFileVersion(ctx, dst, sha)
			if err != nil || v.ID != wantID || deleted != wantDeleted || v.Title != dst {
				t.Errorf("find %s: %+v, deleted %v, %v; want version %d, deleted %v", sha[:8], v, deleted, err, wantID, wantDeleted)
			}
		}
		find(vs.SHA256, vs.ID, false)
		find(shaQ, vd2.ID, true)
		if cur := must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, []wiki.Title{dst})); cur[dst].ID != vs.ID {
			t.Errorf("current = %+v, want the moved page's version %d", cur, vs.ID)
		}
		must[wiki.Page](t)(s.UndeletePage(ctx, dst, 2, "Admin", "back", at(15)))
		find(vs.SHA256, vd1.ID, false)
		find(shaQ, vd2.ID, false)
		if cur := must[map[wiki.Title]wiki.FileVersion](t)(s.CurrentFiles(ctx, []wiki.Title{dst})); cur[dst].ID != vd2.ID {
			t.Errorf("current after the undelete = %+v, want the newest, %d", cur, vd2.ID)
		}
	})
}

func testFileUsage(t *testing.T, s wiki.Store) {
	const cat = "File:Cat.png"
	shows := wiki.LinkSet{Files: []wiki.Title{cat}}
	// Saved in this order, so that IDs and titles run apart.
	save(t, s, "Delta", 0, "shows", shows)
	save(t, s, "Alpha", 0, "shows", wiki.LinkSet{Files: []wiki.Title{cat, "File:Dog.png"}, Links: []wiki.Title{"Elsewhere"}})
	save(t, s, "Gamma", 0, "shows", shows)
	save(t, s, "Beta", 0, "shows", shows)
	save(t, s, "Linker", 0, "links to the file page", wiki.LinkSet{Links: []wiki.Title{cat}})
	save(t, s, "Dogs", 0, "shows another", wiki.LinkSet{Files: []wiki.Title{"File:Dog.png"}})
	if err := s.DeletePage(ctx, "Gamma", 2, "Admin", "gone", at(2)); err != nil {
		t.Fatal(err)
	}
	usage := func(q wiki.ListQuery) string {
		t.Helper()
		return titles(must[[]wiki.Page](t)(s.FileUsage(ctx, cat, q)))
	}
	for _, c := range []struct {
		name string
		q    wiki.ListQuery
		want string
	}{
		{"all, by title", wiki.ListQuery{}, "Alpha,Beta,Delta"},
		{"a page from a title on", wiki.ListQuery{From: "B", Limit: 1}, "Beta"},
		{"a page after a title", wiki.ListQuery{After: "Alpha", Limit: 1}, "Beta"},
		{"a prefix", wiki.ListQuery{Prefix: "D"}, "Delta"},
		{"another namespace", wiki.ListQuery{Namespaces: []string{wiki.NSTalk}}, ""},
	} {
		if got := usage(c.q); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := titles(must[[]wiki.Page](t)(s.FileUsage(ctx, "File:Dog.png", wiki.ListQuery{}))); got != "Alpha,Dogs" {
		t.Errorf("pages showing File:Dog.png: %s", got)
	}
	alpha := must[wiki.Page](t)(s.FindPage(ctx, "Alpha"))
	if fs := must[[]wiki.Title](t)(s.PageFiles(ctx, alpha.ID)); len(fs) != 2 || fs[0] != cat || fs[1] != "File:Dog.png" {
		t.Errorf("the files Alpha shows: %v", fs)
	}
	if got := titles(must[[]wiki.Page](t)(s.Backlinks(ctx, cat, wiki.ListQuery{}))); got != "Linker" {
		t.Errorf("backlinks of the file page: %s, want the wiki link only", got)
	}
	var walked []string
	for after := int64(0); ; {
		ps := must[[]wiki.Page](t)(s.Dependents(ctx, cat, wiki.FileUse, after, 2))
		if len(ps) == 0 {
			break
		}
		walked = append(walked, titles(ps))
		after = ps[len(ps)-1].ID
	}
	if got := strings.Join(walked, "|"); got != "Delta,Alpha|Beta" {
		t.Errorf("dependents by ID in batches of 2: %s", got)
	}
	if got := titles(must[[]wiki.Page](t)(s.Dependents(ctx, cat, wiki.LinkUse, 0, 10))); got != "Linker" {
		t.Errorf("link dependents: %s", got)
	}
	// An edit that no longer shows the file drops its row.
	d := must[wiki.Page](t)(s.FindPage(ctx, "Delta"))
	save(t, s, "Delta", d.LatestID, "shows nothing", wiki.LinkSet{})
	if got := usage(wiki.ListQuery{}); got != "Alpha,Beta" {
		t.Errorf("after an edit: %s", got)
	}
	// So do imports.
	must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{{Title: "Epsilon", Text: "shows", UserName: "Importer", Links: shows, Time: at(3)}}))
	if got := usage(wiki.ListQuery{}); got != "Alpha,Beta,Epsilon" {
		t.Errorf("after an import: %s", got)
	}
	// An import keeps the job about the pages showing a file when a page
	// of its batch shows it, and drops it when no page does.
	before := jobCount(t, s)
	must[[]wiki.SaveResult](t)(s.ImportPages(ctx, []wiki.SaveRequest{
		{Title: "Zeta", Text: "shows", UserName: "Importer", Links: wiki.LinkSet{Files: []wiki.Title{"File:Fresh.png"}}, Time: at(4)},
		{Title: "File:Fresh.png", Text: "a file page", UserName: "Importer", Time: at(4),
			Jobs: []wiki.JobSpec{spec(wiki.JobFileUses, `{"title":"File:Fresh.png"}`)}},
		{Title: "File:Unseen.png", Text: "a file page", UserName: "Importer", Time: at(4),
			Jobs: []wiki.JobSpec{spec(wiki.JobFileUses, `{"title":"File:Unseen.png"}`)}},
	}))
	if n := jobCount(t, s) - before; n != 1 {
		t.Errorf("the import queued %d jobs, want 1", n)
	}
}

func testThumbnails(t *testing.T, s wiki.Store) {
	src := putBlob(t, s, []byte("the original picture"))
	small, other := shaOf([]byte("a thumbnail")), putBlob(t, s, []byte("another thumbnail"))
	if _, err := s.FindThumbnail(ctx, src, 220); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("find before any: %v", err)
	}
	th := wiki.Thumbnail{Source: src, Width: 220, SHA256: small, MIME: "image/png", Height: 165}
	if err := s.SaveThumbnail(ctx, th); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("save with its blob missing: %v, want ErrNotFound", err)
	}
	if err := s.SaveThumbnail(ctx, wiki.Thumbnail{Source: shaOf([]byte("no original")), Width: 220, SHA256: other, MIME: "image/png", Height: 1}); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("save with its source missing: %v, want ErrNotFound", err)
	}
	if _, err := s.FindThumbnail(ctx, src, 220); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("find after failed saves: %v", err)
	}
	putBlob(t, s, []byte("a thumbnail"))
	if err := s.SaveThumbnail(ctx, th); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveThumbnail(ctx, th); err != nil {
		t.Fatalf("saved again: %v", err)
	}
	// Another made meanwhile (another node's): the first stays.
	if err := s.SaveThumbnail(ctx, wiki.Thumbnail{Source: src, Width: 220, SHA256: other, MIME: "image/jpeg", Height: 160}); err != nil {
		t.Fatal(err)
	}
	if got := must[wiki.Thumbnail](t)(s.FindThumbnail(ctx, src, 220)); got != th {
		t.Fatalf("thumbnail = %+v, want %+v", got, th)
	}
	wider := wiki.Thumbnail{Source: src, Width: 440, SHA256: other, MIME: "image/png", Height: 330}
	if err := s.SaveThumbnail(ctx, wider); err != nil {
		t.Fatal(err)
	}
	if got := must[wiki.Thumbnail](t)(s.FindThumbnail(ctx, src, 440)); got != wider {
		t.Fatalf("wider thumbnail = %+v", got)
	}
	if _, err := s.FindThumbnail(ctx, "not-a-hash", 220); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("find of a bad hash: %v", err)
	}
}
