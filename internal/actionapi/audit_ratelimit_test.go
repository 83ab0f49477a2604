package actionapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/config"
)

// An anonymous client's rate limits are counted per IPv6 /64, as the
// login throttle counts it: one host holds a whole /64 and would
// otherwise have 2^64 budgets.
func TestRateLimitPerIPv6Prefix(t *testing.T) {
	wd := newWorld(t, func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1", "::1"} })
	anon := wd.w.Client(t)
	limited := false
	for i := range 70 {
		form := url.Values{"action": {"parse"}, "text": {"Hello"}, "format": {"json"}}
		r := anon.NewRequest("POST", "/w/api.php", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-Forwarded-For", fmt.Sprintf("2001:db8:1:2::%x", i+1))
		res := anon.Do(r)
		if strings.Contains(res.Body, "ratelimited") {
			limited = true
			break
		}
	}
	if !limited {
		t.Errorf("70 parses from one /64 were not rate limited")
	}
	// Another /64 has its own budget.
	form := url.Values{"action": {"parse"}, "text": {"Hello"}, "format": {"json"}}
	r := anon.NewRequest("POST", "/w/api.php", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("X-Forwarded-For", "2001:db8:1:3::1")
	if res := anon.Do(r); strings.Contains(res.Body, "error") {
		t.Errorf("another /64: %s", res.Body)
	}
}
