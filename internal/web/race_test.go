//go:build race

package web_test

// raceEnabled: the race detector costs the store's SQLite (Go translated
// from C, every access checked) twenty times the time; the longest loops
// run a sample under it (.ci/run runs them whole without it).
const raceEnabled = true
