package actionapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/wiki"
)

// TestRealClients drives a real wiki on loopback with mwclient and
// pywikibot (testdata/clients.py, pinned in testdata/requirements.txt):
// each logs in, reads a page, edits it with a summary, lists recent
// changes and searches; pywikibot also creates a page. Without the Python
// packages it skips, unless WIKID_REQUIRE_MWCLIENTS=1 (.ci/run), where it
// fails. WIKID_MWCLIENTS_PYTHON names the interpreter (a virtual
// environment's).
func TestRealClients(t *testing.T) {
	python := os.Getenv("WIKID_MWCLIENTS_PYTHON")
	if python == "" {
		python = "python3"
	}
	w := apptest.New(t)
	ctx := context.Background()
	u, password := w.CreateUser(t, "Client Bot", wiki.GroupUser)
	secret := auth.NewSecret(32)
	if err := w.App.Store.CreateToken(ctx, wiki.Token{ID: auth.HashToken(secret), UserID: u.ID, Name: "ci", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	admin := w.Login(t, "Client Bot", password)
	admin.Edit("Client page", "A page for the clients to read.\n\n## Section\n\nText.")

	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "testdata", "clients.py")
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, script, w.URL, u.Name, password, secret, t.TempDir())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Nothing but loopback: no proxy, and pywikibot's configuration from
	// the test's own directory only.
	cmd.Env = append(os.Environ(), "NO_PROXY=*", "no_proxy=*", "HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=", "https_proxy=")
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.Is(err, exec.ErrNotFound) || errors.As(err, &exit) && exit.ExitCode() == 3 {
		if os.Getenv("WIKID_REQUIRE_MWCLIENTS") == "1" {
			t.Fatalf("%s with mwclient and pywikibot is required (WIKID_REQUIRE_MWCLIENTS=1): %v %s", python, err, stderr.String())
		}
		t.Skipf("%s with mwclient and pywikibot is not available (pip install -r internal/actionapi/testdata/requirements.txt; set WIKID_REQUIRE_MWCLIENTS=1 to fail instead)", python)
	}
	if err != nil {
		t.Fatalf("clients.py: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var res map[string]map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("clients.py's output: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for name, r := range res {
		if e, ok := r["error"]; ok {
			t.Errorf("%s: %v\n%v", name, e, r["trace"])
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s\nlogs:\n%s", stderr.String(), w.Logs.String())
		t.FailNow()
	}
	t.Logf("clients: %s", stdout.String())
	for _, name := range []string{"mwclient", "pywikibot"} {
		r := res[name]
		if r["logged_in_as"] != u.Name {
			t.Errorf("%s logged in as %v, want %s", name, r["logged_in_as"], u.Name)
		}
		if read, _ := r["read"].(string); !strings.HasPrefix(read, "A page for the clients to read.") {
			t.Errorf("%s read %q", name, read)
		}
		if !containsString(r["search"], "Client page") {
			t.Errorf("%s: search for Client found %v", name, r["search"])
		}
		if !containsString(r["recentchanges"], "Client page") {
			t.Errorf("%s: recent changes %v", name, r["recentchanges"])
		}
	}
	if h, _ := res["pywikibot"]["history"].([]any); len(h) < 3 || h[0] != "pywikibot summary" || res["pywikibot"]["oldest"] != h[len(h)-1] {
		t.Errorf("pywikibot's history %v, oldest %v", h, res["pywikibot"]["oldest"])
	}
	if res["mwclient"]["clientlogin_user"] != u.Name {
		t.Errorf("mwclient clientlogin: %v", res["mwclient"]["clientlogin_user"])
	}
	// The edits are in the history with their summaries and author.
	p, err := w.App.Store.FindPage(ctx, "Client page")
	if err != nil {
		t.Fatal(err)
	}
	revs, err := w.App.Store.History(ctx, wiki.HistoryQuery{PageID: p.ID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var summaries []string
	for _, rv := range revs {
		if rv.UserName == u.Name {
			summaries = append(summaries, rv.Summary)
		}
	}
	for _, want := range []string{"mwclient summary", "pywikibot summary"} {
		if !slices.Contains(summaries, want) {
			t.Errorf("no revision by %s with summary %q: %q", u.Name, want, summaries)
		}
	}
	rv, err := w.App.Store.FindRevision(ctx, p.LatestID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rv.Text, "Added by mwclient.") || !strings.Contains(rv.Text, "Added by pywikibot.") {
		t.Errorf("latest text:\n%s", rv.Text)
	}
	np, err := w.App.Store.FindPage(ctx, "Pywikibot new page")
	if err != nil {
		t.Fatalf("pywikibot's new page: %v", err)
	}
	nrv, err := w.App.Store.FindRevision(ctx, np.LatestID)
	if err != nil || nrv.Summary != "pywikibot creates" || nrv.UserName != u.Name {
		t.Errorf("pywikibot's new page: %+v %v", nrv, err)
	}
}

func containsString(v any, s string) bool {
	l, _ := v.([]any)
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
