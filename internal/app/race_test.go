//go:build race

package app_test

// raceEnabled: the race detector costs five to ten times the time; the
// largest matrices run a covering sample under it (.ci/run runs them
// whole without it).
const raceEnabled = true
