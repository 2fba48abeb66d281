package secbuf

// PackedMax is the largest size Packed() packs; a larger buffer with
// Packed() gets guard pages of its own.
const PackedMax = 256

// An Option changes how NewBuffer and NewBufferFromReader allocate.
type Option func(*config)

type config struct {
	flags uint
}

// Packed lets a buffer of at most PackedMax bytes share locked slab pages
// with other packed buffers: a slot and 16 guard bytes instead of a page
// and two guard pages.  An overflow is caught when the buffer is destroyed
// rather than at once, and Freeze and Melt fail (the pages are shared).
// Larger buffers get guard pages of their own as without it.
func Packed() Option { return func(c *config) { c.flags |= flagPacked } }

// Secret takes the buffer's pages from memfd_secret(2): out of the
// kernel's direct map, unreadable through /proc/PID/mem even by root.
// Without BestEffort, a kernel without secret memory is an error
// (syscall.ENOSYS), never a silent fallback.
func Secret() Option { return func(c *config) { c.flags |= flagSecret } }

// BestEffort accepts an unlocked buffer when locking is refused
// (RLIMIT_MEMLOCK, no lock-on-fault), and the process's lock method when
// Secret's memory is missing.
func BestEffort() Option { return func(c *config) { c.flags |= flagBestEffort } }

// Populate faults in and locks every page at once instead of on first
// touch.
func Populate() Option { return func(c *config) { c.flags |= flagPopulate } }

func configure(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}
