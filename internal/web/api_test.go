package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/wiki"
)

// apiToken stores an API token for user u and returns its secret.
func apiToken(t *testing.T, w *apptest.Wiki, u wiki.User) string {
	t.Helper()
	secret := "wkd_" + auth.NewSecret(32)
	if err := w.App.Store.CreateToken(context.Background(), wiki.Token{ID: auth.HashToken(secret), UserID: u.ID, Name: "test", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return secret
}

func decode[T any](t *testing.T, res *apptest.Response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(res.Body), &v); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v\n%s", res.Request.Method, res.Request.URL.RequestURI(), err, res.Body)
	}
	return v
}

type apiPage struct {
	ID     int64  `json:"id"`
	Key    string `json:"key"`
	Title  string `json:"title"`
	Source string `json:"source"`
	Latest struct {
		ID int64 `json:"id"`
	} `json:"latest"`
}

func TestRESTAPI(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, pw := w.CreateUser(t, "Bot", wiki.GroupUser)
	token := apiToken(t, w, u)
	c := w.Client(t)

	var created apiPage
	t.Run("POST creates a page", func(t *testing.T) {
		res := c.JSON(http.MethodPost, "/w/rest.php/v1/page", token,
			`{"title":"API page","source":"one\ntwo\nthree\n","comment":"created by API"}`)
		mustStatus(t, res, http.StatusCreated)
		created = decode[apiPage](t, res)
		if created.Key != "API_page" || created.Title != "API page" || created.Latest.ID == 0 || created.Source != "one\ntwo\nthree\n" {
			t.Errorf("created %+v", created)
		}
	})

	t.Run("GET page returns the source and latest revision", func(t *testing.T) {
		res := c.JSON(http.MethodGet, "/w/rest.php/v1/page/API_page", "", "")
		mustStatus(t, res, http.StatusOK)
		p := decode[apiPage](t, res)
		if p.Latest.ID != created.Latest.ID || p.Source != "one\ntwo\nthree\n" {
			t.Errorf("page %+v", p)
		}
		if res.Header.Get("Cache-Control") != "public, max-age=0, s-maxage=300" || res.Header.Get("ETag") == "" || res.Header.Get("Last-Modified") == "" {
			t.Errorf("an anonymous read of a page is public and validated: Cache-Control %q, ETag %q, Last-Modified %q",
				res.Header.Get("Cache-Control"), res.Header.Get("ETag"), res.Header.Get("Last-Modified"))
		}
	})

	t.Run("GET html returns the rendered page", func(t *testing.T) {
		res := c.JSON(http.MethodGet, "/w/rest.php/v1/page/API_page/html", "", "")
		mustStatus(t, res, http.StatusOK)
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("Content-Type %q", res.Header.Get("Content-Type"))
		}
		mustContain(t, res, "<title>API page</title>", "three")
	})

	var second apiPage
	t.Run("PUT with latest updates the page", func(t *testing.T) {
		body := fmt.Sprintf(`{"source":"one\ntwo\nthree\nfour\n","comment":"more","latest":{"id":%d}}`, created.Latest.ID)
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/API_page", token, body)
		mustStatus(t, res, http.StatusOK)
		second = decode[apiPage](t, res)
		if second.Latest.ID <= created.Latest.ID {
			t.Errorf("latest %d after %d", second.Latest.ID, created.Latest.ID)
		}
	})

	t.Run("PUT with a stale latest merges a change elsewhere", func(t *testing.T) {
		body := fmt.Sprintf(`{"source":"ONE\ntwo\nthree\n","latest":{"id":%d}}`, created.Latest.ID)
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/API_page", token, body)
		mustStatus(t, res, http.StatusOK)
		if p := decode[apiPage](t, res); p.Source != "ONE\ntwo\nthree\nfour\n" {
			t.Errorf("merged source %q", p.Source)
		}
	})

	t.Run("PUT with a stale latest and an overlapping change is a conflict", func(t *testing.T) {
		body := fmt.Sprintf(`{"source":"uno\ntwo\nthree\n","latest":{"id":%d}}`, created.Latest.ID)
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/API_page", token, body)
		mustStatus(t, res, http.StatusConflict)
		if e := decode[map[string]any](t, res); e["errorKey"] != "rest-edit-conflict" {
			t.Errorf("error %v", e)
		}
		if src := decode[apiPage](t, c.JSON(http.MethodGet, "/w/rest.php/v1/page/API_page", "", "")).Source; src != "ONE\ntwo\nthree\nfour\n" {
			t.Errorf("the conflicting PUT changed the page to %q", src)
		}
	})

	t.Run("PUT on a new title creates it", func(t *testing.T) {
		res := c.JSON(http.MethodPut, "/w/rest.php/v1/page/Put_page", token, `{"source":"made by PUT"}`)
		mustStatus(t, res, http.StatusCreated)
		mustStatus(t, c.Get("/wiki/Put_page"), http.StatusOK)
	})

	t.Run("history lists the revisions newest first", func(t *testing.T) {
		res := c.JSON(http.MethodGet, "/w/rest.php/v1/page/API_page/history", "", "")
		mustStatus(t, res, http.StatusOK)
		h := decode[struct {
			Revisions []struct {
				ID   int64 `json:"id"`
				User struct {
					Name string `json:"name"`
				} `json:"user"`
			} `json:"revisions"`
		}](t, res)
		if len(h.Revisions) != 3 || h.Revisions[2].ID != created.Latest.ID || h.Revisions[0].User.Name != "Bot" {
			t.Errorf("history %+v", h)
		}
	})

	t.Run("search finds the page", func(t *testing.T) {
		res := c.JSON(http.MethodGet, "/w/rest.php/v1/search/page?q="+url.QueryEscape("four"), "", "")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `"key":"API_page"`)
	})

	t.Run("revision and compare return text and a line diff", func(t *testing.T) {
		res := c.JSON(http.MethodGet, fmt.Sprintf("/w/rest.php/v1/revision/%d", created.Latest.ID), "", "")
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `"source":"one\ntwo\nthree\n"`)
		res = c.JSON(http.MethodGet, fmt.Sprintf("/w/rest.php/v1/revision/%d/compare/%d", created.Latest.ID, second.Latest.ID), "", "")
		mustStatus(t, res, http.StatusOK)
		d := decode[struct {
			Diff []struct {
				Type int    `json:"type"`
				Text string `json:"text"`
			} `json:"diff"`
		}](t, res)
		var added []string
		for _, l := range d.Diff {
			if l.Type == 1 {
				added = append(added, l.Text)
			}
		}
		if len(added) != 1 || added[0] != "four" {
			t.Errorf("added lines %q in %s", added, res.Body)
		}
	})

	t.Run("a browser session writes only with the CSRF header", func(t *testing.T) {
		b := w.Login(t, "Bot", pw)
		res := b.JSON(http.MethodPut, "/w/rest.php/v1/page/Session_page", "", `{"source":"x"}`)
		mustStatus(t, res, http.StatusForbidden)
		r := b.NewRequest(http.MethodPut, "/w/rest.php/v1/page/Session_page", strings.NewReader(`{"source":"x"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-CSRF-Token", b.CSRF("/wiki/Special:UserLogin"))
		mustStatus(t, b.Do(r), http.StatusCreated)
	})
}

// TestRESTContract: what MediaWiki's REST clients rely on beyond the page
// routes: unknown routes are 404 with a JSON body, a wrong method is 405
// with Allow, creations are 201 with Location, search results carry page
// ids, the content model says markdown, and reads carry validators that
// answer conditional requests with 304.
func TestRESTContract(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	u, _ := w.CreateUser(t, "Rester", wiki.GroupUser)
	token := apiToken(t, w, u)
	c := w.Client(t)

	res := c.JSON(http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"Contract page/sub","source":"a zebracorn text\n"}`)
	mustStatus(t, res, http.StatusCreated)
	created := decode[apiPage](t, res)
	if loc := res.Header.Get("Location"); loc != "/w/rest.php/v1/page/Contract_page%2Fsub" {
		t.Errorf("POST creating a page: Location %q", loc)
	}
	res = c.JSON(http.MethodPut, "/w/rest.php/v1/page/Put_contract", token, `{"source":"made by PUT"}`)
	mustStatus(t, res, http.StatusCreated)
	if loc := res.Header.Get("Location"); loc != "/w/rest.php/v1/page/Put_contract" {
		t.Errorf("PUT creating a page: Location %q", loc)
	}
	put := decode[apiPage](t, res)
	res = c.JSON(http.MethodPut, "/w/rest.php/v1/page/Put_contract", token, fmt.Sprintf(`{"source":"changed","latest":{"id":%d}}`, put.Latest.ID))
	mustStatus(t, res, http.StatusOK)
	if loc := res.Header.Get("Location"); loc != "" {
		t.Errorf("PUT changing a page: Location %q", loc)
	}

	t.Run("unknown routes are 404 with a JSON error", func(t *testing.T) {
		for _, path := range []string{"/w/rest.php/v1/nothing", "/w/rest.php/v1/page/Contract_page%2Fsub/nonexistent",
			"/w/rest.php/v2/page/X", "/w/rest.php/v1/revision/1/compare", "/w/rest.php/v1/"} {
			res := c.JSON(http.MethodGet, path, "", "")
			mustStatus(t, res, http.StatusNotFound)
			e := decode[map[string]any](t, res)
			if e["httpCode"] != float64(404) || e["errorKey"] == "" || res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("GET %s: %v, Cache-Control %q", path, e, res.Header.Get("Cache-Control"))
			}
		}
	})

	t.Run("a known route with another method is 405 with Allow", func(t *testing.T) {
		for path, allow := range map[string]string{
			"/w/rest.php/v1/page/Contract_page%2Fsub":      "GET, HEAD, PUT",
			"/w/rest.php/v1/page":                          "POST",
			"/w/rest.php/v1/page/Contract_page%2Fsub/html": "GET, HEAD",
		} {
			res := c.JSON(http.MethodDelete, path, token, "")
			mustStatus(t, res, http.StatusMethodNotAllowed)
			if got := res.Header.Get("Allow"); got != allow {
				t.Errorf("DELETE %s: Allow %q, want %q", path, got, allow)
			}
			if e := decode[map[string]any](t, res); e["httpCode"] != float64(405) {
				t.Errorf("DELETE %s: %v", path, e)
			}
		}
	})

	t.Run("search results carry the page id", func(t *testing.T) {
		res := c.JSON(http.MethodGet, "/w/rest.php/v1/search/page?q=zebracorn", "", "")
		mustStatus(t, res, http.StatusOK)
		got := decode[struct {
			Pages []struct {
				ID  int64  `json:"id"`
				Key string `json:"key"`
			} `json:"pages"`
		}](t, res)
		if len(got.Pages) != 1 || got.Pages[0].ID != created.ID || created.ID == 0 {
			t.Errorf("search: %+v, want the id %d", got.Pages, created.ID)
		}
	})

	t.Run("the content model is markdown", func(t *testing.T) {
		for _, path := range []string{"/w/rest.php/v1/page/Contract_page%2Fsub", "/w/rest.php/v1/page/Contract_page%2Fsub/bare"} {
			if m := decode[map[string]any](t, c.JSON(http.MethodGet, path, "", ""))["content_model"]; m != "markdown" {
				t.Errorf("GET %s: content_model %v", path, m)
			}
		}
	})

	t.Run("reads carry validators and answer 304", func(t *testing.T) {
		for _, path := range []string{"/w/rest.php/v1/page/Contract_page%2Fsub", "/w/rest.php/v1/page/Contract_page%2Fsub/html",
			"/w/rest.php/v1/page/Contract_page%2Fsub/history", fmt.Sprintf("/w/rest.php/v1/revision/%d", created.Latest.ID)} {
			for _, who := range []string{"anonymous", "token"} {
				tok := ""
				if who == "token" {
					tok = token
				}
				res := c.JSON(http.MethodGet, path, tok, "")
				mustStatus(t, res, http.StatusOK)
				etag, lm := res.Header.Get("ETag"), res.Header.Get("Last-Modified")
				if etag == "" || lm == "" {
					t.Fatalf("%s GET %s: ETag %q, Last-Modified %q", who, path, etag, lm)
				}
				wantCC := "public, max-age=0, s-maxage=300"
				if who == "token" {
					wantCC = "private, no-cache"
				}
				if cc := res.Header.Get("Cache-Control"); cc != wantCC {
					t.Errorf("%s GET %s: Cache-Control %q, want %q", who, path, cc, wantCC)
				}
				for _, h := range [][2]string{{"If-None-Match", etag}, {"If-Modified-Since", lm}} {
					r := c.NewRequest(http.MethodGet, path, nil)
					r.Header.Set(h[0], h[1])
					if tok != "" {
						r.Header.Set("Authorization", "Bearer "+tok)
					}
					if res := c.Do(r); res.StatusCode != http.StatusNotModified || res.Body != "" {
						t.Errorf("%s GET %s with %s: %d, %d bytes", who, path, h[0], res.StatusCode, len(res.Body))
					}
				}
			}
		}
	})
}
