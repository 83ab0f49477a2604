package wiki

import (
	"strconv"
	"strings"
	"time"
)

// ParseExpiry reads an expiry as MediaWiki's block form takes it: "infinite"
// (or "indefinite", "infinity", "never") for no end, which returns the zero
// time; otherwise a duration from now: a number with a unit, such as "90m",
// "24h", "7d", "2w" or "1y" (Go durations like "1h30m" work too).
func ParseExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "infinite", "indefinite", "infinity", "never":
		return time.Time{}, nil
	case "":
		return time.Time{}, Errorf(KindInvalid, "give an expiry: a duration such as 24h, 7d, 2w or 1y, or \"infinite\"")
	}
	d, err := ParseDuration(s)
	if err != nil {
		return time.Time{}, err
	}
	return now.Add(d), nil
}

// durationWords are the units a duration may spell out ("2 weeks").
var durationWords = map[string]time.Duration{
	"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
	"month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour,
}

// ParseDuration reads a positive duration with the units of time.ParseDuration
// and also d (day), w (week) and y (365 days), or a number and a word:
// "90 minutes", "12 hours", "1 day", "2 weeks", "1 month" (30 days), "1 year".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	bad := Errorf(KindInvalid, "%.40q is not a duration; write a number and a unit, such as 90m, 24h, 7d, 2w or 1y (or \"1 week\")", s)
	var d time.Duration
	if num, word, ok := strings.Cut(s, " "); ok {
		// Words, as the protection form takes them: "1 week", "12 hours".
		v, err := strconv.Atoi(num)
		unit, known := durationWords[strings.TrimSuffix(strings.TrimSpace(word), "s")]
		if err != nil || !known || v <= 0 || time.Duration(v) > 100*365*24*time.Hour/unit {
			return 0, bad
		}
		d = time.Duration(v) * unit
	} else if n := len(s); n > 1 && strings.ContainsRune("dwy", rune(s[n-1])) {
		v, err := strconv.Atoi(s[:n-1])
		if err != nil || v <= 0 || v > 100*365 {
			return 0, bad
		}
		unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour, 'y': 365 * 24 * time.Hour}[s[n-1]]
		if time.Duration(v) > 100*365*24*time.Hour/unit {
			return 0, Errorf(KindInvalid, "%.40q is longer than 100 years; use infinite for no end", s)
		}
		d = time.Duration(v) * unit
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
		if d > 100*365*24*time.Hour {
			return 0, Errorf(KindInvalid, "%.40q is longer than 100 years; use infinite for no end", s)
		}
	}
	if d <= 0 {
		return 0, Errorf(KindInvalid, "the duration %.40q must be more than zero", s)
	}
	return d, nil
}
