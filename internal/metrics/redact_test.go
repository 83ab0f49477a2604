package metrics

import "testing"

func TestRedactSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"/wiki/Special:PasswordReset?token=abc":                        "/wiki/Special:PasswordReset?token=REDACTED",
		"/wiki/Special:PasswordReset?a=1&token=abc&b":                  "/wiki/Special:PasswordReset?a=1&token=REDACTED&b",
		"/wiki/Main_Page":                                              "/wiki/Main_Page",
		"/wiki/Special:Search?q=mytoken=x":                             "/wiki/Special:Search?q=mytoken=x",
		"/wiki/Special:Watchlist?feed=atom&wlowner=Ann&wltoken=s3cret": "/wiki/Special:Watchlist?feed=atom&wlowner=Ann&wltoken=REDACTED",
		"/x?wltoken=a&token=b&WLTOKEN=c":                               "/x?wltoken=REDACTED&token=REDACTED&WLTOKEN=REDACTED",
	} {
		if got := redactSecrets(in); got != want {
			t.Errorf("redactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}
