//go:build race

package diff

// raceEnabled is set when the tests run under the race detector, which
// makes the code several times slower: timing checks allow for it.
const raceEnabled = true
