package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

// wikid runs the command line with args and stdin, with an empty environment
// except for the given variables.
func wikid(t *testing.T, stdin string, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	return out.String(), errb.String(), err
}

func TestCLI(t *testing.T) {
	t.Parallel()
	data := t.TempDir()

	t.Run("help prints the usage", func(t *testing.T) {
		for _, args := range [][]string{nil, {"--help"}, {"-h"}, {"help"}} {
			out, _, err := wikid(t, "", nil, args...)
			if err != nil || !strings.Contains(out, "wikid user add NAME") {
				t.Errorf("wikid %v: err %v, output %q", args, err, out)
			}
		}
	})

	t.Run("version prints a version", func(t *testing.T) {
		out, _, err := wikid(t, "", nil, "version")
		if err != nil || !strings.HasPrefix(out, "wikid ") {
			t.Errorf("err %v, output %q", err, out)
		}
	})

	t.Run("migrate up creates or migrates the database and prints its version", func(t *testing.T) {
		dir := t.TempDir()
		out, _, err := wikid(t, "", nil, "migrate", "up", "--data", dir)
		if err != nil || !strings.Contains(out, "schema version") {
			t.Fatalf("err %v, output %q", err, out)
		}
		for _, args := range [][]string{{"migrate"}, {"migrate", "down"}, {"migrate", "up", "extra"}} {
			if _, _, err := wikid(t, "", nil, append(args, "--data", dir)...); err == nil || !strings.Contains(err.Error(), "usage: wikid migrate up") {
				t.Errorf("wikid %v: err %v", args, err)
			}
		}
	})

	t.Run("an unknown command is an error that points to help", func(t *testing.T) {
		_, _, err := wikid(t, "", nil, "frobnicate")
		if err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate"`) || !strings.Contains(err.Error(), "--help") {
			t.Errorf("err %v", err)
		}
	})

	t.Run("bad usage is an error", func(t *testing.T) {
		cases := [][]string{
			{"user"}, {"user", "remove", "x"}, {"user", "add"}, {"user", "add", "a", "b"},
			{"token"}, {"token", "create"}, {"version", "--no-such-flag"},
			{"version", "--log-level", "loud"},
		}
		for _, args := range cases {
			if _, _, err := wikid(t, "", nil, append(args, "--data", data)...); err == nil {
				t.Errorf("wikid %v: no error", args)
			}
		}
	})

	t.Run("user add creates an administrator with the password from stdin", func(t *testing.T) {
		out, _, err := wikid(t, "correct-horse\n", nil, "user", "add", "alice", "--admin", "--data", data)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, `created user "Alice"`) || !strings.Contains(out, "group admin") {
			t.Errorf("output %q", out)
		}
	})

	t.Run("user add refuses a taken name, a short password and no password", func(t *testing.T) {
		cases := []struct{ stdin, name, msg string }{
			{"another-password\n", "ALICE", "already taken"},
			{"short\n", "bob", "too short"},
			{"", "bob", "no password"},
			{"long-password\n", "a/b", "may not contain"},
			{"long-password\n", "\u0410lice", "The name “\u0410lice” is too similar to the existing account “Alice”. Choose another name."},
			{"long-password\n", "Al\u200bice", "the user name contains U+200B ZERO WIDTH SPACE (an invisible character) at character 3; remove it"},
		}
		for _, c := range cases {
			_, _, err := wikid(t, c.stdin, nil, "user", "add", c.name, "--data", data)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("user add %q: err %v, want %q", c.name, err, c.msg)
			}
		}
	})

	t.Run("the data directory may come from WIKID_DATA", func(t *testing.T) {
		out, _, err := wikid(t, "pass-for-bob\n", map[string]string{"WIKID_DATA": data}, "user", "add", "Bob")
		if err != nil || !strings.Contains(out, `"Bob"`) || !strings.Contains(out, "group user") {
			t.Errorf("err %v, output %q", err, out)
		}
	})

	t.Run("token create refuses an unknown user", func(t *testing.T) {
		_, _, err := wikid(t, "", nil, "token", "create", "nobody", "--data", data)
		if err == nil || !strings.Contains(err.Error(), "no user") {
			t.Errorf("err %v", err)
		}
	})

	t.Run("token create prints a token that authenticates a REST PUT", func(t *testing.T) {
		out, _, err := wikid(t, "", nil, "token", "create", "alice", "--data", data)
		if err != nil {
			t.Fatal(err)
		}
		token := strings.TrimSpace(out)
		if !strings.HasPrefix(token, "wkd_") || strings.Contains(token, "\n") {
			t.Fatalf("token output %q", out)
		}

		cfg := config.Default()
		cfg.DataDir = data
		a, err := app.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(a.Handler())
		defer func() { srv.Close(); a.Close() }()

		put := func(token string) *http.Response {
			req, _ := http.NewRequest(http.MethodPut, srv.URL+"/w/rest.php/v1/page/From_CLI", strings.NewReader(`{"source":"Made with a CLI token."}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		if res := put(token + "x"); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("PUT with a wrong token: %d, want 401", res.StatusCode)
		}
		if res := put(token); res.StatusCode != http.StatusCreated {
			t.Fatalf("PUT with the CLI token: %d, want 201", res.StatusCode)
		}
		p, err := a.Store.FindPage(context.Background(), wiki.MustTitle("From CLI"))
		if err != nil {
			t.Fatal(err)
		}
		rev, err := a.Store.FindRevision(context.Background(), p.LatestID)
		if err != nil || rev.UserName != "Alice" {
			t.Errorf("revision by %q (err %v), want Alice", rev.UserName, err)
		}
	})
}

// TestCLIAccounts: the account commands change the store and log what they
// did as the maintenance script.
func TestCLIImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	jsonl := filepath.Join(dir, "pages.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"title": "Imported one", "text": "Words about quokkas."}
{"title": "Imported two", "text": "See [[Imported one]]."}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := wikid(t, "", nil, "import", jsonl, "--data", data, "--summary", "from a file")
	if err != nil || !strings.Contains(out, "imported 2 pages (2 created, 0 changed, 0 unchanged)") {
		t.Fatalf("import: %v, %q", err, out)
	}
	md := filepath.Join(dir, "md")
	if err := os.MkdirAll(filepath.Join(md, "Sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(md, "Imported_one.md"), []byte("Words about quokkas, changed."), 0o600)
	os.WriteFile(filepath.Join(md, "Sub", "Page.md"), []byte("A subpage."), 0o600)
	os.WriteFile(filepath.Join(md, "notes.txt"), []byte("not a page"), 0o600)
	out, _, err = wikid(t, "", nil, "import", md, "--data", data)
	if err != nil || !strings.Contains(out, "imported 2 pages (1 created, 1 changed, 0 unchanged)") {
		t.Fatalf("import of a directory: %v, %q", err, out)
	}
	out, _, err = wikid(t, `{"title": "Imported two", "text": "See [[Imported one]]."}`+"\n", nil, "import", "-", "--data", data)
	if err != nil || !strings.Contains(out, "(0 created, 0 changed, 1 unchanged)") {
		t.Fatalf("import from stdin: %v, %q", err, out)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hits, err := db.Search(context.Background(), wiki.SearchQuery{Text: "quokkas changed", Limit: 10})
	if err != nil || len(hits) != 1 || hits[0].Title != "Imported one" {
		t.Fatalf("search after import = %+v, %v", hits, err)
	}
	if p, err := db.FindPage(context.Background(), "Sub/Page"); err != nil || p.Deleted {
		t.Fatalf("the subpage: %+v, %v", p, err)
	}

	bad := filepath.Join(dir, "bad")
	os.MkdirAll(bad, 0o750)
	os.WriteFile(filepath.Join(bad, "Latin.md"), []byte("caf\xe9"), 0o600)
	if _, _, err := wikid(t, "", nil, "import", bad, "--data", data); err == nil || !strings.Contains(err.Error(), "not UTF-8 text") {
		t.Fatalf("a Latin-1 file: %v", err)
	}
	for _, tc := range []struct{ name, input, want string }{
		{"a line that is not JSON", "{nope\n", "line 1: not a JSON object"},
		{"a line without text", `{"title": "X"}` + "\n", `line 1: no "text"`},
		{"a bad title", `{"title": "a|b", "text": "x"}` + "\n", `line 1: title "a|b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := wikid(t, tc.input, nil, "import", "-", "--data", data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	if _, _, err := wikid(t, "", nil, "import", "--data", data); err == nil || !strings.Contains(err.Error(), "usage: wikid import") {
		t.Fatalf("no source: %v", err)
	}
}

func TestCLIAccounts(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	ctx := context.Background()
	if _, _, err := wikid(t, "carol-password\n", nil, "user", "add", "Carol", "--data", data); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) string {
		t.Helper()
		out, _, err := wikid(t, stdin, nil, append(args, "--data", data)...)
		if err != nil {
			t.Fatalf("wikid %v: %v", args, err)
		}
		return out
	}
	fails := func(msg string, args ...string) {
		t.Helper()
		if _, _, err := wikid(t, "", nil, append(args, "--data", data)...); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("wikid %v: err %v, want %q", args, err, msg)
		}
	}
	if out := run("", "user", "list"); !strings.Contains(out, "Carol") || !strings.Contains(out, "user") {
		t.Errorf("user list: %q", out)
	}
	fails("give user, rollbacker or admin", "user", "set-groups", "Carol", "root")
	fails("exactly one group", "user", "set-groups", "Carol", "user,admin")
	fails("no user", "user", "set-groups", "Nobody", "admin")
	run("", "user", "set-groups", "Carol", "admin", "--reason", "trusted")
	fails("not a duration", "user", "block", "Carol", "--until", "soon")
	run("", "user", "block", "Carol", "--until", "7d", "--reason", "spam")
	if out := run("", "user", "list"); strings.HasSuffix(strings.TrimSpace(out), "-") {
		t.Errorf("user list after block shows no block: %q", out)
	}
	run("", "user", "unblock", "Carol")
	fails("not blocked", "user", "unblock", "Carol")
	run("another-password\n", "user", "reset-password", "Carol", "--stdin")
	link := run("", "user", "reset-password", "Carol")
	if !strings.Contains(link, "/wiki/Special:PasswordReset?token=") {
		t.Errorf("reset link: %q", link)
	}
	token := strings.TrimSpace(run("", "token", "create", "Carol"))
	list := run("", "token", "list", "Carol")
	if strings.Contains(list, token) || !strings.Contains(list, "cli") {
		t.Errorf("token list shows the secret or not the token: %q", list)
	}
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	run("", "token", "revoke", id)
	fails("no token", "token", "revoke", id)
	run("", "token", "create", "Carol")
	if out := run("", "token", "revoke", "--all", "Carol"); !strings.Contains(out, "revoked 1 tokens") {
		t.Errorf("revoke --all: %q", out)
	}

	cfg := config.Default()
	cfg.DataDir = data
	a, err := app.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	l, err := a.Store.Log(ctx, wiki.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l {
		got = append(got, string(e.Type)+"/"+e.Action+" by "+e.UserName)
		if e.Type != wiki.LogNewUsers && e.UserID != 0 {
			t.Errorf("entry %+v: performer id %d, want 0", e, e.UserID)
		}
	}
	want := "block/unblock by Maintenance script|block/block by Maintenance script|rights/rights by Maintenance script|newusers/create by Carol"
	if strings.Join(got, "|") != want {
		t.Errorf("log:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if _, _, err := wikid(t, "", nil, "token", "revoke", "--data", data); err == nil {
		t.Error("token revoke without an ID: no error")
	}
}
