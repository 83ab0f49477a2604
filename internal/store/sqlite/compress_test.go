package sqlite_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

var (
	longText   = strings.Repeat("A wiki page about [[Links]] and words, in English. ", 40)
	koreanText = strings.Repeat("위키는 누구나 편집할 수 있는 웹사이트입니다. ", 30)
)

// noisyText is n printable characters that zstd cannot make smaller.
func noisyText(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(33 + r.IntN(94))
	}
	return string(b)
}

func sha1Of(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// storageClass is SQLite's type of a revision's stored text.
func storageClass(t *testing.T, db *sqlite.DB, revID int64) string {
	t.Helper()
	var typ string
	if err := sqlite.QueryRow(context.Background(), db, `SELECT typeof(text) FROM revisions WHERE id = ?`, []any{revID}, &typ); err != nil {
		t.Fatal(err)
	}
	return typ
}

func save(t *testing.T, db *sqlite.DB, title wiki.Title, text string) wiki.SaveResult {
	t.Helper()
	res, err := db.SavePage(context.Background(), wiki.SaveRequest{Title: title, Text: text, UserName: "U"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readsBack checks that revision id reads as text, and that its sha1 column
// (written with the text) matches what is read.
func readsBack(t *testing.T, db *sqlite.DB, id int64, text string) {
	t.Helper()
	r, err := db.FindRevision(context.Background(), id)
	if err != nil {
		t.Fatalf("find revision %d: %v", id, err)
	}
	if r.Text != text {
		t.Fatalf("revision %d reads %d bytes %.40q…, want %d bytes %.40q…", id, len(r.Text), r.Text, len(text), text)
	}
	if r.SHA1 != sha1Of(r.Text) || r.Size != len(r.Text) {
		t.Fatalf("revision %d: sha1 column %s, size %d; the text read has sha1 %s, %d bytes", id, r.SHA1, r.Size, sha1Of(r.Text), len(r.Text))
	}
}

func TestCompression(t *testing.T) {
	ctx := context.Background()

	t.Run("long texts are stored compressed, short and incompressible ones as is, and all read back", func(t *testing.T) {
		db := sqlitetest.Open(t)
		for _, c := range []struct {
			title wiki.Title
			text  string
			want  string
		}{
			{"Long", longText, "blob"},
			{"Korean", koreanText, "blob"},
			{"Short", "A stub.", "text"},
			{"Just short", strings.Repeat("x", sqlite.MinCompress-1), "text"},
			{"Noise", noisyText(sqlite.MinCompress + 6), "text"},
			{"Empty", "", "text"},
		} {
			res := save(t, db, c.title, c.text)
			if got := storageClass(t, db, res.Revision.ID); got != c.want {
				t.Errorf("%s: stored as %s, want %s", c.title, got, c.want)
			}
			readsBack(t, db, res.Revision.ID, c.text)
		}
	})

	t.Run("a text stored before compression reads back, and null edits, moves and the search index see it", func(t *testing.T) {
		db := sqlitetest.Open(t)
		res := save(t, db, "Old", longText)
		// As written before compression: the text as TEXT.
		if err := sqlite.Exec(ctx, db, `UPDATE revisions SET text = ? WHERE id = ?`, longText, res.Revision.ID); err != nil {
			t.Fatal(err)
		}
		if got := storageClass(t, db, res.Revision.ID); got != "text" {
			t.Fatalf("stored as %s, want text", got)
		}
		readsBack(t, db, res.Revision.ID, longText)
		again, err := db.SavePage(ctx, wiki.SaveRequest{Title: "Old", Text: longText, UserName: "U", BaseRevID: res.Revision.ID})
		if err != nil || again.Revision.ID != res.Revision.ID {
			t.Fatalf("saving the same text made revision %d (%v), want the null edit to keep %d", again.Revision.ID, err, res.Revision.ID)
		}
		p, err := db.MovePage(ctx, wiki.MoveRequest{From: "Old", To: "New", UserName: "U"})
		if err != nil {
			t.Fatal(err)
		}
		readsBack(t, db, p.LatestID, longText)
		var indexed string
		if err := db.UpdateSearchIndex(ctx, p.ID, func(src string, _ wiki.ContentModel) string { indexed = src; return src }); err != nil {
			t.Fatal(err)
		}
		if indexed != longText {
			t.Fatalf("the search index read %.40q…", indexed)
		}
	})

	t.Run("a corrupt stored text is an error, not a panic", func(t *testing.T) {
		db := sqlitetest.Open(t)
		res := save(t, db, "Victim", longText)
		var frame []byte
		if err := sqlite.QueryRow(ctx, db, `SELECT text FROM revisions WHERE id = ?`, []any{res.Revision.ID}, &frame); err != nil {
			t.Fatal(err)
		}
		flipped := append([]byte(nil), frame...)
		flipped[len(flipped)/2] ^= 0x55
		for _, c := range []struct {
			name  string
			value []byte
		}{
			{"not a zstd frame", []byte("this is no zstd frame at all")},
			{"a frame cut short", frame[:len(frame)-7]},
			{"a frame with a byte changed", flipped},
			{"a frame that claims a terabyte", frameClaiming(1 << 40)},
			{"a frame that claims more than any page", frameClaiming(64 << 20)},
			{"an empty blob", []byte{}},
		} {
			t.Run(c.name, func(t *testing.T) {
				if err := sqlite.Exec(ctx, db, `UPDATE revisions SET text = ? WHERE id = ?`, c.value, res.Revision.ID); err != nil {
					t.Fatal(err)
				}
				r, err := db.FindRevision(ctx, res.Revision.ID)
				if err == nil || errors.Is(err, wiki.ErrNotFound) || !strings.Contains(err.Error(), "corrupt") {
					t.Fatalf("find revision: %+v, %v; want an error about corrupt data", r.Text, err)
				}
				if err := db.UpdateSearchIndex(ctx, res.Page.ID, func(s string, _ wiki.ContentModel) string { return s }); err == nil {
					t.Fatal("the search index read a corrupt text without an error")
				}
				if hist, err := db.History(ctx, wiki.HistoryQuery{PageID: res.Page.ID, Limit: 10}); err != nil || len(hist) != 1 {
					t.Fatalf("history, which reads no text: %d revisions, %v", len(hist), err)
				}
			})
		}
	})

	t.Run("a corrupt stored render is an error, not a panic", func(t *testing.T) {
		db := sqlitetest.Open(t)
		res := save(t, db, "Rendered", "text")
		html := []byte(strings.Repeat("<p>A rendered paragraph with <a href=\"/wiki/X\">a link</a>.</p>\n", 50))
		if err := db.SaveRender(ctx, res.Revision.ID, 1, html); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`UPDATE renders SET data = X'28B52FFD00' WHERE rev_id = ?`,
			`UPDATE renders SET data = randomblob(300) WHERE rev_id = ?`,
			`UPDATE renders SET data = X'' WHERE rev_id = ?`,
			`UPDATE renders SET codec = 9 WHERE rev_id = ?`,
		} {
			if err := sqlite.Exec(ctx, db, q, res.Revision.ID); err != nil {
				t.Fatal(err)
			}
			if data, err := db.FindRender(ctx, res.Revision.ID, 1); err == nil || errors.Is(err, wiki.ErrNotFound) || !strings.Contains(err.Error(), "corrupt") {
				t.Fatalf("after %s: %d bytes, %v; want an error about corrupt data", q, len(data), err)
			}
		}
		if err := db.SaveRender(ctx, res.Revision.ID, 1, html); err != nil {
			t.Fatal(err)
		}
		if data, err := db.FindRender(ctx, res.Revision.ID, 1); err != nil || string(data) != string(html) {
			t.Fatalf("a new render does not replace the corrupt one: %v", err)
		}
	})
}

// frameClaiming is the header of a zstd frame whose content size is n,
// followed by one empty last block: a frame that lies about its size.
func frameClaiming(n uint64) []byte {
	b := []byte{0x28, 0xB5, 0x2F, 0xFD, 0xE0} // magic; single segment, 8-byte content size
	for i := range 8 {
		b = append(b, byte(n>>(8*i)))
	}
	return append(b, 0x01, 0x00, 0x00) // last block, raw, 0 bytes
}
