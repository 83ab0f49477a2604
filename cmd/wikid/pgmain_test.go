package main

import (
	"testing"

	"github.com/wikid/wikid/internal/store/postgres/pgtest"
)

// TestMain stops the PostgreSQL cluster the tests that need one started.
func TestMain(m *testing.M) { pgtest.Main(m) }
