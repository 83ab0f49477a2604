//go:build !linux

package jobs

// setNice does nothing where threads have no niceness of their own.
func setNice(int) error { return nil }
