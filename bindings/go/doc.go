// Package secbuf holds secrets in libsecbuf memory: guard pages, locked
// on first touch (never swapped), out of core dumps, not inherited by a
// forked child, wiped on Destroy.  It wraps the C library through cgo
// (pkg-config secbuf) and has memguard's shape, with errors instead of
// panics:
//
//	key, err := secbuf.NewBufferFromReader(f, 32)
//	if err != nil {
//		return err
//	}
//	defer key.Destroy()
//	mac := hmac.New(sha256.New, key.Bytes())
//
// # What stays out of Go memory
//
// Bytes returns the libsecbuf memory itself; reading into it
// (NewBufferFromReader, io.ReadFull(r, b.Bytes())) and passing it as a
// []byte leaves no copy behind in this package.  The Go runtime and the
// standard library copy freely, though, and each of these puts the secret
// into ordinary, swappable heap memory that is never wiped:
//
//   - string(b.Bytes()), and fmt.Sprintf/Printf of b.Bytes() in any verb
//     (of the Buffer itself, fmt prints only the size: see Printing);
//   - append(b.Bytes(), ...) (the slice is full, so append reallocates),
//     bytes.Clone, copy into a Go slice, and []byte(s) of a string;
//   - readers and writers that buffer: a bufio.Reader in front of r keeps
//     what it read in its own buffer;
//   - encoding/hex, base64 and friends, which produce new slices;
//   - hash and cipher states that take the key (hmac, aes.NewCipher):
//     they derive their own copies (round keys, padded keys).
//
// The package's tests scan the process's memory for a secret read with
// NewBufferFromReader and find it only in locked, non-dumpable mappings;
// the same secret read with io.ReadAll is found outside them.
//
// # Printing
//
// fmt prints a Buffer or a *Buffer as its size, never its bytes, in every
// verb and flag, alone or in a slice, map, interface or struct field:
// secbuf.Buffer{size: 32}, or secbuf.Buffer{destroyed}.  Where fmt calls
// no method (an unexported field of a struct, %w outside Errorf), it
// prints an address, and %p prints that of the Buffer's Go handle.
// Printing takes no lock: it is safe inside Do.  A Buffer is a handle, so
// a copy (*b) prints the same and holds the same secret; a zero Buffer
// is a destroyed one.
//
// # Lifetime
//
// Destroy frees a buffer; call it (defer b.Destroy()).  A buffer none of
// whose handles is reachable is destroyed by a finalizer, as a safety net
// only: like os.File's descriptor, a slice from Bytes does not keep its
// Buffer alive, so a buffer whose last use is b.Bytes() may be finalized
// while the slice is still read, and the read faults.  Keep b reachable
// while its bytes are used (a deferred Destroy does, as does
// runtime.KeepAlive(b)), or work inside Do.
//
// # Concurrency
//
// All methods may be called from several goroutines.  Do holds off
// Destroy, Freeze and Melt for as long as its function runs, so code that
// may race with a Destroy should read through Do rather than keep a slice
// from Bytes: a slice kept after Destroy points at unmapped memory, or, for
// a Packed buffer, at a slot that the next Packed buffer may get.  A
// destroyed buffer's Bytes is empty and its Size 0.
//
// # Freeze and Melt
//
// Freeze makes a buffer read-only and Melt writable again (secbuf_protect).
// A write to a frozen buffer is a fault that kills the program, unless
// runtime/debug.SetPanicOnFault turns it into a panic.
//
// # Options
//
// Packed() packs small secrets (up to PackedMax bytes) into shared locked
// slabs: far more of them fit under RLIMIT_MEMLOCK and in
// vm.max_map_count (each guarded buffer takes two map entries, and a Go
// program whose heap must grow once the count is used up dies with
// "runtime: out of memory").  Secret() takes memfd_secret memory, out of the
// kernel's direct map.  BestEffort() accepts unlocked memory rather than
// an error; Populate() locks every page at once.
package secbuf
