package secbuf

import (
	"errors"
	"fmt"
	"syscall"
)

var (
	// ErrInvalidSize is returned for a size of zero or less.
	ErrInvalidSize = errors.New("secbuf: size must be at least 1 byte")
	// ErrDestroyed is returned by calls on a destroyed buffer.
	ErrDestroyed = errors.New("secbuf: buffer already destroyed")
)

// allocError wraps libsecbuf's errno (errors.Is(err, syscall.ENOMEM) and
// the like still work) with the way out, where there is one.
func allocError(size int, err error) error {
	fix := ""
	switch {
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.ENOMEM), errors.Is(err, syscall.EPERM):
		limit := "RLIMIT_MEMLOCK"
		if lim, ok := memlockLimit(); ok {
			limit = fmt.Sprintf("RLIMIT_MEMLOCK is %d kB", lim/1024)
		}
		also := ""
		if errors.Is(err, syscall.ENOMEM) {
			also = "too large for the address space or vm.max_map_count, or "
		}
		fix = fmt.Sprintf(" (%s%s: raise it with ulimit -l or LimitMEMLOCK=, destroy buffers sooner, "+
			"use Packed() for small secrets, or BestEffort())", also, limit)
	case errors.Is(err, syscall.ENOSYS):
		fix = " (no secret memory or forced lock method here: secretmem.enable=1 before Linux 6.5, " +
			"or drop Secret(), or add BestEffort())"
	}
	return fmt.Errorf("secbuf: allocating %d bytes: %w%s", size, err, fix)
}

func protectError(readOnly bool, err error) error {
	op := "Melt"
	if readOnly {
		op = "Freeze"
	}
	if errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("secbuf: %s: %w (a Packed buffer shares its pages: allocate it without Packed())", op, err)
	}
	return fmt.Errorf("secbuf: %s: %w", op, err)
}
