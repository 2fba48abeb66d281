package main

// The C API's own rate, in one cgo call per batch: what the binding's
// per-call overhead is measured against.

// #cgo pkg-config: secbuf
// #include <secbuf.h>
// #include <string.h>
// static int pairs(long n, unsigned flags)
// {
// 	for (long i = 0; i < n; i++) {
// 		volatile char *p = secbuf_alloc_flags(32, flags);
// 		if (!p)
// 			return -1;
// 		p[0] = 1;
// 		secbuf_free((void *)p);
// 	}
// 	return 0;
// }
// static int large(size_t size, unsigned flags)
// {
// 	char *p = secbuf_alloc_flags(size, flags);
// 	if (!p)
// 		return -1;
// 	memset(p, 1, 4096);
// 	secbuf_free(p);
// 	return 0;
// }
import "C"

import "unsafe"

const (
	cGuarded = "libsecbuf C API"
	cPacked  = "libsecbuf C API, SECBUF_PACKED"
)

func init() {
	contenders = append(contenders, cContender(cGuarded, 0), cContender(cPacked, C.SECBUF_PACKED))
}

func cContender(name string, flags C.uint) contender {
	return contender{
		name: name,
		pairs: func(n int) error {
			if rc, err := C.pairs(C.long(n), flags); rc != 0 {
				return err
			}
			return nil
		},
		large: func() error {
			if rc, err := C.large(gib, flags); rc != 0 {
				return err
			}
			return nil
		},
	}
}

// bareCgoPairs makes one cgo call per alloc and per free, with nothing
// around them: the floor any cgo binding pays.
func bareCgoPairs(n int, packed bool) error {
	flags := C.uint(0)
	if packed {
		flags = C.SECBUF_PACKED
	}
	for i := 0; i < n; i++ {
		p, err := C.secbuf_alloc_flags(32, flags)
		if p == nil {
			return err
		}
		*(*byte)(p) = 1
		C.secbuf_free(unsafe.Pointer(p))
	}
	return nil
}
