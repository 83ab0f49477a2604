package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// changeTitles lists the titles of changes, in order.
func changeTitles(cs []wiki.Change) string {
	var b []string
	for _, c := range cs {
		b = append(b, string(c.Title))
	}
	return strings.Join(b, ",")
}

func watchTitles(ws []wiki.Watch) string {
	var b []string
	for _, w := range ws {
		b = append(b, string(w.Title))
	}
	return strings.Join(b, ",")
}

// edit saves a change to title by user at minute n.
func edit(t *testing.T, s wiki.Store, title, user string, minor bool, n int) {
	t.Helper()
	p, err := s.FindPage(ctx, wiki.MustTitle(title))
	base := int64(0)
	if err == nil && !p.Deleted {
		base = p.LatestID
	}
	if _, err := s.SavePage(ctx, wiki.SaveRequest{Title: wiki.MustTitle(title), Text: fmt.Sprintf("%s at %d", title, n),
		UserName: user, Summary: "s", Minor: minor, BaseRevID: base, Time: at(n)}); err != nil {
		t.Fatalf("save %q: %v", title, err)
	}
}

func testWatchlist(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Wren", PasswordHash: "h"}))
	other := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Otto", PasswordHash: "h"}))
	now := at(100)
	if err := s.WatchTitles(ctx, u.ID, wiki.WatchPair("Foo"), time.Time{}, now); err != nil {
		t.Fatal(err)
	}
	if err := s.WatchTitles(ctx, u.ID, wiki.WatchPair("Bar"), now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if err := s.WatchTitles(ctx, other.ID, []wiki.Title{"Foo"}, time.Time{}, now); err != nil {
		t.Fatal(err)
	}
	t.Run("lists by title, skipping expired watches", func(t *testing.T) {
		ws := must[[]wiki.Watch](t)(s.Watchlist(ctx, u.ID, "", 10, now))
		if got := watchTitles(ws); got != "Bar,Foo,Talk:Bar,Talk:Foo" {
			t.Fatalf("watchlist = %s", got)
		}
		if !ws[0].Expires.Equal(now.Add(time.Hour)) || !ws[1].Expires.IsZero() {
			t.Fatalf("expiries = %+v", ws)
		}
		if got := watchTitles(must[[]wiki.Watch](t)(s.Watchlist(ctx, u.ID, "Foo", 1, now))); got != "Foo" {
			t.Fatalf("from Foo, 1 = %s", got)
		}
		if got := watchTitles(must[[]wiki.Watch](t)(s.Watchlist(ctx, u.ID, "", 10, now.Add(2*time.Hour)))); got != "Foo,Talk:Foo" {
			t.Fatalf("watchlist once Bar expired = %s", got)
		}
	})
	t.Run("watching again sets the expiry", func(t *testing.T) {
		if err := s.WatchTitles(ctx, u.ID, []wiki.Title{"Bar"}, time.Time{}, now); err != nil {
			t.Fatal(err)
		}
		ws := must[[]wiki.Watch](t)(s.Watchlist(ctx, u.ID, "", 1, now.Add(2*time.Hour)))
		if watchTitles(ws) != "Bar" || !ws[0].Expires.IsZero() {
			t.Fatalf("Bar = %+v", ws)
		}
	})
	t.Run("watchers are counted", func(t *testing.T) {
		if n := must[int](t)(s.CountWatchers(ctx, "Foo", now)); n != 2 {
			t.Fatalf("watchers of Foo = %d", n)
		}
		if n := must[int](t)(s.CountWatchers(ctx, "Talk:Bar", now.Add(2*time.Hour))); n != 0 {
			t.Fatalf("watchers of Talk:Bar once expired = %d", n)
		}
	})
	t.Run("watched changes are filtered like recent changes", func(t *testing.T) {
		edit(t, s, "Foo", "Otto", false, 1)      // new
		edit(t, s, "Baz", "Otto", false, 2)      // not watched
		edit(t, s, "Talk:Foo", "Otto", false, 3) // new
		edit(t, s, "Foo", "Wren", false, 4)
		edit(t, s, "Foo", "Otto", true, 5) // minor
		edit(t, s, "Bar", "Otto", false, 6)
		all := must[[]wiki.Change](t)(s.WatchedChanges(ctx, u.ID, wiki.ChangeQuery{}, now))
		if got := changeTitles(all); got != "Bar,Foo,Foo,Talk:Foo,Foo" {
			t.Fatalf("watched changes = %s", got)
		}
		for _, tc := range []struct {
			name string
			q    wiki.ChangeQuery
			want string
		}{
			{"page", wiki.ChangeQuery{Limit: 2}, "Bar,Foo"},
			{"cursor", wiki.ChangeQuery{Before: all[1].ID, Limit: 2}, "Foo,Talk:Foo"},
			{"hide own", wiki.ChangeQuery{HideUser: "Wren"}, "Bar,Foo,Talk:Foo,Foo"},
			{"hide minor", wiki.ChangeQuery{HideMinor: true}, "Bar,Foo,Talk:Foo,Foo"},
			{"only new", wiki.ChangeQuery{OnlyNew: true}, "Bar,Talk:Foo,Foo"},
			{"since", wiki.ChangeQuery{Since: at(4)}, "Bar,Foo,Foo"},
			{"namespace", wiki.ChangeQuery{Namespaces: []string{"Talk"}}, "Talk:Foo"},
		} {
			if got := changeTitles(must[[]wiki.Change](t)(s.WatchedChanges(ctx, u.ID, tc.q, now))); got != tc.want {
				t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
			}
		}
		if got := changeTitles(must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{HideUser: "Otto", Since: at(4)}))); got != "Foo" {
			t.Errorf("recent changes without Otto's since minute 4 = %s", got)
		}
		if got := changeTitles(must[[]wiki.Change](t)(s.RecentChanges(ctx, wiki.ChangeQuery{OnlyNew: true, HideMinor: true}))); got != "Bar,Talk:Foo,Baz,Foo" {
			t.Errorf("recent creations = %s", got)
		}
		if got := changeTitles(must[[]wiki.Change](t)(s.WatchedChanges(ctx, other.ID, wiki.ChangeQuery{}, now))); got != "Foo,Foo,Foo" {
			t.Errorf("Otto's watched changes = %s", got)
		}
	})
	t.Run("a move's new titles are watched by the old ones' watchers", func(t *testing.T) {
		if _, err := s.MovePage(ctx, wiki.MoveRequest{From: "Foo", To: "Qux", UserName: "Otto", LeaveRedirect: true,
			RedirectText: "#REDIRECT [[Qux]]", RedirectLinks: wiki.LinkSet{Redirect: "Qux"}, Time: at(7)}); err != nil {
			t.Fatal(err)
		}
		if got := watchTitles(must[[]wiki.Watch](t)(s.Watchlist(ctx, u.ID, "", 10, now))); got != "Bar,Foo,Qux,Talk:Bar,Talk:Foo,Talk:Qux" {
			t.Fatalf("watchlist after the move = %s", got)
		}
		if got := watchTitles(must[[]wiki.Watch](t)(s.Watchlist(ctx, other.ID, "", 10, now))); got != "Foo,Qux" {
			t.Fatalf("Otto's watchlist after the move = %s", got)
		}
	})
	t.Run("unwatching removes the titles given", func(t *testing.T) {
		if err := s.UnwatchTitles(ctx, u.ID, []wiki.Title{"Foo", "Talk:Foo", "Nothing"}); err != nil {
			t.Fatal(err)
		}
		if got := watchTitles(must[[]wiki.Watch](t)(s.Watchlist(ctx, u.ID, "", 10, now))); got != "Bar,Qux,Talk:Bar,Talk:Qux" {
			t.Fatalf("watchlist = %s", got)
		}
	})
	t.Run("a watchlist is bounded", func(t *testing.T) {
		many := make([]wiki.Title, wiki.MaxWatchlist-2)
		for i := range many {
			many[i] = wiki.Title(fmt.Sprintf("Page %05d", i))
		}
		if err := s.WatchTitles(ctx, other.ID, many, time.Time{}, now); err != nil {
			t.Fatal(err)
		}
		// Otto watches Foo, Qux and the many: one more is too many, and
		// changes nothing.
		wantErr(t, s.WatchTitles(ctx, other.ID, []wiki.Title{"One more"}, time.Time{}, now), wiki.ErrWatchlistFull)
		if ws := must[[]wiki.Watch](t)(s.Watchlist(ctx, other.ID, "Page 09997", 10, now)); watchTitles(ws) != "Page 09997,Qux" {
			t.Fatalf("end of the list = %s", watchTitles(ws))
		}
		// Watching what is already on the list is not growing it.
		if err := s.WatchTitles(ctx, other.ID, []wiki.Title{"Foo"}, now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
	})
}

func testNotifications(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Nia", PasswordHash: "h"}))
	other := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Ola", PasswordHash: "h"}))
	ns := []wiki.Notification{
		{UserID: u.ID, Kind: wiki.NotifyTalk, Title: "User talk:Nia", RevID: 7, Agent: "Ola", Time: at(1)},
		{UserID: u.ID, Kind: wiki.NotifyMention, Title: "Talk:Plan", RevID: 9, Agent: "Ola", Time: at(2)},
		{UserID: other.ID, Kind: wiki.NotifyMention, Title: "Talk:Plan", RevID: 9, Agent: "Nia", Time: at(2)},
	}
	if err := s.AddNotifications(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// A job run again stores nothing twice.
	if err := s.AddNotifications(ctx, ns[:2]); err != nil {
		t.Fatal(err)
	}
	// Thanks for one revision from two users are two notifications.
	thanks := []wiki.Notification{
		{UserID: other.ID, Kind: wiki.NotifyThank, Title: "Plan", RevID: 3, Agent: "Nia", Time: at(3)},
		{UserID: other.ID, Kind: wiki.NotifyThank, Title: "Plan", RevID: 3, Agent: "Pip", Time: at(3)},
		{UserID: other.ID, Kind: wiki.NotifyThank, Title: "Plan", RevID: 3, Agent: "Pip", Time: at(4)},
	}
	if err := s.AddNotifications(ctx, thanks); err != nil {
		t.Fatal(err)
	}
	if got := must[[]wiki.Notification](t)(s.Notifications(ctx, other.ID, 0, 10)); len(got) != 3 {
		t.Fatalf("Ola's notifications = %+v, want the mention and two thanks", got)
	}
	got := must[[]wiki.Notification](t)(s.Notifications(ctx, u.ID, 0, 10))
	if len(got) != 2 || got[0].Title != "Talk:Plan" || got[0].Kind != wiki.NotifyMention || got[1].RevID != 7 ||
		got[1].Agent != "Ola" || !got[1].Time.Equal(at(1)) || got[0].Read {
		t.Fatalf("notifications = %+v", got)
	}
	if page := must[[]wiki.Notification](t)(s.Notifications(ctx, u.ID, got[0].ID, 10)); len(page) != 1 || page[0].ID != got[1].ID {
		t.Fatalf("after the first = %+v", page)
	}
	if n := must[int](t)(s.CountUnread(ctx, u.ID)); n != 2 {
		t.Fatalf("unread = %d", n)
	}
	if err := s.MarkNotificationsRead(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if n := must[int](t)(s.CountUnread(ctx, u.ID)); n != 0 {
		t.Fatalf("unread after marking = %d", n)
	}
	if n := must[int](t)(s.CountUnread(ctx, other.ID)); n != 3 {
		t.Fatalf("the other user's unread = %d", n)
	}
	if got := must[[]wiki.Notification](t)(s.Notifications(ctx, u.ID, 0, 10)); !got[0].Read || !got[1].Read {
		t.Fatalf("marked = %+v", got)
	}
}

func testWatchlistToken(t *testing.T, s wiki.Store) {
	u := must[wiki.User](t)(s.CreateUser(ctx, wiki.User{Name: "Tok", PasswordHash: "h"}))
	if h := must[string](t)(s.WatchlistToken(ctx, u.ID)); h != "" {
		t.Fatalf("a new user's token = %q", h)
	}
	if err := s.SetWatchlistToken(ctx, u.ID, "abc123"); err != nil {
		t.Fatal(err)
	}
	if h := must[string](t)(s.WatchlistToken(ctx, u.ID)); h != "abc123" {
		t.Fatalf("token = %q", h)
	}
	if err := s.SetWatchlistToken(ctx, u.ID, ""); err != nil {
		t.Fatal(err)
	}
	if h := must[string](t)(s.WatchlistToken(ctx, u.ID)); h != "" {
		t.Fatalf("revoked token = %q", h)
	}
	wantErr(t, s.SetWatchlistToken(ctx, 9999, "x"), wiki.ErrNotFound)
	_, err := s.WatchlistToken(ctx, 9999)
	wantErr(t, err, wiki.ErrNotFound)
}
