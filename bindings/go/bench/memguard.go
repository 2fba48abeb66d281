//go:build memguard

package main

import (
	"fmt"

	"github.com/awnumar/memguard"
)

func init() {
	contenders = append(contenders, contender{
		name: "memguard",
		pairs: func(n int) error {
			for i := 0; i < n; i++ {
				b := memguard.NewBuffer(32)
				b.Bytes()[0] = 1
				b.Destroy()
			}
			return nil
		},
		large: func() error {
			b := memguard.NewBuffer(gib)
			touch(b.Bytes()[:4096])
			b.Destroy()
			return nil
		},
		// memguard panics when memory runs out (after purging every
		// buffer): the count is the number made before the panic.
		live: func(max int) (n int, err error) {
			var keep []*memguard.LockedBuffer
			defer func() {
				if r := recover(); r != nil {
					n, err = len(keep), fmt.Errorf("panic: %v", r)
				}
			}()
			for len(keep) < max {
				b := memguard.NewBuffer(32)
				b.Bytes()[0] = 1
				keep = append(keep, b)
			}
			return len(keep), nil
		},
	})
}
