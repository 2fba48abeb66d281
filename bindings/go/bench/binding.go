package main

import "secbuf"

const (
	goGuarded = "secbuf (Go binding)"
	goPacked  = "secbuf Packed() (Go binding)"
)

func init() {
	contenders = append(contenders,
		bindingContender(goGuarded), bindingContender(goPacked, secbuf.Packed()))
}

func bindingContender(name string, opts ...secbuf.Option) contender {
	return contender{
		name: name,
		pairs: func(n int) error {
			for i := 0; i < n; i++ {
				b, err := secbuf.NewBuffer(32, opts...)
				if err != nil {
					return err
				}
				b.Bytes()[0] = 1
				b.Destroy()
			}
			return nil
		},
		large: func() error {
			b, err := secbuf.NewBuffer(gib, opts...)
			if err != nil {
				return err
			}
			touch(b.Bytes()[:4096])
			b.Destroy()
			return nil
		},
		live: func(max int) (int, error) {
			var keep []*secbuf.Buffer
			for len(keep) < max {
				b, err := secbuf.NewBuffer(32, opts...)
				if err != nil {
					return len(keep), err
				}
				b.Bytes()[0] = 1
				keep = append(keep, b)
			}
			return len(keep), nil
		},
	}
}

func touch(p []byte) {
	for i := range p {
		p[i] = 1
	}
}
