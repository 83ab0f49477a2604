package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app"
	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/wiki"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestServeAndShutdown(t *testing.T) {
	t.Parallel()
	cfg := apptest.Config()
	cfg.DataDir = t.TempDir()
	cfg.Addr = "127.0.0.1:0"
	a, err := app.Open(context.Background(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()

	t.Run("it serves on the port it picked", func(t *testing.T) {
		res, err := http.Get("http://" + a.Addr() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || string(b) != "ok\n" {
			t.Errorf("healthz: %d %q", res.StatusCode, b)
		}
	})

	t.Run("cancelling the context shuts it down cleanly", func(t *testing.T) {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after cancel")
		}
		if _, err := http.Get("http://" + a.Addr() + "/healthz"); err == nil {
			t.Error("still serving after shutdown")
		}
	})
}

func TestOpen(t *testing.T) {
	t.Parallel()

	t.Run("an invalid configuration is refused", func(t *testing.T) {
		cfg := apptest.Config()
		cfg.DataDir = t.TempDir()
		cfg.ReadGroup = "everyone"
		if _, err := app.Open(context.Background(), cfg, quiet()); err == nil || !strings.Contains(err.Error(), "read_group") {
			t.Errorf("err %v", err)
		}
	})

	t.Run("a second port on the same address is refused with advice", func(t *testing.T) {
		w := apptest.New(t)
		cfg := w.App.Config
		cfg.Addr = strings.TrimPrefix(w.URL, "http://")
		b, err := app.Open(context.Background(), cfg, quiet())
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if err := b.Listen(); err == nil || !strings.Contains(err.Error(), "--addr") {
			t.Errorf("Listen on a taken port: %v", err)
		}
	})

	t.Run("reopening keeps pages, the seed and the secret", func(t *testing.T) {
		dir := t.TempDir()
		w := apptest.New(t, func(c *config.Config) { c.DataDir = dir })
		_, pw := w.CreateUser(t, "Dana", wiki.GroupUser)
		ed := w.Login(t, "Dana", pw)
		ed.Edit("Main Page", "Edited main page.\n")
		anonCSRF := w.Client(t).CSRF("/wiki/Special:UserLogin")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}

		w2 := apptest.New(t, func(c *config.Config) { c.DataDir = dir })
		c := w2.Client(t)
		if got := c.Get("/wiki/Main_Page?action=raw").Body; got != "Edited main page.\n" {
			t.Errorf("after restart the main page is %q (re-seeded?)", got)
		}
		// An anonymous form opened before the restart can still be submitted.
		res := c.PostForm("/wiki/Special:UserLogin", url.Values{"csrf": {anonCSRF}, "username": {"Dana"}, "password": {pw}})
		if res.StatusCode != http.StatusSeeOther {
			t.Errorf("login with a pre-restart form: %d", res.StatusCode)
		}
	})

	t.Run("a deleted main page is not re-seeded", func(t *testing.T) {
		dir := t.TempDir()
		w := apptest.New(t, func(c *config.Config) { c.DataDir = dir })
		if err := w.App.Engine.Delete(context.Background(), wiki.MustTitle("Main Page"), "test", engine.Editor{UserName: "Tester"}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		w2 := apptest.New(t, func(c *config.Config) { c.DataDir = dir })
		if res := w2.Client(t).Get("/wiki/Main_Page"); res.StatusCode != http.StatusNotFound {
			t.Errorf("deleted main page after restart: %d, want 404", res.StatusCode)
		}
	})
}
