// Package deps pins the module's dependencies while the packages that use
// them are being written in parallel. Delete it once every import is real.
package deps

import (
	_ "github.com/andybalholm/brotli"
	_ "github.com/maypok86/otter/v2"
	_ "github.com/microcosm-cc/bluemonday"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/yuin/goldmark"
	_ "golang.org/x/crypto/argon2"
	_ "modernc.org/sqlite"
)
