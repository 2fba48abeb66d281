package secbuf

import (
	"os"
	"testing"
)

// TestMain runs the tests, or with SECBUF_GO_GUEST=swap the guest's swap
// proof (go-swap.suite) in their place.
func TestMain(m *testing.M) {
	if os.Getenv("SECBUF_GO_GUEST") == "swap" {
		os.Exit(guestSwap())
	}
	os.Exit(m.Run())
}
