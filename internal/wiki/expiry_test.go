package wiki

import (
	"testing"
	"time"
)

func TestParseExpiry(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "2w": 14 * 24 * time.Hour,
		"1y": 365 * 24 * time.Hour, "90m": 90 * time.Minute, " 3D ": 72 * time.Hour,
		"1 week": 7 * 24 * time.Hour, "12 Hours": 12 * time.Hour, "1 month": 30 * 24 * time.Hour, "2 years": 730 * 24 * time.Hour} {
		got, err := ParseExpiry(in, now)
		if err != nil || !got.Equal(now.Add(want)) {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", in, got, err, now.Add(want))
		}
	}
	for _, in := range []string{"infinite", "indefinite", "never"} {
		if got, err := ParseExpiry(in, now); err != nil || !got.IsZero() {
			t.Errorf("ParseExpiry(%q) = %v, %v; want the zero time", in, got, err)
		}
	}
	for _, in := range []string{"", "soon", "0d", "-1h", "7x", "d", "99999999d", "1 fortnight", "0 days", "a week", "101 years", "1 week ago"} {
		if _, err := ParseExpiry(in, now); KindOf(err) != KindInvalid {
			t.Errorf("ParseExpiry(%q): err %v, want an invalid-input error", in, err)
		}
	}
}

func TestDurationsPastACenturyAreRefused(t *testing.T) {
	for _, s := range []string{"585y", "101y", "36500w", "900000h"} {
		if d, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error (wrapped around or past 100 years)", s, d)
		}
	}
	if d, err := ParseDuration("100y"); err != nil || d != 100*365*24*time.Hour {
		t.Errorf("ParseDuration(100y) = %v, %v", d, err)
	}
}
