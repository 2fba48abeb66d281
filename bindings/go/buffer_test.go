package secbuf

import (
	"bytes"
	"errors"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mustBuffer(t *testing.T, size int, opts ...Option) *Buffer {
	t.Helper()
	b, err := NewBuffer(size, opts...)
	if err != nil {
		t.Fatalf("NewBuffer(%d): %v", size, err)
	}
	t.Cleanup(b.Destroy)
	return b
}

func TestNewBufferSizes(t *testing.T) {
	for _, size := range []int{1, 15, 16, 32, PackedMax, 4095, 4096, 4097, 1 << 20} {
		for _, packed := range []bool{false, true} {
			var opts []Option
			if packed {
				opts = append(opts, Packed())
			}
			b := mustBuffer(t, size, opts...)
			data := b.Bytes()
			if len(data) != size || b.Size() != size {
				t.Fatalf("size %d packed %v: len %d, Size %d", size, packed, len(data), b.Size())
			}
			if !bytes.Equal(data, make([]byte, size)) {
				t.Fatalf("size %d packed %v: not zeroed", size, packed)
			}
			for i := range data {
				data[i] = byte(i)
			}
			if data[size-1] != byte(size-1) || !b.IsAlive() {
				t.Fatalf("size %d packed %v: write not kept", size, packed)
			}
		}
	}
}

func TestBadSizesAreErrors(t *testing.T) {
	for _, size := range []int{0, -1, math.MinInt} {
		if b, err := NewBuffer(size); b != nil || !errors.Is(err, ErrInvalidSize) {
			t.Errorf("NewBuffer(%d) = %v, %v; want ErrInvalidSize", size, b, err)
		}
		if b, err := NewBufferFromReader(strings.NewReader("x"), size); b != nil || !errors.Is(err, ErrInvalidSize) {
			t.Errorf("NewBufferFromReader(%d) = %v, %v; want ErrInvalidSize", size, b, err)
		}
	}
	if b, err := NewBufferFromBytes(nil); b != nil || !errors.Is(err, ErrInvalidSize) {
		t.Errorf("NewBufferFromBytes(nil) = %v, %v; want ErrInvalidSize", b, err)
	}
	// More than the address space: libsecbuf's errno, wrapped, not a crash.
	for _, size := range []int{math.MaxInt, 1 << 47} {
		b, err := NewBuffer(size)
		if b != nil || err == nil {
			t.Fatalf("NewBuffer(%d) succeeded", size)
		}
		var errno syscall.Errno
		if !errors.As(err, &errno) || !strings.Contains(err.Error(), "secbuf: allocating") {
			t.Errorf("NewBuffer(%d): %v; want a wrapped errno", size, err)
		}
		t.Logf("NewBuffer(%d): %v", size, err)
	}
}

func TestRefusedLockNamesTheFix(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EAGAIN, syscall.EPERM, syscall.ENOMEM} {
		err := allocError(32, errno)
		if !errors.Is(err, errno) || !strings.Contains(err.Error(), " (RLIMIT_MEMLOCK is") &&
			!strings.Contains(err.Error(), " (too large for the address space or vm.max_map_count, or RLIMIT_MEMLOCK is") {
			t.Errorf("allocError(%v) = %q", errno, err)
		}
	}
	if err := allocError(32, syscall.ENOSYS); !strings.Contains(err.Error(), "secretmem") {
		t.Errorf("allocError(ENOSYS) = %q", err)
	}
}

func TestDestroyedBufferIsEmpty(t *testing.T) {
	for _, opts := range [][]Option{nil, {Packed()}} {
		b, err := NewBuffer(64, opts...)
		if err != nil {
			t.Fatal(err)
		}
		b.Destroy()
		b.Destroy() // twice is fine
		if got := b.Bytes(); len(got) != 0 || got != nil {
			t.Errorf("Bytes after Destroy: len %d", len(got))
		}
		if b.Size() != 0 || b.IsAlive() {
			t.Errorf("Size %d, IsAlive %v after Destroy", b.Size(), b.IsAlive())
		}
		if err := b.Freeze(); !errors.Is(err, ErrDestroyed) {
			t.Errorf("Freeze after Destroy: %v", err)
		}
		if err := b.Melt(); !errors.Is(err, ErrDestroyed) {
			t.Errorf("Melt after Destroy: %v", err)
		}
		called := false
		if err := b.Do(func([]byte) error { called = true; return nil }); !errors.Is(err, ErrDestroyed) || called {
			t.Errorf("Do after Destroy: %v, fn called %v", err, called)
		}
	}
}

// writeFaults reports whether a write to p faults (as a panic, not a crash).
func writeFaults(p []byte) (faulted bool) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			_, faulted = r.(interface{ Addr() uintptr })
		}
	}()
	p[0] = 1
	return false
}

func TestFreezeMelt(t *testing.T) {
	b := mustBuffer(t, 100)
	b.Bytes()[0] = 42
	if err := b.Freeze(); err != nil {
		t.Fatal(err)
	}
	if b.Bytes()[0] != 42 {
		t.Fatal("frozen buffer not readable")
	}
	if !writeFaults(b.Bytes()) {
		t.Fatal("a write to a frozen buffer did not fault")
	}
	if err := b.Melt(); err != nil {
		t.Fatal(err)
	}
	if writeFaults(b.Bytes()) || b.Bytes()[0] != 1 {
		t.Fatal("a melted buffer is not writable")
	}
	// A frozen buffer is destroyed as well as a writable one.
	if err := b.Freeze(); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
}

func TestPackedCannotFreeze(t *testing.T) {
	small := mustBuffer(t, 32, Packed())
	if err := small.Freeze(); !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "Packed") {
		t.Errorf("Freeze of a packed buffer: %v", err)
	}
	// Above PackedMax, Packed() gets a guarded buffer, which freezes.
	large := mustBuffer(t, PackedMax+1, Packed())
	if err := large.Freeze(); err != nil {
		t.Errorf("Freeze of a large Packed() buffer: %v", err)
	}
}

func TestPurgeZeroesEveryBuffer(t *testing.T) {
	bufs := []*Buffer{mustBuffer(t, 32), mustBuffer(t, 32, Packed()), mustBuffer(t, 5000)}
	for _, b := range bufs {
		for i := range b.Bytes() {
			b.Bytes()[i] = 0xa5
		}
	}
	if err := bufs[2].Freeze(); err != nil {
		t.Fatal(err)
	}
	Purge()
	for i, b := range bufs {
		if !bytes.Equal(b.Bytes(), make([]byte, b.Size())) {
			t.Errorf("buffer %d not zeroed by Purge", i)
		}
	}
	// Purge leaves guarded buffers writable, frozen ones too.
	if writeFaults(bufs[2].Bytes()) {
		t.Error("a purged buffer is not writable")
	}
}

func TestFromReader(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	b, err := NewBufferFromReader(bytes.NewReader(key), 32)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	if !bytes.Equal(b.Bytes(), key) {
		t.Fatalf("read %q", b.Bytes())
	}
	before := live.Load()
	if _, err := NewBufferFromReader(bytes.NewReader(key[:10]), 32); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short read: %v", err)
	}
	if _, err := NewBufferFromReader(bytes.NewReader(nil), 32); !errors.Is(err, io.EOF) {
		t.Errorf("empty read: %v", err)
	}
	if live.Load() != before {
		t.Errorf("a failed read left %d buffers alive", live.Load()-before)
	}
}

func TestFromBytesZeroesSource(t *testing.T) {
	src := []byte("a secret of 21 bytes.")
	b, err := NewBufferFromBytes(src)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	if string(b.Bytes()) != "a secret of 21 bytes." || !bytes.Equal(src, make([]byte, len(src))) {
		t.Errorf("buffer %q, source %q", b.Bytes(), src)
	}
}

func TestSecretTier(t *testing.T) {
	b, err := NewBuffer(32, Secret())
	if err != nil {
		// A kernel without memfd_secret: the error says so, and the
		// fallback must be asked for.
		if !errors.Is(err, syscall.ENOSYS) || !strings.Contains(err.Error(), "secretmem") {
			t.Fatalf("Secret(): %v", err)
		}
		t.Logf("no secret memory here: %v", err)
		b, err = NewBuffer(32, Secret(), BestEffort())
		if err != nil {
			t.Fatalf("Secret(), BestEffort(): %v", err)
		}
	}
	defer b.Destroy()
	b.Bytes()[31] = 7
	if b.Bytes()[31] != 7 {
		t.Error("secret buffer not writable")
	}
	p := mustBuffer(t, 32, Secret(), Packed(), BestEffort())
	p.Bytes()[0] = 1
}

func TestLockMethod(t *testing.T) {
	m, err := LockMethod()
	if err != nil {
		t.Fatal(err)
	}
	switch m {
	case "maplockonfault", "mlock2", "mlock", "none":
		t.Logf("lock method %s", m)
	default:
		t.Errorf("lock method %q", m)
	}
}

// A buffer never destroyed is freed by its finalizer.
func TestFinalizerFreesForgottenBuffer(t *testing.T) {
	before := live.Load()
	func() {
		for i := 0; i < 10; i++ {
			if _, err := NewBuffer(32); err != nil {
				t.Fatal(err)
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for live.Load() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := live.Load() - before; n > 0 {
		t.Errorf("%d forgotten buffers still alive after GC", n)
	}
}
