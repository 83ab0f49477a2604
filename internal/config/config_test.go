package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

func TestMaxPageBytes(t *testing.T) {
	c := Default()
	if c.MaxPageBytes != 2<<20 {
		t.Errorf("default max_page_bytes = %d, want 2 MiB (MediaWiki's)", c.MaxPageBytes)
	}
	if got, want := c.BodyLimit(), int64(3*(2<<20)+64<<10); got != want {
		t.Errorf("derived body limit = %d, want %d: room for a percent-encoded page at the limit", got, want)
	}
	if err := c.LoadEnv(func(k string) string {
		return map[string]string{"WIKID_MAX_PAGE_BYTES": "65536"}[k]
	}); err != nil || c.MaxPageBytes != 65536 {
		t.Errorf("WIKID_MAX_PAGE_BYTES=65536: %d, %v", c.MaxPageBytes, err)
	}
	if err := c.LoadEnv(func(k string) string {
		return map[string]string{"WIKID_MAX_PAGE_BYTES": "2MB"}[k]
	}); err == nil || !strings.Contains(err.Error(), "number of bytes") {
		t.Errorf("WIKID_MAX_PAGE_BYTES=2MB: %v, want an error saying what to write", err)
	}
	c.MaxBodyBytes = 5000
	if c.BodyLimit() != 5000 {
		t.Errorf("an explicit max_body_bytes is not the limit: %d", c.BodyLimit())
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.MaxPageBytes = 100 },
		func(c *Config) { c.MaxPageBytes = MaxPageBytesLimit + 1 },
		func(c *Config) { c.RenderConcurrency = -1 },
		func(c *Config) { c.RenderTimeout = Duration(time.Millisecond) },
	} {
		c := Default()
		bad(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%+v validated", c)
		}
	}
	c = Default()
	if err := c.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestCapitalLinks(t *testing.T) {
	c := Default()
	if !c.CapitalLinks || !c.TitleRules().CapitalLinks() {
		t.Fatal("capital_links is not on by default")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "wikid.json")
	if err := os.WriteFile(file, []byte(`{"capital_links": false, "main_page": "main page"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadFile(file); err != nil || c.CapitalLinks {
		t.Fatalf("capital_links false in the file: %v, %v", c.CapitalLinks, err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("capital_links false: %v", err)
	}
	if mp, _ := c.TitleRules().Parse(c.MainPage); mp != "main page" {
		t.Errorf("main page %q under capital_links false, want %q", mp, "main page")
	}
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"WIKID_CAPITAL_LINKS": v}[k] }
	}
	if err := c.LoadEnv(env("true")); err != nil || !c.CapitalLinks {
		t.Errorf("WIKID_CAPITAL_LINKS=true over the file's false: %v, %v", c.CapitalLinks, err)
	}
	if err := c.LoadEnv(env("0")); err != nil || c.CapitalLinks {
		t.Errorf("WIKID_CAPITAL_LINKS=0: %v, %v", c.CapitalLinks, err)
	}
	if err := c.LoadEnv(env("no")); err == nil || !strings.Contains(err.Error(), "want true") {
		t.Errorf("WIKID_CAPITAL_LINKS=no: %v, want an error saying what to write", err)
	}
	if err := os.WriteFile(file, []byte(`{"capital_links": "no"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadFile(file); err == nil {
		t.Error(`capital_links "no" in the file is accepted`)
	}
}

func TestDefaultContentModel(t *testing.T) {
	if c := Default(); c.DefaultContentModel != wiki.ModelMarkdown {
		t.Fatalf("default_content_model is %q by default, want markdown", c.DefaultContentModel)
	}
	for _, tt := range []struct {
		env   string
		valid bool
	}{{"wikitext", true}, {"markdown", true}, {"html", false}, {"Wikitext", false}} {
		t.Run(tt.env, func(t *testing.T) {
			c := Default()
			if err := c.LoadEnv(func(k string) string {
				return map[string]string{"WIKID_DEFAULT_CONTENT_MODEL": tt.env}[k]
			}); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			if tt.valid != (err == nil) {
				t.Fatalf("Validate: %v, want valid %v", err, tt.valid)
			}
			if err != nil && !strings.Contains(err.Error(), "markdown or wikitext") {
				t.Errorf("the error does not say what to write: %v", err)
			}
		})
	}
}
