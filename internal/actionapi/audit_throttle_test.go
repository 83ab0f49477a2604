package actionapi_test

import (
	"net/url"
	"testing"
)

// The login throttle counts an account's failures from an address under
// one key however its name is spelled: "Root", "ROOT", "rOOT@bot" are
// one account (names are found case-insensitively), so they share the
// free failures of (address, account).
func TestLoginThrottleByAccountNotSpelling(t *testing.T) {
	wd := newWorld(t)
	c := wd.w.Client(t)
	try := func(name string) string {
		out, _ := api(t, c, "GET", url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}})
		tok := dig(out, "query", "tokens", "logintoken").(string)
		out, _ = api(t, c, "POST", url.Values{"action": {"login"}, "lgname": {name}, "lgpassword": {"guess"}, "lgtoken": {tok}})
		r, _ := dig(out, "login", "result").(string)
		return r
	}
	for i := range 5 {
		if r := try("Root"); r != "Failed" {
			t.Fatalf("attempt %d: %s", i, r)
		}
	}
	for _, name := range []string{"ROOT", "rOOT@bot", "RoOt", " root "} {
		if r := try(name); r != "Throttled" {
			t.Errorf("%q after 5 failures as Root: %s", name, r)
		}
	}
}
