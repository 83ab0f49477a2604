package web_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

var unreadRE = regexp.MustCompile(`class="notifications unread">Notifications <span class="count" aria-label="(\d+) unread">`)

// unread reads the user bar's count of unread notifications (0: none shown).
func unread(t *testing.T, body string) string {
	t.Helper()
	if m := unreadRE.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	if !strings.Contains(body, `class="notifications">Notifications</a>`) {
		t.Fatalf("no notifications link in the user bar")
	}
	return "0"
}

func TestNotifications(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Ayla", wiki.GroupUser)
	ayla := w.Login(t, "Ayla", apw)
	_, bpw := w.CreateUser(t, "Bo", wiki.GroupUser)
	bo := w.Login(t, "Bo", bpw)
	ayla.Edit("Reading room", "A page.")
	get(t, w.Client(t), "/wiki/Reading_room") // cached: Ayla's views are spliced

	t.Run("an edit of one's own talk page tells no one", func(t *testing.T) {
		ayla.Edit("User talk:Ayla", "My notes.")
		if n := unread(t, get(t, ayla, "/wiki/Reading_room").Body); n != "0" {
			t.Fatalf("unread = %s", n)
		}
	})
	t.Run("someone else's message on one's talk page shows in the user bar", func(t *testing.T) {
		bo.Edit("User talk:Ayla", "My notes.\n\nHello Ayla! [[User:Bo|Bo]] ([[User talk:Bo|talk]])")
		res := get(t, ayla, "/wiki/Reading_room")
		if xcache(res) != "SPLICE" || unread(t, res.Body) != "1" {
			t.Fatalf("X-Cache %q, unread %s", xcache(res), unread(t, res.Body))
		}
		if n := unread(t, get(t, bo, "/wiki/Reading_room").Body); n != "0" {
			t.Errorf("Bo's own count = %s", n)
		}
	})
	t.Run("a signed comment linking a user mentions them; an unsigned one does not", func(t *testing.T) {
		bo.Edit("Talk:Reading room", "Unsigned note for [[User:Ayla]].")
		if n := unread(t, get(t, ayla, "/wiki/Reading_room").Body); n != "1" {
			t.Fatalf("after an unsigned mention: unread %s", n)
		}
		bo.Edit("Talk:Reading room", "Unsigned note for [[User:Ayla]].\n\n[[User:Ayla]], what do you think? [[User:Bo|Bo]] 12:00, 1 May 2026 (UTC)")
		if n := unread(t, get(t, ayla, "/wiki/Reading_room").Body); n != "2" {
			t.Fatalf("after a signed mention: unread %s", n)
		}
	})
	t.Run("the list shows both, and reading it clears the count", func(t *testing.T) {
		res := get(t, ayla, "/wiki/Special:Notifications")
		if !strings.Contains(res.Body, "left a message on") || !strings.Contains(res.Body, "mentioned you on") ||
			strings.Count(res.Body, `<li class="unread">`) != 2 {
			t.Fatalf("Special:Notifications:\n%s", res.Body)
		}
		// The page that marks them read shows the user bar as it is now.
		if n := unread(t, res.Body); n != "0" {
			t.Errorf("the user bar of Special:Notifications still counts %s unread", n)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") && !strings.Contains(cc, "private") {
			t.Errorf("Cache-Control %q", cc)
		}
		if n := unread(t, get(t, ayla, "/wiki/Reading_room").Body); n != "0" {
			t.Fatalf("after reading: unread %s", n)
		}
		if again := get(t, ayla, "/wiki/Special:Notifications"); strings.Contains(again.Body, `class="unread"`) {
			t.Errorf("read notifications still marked new")
		}
	})
	t.Run("anonymous readers are sent to log in", func(t *testing.T) {
		if res := get(t, w.Client(t), "/wiki/Special:Notifications"); res.StatusCode != 302 {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}
