package secbuf

import (
	"fmt"
	"io"
)

// NewBufferFromReader reads exactly size bytes from r straight into a new
// buffer: the bytes pass through no Go memory of this package (r's own
// buffering, a bufio.Reader say, is r's).  A short read destroys the
// buffer and returns an error wrapping io.ErrUnexpectedEOF (or io.EOF
// when r gave nothing), or r's error.
func NewBufferFromReader(r io.Reader, size int, opts ...Option) (*Buffer, error) {
	b, err := NewBuffer(size, opts...)
	if err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(r, b.s.bytes()); err != nil {
		b.Destroy()
		return nil, fmt.Errorf("secbuf: reading %d bytes: %w", size, err)
	}
	return b, nil
}

// NewBufferFromBytes moves src into a new buffer and zeroes src.  src
// itself was ordinary Go memory and may have been copied before (a grown
// slice leaves its old array behind; a growing stack is copied), so prefer
// NewBufferFromReader for a secret that comes from outside.
func NewBufferFromBytes(src []byte, opts ...Option) (*Buffer, error) {
	b, err := NewBuffer(len(src), opts...)
	if err != nil {
		return nil, err
	}
	copy(b.s.bytes(), src)
	for i := range src {
		src[i] = 0
	}
	return b, nil
}
