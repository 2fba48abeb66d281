package secbuf

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The secret every printing test holds: 0xa0, 0xa1, ... 0xbf.
const patternLen = 32

func pattern() []byte {
	p := make([]byte, patternLen)
	for i := range p {
		p[i] = 0xa0 + byte(i)
	}
	return p
}

func patternBuffer(t *testing.T) *Buffer {
	t.Helper()
	b := mustBuffer(t, patternLen)
	copy(b.Bytes(), pattern())
	return b
}

// numberRun matches the numbers in a row, each whole, with fmt's optional
// prefix (0o, 0b, zero padding) and up to 15 characters between them
// (", ", ")%!t(uint8=" when a verb does not suit a byte) once leak has
// made each run of spaces (a width pads every element) one.
func numberRun(nums ...string) *regexp.Regexp {
	for i, n := range nums {
		nums[i] = `(0[bo])?0*` + n
	}
	return regexp.MustCompile(`(^|[^0-9])` + strings.Join(nums, `[^0-9](.{0,14}[^0-9])?`) + `([^0-9]|$)`)
}

// leakForms are the ways fmt writes the pattern's first bytes, in any verb
// and flag: TestPrintDetectorSeesBytes proves that one of them matches
// the pattern printed with every spec the tests use.
var leakForms = []struct {
	name string
	re   *regexp.Regexp
}{
	{"decimal", numberRun("160", "161", "162")},
	{"octal", numberRun("240", "241", "242")},
	{"binary", numberRun("10100000", "10100001", "10100010")},
	{"hex", regexp.MustCompile(`(?i)a0[^0-9a-z]*(0?x0*)?a1[^0-9a-z]*(0?x0*)?a2[^0-9a-z]*(0?x0*)?a3`)},
	{"code points", regexp.MustCompile(`U\+0*A0.{0,12}U\+0*A1.{0,12}U\+0*A2`)},
	{"runes", regexp.MustCompile("\u00a1.{0,12}\u00a2.{0,12}\u00a3")},
}

// leak names the form in which out holds the pattern, or "".
func leak(out string) string {
	if bytes.Contains([]byte(out), pattern()[:4]) {
		return "raw"
	}
	out = strings.Join(strings.Fields(out), " ")
	for _, f := range leakForms {
		if f.re.MatchString(out) {
			return f.name
		}
	}
	return ""
}

// printVerbs are every verb fmt knows (%w and %p, %T included), printFlags
// the flags, widths and precisions tried with each.
var (
	printVerbs = "vsqxXdboOcUeEfFgGtwpT"
	printFlags = []string{"", "+", "#", " ", "-", "0", "20", "-40", ".5", "+#40.5", "# ", "08"}
)

func printSpecs() []string {
	var specs []string
	for _, v := range printVerbs {
		for _, f := range printFlags {
			specs = append(specs, "%"+f+string(v))
		}
	}
	return specs
}

// The detector must see the bytes however fmt prints them, or the tests
// below prove nothing: the pattern itself, and in a struct as a Buffer
// held it before it hid its memory behind a pointer.
func TestPrintDetectorSeesBytes(t *testing.T) {
	p := pattern()
	held := struct {
		mu   sync.RWMutex
		data []byte
	}{data: p}
	for _, spec := range printSpecs() {
		if strings.HasSuffix(spec, "p") || strings.HasSuffix(spec, "T") {
			continue // an address, a type: fmt never prints bytes for them
		}
		for _, arg := range []interface{}{p, &held} {
			if out := fmt.Sprintf(spec, arg); leak(out) == "" {
				t.Errorf("%s of %T: %q not seen as the pattern", spec, arg, out)
			}
		}
	}
	if out := fmt.Sprint(p); leak(out) == "" {
		t.Errorf("Sprint: %q not seen", out)
	}
	for _, clean := range []string{"secbuf.Buffer{size: 32}", "0xc000012160", "824634330880", "{{0 0} 0 0 0 0}"} {
		if f := leak(clean); f != "" {
			t.Errorf("%q seen as the pattern (%s)", clean, f)
		}
	}
}

// padded is what Format writes for a width: the text, padded with
// spaces, on the left or with '-' on the right.
func padded(spec, text string) string {
	var w int
	digits := strings.TrimLeft(spec[1:len(spec)-1], "+-# 0")
	if _, err := fmt.Sscanf(digits, "%d", &w); err != nil || w <= len(text) {
		return text
	}
	pad := strings.Repeat(" ", w-len(text))
	if strings.Contains(spec, "-") {
		return text + pad
	}
	return pad + text
}

// A *Buffer and a Buffer print as their size in every verb but %T and %p,
// which fmt answers itself (a type, an address), and %w outside Errorf,
// a bad verb that fmt prints through reflection, never calling a method.
func TestPrintShowsOnlySize(t *testing.T) {
	b := patternBuffer(t)
	const want = "secbuf.Buffer{size: 32}"
	for _, spec := range printSpecs() {
		for _, arg := range []interface{}{b, *b} {
			out := fmt.Sprintf(spec, arg)
			if f := leak(out); f != "" {
				t.Errorf("%s of %T leaks the bytes (%s): %q", spec, arg, f, out)
				continue
			}
			switch {
			case strings.HasSuffix(spec, "T"):
				// %T is the type as a string, with the spec's flags.
				if typ := fmt.Sprintf(spec[:len(spec)-1]+"s", fmt.Sprintf("%T", arg)); out != typ {
					t.Errorf("%s of %T: %q, want %q", spec, arg, out, typ)
				}
			case strings.HasSuffix(spec, "p"), strings.HasSuffix(spec, "w"):
				// Bad verbs but %p of a *Buffer, printed through
				// reflection: the pointer to the state, never the bytes.
			case out != padded(spec, want):
				t.Errorf("%s of %T: %q, want %q", spec, arg, out, padded(spec, want))
			}
		}
	}
	if s, gs := b.String(), b.GoString(); s != want || gs != want {
		t.Errorf("String %q, GoString %q", s, gs)
	}
}

// In slices, arrays, maps, interfaces and struct fields, exported or not
// (fmt cannot call a method of an unexported field: it prints the field's
// own fields, which hold a pointer, never the bytes).
func TestPrintNeverLeaks(t *testing.T) {
	b := patternBuffer(t)
	type inner struct{ key Buffer }
	holders := []interface{}{
		[]*Buffer{b, b},
		[]Buffer{*b},
		[1]*Buffer{b},
		[]interface{}{b, *b},
		map[string]*Buffer{"k": b},
		map[string]Buffer{"k": *b},
		map[*Buffer]int{b: 1},
		map[Buffer]int{*b: 1},
		struct{ Key *Buffer }{b},
		struct{ Key Buffer }{*b},
		struct{ key *Buffer }{b},
		struct{ key Buffer }{*b},
		&struct{ key Buffer }{*b},
		struct{ Outer inner }{inner{*b}},
		&b,
	}
	for _, h := range holders {
		for _, spec := range printSpecs() {
			if out := fmt.Sprintf(spec, h); leak(out) != "" {
				t.Errorf("%s of %T leaks the bytes (%s): %q", spec, h, leak(out), out)
			}
		}
		t.Logf("%%v of %T: %v", h, h)
	}
	var w strings.Builder
	fmt.Fprint(&w, b, *b)
	fmt.Fprintln(&w, b, *b)
	// A variable: vet rejects arguments to a constant without verbs.
	noVerb := ""
	fmt.Fprintf(&w, noVerb, b) // %!(EXTRA *secbuf.Buffer=...)
	outs := []string{
		fmt.Sprint(b), fmt.Sprint(*b), fmt.Sprint("key", b, 1, *b),
		fmt.Sprintln(b, *b), w.String(),
	}
	wrap, plain := "%w", "%v" // variables: vet rejects a constant %w of a non-error
	for _, arg := range []interface{}{b, *b} {
		outs = append(outs, fmt.Errorf(wrap, arg).Error(), fmt.Errorf(plain, arg).Error(),
			fmt.Errorf("%w: %v", ErrDestroyed, arg).Error())
	}
	for _, out := range outs {
		if f := leak(out); f != "" || !strings.Contains(out, "size: 32") && !strings.HasPrefix(out, "%!w(") {
			t.Errorf("leaks the bytes (%q) or not the size: %q", f, out)
		}
	}
	t.Logf("Errorf(%%w) of *Buffer, which fmt prints through reflection: %v", fmt.Errorf(wrap, b))
}

// A destroyed buffer, a zero Buffer and a nil *Buffer say so.
func TestPrintDestroyedAndZero(t *testing.T) {
	b := patternBuffer(t)
	b.Destroy()
	var zero Buffer
	var none *Buffer
	for _, c := range []struct {
		arg  interface{}
		want string
	}{
		{b, "secbuf.Buffer{destroyed}"},
		{*b, "secbuf.Buffer{destroyed}"},
		{zero, "secbuf.Buffer{destroyed}"},
		{&zero, "secbuf.Buffer{destroyed}"},
		{none, "<nil>"},
	} {
		for _, spec := range []string{"%v", "%+v", "%#v", "%s", "%x", "%d", "%q"} {
			if out := fmt.Sprintf(spec, c.arg); out != c.want {
				t.Errorf("%s of %T: %q, want %q", spec, c.arg, out, c.want)
			}
		}
	}
}

// Printing takes no lock: inside Do, with a Destroy waiting for Do's read
// lock (which holds off new readers), it must not wait for that Destroy;
// and under -race, printing while another goroutine destroys is no race.
func TestPrintConcurrentWithDestroy(t *testing.T) {
	b := patternBuffer(t)
	destroyed := make(chan struct{})
	err := b.Do(func([]byte) error {
		go func() {
			b.Destroy()
			close(destroyed)
		}()
		time.Sleep(20 * time.Millisecond) // let Destroy queue for the lock
		printed := make(chan string, 1)
		go func() { printed <- fmt.Sprint(b) }()
		select {
		case out := <-printed:
			if out != "secbuf.Buffer{size: 32}" {
				t.Errorf("inside Do: %q", out)
			}
		case <-time.After(5 * time.Second):
			t.Error("printing inside Do waits for a pending Destroy")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-destroyed

	c := patternBuffer(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1000; i++ {
			if out := fmt.Sprint(c); leak(out) != "" {
				t.Errorf("leaks: %q", out)
				return
			}
		}
	}()
	c.Destroy()
	wg.Wait()
}
