package secbuf

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"testing"
)

var tapLine = regexp.MustCompile(`^(not )?ok [0-9]+ (.*?)(?: # SKIP (.*))?$`)

// TestOutOfTree builds a module outside the tree as the README says, and
// checks that each of its steps is needed: the script out-of-tree does it
// (see there) and prints TAP, whose results become subtests here.
func TestOutOfTree(t *testing.T) {
	if _, err := os.Stat("out-of-tree"); err != nil {
		t.Skip("no out-of-tree script beside the test (a copied test binary)")
	}
	out, err := exec.Command("./out-of-tree").CombinedOutput()
	var notes []string // the comments before a result belong to it
	results, failed := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		m := tapLine.FindStringSubmatch(line)
		if m == nil {
			notes = append(notes, line)
			continue
		}
		results++
		if m[1] != "" {
			failed++
		}
		shown := notes
		notes = nil
		t.Run(m[2], func(t *testing.T) {
			for _, n := range shown {
				t.Log(n)
			}
			switch {
			case m[1] != "":
				t.Fail()
			case m[3] != "":
				t.Skip(m[3])
			}
		})
	}
	for _, n := range notes {
		t.Log(n)
	}
	if results == 0 || (err != nil && failed == 0) {
		t.Fatalf("out-of-tree: %v, %d results", err, results)
	}
}
