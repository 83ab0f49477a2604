//go:build race

package wikitext

// raceEnabled: the race detector slows renders several times over, so
// the tests' timings do not hold.
const raceEnabled = true
