//go:build !race

// Package race tells whether the binary was built with the race detector,
// which makes the code five to twenty times slower (the store's SQLite, Go
// translated from C with every access checked, the most): tests run a
// sample of their longest loops and allow longer times under it, and
// .ci/run runs those loops whole without it.
package race

// Enabled is true in a build with the race detector.
const Enabled = false
