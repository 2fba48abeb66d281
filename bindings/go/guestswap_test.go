package secbuf

// The guest's swap proof (go-swap.suite, on the patched kernel): secrets
// read with NewBufferFromReader, guarded and Packed(), and the control's
// read with io.ReadAll, all from pipes; then memory pressure in a cgroup
// with a small memory.max, then MADV_PAGEOUT of every page that holds a
// secret or the control's, until the control's pages are in swap.  The
// process exits without freeing anything and the host's qemu/scan-swap
// counts each secret in the swap image: the binding's 0 times, the
// control's at least once.  Prints TAP with "# KEEP:" lines, as
// tests/lib/tap.c does.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

const (
	guestCgroup    = "/sys/fs/cgroup/go-swap"
	guestMemoryMax = "32M"
	guestSecrets   = 64       // of each kind
	pressureChunk  = 4 << 20  // bytes mapped and touched per step
	pressureMin    = 96 << 20 // 3 x memory.max: the whole group cycles
	pressureMax    = 192 << 20
)

type tap struct{ n, failed int }

func (t *tap) check(ok bool, format string, args ...interface{}) bool {
	t.n++
	not := ""
	if !ok {
		not = "not "
		t.failed++
	}
	fmt.Printf("%sok %d - %s\n", not, t.n, fmt.Sprintf(format, args...))
	return ok
}

func (t *tap) bail(format string, args ...interface{}) int {
	t.check(false, format, args...)
	return t.done()
}

func (t *tap) done() int {
	fmt.Printf("1..%d\n", t.n)
	if t.failed > 0 {
		return 1
	}
	return 0
}

// keepHex prints a secret for the host's scan, as hex text (other bytes
// than the secret's), one byte at a time.
func keepHex(group string, p []byte) {
	var sb strings.Builder
	sb.WriteString("# KEEP: " + group + " ")
	for _, c := range p {
		sb.WriteString(strconv.FormatUint(uint64(c)|0x100, 16)[1:])
	}
	fmt.Println(sb.String())
}

func pipeOfRandomSecret() (*os.File, error) {
	s, err := randomSecret()
	if err != nil {
		return nil, err
	}
	return pipeOf(s)
}

// pageState counts the pages under the given slices that are present in
// RAM and in swap (/proc/self/pagemap bits 63 and 62).
func pageState(pm *os.File, slices [][]byte) (present, swapped, pages int) {
	seen := map[uintptr]bool{}
	var e [8]byte
	for _, s := range slices {
		pg := uintptr(unsafe.Pointer(&s[0])) &^ 4095
		if seen[pg] {
			continue
		}
		seen[pg] = true
		pages++
		if _, err := pm.ReadAt(e[:], int64(pg/4096*8)); err != nil {
			continue
		}
		v := uint64(e[0]) | uint64(e[1])<<8 | uint64(e[2])<<16 | uint64(e[3])<<24 |
			uint64(e[4])<<32 | uint64(e[5])<<40 | uint64(e[6])<<48 | uint64(e[7])<<56
		if v>>63&1 == 1 {
			present++
		}
		if v>>62&1 == 1 {
			swapped++
		}
	}
	return
}

// pageOut asks the kernel to reclaim the pages under the given slices now
// (MADV_PAGEOUT, Linux 5.4; 21 in every architecture's mman.h).
func pageOut(slices [][]byte) {
	const madvPageout = 21
	for _, s := range slices {
		pg := uintptr(unsafe.Pointer(&s[0])) &^ 4095
		syscall.Syscall(syscall.SYS_MADVISE, pg, 4096, madvPageout)
	}
}

func meminfoKB(field string) int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == field+":" {
			v, _ := strconv.ParseInt(fs[1], 10, 64)
			return v
		}
	}
	return -1
}

func guestSwap() int {
	var t tap
	method, err := LockMethod()
	if err != nil {
		return t.bail("lock method: %v", err)
	}
	if meminfoKB("SwapTotal") <= 0 {
		return t.bail("no swap device: run with --swap")
	}
	if err := os.Mkdir(guestCgroup, 0o755); err != nil && !os.IsExist(err) {
		return t.bail("cgroup: %v", err)
	}
	for file, text := range map[string]string{"memory.max": guestMemoryMax, "cgroup.procs": strconv.Itoa(os.Getpid())} {
		if err := os.WriteFile(guestCgroup+"/"+file, []byte(text), 0); err != nil {
			return t.bail("cgroup %s: %v", file, err)
		}
	}
	fmt.Printf("# lock method %s, cgroup go-swap memory.max %s\n", method, guestMemoryMax)
	fmt.Println("# KEEP: expect go-secbuf absent")
	fmt.Println("# KEEP: expect go-packed absent")
	fmt.Println("# KEEP: expect go-control present")
	fmt.Printf("# KEEP: summary swap-scan|Go NewBufferFromReader, %s|go-secbuf,go-control\n", method)
	fmt.Printf("# KEEP: summary swap-scan|Go NewBufferFromReader Packed(), %s|go-packed,go-control\n", method)

	var secrets, packed, control [][]byte
	var keep []*Buffer // never destroyed: the image keeps what reached it
	for i := 0; i < guestSecrets; i++ {
		for _, kind := range []struct {
			group string
			opts  []Option
			into  *[][]byte
		}{{"go-secbuf", nil, &secrets}, {"go-packed", []Option{Packed()}, &packed}} {
			r, err := pipeOfRandomSecret()
			if err != nil {
				return t.bail("pipe: %v", err)
			}
			b, err := NewBufferFromReader(r, secretLen, kind.opts...)
			r.Close()
			if err != nil {
				return t.bail("NewBufferFromReader: %v", err)
			}
			keep = append(keep, b)
			*kind.into = append(*kind.into, b.Bytes())
			keepHex(kind.group, b.Bytes())
		}
		r, err := pipeOfRandomSecret()
		if err != nil {
			return t.bail("pipe: %v", err)
		}
		plain, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return t.bail("io.ReadAll: %v", err)
		}
		control = append(control, plain)
		keepHex("go-control", plain)
	}

	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return t.bail("pagemap: %v", err)
	}
	defer pm.Close()
	// Pressure: anonymous memory outside the Go heap, in the same cgroup.
	pressure := 0
	for {
		q, err := syscall.Mmap(-1, 0, pressureChunk, syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
		if err != nil {
			return t.bail("pressure mmap: %v", err)
		}
		for off := 0; off < len(q); off += 4096 {
			q[off] = 0x5a
		}
		pressure += pressureChunk
		_, swapped, pages := pageState(pm, control)
		if pressure >= pressureMax || (pressure >= pressureMin && swapped == pages) {
			break
		}
	}
	// The Go heap sits in transparent huge pages that the runtime's own
	// allocations keep young, so pressure alone may never reclaim the
	// control's.  Ask for every page explicitly, the secrets' too:
	// MADV_PAGEOUT splits the huge page and skips only locked pages.
	for _, group := range [][][]byte{control, secrets, packed} {
		pageOut(group)
	}
	for i := 0; i < 50 && meminfoKB("Writeback") > 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}

	_, cSwapped, cPages := pageState(pm, control)
	sPresent, sSwapped, sPages := pageState(pm, secrets)
	pPresent, pSwapped, pPages := pageState(pm, packed)
	t.check(cSwapped > 0, "control (io.ReadAll) pages swapped out (%d/%d) after %d MiB of pressure",
		cSwapped, cPages, pressure>>20)
	ok := t.check(sPresent == sPages && sSwapped == 0,
		"NewBufferFromReader pages all present, none swapped (%d/%d present, %d swapped)",
		sPresent, sPages, sSwapped)
	pok := t.check(pPresent == pPages && pSwapped == 0,
		"NewBufferFromReader Packed() pages all present, none swapped (%d/%d present, %d swapped)",
		pPresent, pPages, pSwapped)
	verdict := func(ok bool) string {
		if ok && cSwapped > 0 {
			return "PASS"
		}
		return "FAIL"
	}
	fmt.Printf("# REPORT: SUMMARY|swap-guest|Go binding, %s|%s|control %d/%d swapped; secbuf %d swapped of %d\n",
		method, verdict(ok), cSwapped, cPages, sSwapped, sPages)
	fmt.Printf("# REPORT: SUMMARY|swap-guest|Go binding Packed(), %s|%s|control %d/%d swapped; packed %d swapped of %d\n",
		method, verdict(pok), cSwapped, cPages, pSwapped, pPages)
	runtime.KeepAlive(keep) // no finalizer may free them before the exit
	return t.done()
}
