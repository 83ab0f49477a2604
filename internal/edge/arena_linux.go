package edge

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// newArena creates the arena's memory file. Its size can only grow
// (F_SEAL_SHRINK): a region handed to sendfile is never cut short under it.
func newArena(min int64) (*arena, error) {
	fd, err := unix.MemfdCreate("wikid-edge", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("edge: memfd_create: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("edge: seal the arena: %w", err)
	}
	a := &arena{fd: fd, min: min}
	// The descriptor closes when nothing refers to the arena any more: no
	// cache, entry or blob in flight.
	runtime.AddCleanup(a, func(fd int) { unix.Close(fd) }, fd)
	return a, nil
}

// put copies b into a fresh region and returns its offset.
func (a *arena) put(b []byte) (int64, error) {
	size := pageRound(int64(len(b)))
	off := a.next.Add(size) - size
	for done := 0; done < len(b); {
		n, err := unix.Pwrite(a.fd, b[done:], off+int64(done))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			a.punch(off, size)
			return 0, fmt.Errorf("edge: write the arena: %w", err)
		}
		done += n
	}
	a.bytes.Add(size)
	return off, nil
}

// free returns a region's pages to the system.
func (a *arena) free(off, n int64) {
	size := pageRound(n)
	a.punch(off, size)
	a.bytes.Add(-size)
}

func (a *arena) punch(off, size int64) {
	for {
		err := unix.Fallocate(a.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, size)
		if err != unix.EINTR {
			return
		}
	}
}
