package web

import (
	"testing"
	"time"
)

func TestWaitText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Millisecond: "a second", time.Second: "a second", 1500 * time.Millisecond: "2 seconds",
		16 * time.Second: "16 seconds", 59 * time.Second: "59 seconds", time.Minute: "a minute",
		61 * time.Second: "2 minutes", 15 * time.Minute: "15 minutes",
	} {
		if got := waitText(d); got != want {
			t.Errorf("waitText(%v) = %q, want %q", d, got, want)
		}
	}
}
