// Command bench times the Go binding against the C API and memguard: a
// 1 GiB buffer touched on 4 KiB, 32-byte alloc+free pairs per second, and
// live 32-byte buffers before the first failure (as root, and as nobody
// under an 8 MiB RLIMIT_MEMLOCK, each in a child process of its own).
// It prints a Markdown table; bindings/go/bench/run writes it to
// bench/results/bindings-go.md.  memguard is in only when built with
// -tags memguard (memguard.go), outside module mode.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
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
	fmt.Printf("lock method %s; medians of %d runs; live counts capped at %d\n\n", method, *runs, liveCap)
	fmt.Println("| | 1 GiB + touch 4 KiB + free | 32-byte pairs/s | live 32-byte, root | live 32-byte, nobody at 8 MiB |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, c := range contenders {
		large := "-"
		if c.large != nil {
			large = fmtDuration(median(*runs, func() (float64, error) { return timeIt(c.large) }))
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
}

// overhead compares the binding's 32-byte pairs with the C API's and with
// bare cgo calls, in alternating batches so that a change in the machine's
// load hits all three alike; medians of the batches' rates.
func overhead(runs int) {
	fmt.Println("Per-call overhead: 32-byte alloc+write+free pairs in alternating batches, median ns per pair")
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
		var ns [3][]float64
		deadline := time.Now().Add(time.Duration(runs) * time.Second)
		for time.Now().Before(deadline) {
			for i, f := range []func(int) error{k.c, k.bare, k.bnd} {
				t, err := timeIt(func() error { return f(k.batch) })
				if err != nil {
					fmt.Fprintln(os.Stderr, "bench:", err)
					return
				}
				ns[i] = append(ns[i], t*1e9/float64(k.batch))
			}
		}
		var m [3]float64
		for i := range ns {
			sort.Float64s(ns[i])
			m[i] = ns[i][len(ns[i])/2]
		}
		fmt.Printf("| %s (%d batches of %d) | %.0f | %.0f | %.0f | %.2fx | %.2fx |\n",
			k.name, len(ns[0]), k.batch, m[0], m[1], m[2], m[0]/m[2], m[0]/m[1])
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
			why := "the cap"
			if err != nil {
				why = err.Error()
				if len(why) > 60 {
					why = why[:60] + "..."
				}
			}
			fmt.Printf("%d (%s)\n", n, why)
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "bench: no contender %q\n", name)
	return 2
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
