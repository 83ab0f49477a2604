package config

import (
	"strings"
	"testing"
	"time"
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
