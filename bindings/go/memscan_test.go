package secbuf

// A scanner of the process's own anonymous and heap memory for a secret it
// never holds in the clear: the needle is kept as secret^mask and mask, and
// each window is compared byte by byte through the mask.  Its read buffer
// is a mapping of its own that the scan skips and wipes.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// maskedSecret is a secret as the tests hold it: never in the clear.
type maskedSecret struct {
	masked, mask []byte
}

type mapping struct {
	start, end uint64
	perms      string
	name       string
	vmflags    map[string]bool
}

// secure says whether a mapping is locked and left out of core dumps:
// VmFlags lo (locked) or lf (lock on fault), and dd (no dump).
func (m mapping) secure() bool {
	return (m.vmflags["lo"] || m.vmflags["lf"]) && m.vmflags["dd"]
}

// anonymous: no file behind it (heap, stacks, named anonymous memory), or
// memfd_secret's, which is memory of the process all the same.
func (m mapping) anonymous() bool {
	return m.name == "" || m.name == "[heap]" || strings.HasPrefix(m.name, "[stack") ||
		strings.HasPrefix(m.name, "[anon:") || strings.HasPrefix(m.name, "/secretmem")
}

func (m mapping) String() string {
	var fl []string
	for f := range m.vmflags {
		fl = append(fl, f)
	}
	return fmt.Sprintf("%x-%x %s %q flags %v", m.start, m.end, m.perms, m.name, fl)
}

func readMappings() ([]mapping, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var maps []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "VmFlags:") && len(maps) > 0 {
			m := &maps[len(maps)-1]
			for _, fl := range strings.Fields(strings.TrimPrefix(line, "VmFlags:")) {
				m.vmflags[fl] = true
			}
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 5 || !strings.Contains(fields[0], "-") || strings.HasSuffix(fields[0], ":") {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		m := mapping{start: start, end: end, perms: fields[1], vmflags: map[string]bool{}}
		if len(fields) >= 6 {
			m.name = strings.Join(fields[5:], " ")
		}
		maps = append(maps, m)
	}
	return maps, sc.Err()
}

// scanResult counts the secret's copies in secure mappings and elsewhere.
type scanResult struct {
	inside, outside int
	where           []string // the mappings of the copies outside
	bytesScanned    uint64
	unreadable      int // mappings /proc/self/mem refused (memfd_secret's)
}

const scanChunk = 1 << 20

func scanSelf(s maskedSecret) (scanResult, error) {
	var res scanResult
	n := len(s.masked)
	buf, err := syscall.Mmap(-1, 0, scanChunk, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return res, err
	}
	defer syscall.Munmap(buf)
	defer func() {
		for i := range buf {
			buf[i] = 0
		}
	}()
	own := mapping{start: addrOf(buf), end: addrOf(buf) + scanChunk}

	maps, err := readMappings()
	if err != nil {
		return res, err
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		return res, err
	}
	defer mem.Close()

	first := s.masked[0] ^ s.mask[0]
	for _, m := range maps {
		if m.perms[0] != 'r' || !m.anonymous() {
			continue
		}
		// The mapping without the scanner's own buffer (a neighbour of the
		// same kind may have merged with it).
		for _, r := range [][2]uint64{{m.start, min64(m.end, own.start)}, {max64(m.start, own.end), m.end}} {
			for pos := r[0]; pos < r[1]; {
				chunk := buf[:min64(scanChunk, r[1]-pos)]
				got, err := mem.ReadAt(chunk, int64(pos))
				if err != nil && got < len(chunk) {
					res.unreadable++
					break
				}
				res.bytesScanned += uint64(len(chunk))
				for i := 0; i+n <= len(chunk); {
					j := bytes.IndexByte(chunk[i:len(chunk)-n+1], first)
					if j < 0 {
						break
					}
					i += j
					if matches(chunk[i:i+n], s) {
						if m.secure() {
							res.inside++
						} else {
							res.outside++
							res.where = append(res.where, fmt.Sprintf("%#x in %v", pos+uint64(i), m))
						}
					}
					i++
				}
				if pos+uint64(len(chunk)) >= r[1] {
					break
				}
				pos += uint64(len(chunk) - (n - 1)) // windows across the chunk's end
			}
		}
	}
	return res, nil
}

// matches compares a window with the secret through the mask.
func matches(w []byte, s maskedSecret) bool {
	for i := range w {
		if w[i]^s.mask[i] != s.masked[i] {
			return false
		}
	}
	return true
}

func min64(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
