package secbuf

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const goroutines = 8

// Each goroutine makes, fills, checks and destroys its own buffers.
func TestConcurrentAllocFree(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				var opts []Option
				if i%2 == 0 {
					opts = append(opts, Packed())
				}
				b, err := NewBuffer(32+i%200, opts...)
				if err != nil {
					errs <- err
					return
				}
				for j := range b.Bytes() {
					b.Bytes()[j] = byte(g)
				}
				for _, c := range b.Bytes() {
					if c != byte(g) {
						errs <- errors.New("a buffer changed under its goroutine")
						return
					}
				}
				b.Destroy()
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Readers inside Do, a goroutine freezing and melting, and a Destroy that
// comes in the middle: no Do sees unmapped or read-only-while-writing
// memory, and after the Destroy every Do says ErrDestroyed.
func TestConcurrentDoAndDestroy(t *testing.T) {
	b, err := NewBuffer(4096)
	if err != nil {
		t.Fatal(err)
	}
	b.Bytes()[0] = 9
	var wg sync.WaitGroup
	start := make(chan struct{})
	sawDestroyed := make([]bool, goroutines)
	var calls atomic.Int64
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			<-start
			for i := 0; ; i++ {
				err := b.Do(func(p []byte) error {
					calls.Add(1)
					if p[0] != 9 {
						return errors.New("wrong contents")
					}
					return nil
				})
				if errors.Is(err, ErrDestroyed) {
					sawDestroyed[g] = true
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if g == 0 && i%10 == 0 {
					if err := b.Freeze(); err != nil && !errors.Is(err, ErrDestroyed) {
						t.Error(err)
					}
					if err := b.Melt(); err != nil && !errors.Is(err, ErrDestroyed) {
						t.Error(err)
					}
				}
			}
		}(g)
	}
	close(start)
	// Destroy only once the readers are well under way.
	for deadline := time.Now().Add(10 * time.Second); calls.Load() < goroutines*200; {
		if b.Size() != 4096 || time.Now().After(deadline) {
			t.Fatalf("size %d, %d calls of Do", b.Size(), calls.Load())
		}
	}
	b.Destroy()
	wg.Wait()
	for g, saw := range sawDestroyed {
		if !saw {
			t.Errorf("goroutine %d stopped before seeing the Destroy", g)
		}
	}
}

// Eight goroutines destroy the same buffers at once: each is freed once.
func TestConcurrentDoubleDestroy(t *testing.T) {
	before := live.Load()
	for round := 0; round < 100; round++ {
		b, err := NewBuffer(32, Packed())
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() { defer wg.Done(); b.Destroy() }()
		}
		wg.Wait()
	}
	if live.Load() != before {
		t.Errorf("live buffers %d, want %d", live.Load(), before)
	}
}
