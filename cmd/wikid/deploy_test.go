package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The systemd units in deploy/systemd are valid for systemd, with the
// binary where they expect it (here: one built for the test).
func TestSystemdUnits(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the units in deploy/systemd are not checked")
	}
	dir := t.TempDir()
	bin := buildWikid(t, dir)
	var units []string
	for _, name := range []string{"wikid.service", "wikid-jobs.service"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "ExecStart=/usr/local/bin/wikid ") {
			t.Fatalf("%s: no ExecStart=/usr/local/bin/wikid", name)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), "/usr/local/bin/wikid", bin)), 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, path)
	}
	out, err := exec.Command(analyze, append([]string{"verify"}, units...)...).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
