package secbuf

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A Buffer is a secret in libsecbuf memory: locked, out of core dumps,
// wiped and unmapped by Destroy.  Its methods are safe for concurrent use.
// fmt prints it as its size only (format.go).  A Buffer is a handle: a
// copy of one (*b) is the same secret, not a second one.
type Buffer struct {
	s *state // nil in a zero Buffer, which behaves as a destroyed one
}

type state struct {
	// mu orders Destroy, Freeze and Melt (writers) after every Do
	// (readers), so that no Do sees memory unmapped under it.
	mu sync.RWMutex
	// The memory as a pointer and a length, never a []byte: where fmt
	// reaches these fields without calling a method (an unexported
	// field, a bad verb: format.go), it prints a pointer as an address
	// and a slice as its bytes.
	p    unsafe.Pointer // libsecbuf memory; nil once destroyed
	size atomic.Int64   // its length, 0 once destroyed; String reads it lock-free
}

// zeroState stands for the state a zero Buffer lacks: no memory.
var zeroState state

func (b *Buffer) st() *state {
	if b.s == nil {
		return &zeroState
	}
	return b.s
}

// bytes is the memory as a slice; the caller holds mu.
func (s *state) bytes() []byte {
	if s.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(s.p), s.size.Load())
}

// live counts the buffers not yet destroyed (tests read it).
var live atomic.Int64

// NewBuffer allocates size bytes of zeroed secret memory.  Size 0 or less
// is ErrInvalidSize; a refused allocation is an error that wraps the
// errno (syscall.ENOMEM, EAGAIN, EPERM, ENOSYS) and names the way out.
func NewBuffer(size int, opts ...Option) (*Buffer, error) {
	if size <= 0 {
		return nil, ErrInvalidSize
	}
	c := configure(opts)
	data, err := cAlloc(size, c.flags)
	if err != nil {
		return nil, allocError(size, err)
	}
	s := &state{p: unsafe.Pointer(&data[0])}
	s.size.Store(int64(size))
	live.Add(1)
	// A safety net for a buffer never destroyed, not the way to free one:
	// see "Lifetime" in the package documentation.  On the state, not the
	// handle, so that a copy of the handle keeps the memory.
	runtime.SetFinalizer(s, (*state).destroy)
	return &Buffer{s: s}, nil
}

// Bytes returns the buffer's memory itself, not a copy: writes to it are
// writes to the secret.  It is valid until Destroy; a destroyed buffer
// gives an empty slice.  Keep b reachable while the slice is in use
// (defer b.Destroy() does), or use Do.
func (b *Buffer) Bytes() []byte {
	s := b.st()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bytes()
}

// Size is the buffer's length in bytes, 0 once destroyed.
func (b *Buffer) Size() int {
	s := b.st()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.bytes())
}

// IsAlive reports whether the buffer has not been destroyed.
func (b *Buffer) IsAlive() bool {
	return b.Size() != 0
}

// Do calls fn with the buffer's memory while holding off Destroy, Freeze
// and Melt from other goroutines, so that fn never sees the memory go away.
// It returns ErrDestroyed without calling fn on a destroyed buffer, and
// otherwise what fn returns.  fn must not call Destroy, Freeze or Melt on b.
func (b *Buffer) Do(fn func([]byte) error) error {
	s := b.st()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.p == nil {
		return ErrDestroyed
	}
	return fn(s.bytes())
}

// Destroy wipes the buffer and gives its memory back.  It waits for any Do
// in progress; destroying twice is a no-op.
func (b *Buffer) Destroy() {
	b.st().destroy()
}

// destroy is Destroy, and the finalizer of a state that no handle reaches.
func (s *state) destroy() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return
	}
	cFree(s.bytes())
	s.p = nil
	s.size.Store(0)
	live.Add(-1)
	runtime.SetFinalizer(s, nil)
}

// Freeze makes the buffer read-only: a write faults (the program dies, as
// with any bad memory access).  It fails for a Packed buffer of at most
// PackedMax bytes, whose pages are shared, and with ErrDestroyed.
func (b *Buffer) Freeze() error {
	return b.protect(true)
}

// Melt makes a frozen buffer writable again.
func (b *Buffer) Melt() error {
	return b.protect(false)
}

func (b *Buffer) protect(readOnly bool) error {
	s := b.st()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return ErrDestroyed
	}
	if err := cProtect(s.bytes(), readOnly); err != nil {
		return protectError(readOnly, err)
	}
	return nil
}

// Purge zeroes every live buffer of the process, whichever package or
// language made it (their memory stays mapped, and frozen ones become
// writable), so that no
// secret is left behind, say before an exit on a fatal error.  It never
// waits for a lock.
func Purge() {
	cPurge()
}

// LockMethod names how this process locks buffers: "maplockonfault",
// "mlock2", "mlock" or "none"; an error says why it has none.
func LockMethod() (string, error) {
	return cLockMethod()
}
