//go:build race

package sqlite_test

// raceEnabled: the race detector costs this package's SQLite (Go
// translated from C, every access checked) twenty times the time; the
// test that builds the largest index runs without it (.ci/run).
const raceEnabled = true
