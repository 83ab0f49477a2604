package web

import (
	"testing"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// A session's cached user bar is used only for the user state it was
// drawn with: after the user's epoch moved (a notification), a request
// whose fresh viewer the cache did not keep draws its own bar, and a
// request still holding the old viewer cannot put its bar on the new entry.
func TestUserBarFollowsTheUserState(t *testing.T) {
	now := time.Now()
	c := newSessionCache(func() time.Time { return now })
	old := Viewer{User: wiki.User{ID: 7, Name: "A"}, LoggedIn: true,
		Session: wiki.Session{ID: "s1", UserID: 7, Expires: now.Add(time.Hour)}, State: &userState{unread: 0}}
	c.put(old, c.epoch(7))
	c.setUserBar("s1", []byte("count 0"), old.State)
	if b := c.userBar("s1", old.State); string(b) != "count 0" {
		t.Fatalf("bar = %q", b)
	}
	c.bumpUser(7) // a notification: the entry is stale
	fresh := old
	fresh.State = &userState{epoch: 1, unread: 1}
	if b := c.userBar("s1", fresh.State); b != nil {
		t.Errorf("a fresh viewer got the stale entry's bar %q", b)
	}
	c.put(fresh, c.epoch(7))
	c.setUserBar("s1", []byte("count 0"), old.State) // a slow request with the old viewer
	if b := c.userBar("s1", fresh.State); b != nil {
		t.Errorf("the old viewer's bar was put on the new entry: %q", b)
	}
	c.setUserBar("s1", []byte("count 1"), fresh.State)
	if b := c.userBar("s1", fresh.State); string(b) != "count 1" {
		t.Errorf("bar = %q", b)
	}
}
