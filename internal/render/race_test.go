//go:build race

package render

// raceEnabled slows the hostile-input time limits: the race detector costs 5–10×.
const raceEnabled = true
