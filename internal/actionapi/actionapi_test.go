package actionapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/actionapi"
	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// world is a wiki with a user, an administrator and a few pages.
type world struct {
	w                  *apptest.Wiki
	user, admin        wiki.User
	userPass, adminPwd string
	userToken          string // an API token of user
}

func newWorld(t *testing.T, opts ...func(*config.Config)) *world {
	t.Helper()
	w := apptest.New(t, opts...)
	u, pw := w.CreateUser(t, "Alice", wiki.GroupUser)
	a, apw := w.CreateUser(t, "Root", wiki.GroupAdmin)
	secret := auth.NewSecret(32)
	if err := w.App.Store.CreateToken(context.Background(), wiki.Token{ID: auth.HashToken(secret), UserID: u.ID, Name: "bot", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	wd := &world{w: w, user: u, admin: a, userPass: pw, adminPwd: apw, userToken: secret}
	ac := w.Login(t, "Root", apw)
	ac.Edit("Alpha", "Alpha text about apples.\n\n## One\n\nFirst.\n\n[[Beta]] [[Gamma]]\n\n[[Category:Fruit]]")
	ac.Edit("Beta", "Beta text about bananas. [[Alpha]]\n\n[[Category:Fruit]]")
	ac.Edit("Category:Fruit", "Fruits.")
	return wd
}

// api sends one Action API request (GET when form is nil and method is
// GET) and decodes the answer.
func api(t *testing.T, c *apptest.Client, method string, params url.Values) (map[string]any, *apptest.Response) {
	t.Helper()
	if params.Get("format") == "" {
		params.Set("format", "json")
	}
	var res *apptest.Response
	if method == http.MethodGet {
		res = c.Get("/w/api.php?" + params.Encode())
	} else {
		res = c.PostForm("/w/api.php", params)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Body), &out); err != nil {
		t.Fatalf("%s %v: status %d, not JSON: %v\n%s", method, params, res.StatusCode, err, res.Body)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%v: Cache-Control %q, want no-store", params, cc)
	}
	return out, res
}

func errCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func csrf(t *testing.T, c *apptest.Client) string {
	t.Helper()
	out, _ := api(t, c, http.MethodGet, url.Values{"action": {"query"}, "meta": {"tokens"}})
	return dig(out, "query", "tokens", "csrftoken").(string)
}

// dig walks maps and lists: dig(out, "query", "pages", 0, "title").
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// apiLogin logs c in through action=login with the user's API token.
func apiLogin(t *testing.T, wd *world, c *apptest.Client) {
	t.Helper()
	out, _ := api(t, c, http.MethodGet, url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}})
	tok := dig(out, "query", "tokens", "logintoken").(string)
	out, res := api(t, c, http.MethodPost, url.Values{"action": {"login"}, "lgname": {"Alice@bot"}, "lgpassword": {wd.userToken}, "lgtoken": {tok}})
	if dig(out, "login", "result") != "Success" {
		t.Fatalf("login: %v", out)
	}
	if len(res.Header.Values("Set-Cookie")) == 0 {
		t.Fatal("login set no cookie")
	}
}

func TestErrors(t *testing.T) {
	wd := newWorld(t, func(c *config.Config) { c.EditGroup = wiki.GroupUser })
	anon := wd.w.Client(t)
	alice := wd.w.Client(t)
	apiLogin(t, wd, alice)
	other := wd.w.Login(t, "Root", wd.adminPwd)
	aliceToken, otherToken := csrf(t, alice), csrf(t, other)
	cases := []struct {
		name   string
		c      *apptest.Client
		method string
		params url.Values
		code   string
	}{
		{"no action", anon, "GET", url.Values{}, "noaction"},
		{"an unknown action", anon, "GET", url.Values{"action": {"frobnicate"}}, "badvalue"},
		{"another format", anon, "GET", url.Values{"action": {"query"}, "format": {"xml"}}, "badvalue"},
		{"a missing search text", anon, "GET", url.Values{"action": {"query"}, "list": {"search"}}, "missingparam"},
		{"a bad limit", anon, "GET", url.Values{"action": {"query"}, "list": {"allpages"}, "aplimit": {"many"}}, "badinteger"},
		{"titles and pageids together", anon, "GET", url.Values{"action": {"query"}, "titles": {"Alpha"}, "pageids": {"1"}}, "invalidparammix"},
		{"too many titles", anon, "GET", url.Values{"action": {"query"}, "titles": {strings.Repeat("A|", 60) + "B"}}, "toomanyvalues"},
		{"history of two pages", anon, "GET", url.Values{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha|Beta"}, "rvlimit": {"5"}}, "multpages"},
		{"an edit by GET", alice, "GET", url.Values{"action": {"edit"}, "title": {"X"}, "text": {"x"}, "token": {aliceToken}}, "mustbeposted"},
		{"a write without a token", alice, "POST", url.Values{"action": {"edit"}, "title": {"X"}, "text": {"x"}}, "missingparam"},
		{"a write with another session's token", alice, "POST", url.Values{"action": {"edit"}, "title": {"X"}, "text": {"x"}, "token": {otherToken}}, "badtoken"},
		{"a write with a token without its suffix", alice, "POST", url.Values{"action": {"edit"}, "title": {"X"}, "text": {"x"}, "token": {strings.TrimSuffix(aliceToken, `+\`)}}, "badtoken"},
		{"an anonymous write where editing needs an account", anon, "POST", url.Values{"action": {"edit"}, "title": {"X"}, "text": {"x"}, "token": {csrf(t, anon)}}, "permissiondenied"},
		{"an invalid title", alice, "POST", url.Values{"action": {"edit"}, "title": {"Bad[[title"}, "text": {"x"}, "token": {aliceToken}}, "invalidtitle"},
		{"nocreate of a missing page", alice, "POST", url.Values{"action": {"edit"}, "title": {"Nowhere"}, "text": {"x"}, "nocreate": {"1"}, "token": {aliceToken}}, "missingtitle"},
		{"createonly of an existing page", alice, "POST", url.Values{"action": {"edit"}, "title": {"Alpha"}, "text": {"x"}, "createonly": {"1"}, "token": {aliceToken}}, "articleexists"},
		{"a wrong md5", alice, "POST", url.Values{"action": {"edit"}, "title": {"New page"}, "text": {"x"}, "md5": {"00"}, "token": {aliceToken}}, "badmd5"},
		{"an empty page", alice, "POST", url.Values{"action": {"edit"}, "title": {"Empty"}, "text": {" "}, "token": {aliceToken}}, "emptypage"},
		{"a delete by a user", alice, "POST", url.Values{"action": {"delete"}, "title": {"Alpha"}, "token": {aliceToken}}, "permissiondenied"},
		{"a protect by a user", alice, "POST", url.Values{"action": {"protect"}, "title": {"Alpha"}, "protections": {"edit=sysop"}, "token": {aliceToken}}, "permissiondenied"},
		{"a move by an anonymous user", anon, "POST", url.Values{"action": {"move"}, "from": {"Alpha"}, "to": {"Zeta"}, "token": {csrf(t, anon)}}, "permissiondenied"},
		{"a parse of a missing page", anon, "GET", url.Values{"action": {"parse"}, "page": {"Nowhere"}}, "missingtitle"},
		{"a parse of a missing revision", anon, "GET", url.Values{"action": {"parse"}, "oldid": {"99999"}}, "nosuchrevid"},
		{"a token in the query string", alice, "POST", url.Values{"action": {"edit"}, "title": {"X"}, "text": {"x"}}, "mustposttoken"},
		{"an assertion of a user by an anonymous client", anon, "GET", url.Values{"action": {"query"}, "meta": {"userinfo"}, "assert": {"user"}}, "assertuserfailed"},
		{"a bad continuation", anon, "GET", url.Values{"action": {"query"}, "list": {"recentchanges"}, "rccontinue": {"x|y"}, "continue": {"-||"}}, "badcontinue"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out map[string]any
			var res *apptest.Response
			if tc.name == "a token in the query string" {
				res = tc.c.PostForm("/w/api.php?format=json&token="+url.QueryEscape(aliceToken), tc.params)
				_ = json.Unmarshal([]byte(res.Body), &out)
			} else {
				out, res = api(t, tc.c, tc.method, tc.params)
			}
			if got := errCode(out); got != tc.code {
				t.Errorf("code %q, want %q: %s", got, tc.code, res.Body)
			}
			if res.Header.Get("MediaWiki-API-Error") != tc.code {
				t.Errorf("MediaWiki-API-Error %q", res.Header.Get("MediaWiki-API-Error"))
			}
			if info, _ := dig(out, "error", "info").(string); info == "" {
				t.Errorf("no info: %s", res.Body)
			}
		})
	}
	t.Run("formatversion 2 errors have docref, not *", func(t *testing.T) {
		out, _ := api(t, anon, "GET", url.Values{"action": {"frobnicate"}, "formatversion": {"2"}})
		if dig(out, "error", "docref") == nil || dig(out, "error", "*") != nil {
			t.Errorf("%v", out)
		}
	})
	t.Run("unknown parameters are warned of", func(t *testing.T) {
		out, _ := api(t, anon, "GET", url.Values{"action": {"query"}, "meta": {"siteinfo"}, "bogus": {"1"}})
		if w, _ := dig(out, "warnings", "main", "*").(string); !strings.Contains(w, "bogus") {
			t.Errorf("warnings %v", out["warnings"])
		}
	})
	t.Run("a generator's limit is lowered to 50", func(t *testing.T) {
		out, _ := api(t, anon, "GET", url.Values{"action": {"query"}, "generator": {"allpages"}, "gaplimit": {"max"}, "prop": {"info"}, "inprop": {"protection"}})
		if out["error"] != nil {
			t.Errorf("%v", out)
		}
		out, _ = api(t, anon, "GET", url.Values{"action": {"query"}, "generator": {"allpages"}, "gaplimit": {"400"}})
		if w, _ := dig(out, "warnings", "allpages", "*").(string); !strings.Contains(w, "50") {
			t.Errorf("warnings %v", out["warnings"])
		}
	})
	t.Run("a huge limit is lowered to 500 with a warning", func(t *testing.T) {
		out, _ := api(t, anon, "GET", url.Values{"action": {"query"}, "list": {"allpages"}, "aplimit": {"100000"}})
		if w, _ := dig(out, "warnings", "allpages", "*").(string); !strings.Contains(w, "500") {
			t.Errorf("warnings %v", out["warnings"])
		}
		if out["error"] != nil {
			t.Errorf("%v", out)
		}
	})
}

func TestEditConflictProtectionBlockRateLimit(t *testing.T) {
	wd := newWorld(t)
	alice := wd.w.Client(t)
	apiLogin(t, wd, alice)
	tok := csrf(t, alice)
	ctx := context.Background()
	p, err := wd.w.App.Store.FindPage(ctx, "Beta")
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprint(p.LatestID)
	edit := func(params url.Values) map[string]any {
		params.Set("action", "edit")
		params.Set("token", tok)
		out, _ := api(t, alice, "POST", params)
		return out
	}
	out := edit(url.Values{"title": {"Beta"}, "text": {"Beta text about plantains. [[Alpha]]\n\n[[Category:Fruit]]"}, "baserevid": {base}, "summary": {"first"}})
	if dig(out, "edit", "result") != "Success" || dig(out, "edit", "oldrevid") != float64(p.LatestID) {
		t.Fatalf("first edit: %v", out)
	}
	t.Run("an overlapping edit on the same base is an edit conflict", func(t *testing.T) {
		out := edit(url.Values{"title": {"Beta"}, "text": {"Beta text about mangoes. [[Alpha]]\n\n[[Category:Fruit]]"}, "baserevid": {base}})
		if errCode(out) != "editconflict" {
			t.Errorf("%v", out)
		}
	})
	t.Run("the same text again is a null edit", func(t *testing.T) {
		out := edit(url.Values{"title": {"Beta"}, "text": {"Beta text about plantains. [[Alpha]]\n\n[[Category:Fruit]]"}})
		if dig(out, "edit", "nochange") != "" {
			t.Errorf("%v", out)
		}
	})
	t.Run("appendtext and a new section", func(t *testing.T) {
		out := edit(url.Values{"title": {"Beta"}, "appendtext": {"\n\nAppended."}, "summary": {"append"}})
		if dig(out, "edit", "result") != "Success" {
			t.Fatalf("%v", out)
		}
		out = edit(url.Values{"title": {"Talk:Beta"}, "section": {"new"}, "sectiontitle": {"Hello"}, "text": {"A new topic."}})
		if dig(out, "edit", "result") != "Success" || dig(out, "edit", "new") != "" {
			t.Fatalf("%v", out)
		}
		rv, _ := wd.w.App.Store.FindPage(ctx, "Beta")
		r, _ := wd.w.App.Store.FindRevision(ctx, rv.LatestID)
		if !strings.HasSuffix(strings.TrimSpace(r.Text), "Appended.") || r.Summary != "append" || r.UserName != "Alice" {
			t.Errorf("%+v", r)
		}
	})
	t.Run("a protected page", func(t *testing.T) {
		root := wd.w.Login(t, "Root", wd.adminPwd)
		out, _ := api(t, root, "POST", url.Values{"action": {"protect"}, "title": {"Alpha"}, "protections": {"edit=sysop|move=sysop"}, "expiry": {"infinite"}, "reason": {"test"}, "token": {csrf(t, root)}})
		if dig(out, "protect", "title") != "Alpha" {
			t.Fatalf("protect: %v", out)
		}
		out = edit(url.Values{"title": {"Alpha"}, "text": {"vandalism"}})
		if errCode(out) != "protectedpage" {
			t.Errorf("%v", out)
		}
		out, _ = api(t, alice, "GET", url.Values{"action": {"query"}, "prop": {"info"}, "inprop": {"protection"}, "titles": {"Alpha"}, "formatversion": {"2"}})
		if dig(out, "query", "pages", 0, "protection", 0, "level") != "sysop" {
			t.Errorf("info: %v", out)
		}
	})
	t.Run("a blocked user", func(t *testing.T) {
		if _, err := wd.w.App.Store.BlockUser(ctx, wiki.Block{UserID: wd.user.ID, By: wiki.Actor{ID: wd.admin.ID, Name: "Root"}, Reason: "testing", Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
		defer wd.w.App.Store.UnblockUser(ctx, wd.user.ID, wiki.Actor{ID: wd.admin.ID, Name: "Root"}, "", time.Now())
		out := edit(url.Values{"title": {"Gamma"}, "text": {"text"}})
		if errCode(out) != "blocked" {
			t.Errorf("%v", out)
		}
		out, _ = api(t, alice, "GET", url.Values{"action": {"query"}, "meta": {"userinfo"}, "uiprop": {"blockinfo"}})
		if dig(out, "query", "userinfo", "blockedby") != "Root" {
			t.Errorf("userinfo: %v", out)
		}
	})
	t.Run("too many parses of a text are rate limited", func(t *testing.T) {
		var last map[string]any
		for range 70 {
			last, _ = api(t, alice, "POST", url.Values{"action": {"parse"}, "text": {"Hello [[Alpha]]"}, "title": {"Sandbox"}})
			if errCode(last) != "" {
				break
			}
		}
		if errCode(last) != "ratelimited" {
			t.Errorf("%v", last)
		}
	})
}

func TestReads(t *testing.T) {
	wd := newWorld(t)
	anon := wd.w.Client(t)
	get := func(params url.Values) map[string]any {
		t.Helper()
		out, _ := api(t, anon, "GET", params)
		if out["error"] != nil {
			t.Fatalf("%v: %v", params, out["error"])
		}
		return out
	}
	t.Run("siteinfo names a version clients accept", func(t *testing.T) {
		for _, v := range []string{"1", "2"} {
			out := get(url.Values{"action": {"query"}, "meta": {"siteinfo"}, "siprop": {"general|namespaces|namespacealiases|statistics|interwikimap|extensions|rightsinfo"}, "formatversion": {v}})
			if dig(out, "query", "general", "generator") != actionapi.Generator || dig(out, "query", "namespaces", "14", "canonical") != "Category" {
				t.Errorf("v%s: %v", v, out)
			}
		}
	})
	t.Run("siteinfo's upload limit is the one api.php can take", func(t *testing.T) {
		out := get(url.Values{"action": {"query"}, "meta": {"siteinfo"}, "formatversion": {"2"}})
		max, _ := dig(out, "query", "general", "maxuploadsize").(float64)
		if body := wd.w.App.Config.BodyLimit(); max <= 0 || int64(max) >= body {
			t.Errorf("maxuploadsize %v, request body limit %d", max, body)
		}
	})
	t.Run("anonymous userinfo and tokens", func(t *testing.T) {
		out := get(url.Values{"action": {"query"}, "meta": {"userinfo|tokens"}, "uiprop": {"groups|rights"}, "type": {"csrf|login"}})
		if dig(out, "query", "userinfo", "anon") != "" || dig(out, "query", "userinfo", "id") != float64(0) {
			t.Errorf("%v", out)
		}
		if tok, _ := dig(out, "query", "tokens", "csrftoken").(string); !strings.HasSuffix(tok, `+\`) || len(tok) < 10 {
			t.Errorf("token %q", tok)
		}
	})
	t.Run("revisions with content, in both formats", func(t *testing.T) {
		out := get(url.Values{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha"}, "rvprop": {"content|ids|user|comment|sha1|size"}, "rvslots": {"main"}})
		pages := dig(out, "query", "pages").(map[string]any)
		for _, p := range pages {
			if txt, _ := dig(p, "revisions", 0, "slots", "main", "*").(string); !strings.HasPrefix(txt, "Alpha text") {
				t.Errorf("v1: %v", p)
			}
		}
		out = get(url.Values{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha|Nowhere|Bad[[x"}, "rvprop": {"content"}, "rvslots": {"main"}, "formatversion": {"2"}})
		var found, missing, invalid bool
		for _, p := range dig(out, "query", "pages").([]any) {
			switch {
			case dig(p, "missing") == true:
				missing = true
			case dig(p, "invalid") == true:
				invalid = true
			default:
				found = strings.HasPrefix(dig(p, "revisions", 0, "slots", "main", "content").(string), "Alpha text")
			}
		}
		if !found || !missing || !invalid {
			t.Errorf("v2: %v", out)
		}
	})
	t.Run("history continues", func(t *testing.T) {
		admin := wd.w.Login(t, "Root", wd.adminPwd)
		admin.Edit("Alpha", "Alpha text about apples, again.\n\n[[Beta]]\n\n[[Category:Fruit]]")
		out := get(url.Values{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha"}, "rvlimit": {"1"}, "rvprop": {"ids|timestamp|comment"}})
		cont, _ := out["continue"].(map[string]any)
		if cont["rvcontinue"] == nil {
			t.Fatalf("no continuation: %v", out)
		}
		q := url.Values{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha"}, "rvlimit": {"1"}, "rvprop": {"ids|timestamp|comment"}}
		for k, v := range cont {
			q.Set(k, v.(string))
		}
		out2 := get(q)
		first := fmt.Sprint(dig(out, "query", "pages"))
		if fmt.Sprint(dig(out2, "query", "pages")) == first {
			t.Errorf("the continuation gave the same revision: %v", out2)
		}
	})
	t.Run("history oldest first", func(t *testing.T) {
		out := get(url.Values{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha"}, "rvdir": {"newer"}, "rvlimit": {"1"}, "rvprop": {"ids|content"}, "rvslots": {"main"}, "formatversion": {"2"}})
		if txt, _ := dig(out, "query", "pages", 0, "revisions", 0, "slots", "main", "content").(string); !strings.HasPrefix(txt, "Alpha text about apples.") {
			t.Errorf("the oldest revision: %v", out)
		}
		if dig(out, "continue", "rvcontinue") == nil {
			t.Errorf("no continuation: %v", out)
		}
	})
	t.Run("allpages continues to the end", func(t *testing.T) {
		var titles []string
		q := url.Values{"action": {"query"}, "list": {"allpages"}, "aplimit": {"1"}, "formatversion": {"2"}}
		for range 10 {
			out := get(q)
			for _, p := range dig(out, "query", "allpages").([]any) {
				titles = append(titles, dig(p, "title").(string))
			}
			cont, _ := out["continue"].(map[string]any)
			if cont == nil {
				break
			}
			for k, v := range cont {
				q.Set(k, v.(string))
			}
		}
		if strings.Join(titles, ",") != "Alpha,Beta,Main Page" {
			t.Errorf("titles %v", titles)
		}
	})
	t.Run("categorymembers, links, categories, templates and info", func(t *testing.T) {
		out := get(url.Values{"action": {"query"}, "list": {"categorymembers"}, "cmtitle": {"Category:Fruit"}, "formatversion": {"2"}})
		if len(dig(out, "query", "categorymembers").([]any)) != 2 {
			t.Errorf("%v", out)
		}
		out = get(url.Values{"action": {"query"}, "prop": {"links|categories|info"}, "titles": {"Alpha"}, "formatversion": {"2"}, "inprop": {"url"}})
		p := dig(out, "query", "pages", 0)
		if dig(p, "links", 0, "title") != "Beta" || dig(p, "categories", 0, "title") != "Category:Fruit" || dig(p, "lastrevid") == nil || dig(p, "fullurl") != "/wiki/Alpha" {
			t.Errorf("%v", p)
		}
		out = get(url.Values{"action": {"query"}, "generator": {"categorymembers"}, "gcmtitle": {"Category:Fruit"}, "prop": {"info"}, "formatversion": {"2"}})
		if len(dig(out, "query", "pages").([]any)) != 2 {
			t.Errorf("generator: %v", out)
		}
		out = get(url.Values{"action": {"query"}, "generator": {"links"}, "titles": {"Alpha"}, "prop": {"info"}, "formatversion": {"2"}})
		if dig(out, "query", "pages", 0, "title") != "Beta" {
			t.Errorf("generator=links: %v", out)
		}
	})
	t.Run("search, recent changes, contributions and the log", func(t *testing.T) {
		out := get(url.Values{"action": {"query"}, "list": {"search|recentchanges|usercontribs|logevents"}, "srsearch": {"bananas"}, "ucuser": {"Root"}, "formatversion": {"2"}})
		if dig(out, "query", "search", 0, "title") != "Beta" {
			t.Errorf("search: %v", dig(out, "query", "search"))
		}
		if len(dig(out, "query", "recentchanges").([]any)) == 0 || len(dig(out, "query", "usercontribs").([]any)) == 0 {
			t.Errorf("%v", out)
		}
	})
	t.Run("parse shows the rendered page", func(t *testing.T) {
		out := get(url.Values{"action": {"parse"}, "page": {"Beta"}, "prop": {"text|links|categories|sections|revid|displaytitle"}, "formatversion": {"2"}})
		if txt, _ := dig(out, "parse", "text").(string); !strings.Contains(txt, "bananas") || dig(out, "parse", "links", 0, "title") != "Alpha" {
			t.Errorf("%v", out)
		}
	})
	t.Run("a deleted page's revisions are not read", func(t *testing.T) {
		admin := wd.w.Login(t, "Root", wd.adminPwd)
		admin.Edit("Secret", "Secret text.")
		p, _ := wd.w.App.Store.FindPage(context.Background(), "Secret")
		out, _ := api(t, admin, "POST", url.Values{"action": {"delete"}, "title": {"Secret"}, "reason": {"gone"}, "token": {csrf(t, admin)}})
		if dig(out, "delete", "title") != "Secret" {
			t.Fatalf("delete: %v", out)
		}
		out = get(url.Values{"action": {"query"}, "prop": {"revisions"}, "revids": {fmt.Sprint(p.LatestID)}, "rvprop": {"content"}})
		if strings.Contains(fmt.Sprint(out), "Secret text") || dig(out, "query", "badrevids") == nil {
			t.Errorf("%v", out)
		}
		o2, _ := api(t, anon, "GET", url.Values{"action": {"parse"}, "oldid": {fmt.Sprint(p.LatestID)}})
		if errCode(o2) != "nosuchrevid" {
			t.Errorf("parse: %v", o2)
		}
	})
	t.Run("the content budget continues a batch of pages", func(t *testing.T) {
		defer actionapi.SetContentBudget(30)()
		out := get(url.Values{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha|Beta"}, "rvprop": {"content"}, "rvslots": {"main"}})
		if dig(out, "continue", "rvcontinue") == nil {
			t.Errorf("no rvcontinue: %v", out)
		}
		var ids []string
		for i := int64(1); i <= 12; i++ {
			ids = append(ids, fmt.Sprint(i))
		}
		out = get(url.Values{"action": {"query"}, "prop": {"revisions"}, "revids": {strings.Join(ids, "|")}, "rvprop": {"ids"}})
		if dig(out, "continue", "rvcontinue") != "11" {
			t.Errorf("revids: no rvcontinue at the second batch: %v", out["continue"])
		}
	})
}

func TestPrivateWiki(t *testing.T) {
	wd := newWorld(t, func(c *config.Config) { c.ReadGroup = wiki.GroupUser; c.EditGroup = wiki.GroupUser })
	anon := wd.w.Client(t)
	for _, q := range []url.Values{
		{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha"}, "rvprop": {"content"}},
		{"action": {"query"}, "list": {"allpages"}},
		{"action": {"query"}, "meta": {"siteinfo"}},
		{"action": {"parse"}, "page": {"Alpha"}},
		{"action": {"query"}, "generator": {"allpages"}, "prop": {"revisions"}, "rvprop": {"content"}},
	} {
		out, res := api(t, anon, "GET", q)
		if errCode(out) != "readapidenied" || strings.Contains(res.Body, "apples") {
			t.Errorf("%v: %s", q, res.Body)
		}
	}
	// Tokens and the login work, so that a client can log in.
	alice := wd.w.Client(t)
	apiLogin(t, wd, alice)
	out, _ := api(t, alice, "GET", url.Values{"action": {"query"}, "prop": {"revisions"}, "titles": {"Alpha"}, "rvprop": {"content"}, "formatversion": {"2"}})
	if !strings.HasPrefix(fmt.Sprint(dig(out, "query", "pages", 0, "revisions", 0, "content")), "Alpha text") {
		t.Errorf("%v", out)
	}
}

func TestLogin(t *testing.T) {
	wd := newWorld(t)
	loginToken := func(c *apptest.Client) string {
		out, _ := api(t, c, "GET", url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}})
		return dig(out, "query", "tokens", "logintoken").(string)
	}
	t.Run("without a token: NeedToken", func(t *testing.T) {
		c := wd.w.Client(t)
		out, _ := api(t, c, "POST", url.Values{"action": {"login"}, "lgname": {"Alice"}, "lgpassword": {wd.userToken}})
		if dig(out, "login", "result") != "NeedToken" {
			t.Errorf("%v", out)
		}
	})
	t.Run("the account's password is refused by action=login", func(t *testing.T) {
		c := wd.w.Client(t)
		out, res := api(t, c, "POST", url.Values{"action": {"login"}, "lgname": {"Alice"}, "lgpassword": {wd.userPass}, "lgtoken": {loginToken(c)}})
		if dig(out, "login", "result") != "Failed" || len(res.Header.Values("Set-Cookie")) != 0 {
			t.Errorf("%v", out)
		}
	})
	t.Run("clientlogin takes the password", func(t *testing.T) {
		c := wd.w.Client(t)
		out, _ := api(t, c, "POST", url.Values{"action": {"clientlogin"}, "username": {"Alice"}, "password": {wd.userPass}, "loginreturnurl": {"http://x/"}, "logintoken": {loginToken(c)}})
		if dig(out, "clientlogin", "status") != "PASS" {
			t.Fatalf("%v", out)
		}
		out, _ = api(t, c, "GET", url.Values{"action": {"query"}, "meta": {"userinfo"}})
		if dig(out, "query", "userinfo", "name") != "Alice" {
			t.Errorf("%v", out)
		}
		tok := csrf(t, c)
		out, _ = api(t, c, "POST", url.Values{"action": {"logout"}, "token": {tok}})
		if out["error"] != nil {
			t.Fatalf("logout: %v", out)
		}
		out, _ = api(t, c, "GET", url.Values{"action": {"query"}, "meta": {"userinfo"}})
		if dig(out, "query", "userinfo", "anon") != "" {
			t.Errorf("after logout: %v", out)
		}
	})
	t.Run("a login posted by another site is refused", func(t *testing.T) {
		c := wd.w.Client(t)
		form := url.Values{"action": {"login"}, "lgname": {"Alice@bot"}, "lgpassword": {wd.userToken}, "lgtoken": {loginToken(c)}, "format": {"json"}}
		r := c.NewRequest("POST", "/w/api.php", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "https://evil.example")
		res := c.Do(r)
		if !strings.Contains(res.Body, "WrongToken") || len(res.Header.Values("Set-Cookie")) != 0 {
			t.Errorf("%s", res.Body)
		}
	})
	t.Run("failed logins are throttled", func(t *testing.T) {
		c := wd.w.Client(t)
		var out map[string]any
		for range 30 {
			out, _ = api(t, c, "POST", url.Values{"action": {"login"}, "lgname": {"Root"}, "lgpassword": {"guess"}, "lgtoken": {loginToken(c)}})
			if dig(out, "login", "result") == "Throttled" {
				break
			}
		}
		if dig(out, "login", "result") != "Throttled" {
			t.Errorf("%v", out)
		}
	})
}

func TestWrites(t *testing.T) {
	wd := newWorld(t)
	root := wd.w.Login(t, "Root", wd.adminPwd)
	tok := csrf(t, root)
	out, _ := api(t, root, "POST", url.Values{"action": {"move"}, "from": {"Beta"}, "to": {"Beta moved"}, "reason": {"rename"}, "token": {tok}})
	if dig(out, "move", "to") != "Beta moved" {
		t.Fatalf("move: %v", out)
	}
	out, _ = api(t, root, "GET", url.Values{"action": {"query"}, "titles": {"Beta"}, "redirects": {"1"}, "formatversion": {"2"}})
	if dig(out, "query", "redirects", 0, "to") != "Beta moved" {
		t.Errorf("redirect: %v", out)
	}
	res := root.Multipart("/w/api.php", map[string]string{"action": "upload", "filename": "Dot.png", "comment": "a dot", "token": tok, "format": "json"}, "dot.png", tinyPNG(), nil)
	var up map[string]any
	if err := json.Unmarshal([]byte(res.Body), &up); err != nil || dig(up, "upload", "result") != "Success" {
		t.Errorf("upload: %d %s", res.StatusCode, res.Body)
	}
}

func TestWatch(t *testing.T) {
	wd := newWorld(t)
	ctx := context.Background()
	anon := wd.w.Client(t)
	out, _ := api(t, anon, "POST", url.Values{"action": {"watch"}, "titles": {"Alpha"}, "token": {csrf(t, anon)}})
	if errCode(out) != "notloggedin" {
		t.Errorf("anonymous: %v", out)
	}
	alice := wd.w.Client(t)
	apiLogin(t, wd, alice)
	watched := func() []string {
		ws, err := wd.w.App.Store.Watchlist(ctx, wd.user.ID, "", 10, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range ws {
			out = append(out, string(w.Title))
		}
		return out
	}
	out, _ = api(t, alice, "POST", url.Values{"action": {"watch"}, "titles": {"Alpha|Beta"}, "token": {csrf(t, alice)}})
	if dig(out, "watch", 0, "watched") != "" || !slices.Contains(watched(), "Beta") {
		t.Errorf("watch: %v; watchlist %v", out, watched())
	}
	out, _ = api(t, alice, "POST", url.Values{"action": {"watch"}, "titles": {"Beta"}, "unwatch": {"1"}, "token": {csrf(t, alice)}})
	if dig(out, "watch", 0, "unwatched") != "" || slices.Contains(watched(), "Beta") {
		t.Errorf("unwatch: %v; watchlist %v", out, watched())
	}
	out, _ = api(t, alice, "POST", url.Values{"action": {"edit"}, "title": {"Gamma"}, "text": {"Gamma."}, "watchlist": {"watch"}, "token": {csrf(t, alice)}})
	if dig(out, "edit", "result") != "Success" || !slices.Contains(watched(), "Gamma") {
		t.Errorf("edit with watchlist=watch: %v; watchlist %v", out, watched())
	}
}

func tinyPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}
