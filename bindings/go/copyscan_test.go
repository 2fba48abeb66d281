package secbuf

import (
	"crypto/rand"
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

const secretLen = 32

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }

// randomSecret draws a random secret and keeps only secret^mask and mask.
func randomSecret() (maskedSecret, error) {
	s := maskedSecret{masked: make([]byte, secretLen), mask: make([]byte, secretLen)}
	if _, err := rand.Read(s.masked); err != nil {
		return s, err
	}
	_, err := rand.Read(s.mask)
	return s, err
}

// pipeOf returns a pipe's read end that yields the secret once.  The
// secret is written a byte at a time through one byte of memory, so that
// it is never whole in this process until someone reads it.
func pipeOf(s maskedSecret) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	one := make([]byte, 1)
	for i := range s.masked {
		one[0] = s.masked[i] ^ s.mask[i]
		if _, err := w.Write(one); err != nil {
			r.Close()
			return nil, err
		}
	}
	one[0] = 0
	return r, nil
}

func newMaskedSecret(t *testing.T) maskedSecret {
	s, err := randomSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func secretPipe(t *testing.T, s maskedSecret) *os.File {
	r, err := pipeOf(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func scan(t *testing.T, s maskedSecret) scanResult {
	res, err := scanSelf(s)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	t.Logf("scanned %d MiB: %d copies in locked no-dump mappings, %d elsewhere, %d mappings unreadable",
		res.bytesScanned>>20, res.inside, res.outside, res.unreadable)
	for _, w := range res.where {
		t.Logf("copy outside at %s", w)
	}
	return res
}

// The recommended path: the secret goes from the pipe into secbuf memory
// and nowhere else.
func TestCopyScanReaderLeavesNoCopy(t *testing.T) {
	s := newMaskedSecret(t)
	b, err := NewBufferFromReader(secretPipe(t, s), secretLen)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	res := scan(t, s)
	if res.inside < 1 {
		t.Errorf("the secret was not found in secbuf memory: the scan cannot see it")
	}
	if res.outside != 0 {
		t.Errorf("%d copies of the secret outside locked, no-dump memory", res.outside)
	}
}

// The control: io.ReadAll leaves the secret in the Go heap, and the scan
// must say so.
func TestCopyScanReadAllControlFindsCopy(t *testing.T) {
	s := newMaskedSecret(t)
	plain, err := io.ReadAll(secretPipe(t, s))
	if err != nil {
		t.Fatal(err)
	}
	res := scan(t, s)
	if res.outside < 1 {
		t.Errorf("io.ReadAll's copy was not found: the scan is blind")
	}
	for i := range plain {
		plain[i] = 0
	}
	runtime.KeepAlive(plain)
}

// The package documentation's warning, checked: string(b.Bytes()) copies.
func TestCopyScanStringConversionCopies(t *testing.T) {
	s := newMaskedSecret(t)
	b, err := NewBufferFromReader(secretPipe(t, s), secretLen)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	str := string(b.Bytes())
	res := scan(t, s)
	if res.outside < 1 {
		t.Errorf("string(b.Bytes()) made no copy the scan could find")
	}
	runtime.KeepAlive(str)
}

// Secret(): the secret is read into memfd_secret memory, which
// /proc/self/mem cannot read, so the scan finds it nowhere at all.
func TestCopyScanSecretTierUnreadable(t *testing.T) {
	s := newMaskedSecret(t)
	b, err := NewBufferFromReader(secretPipe(t, s), secretLen, Secret())
	if errors.Is(err, syscall.ENOSYS) {
		t.Skipf("no secret memory on this kernel: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	res := scan(t, s)
	if res.inside != 0 || res.outside != 0 {
		t.Errorf("a memfd_secret secret was read through /proc/self/mem (%d, %d copies)", res.inside, res.outside)
	}
	if res.unreadable < 1 {
		t.Errorf("no mapping refused the scan: where is the secret memory?")
	}
}
