package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

var thankLinkRE = regexp.MustCompile(`href="(/wiki/Thanked\?action=thank&amp;rev=\d+)">thank</a>`)

func TestThanks(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Author", wiki.GroupUser)
	author := w.Login(t, "Author", apw)
	_, fpw := w.CreateUser(t, "Fan", wiki.GroupUser)
	fan := w.Login(t, "Fan", fpw)
	author.Edit("Thanked", "A good edit.")

	if m := thankLinkRE.FindStringSubmatch(get(t, author, "/wiki/Thanked?action=history").Body); m != nil {
		t.Fatalf("the author is offered to thank themselves: %s", m[1])
	}
	if rc := get(t, fan, "/wiki/Special:RecentChanges").Body; !thankLinkRE.MatchString(rc) {
		t.Errorf("no thank link on RecentChanges for another user")
	}
	if rc := get(t, w.Client(t), "/wiki/Special:RecentChanges").Body; thankLinkRE.MatchString(rc) {
		t.Errorf("a thank link on the anonymous RecentChanges")
	}
	m := thankLinkRE.FindStringSubmatch(get(t, fan, "/wiki/Thanked?action=history").Body)
	if m == nil {
		t.Fatalf("no thank link on the history for another user")
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	if form := get(t, fan, link); form.StatusCode != http.StatusOK || !strings.Contains(form.Body, "Send thanks") {
		t.Fatalf("GET %s: %d", link, form.StatusCode)
	}
	if res := fan.PostForm(link, url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Errorf("thanks without the form's token: %d", res.StatusCode)
	}
	if res := fan.PostForm(link, url.Values{"csrf": {fan.CSRF(link)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("thank: %d\n%s", res.StatusCode, res.Body)
	}
	res := get(t, author, "/wiki/Special:Notifications")
	if !strings.Contains(res.Body, "<bdi>Fan</bdi></strong> thanked you for your edit of") {
		t.Fatalf("the author's notifications:\n%s", res.Body)
	}
	for _, tc := range []struct {
		who  *apptest.Client
		path string
		want int
	}{
		{author, link, http.StatusBadRequest},                               // one's own edit
		{fan, "/wiki/Thanked?action=thank&rev=999999", http.StatusNotFound}, // no such revision
		{w.Client(t), link, http.StatusUnauthorized},                        // anonymous
		{fan, "/wiki/Other?action=thank&rev=1", http.StatusBadRequest},      // another page's revision
	} {
		if res := get(t, tc.who, tc.path); res.StatusCode != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.path, res.StatusCode, tc.want)
		}
	}
}
