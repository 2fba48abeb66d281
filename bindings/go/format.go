package secbuf

import (
	"fmt"
	"strconv"
	"strings"
)

// fmt prints a Buffer as its size, never its bytes: Format answers every
// verb and flag the same way ("secbuf.Buffer{size: 32}", or
// "secbuf.Buffer{destroyed}"), padded to a width.  The methods have
// value receivers, so that b, *b and a Buffer in a slice, map, interface
// or exported field all reach them; a Buffer holds no lock to copy (its
// state is behind a pointer), so a value receiver is cheap and vet-clean.
//
// fmt calls no method at all in three cases, and prints the fields by
// reflection instead: an unexported struct field that holds a Buffer, a
// bad verb (%w outside Errorf or of a non-error, %p of a Buffer value,
// any verb that does not suit a pointer met inside such a field), and %T.
// That is why the bytes sit behind a pointer to the state, and in the
// state as an unsafe.Pointer rather than a []byte: reflection prints an
// address there, never the memory (print_test.go tries every verb).
//
// %p is fmt's own, before any method: for a *Buffer it prints the address
// of the handle, a Go heap object, which says nothing of the secret or
// where it is mapped; a method could not change that, and an address is
// what %p is asked for, so it is left as it is.

// String describes the buffer without its contents: its size, or that it
// is destroyed (a zero Buffer is).  It reads no memory and takes no lock,
// so it is safe inside Do and while another goroutine destroys b.
func (b Buffer) String() string {
	var n int64
	if b.s != nil {
		n = b.s.size.Load()
	}
	if n == 0 {
		return "secbuf.Buffer{destroyed}"
	}
	return "secbuf.Buffer{size: " + strconv.FormatInt(n, 10) + "}"
}

// GoString is String: %#v shows no bytes either.
func (b Buffer) GoString() string {
	return b.String()
}

// Format writes String for every verb, padded with spaces to the width
// (on the right with the '-' flag); other flags and the precision are
// ignored.
func (b Buffer) Format(f fmt.State, verb rune) {
	s := b.String()
	if w, ok := f.Width(); ok && w > len(s) {
		pad := strings.Repeat(" ", w-len(s))
		if f.Flag('-') {
			s += pad
		} else {
			s = pad + s
		}
	}
	// fmt.State's Write is fmt's own buffer, which never fails; Format
	// has no error to return in any case.
	_, _ = f.Write([]byte(s))
}
