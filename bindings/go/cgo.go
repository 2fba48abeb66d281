package secbuf

// The only file that calls libsecbuf: every C call of the package is one
// of these thin wrappers.  Only C pointers cross into Go; no Go pointer is
// ever passed to C (cgo's pointer rules).

// #cgo pkg-config: secbuf
// #include <stdlib.h>
// #include <sys/resource.h>
// #include <secbuf.h>
import "C"

import (
	"syscall"
	"unsafe"
)

const (
	flagPopulate   = C.SECBUF_POPULATE
	flagBestEffort = C.SECBUF_BEST_EFFORT
	flagPacked     = C.SECBUF_PACKED
	flagSecret     = C.SECBUF_SECRET
)

// PackedMax (options.go) is the header's SECBUF_PACKED_MAX: a constant of
// either sign here fails to compile when they differ.
const _ = uint(PackedMax-C.SECBUF_PACKED_MAX) + uint(C.SECBUF_PACKED_MAX-PackedMax)

// cAlloc returns size bytes of libsecbuf memory as a slice, or the errno.
func cAlloc(size int, flags uint) ([]byte, error) {
	p, err := C.secbuf_alloc_flags(C.size_t(size), C.uint(flags))
	if p == nil {
		if err == nil {
			err = syscall.ENOMEM // libsecbuf always sets errno; never a nil error
		}
		return nil, err
	}
	return unsafe.Slice((*byte)(p), size), nil
}

// cFree wipes and unmaps a slice that cAlloc returned.
func cFree(data []byte) {
	C.secbuf_free(unsafe.Pointer(&data[0]))
}

func cProtect(data []byte, readOnly bool) error {
	mode := C.int(C.SECBUF_READWRITE)
	if readOnly {
		mode = C.SECBUF_READONLY
	}
	if rc, err := C.secbuf_protect(unsafe.Pointer(&data[0]), mode); rc != 0 {
		return err
	}
	return nil
}

func cPurge() {
	C.secbuf_purge()
}

func cLockMethod() (string, error) {
	m, err := C.secbuf_lock_method()
	if m < 0 {
		return "", err
	}
	return C.GoString(C.secbuf_lock_method_name(m)), nil
}

// memlockLimit is the soft RLIMIT_MEMLOCK in bytes, for error messages.
func memlockLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if syscall.Getrlimit(C.RLIMIT_MEMLOCK, &rl) != nil {
		return 0, false
	}
	return rl.Cur, true
}
