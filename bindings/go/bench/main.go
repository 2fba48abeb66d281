// Command bench times the Go binding against the C API and memguard: a
// 1 GiB buffer touched on 4 KiB, 32-byte alloc+free pairs per second, and
// live 32-byte buffers before the first failure (as root, and as nobody
// under an 8 MiB RLIMIT_MEMLOCK, each in a child process of its own).
// It prints a Markdown table; bindings/go/bench/run writes it to
// bench/results/bindings-go.md.  memguard is in only when built with
// -tags memguard (memguard.go), outside module mode.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"secbuf"
)

// A contender is one way to get a 32-byte or 1 GiB secret buffer.
type contender struct {
	name  string
	pairs func(n int) error // n times: 32 bytes, write one byte, free
	large func() error      // 1 GiB, write its first 4 KiB, free
	live  func(max int) (int, error)
}

var contenders []contender

const (
	gib       = 1 << 30
	liveCap   = 2000000 // enough to tell packed slabs from a page each
	nobodyMem = 8 << 20
)

func main() {
	liveOf := flag.String("live", "", "count live 32-byte buffers of one contender (the child's job)")
	runs := flag.Int("runs", 5, "runs of each timing; the median is reported")
	flag.Parse()
	if *liveOf != "" {
		os.Exit(countLive(*liveOf))
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench: run as root (the nobody column drops to nobody)")
		os.Exit(2)
	}
	method, err := secbuf.LockMethod()
	if err != nil {
		method = "none: " + err.Error()
	}
	fmt.Printf("lock method %s; medians of %d runs (3 of the 1 GiB case); live counts capped at %d; load average at the start %s\n\n",
		method, *runs, liveCap, loadavg())
	fmt.Println("| | 1 GiB + touch 4 KiB + free | 32-byte pairs/s | live 32-byte, root | live 32-byte, nobody at 8 MiB |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, c := range contenders {
		large := "-"
		if c.large != nil {
			large = fmtDuration(median(3, func() (float64, error) { return timeIt(c.large) }))
		}
		rate := median(*runs, func() (float64, error) { return pairsPerSec(c.pairs) })
		root, nobody := "-", "-"
		if c.live != nil {
			root, nobody = liveChild(c.name, false), liveChild(c.name, true)
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", c.name, large, fmtRate(rate), root, nobody)
	}
	fmt.Println()
	overhead(*runs)
	fmt.Printf("\nLoad average at the end: %s.\n", loadavg())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// cpuTime is the CPU time of the whole process so far (every thread: the
// C calls', the runtime's and the garbage collector's), in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// overhead compares the binding's 32-byte pairs with the C API's and with
// bare cgo calls, in alternating batches so that a change in the machine's
// load hits all three alike; medians of the batches' rates.
func overhead(runs int) {
	fmt.Println("Per-call overhead: 32-byte alloc+write+free pairs in alternating batches, median per pair,")
	fmt.Println("in wall time and in the process's CPU time (which leaves out the waits for a CPU of a shared machine)")
	fmt.Println()
	fmt.Println("| | C API | bare cgo calls | Go binding | binding / C API (pairs/s) | bare cgo / C API |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, k := range []struct {
		name         string
		batch        int
		c, bare, bnd func(int) error
	}{
		{"guarded", 20, byName(cGuarded).pairs, func(n int) error { return bareCgoPairs(n, false) },
			byName(goGuarded).pairs},
		{"packed", 2000, byName(cPacked).pairs, func(n int) error { return bareCgoPairs(n, true) },
			byName(goPacked).pairs},
	} {
		var wall, cpu [3][]float64
		deadline := time.Now().Add(time.Duration(runs) * time.Second)
		for time.Now().Before(deadline) {
			for i, f := range []func(int) error{k.c, k.bare, k.bnd} {
				c0 := cpuTime()
				t, err := timeIt(func() error { return f(k.batch) })
				if err != nil {
					fmt.Fprintln(os.Stderr, "bench:", err)
					return
				}
				wall[i] = append(wall[i], t*1e9/float64(k.batch))
				cpu[i] = append(cpu[i], (cpuTime()-c0)*1e9/float64(k.batch))
			}
		}
		for _, m := range []struct {
			what string
			ns   [3][]float64
		}{{"wall", wall}, {"CPU", cpu}} {
			var med [3]float64
			for i := range m.ns {
				sort.Float64s(m.ns[i])
				med[i] = m.ns[i][len(m.ns[i])/2]
			}
			fmt.Printf("| %s, %s ns (%d batches of %d) | %.0f | %.0f | %.0f | %.2fx | %.2fx |\n",
				k.name, m.what, len(m.ns[0]), k.batch, med[0], med[1], med[2], med[0]/med[2], med[0]/med[1])
		}
	}
}

func byName(name string) contender {
	for _, c := range contenders {
		if c.name == name {
			return c
		}
	}
	panic("bench: no contender " + name)
}

func timeIt(f func() error) (float64, error) {
	t0 := time.Now()
	err := f()
	return time.Since(t0).Seconds(), err
}

// pairsPerSec runs batches until a quarter of a second has passed.
func pairsPerSec(pairs func(int) error) (float64, error) {
	const batch = 2000
	t0 := time.Now()
	n := 0
	for time.Since(t0) < 250*time.Millisecond {
		if err := pairs(batch); err != nil {
			return 0, err
		}
		n += batch
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

func median(runs int, f func() (float64, error)) float64 {
	var v []float64
	for i := 0; i < runs; i++ {
		x, err := f()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return -1
		}
		v = append(v, x)
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// liveChild counts in a child: as root, or as nobody under 8 MiB of
// RLIMIT_MEMLOCK.  It prints "N (the error)".
func liveChild(name string, nobody bool) string {
	self, err := os.Executable()
	if err != nil {
		return "error: " + err.Error()
	}
	args := []string{self, "-live", name}
	if nobody {
		args = append([]string{"prlimit", fmt.Sprintf("--memlock=%d:%d", nobodyMem, nobodyMem), "--",
			"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"}, args...)
	}
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("failed: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out))
}

func countLive(name string) int {
	growHeap()
	for _, c := range contenders {
		if c.name == name && c.live != nil {
			n, err := c.live(liveCap)
			fmt.Printf("%d (%s)\n", n, why(err))
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "bench: no contender %q\n", name)
	return 2
}

// why names the error that stopped a count: its errno where it has one
// (memguard's is inside its panic's text).
func why(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "the cap"
	case errors.As(err, &errno):
		return errno.Error()
	}
	msg := err.Error()
	if i := strings.Index(msg, "[Err: "); i >= 0 {
		msg = msg[i+6:]
		if j := strings.Index(msg, "]"); j >= 0 {
			msg = msg[:j]
		}
	}
	return msg
}

// growHeap maps the Go heap the count will need before it starts: once
// buffers have used up vm.max_map_count, the runtime's own mmap would
// fail, and Go dies ("fatal error: runtime: out of memory") instead of
// the allocator returning its error.
func growHeap() {
	ballast := make([]byte, 256<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	runtime.KeepAlive(ballast)
	ballast = nil
	runtime.GC()
}

func fmtDuration(s float64) string {
	if s < 0 {
		return "error"
	}
	if s < 1e-3 {
		return fmt.Sprintf("%.1f µs", s*1e6)
	}
	return fmt.Sprintf("%.1f ms", s*1e3)
}

func fmtRate(r float64) string {
	if r < 0 {
		return "error"
	}
	return fmt.Sprintf("%.0f", r)
}
