//go:build !race

package wikitext

const raceEnabled = false
