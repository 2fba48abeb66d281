/*
 * _secbuf.c - the Python binding's one type, SecretBuffer, over libsecbuf.
 *
 * A C extension rather than ctypes: only a type of its own can export the
 * buffer protocol and count its exports, so that close() can refuse
 * (BufferError, as bytearray and mmap do) while a memoryview still points
 * into the pages it would unmap.  Every field is read and written with the
 * GIL held; the GIL is dropped only around a guarded buffer's
 * secbuf_alloc_flags() and secbuf_free(), before the object refers to the
 * memory or after it no longer does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <secbuf.h>

/*
 * Bumped in the child of every fork(): a buffer made before it is not the
 * child's (the library aborts on its use there, and a SECBUF_SECRET
 * buffer is not even mapped), so the child may neither touch nor free it.
 * A pthread_atfork handler, so that every fork() counts, os.fork() or not;
 * what os.fork() does besides for the parent's views is after_fork_child().
 */
static unsigned long fork_generation;

static void forked_child(void)
{
	fork_generation++;
}

typedef struct SecretBuffer {
	PyObject ob_base; /* PyObject_HEAD, spelt out for clang-format */
	void *data;	  /* NULL once closed */
	Py_ssize_t size;
	Py_ssize_t exports; /* memoryviews and other buffer users alive */
	unsigned flags;
	unsigned long generation;
	struct SecretBuffer *prev, *next; /* open_buffers, while data is set */
} SecretBuffer;

/*
 * Every open buffer, so that a forked child can find those that views
 * still point into.  Linked and unlinked with the GIL held, which
 * os.fork() holds across fork(): the child's copy is whole.
 */
static SecretBuffer *open_buffers;

static void link_open(SecretBuffer *self)
{
	self->prev = NULL;
	self->next = open_buffers;
	if (open_buffers)
		open_buffers->prev = self;
	open_buffers = self;
}

static void unlink_open(SecretBuffer *self)
{
	if (self->prev)
		self->prev->next = self->next;
	else
		open_buffers = self->next;
	if (self->next)
		self->next->prev = self->prev;
	self->prev = self->next = NULL;
}

static PyObject *SecbufError;
static PyObject *CopyWarning;

/*
 * secbuf.Error(errno, message): an OSError subclass, so that errno is
 * there to test, without OSError's remapping (EAGAIN is not a
 * BlockingIOError here).  The message is libsecbuf's own where it has one
 * (secbuf_last_failure(), secbuf_lock_reason()): the same words, and the
 * same figures, as a C caller gets.
 */
static PyObject *raise_error(int err, const char *message)
{
	PyObject *args = Py_BuildValue("(is)", err, message);

	if (args) {
		PyErr_SetObject(SecbufError, args);
		Py_DECREF(args);
	}
	return NULL;
}

/* A call that failed with errno err and nothing more to say than strerror. */
static PyObject *raise_errno(int err, const char *what)
{
	char text[256];

	snprintf(text, sizeof(text), "%s: %s", what, strerror(err));
	return raise_error(err, text);
}

/*
 * This thread's failed allocation, as the library explains it
 * ("secbuf_alloc_flags(67108864): ENOMEM: RLIMIT_MEMLOCK is 8192 kB, 4 kB
 * are locked already, 65536 kB more were needed; raise it: ..."), the C
 * flag it may suggest named as Python spells it.  errno alone if the
 * library had no words for it.
 */
static PyObject *raise_alloc_failure(int err, const char *explained, Py_ssize_t size)
{
	static const char flag[] = "SECBUF_BEST_EFFORT";
	char text[1024], what[64];
	const char *at = strstr(explained, flag);

	if (!*explained) {
		snprintf(what, sizeof(what), "SecretBuffer(%zd)", size);
		return raise_errno(err, what);
	}
	if (!at)
		return raise_error(err, explained);
	at += sizeof(flag) - 1;
	snprintf(text, sizeof(text), "%.*s (best_effort=True)%s", (int)(at - explained), explained,
		 at);
	return raise_error(err, text);
}

/* NULL with ValueError unless the buffer is open and this process's. */
static void *usable(SecretBuffer *self)
{
	if (self->data && self->generation == fork_generation)
		return self->data;
	if (self->data)
		PyErr_SetString(PyExc_ValueError,
				"SecretBuffer was made before fork(): it is the parent's");
	else
		PyErr_SetString(PyExc_ValueError, "SecretBuffer is closed");
	return NULL;
}

/* A size for libsecbuf from a Python int, or -1 with the exception. */
static Py_ssize_t size_from(PyObject *size_obj)
{
	PyObject *index = PyNumber_Index(size_obj);

	if (!index)
		return -1;
	Py_ssize_t size = PyLong_AsSsize_t(index);

	if (size == -1 && PyErr_Occurred()) {
		if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
			Py_DECREF(index);
			return -1;
		}
		PyErr_Clear();
		PyObject *zero = PyLong_FromLong(0);
		int negative = zero ? PyObject_RichCompareBool(index, zero, Py_LT) : -1;

		Py_XDECREF(zero);
		Py_DECREF(index);
		if (negative > 0)
			PyErr_Format(PyExc_ValueError,
				     "SecretBuffer size must be at least 1, not %R", size_obj);
		else if (negative == 0)
			PyErr_Format(PyExc_OverflowError,
				     "SecretBuffer size %R too large: at most sys.maxsize (%zd)",
				     size_obj, PY_SSIZE_T_MAX);
		return -1;
	}
	Py_DECREF(index);
	if (size < 1) {
		PyErr_Format(PyExc_ValueError, "SecretBuffer size must be at least 1, not %zd",
			     size);
		return -1;
	}
	return size;
}

/*
 * Packed secrets come from slabs already mapped, without a system call as
 * a rule: the GIL is kept for them, and dropped around the mmap, mlock and
 * munmap of a guarded buffer.
 */
static int is_packed(size_t size, unsigned flags)
{
	return (flags & SECBUF_PACKED) && size <= SECBUF_PACKED_MAX;
}

static PyObject *make_buffer(PyTypeObject *type, PyObject *size_obj, unsigned flags)
{
	Py_ssize_t size = size_from(size_obj);

	if (size < 0)
		return NULL;
	SecretBuffer *self = (SecretBuffer *)type->tp_alloc(type, 0);

	if (!self)
		return NULL;
	self->flags = flags;
	self->size = size;
	self->generation = fork_generation;

	void *data;
	int err;

	if (is_packed(size, flags)) {
		data = secbuf_alloc_flags(size, flags);
		err = errno;
	} else {
		PyThreadState *ts = PyEval_SaveThread();

		data = secbuf_alloc_flags(size, flags);
		err = errno;
		PyEval_RestoreThread(ts);
	}
	if (!data) {
		/* In this thread, before anything else here can allocate. */
		char explained[768];

		if (secbuf_last_failure(explained, sizeof(explained)) != err)
			explained[0] = 0; /* not this failure's words: errno alone */
		Py_DECREF(self);
		return raise_alloc_failure(err, explained, size);
	}
	self->data = data;
	link_open(self);
	return (PyObject *)self;
}

/* The keyword-only options of SecretBuffer() and from_file(), as flags. */
static const char *const option_names[] = { "packed", "secret", "populate", "best_effort" };
static const unsigned option_flags[] = { SECBUF_PACKED, SECBUF_SECRET, SECBUF_POPULATE,
					 SECBUF_BEST_EFFORT };

#define N_OPTIONS (sizeof(option_flags) / sizeof(option_flags[0]))

/*
 * A call's arguments, vectorcall style: the npos parameters named posnames
 * into pos[] (positional or by keyword, all required), the options into
 * *flags.  -1 with TypeError as Python's own functions word it.  By hand
 * rather than with PyArg_ParseTupleAndKeywords: that was most of a packed
 * secret's cost.
 */
static int parse_args(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
		      const char *const *posnames, Py_ssize_t npos, PyObject **pos, unsigned *flags)
{
	Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;

	if (nargs > npos) {
		PyErr_Format(PyExc_TypeError,
			     "%s() takes %zd positional argument(s), %zd given (the options are "
			     "keywords)",
			     fn, npos, nargs);
		return -1;
	}
	*flags = 0;
	for (Py_ssize_t i = 0; i < npos; i++)
		pos[i] = i < nargs ? args[i] : NULL;
	for (Py_ssize_t i = 0; i < nkw; i++) {
		PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
		Py_ssize_t p = 0;
		size_t j = 0;

		while (p < npos && PyUnicode_CompareWithASCIIString(name, posnames[p]) != 0)
			p++;
		if (p < npos) {
			if (pos[p]) {
				PyErr_Format(PyExc_TypeError,
					     "%s() got multiple values for argument %R", fn, name);
				return -1;
			}
			pos[p] = value;
			continue;
		}
		while (j < N_OPTIONS &&
		       PyUnicode_CompareWithASCIIString(name, option_names[j]) != 0)
			j++;
		if (j == N_OPTIONS) {
			PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R",
				     fn, name);
			return -1;
		}
		int on = PyObject_IsTrue(value);

		if (on < 0)
			return -1;
		if (on)
			*flags |= option_flags[j];
	}
	for (Py_ssize_t i = 0; i < npos; i++)
		if (!pos[i]) {
			PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn,
				     posnames[i]);
			return -1;
		}
	return 0;
}

static PyObject *SecretBuffer_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf,
					 PyObject *kwnames)
{
	static const char *const names[] = { "size" };
	PyObject *size;
	unsigned flags;

	if (parse_args("SecretBuffer", args, PyVectorcall_NARGS(nargsf), kwnames, names, 1, &size,
		       &flags) < 0)
		return NULL;
	return make_buffer((PyTypeObject *)type, size, flags);
}

/* SecretBuffer.__new__(SecretBuffer, ...): the same, through a dict. */
static PyObject *SecretBuffer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "size", "packed", "secret", "populate", "best_effort", NULL };
	PyObject *size_obj;
	int on[4] = { 0 };
	unsigned flags = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$pppp:SecretBuffer", kwlist, &size_obj,
					 &on[0], &on[1], &on[2], &on[3]))
		return NULL;
	for (size_t j = 0; j < 4; j++)
		flags |= on[j] ? option_flags[j] : 0;
	return make_buffer(type, size_obj, flags);
}

/*
 * Forget the memory first, then free it without the GIL: no other thread
 * can reach it once data is NULL.  In a forked child the buffer is the
 * parent's: forgotten, never freed.
 */
static void release_data(SecretBuffer *self)
{
	void *data = self->data;

	if (!data)
		return;
	self->data = NULL;
	unlink_open(self);
	if (self->generation != fork_generation)
		return;
	if (is_packed(self->size, self->flags)) {
		secbuf_free(data);
		return;
	}
	PyThreadState *ts = PyEval_SaveThread();

	secbuf_free(data);
	PyEval_RestoreThread(ts);
}

static void SecretBuffer_dealloc(SecretBuffer *self)
{
	/* A live memoryview holds a reference: no export survives to here. */
	release_data(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *SecretBuffer_close(SecretBuffer *self, PyObject *Py_UNUSED(ignored))
{
	if (self->exports > 0)
		return PyErr_Format(PyExc_BufferError,
				    "cannot close SecretBuffer: %zd exported buffer(s) "
				    "(memoryviews) still use it; release them first",
				    self->exports);
	release_data(self);
	Py_RETURN_NONE;
}

static int SecretBuffer_getbuffer(SecretBuffer *self, Py_buffer *view, int flags)
{
	void *data = usable(self);

	if (!data) {
		view->obj = NULL;
		return -1;
	}
	if (PyBuffer_FillInfo(view, (PyObject *)self, data, self->size, 0, flags) < 0)
		return -1;
	self->exports++;
	return 0;
}

static void SecretBuffer_releasebuffer(SecretBuffer *self, Py_buffer *Py_UNUSED(view))
{
	self->exports--;
}

static Py_ssize_t SecretBuffer_length(SecretBuffer *self)
{
	return usable(self) ? self->size : -1;
}

static PyObject *SecretBuffer_enter(SecretBuffer *self, PyObject *Py_UNUSED(ignored))
{
	if (!usable(self))
		return NULL;
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *SecretBuffer_exit(SecretBuffer *self, PyObject *Py_UNUSED(args))
{
	return SecretBuffer_close(self, NULL);
}

static PyObject *SecretBuffer_get_closed(SecretBuffer *self, void *Py_UNUSED(closure))
{
	return PyBool_FromLong(self->data == NULL);
}

static PyObject *SecretBuffer_stat(SecretBuffer *self, PyObject *Py_UNUSED(ignored))
{
	struct secbuf_stat st;
	void *data = usable(self);

	if (!data)
		return NULL;
	if (secbuf_stat(data, &st) != 0)
		return raise_errno(errno, "secbuf_stat");
	const char *method = secbuf_lock_method_name(st.lock_method);

	return Py_BuildValue("{s:n,s:n,s:n,s:n,s:s,s:O,s:O}", "size", (Py_ssize_t)st.size,
			     "mapped_bytes", (Py_ssize_t)st.mapped_bytes, "resident_pages",
			     (Py_ssize_t)st.resident_pages, "locked_pages",
			     (Py_ssize_t)st.locked_pages, "lock_method",
			     method ? method : "unknown", "packed",
			     (st.flags & SECBUF_PACKED) ? Py_True : Py_False, "secret",
			     (st.flags & SECBUF_SECRET) ? Py_True : Py_False);
}

/* pickle and copy would write the secret into a bytes object. */
static PyObject *SecretBuffer_reduce(SecretBuffer *Py_UNUSED(self), PyObject *Py_UNUSED(args))
{
	PyErr_SetString(PyExc_TypeError,
			"SecretBuffer cannot be pickled or copied: that would copy the secret "
			"into memory secbuf does not own");
	return NULL;
}

static PyObject *SecretBuffer_repr(SecretBuffer *self)
{
	const char *state = "open";

	if (!self->data)
		state = "closed";
	else if (self->generation != fork_generation)
		state = "parent's";

	return PyUnicode_FromFormat("<secbuf.SecretBuffer size=%zd%s%s %s>", self->size,
				    (self->flags & SECBUF_PACKED) ? " packed" : "",
				    (self->flags & SECBUF_SECRET) ? " secret" : "", state);
}

/* True if f keeps what it reads in a buffer of its own (read-ahead, BytesIO). */
static int is_buffered(PyObject *f)
{
	PyObject *io = PyImport_ImportModule("io");

	if (!io)
		return -1;
	PyObject *base = PyObject_GetAttrString(io, "BufferedIOBase");

	Py_DECREF(io);
	if (!base)
		return -1;
	int r = PyObject_IsInstance(f, base);

	Py_DECREF(base);
	return r;
}

/*
 * view.release(), even if f.readinto() kept a reference to it, so that
 * close() is not refused; an exception already raised is kept, and wins.
 * Returns -1 if the release failed (a view exported from the view).
 */
static int release_view(PyObject *view)
{
	PyObject *type, *value, *tb;

	PyErr_Fetch(&type, &value, &tb);
	PyObject *r = PyObject_CallMethod(view, "release", NULL);
	int ok = r != NULL;

	Py_DECREF(view);
	Py_XDECREF(r);
	if (type) {
		PyErr_Clear();
		PyErr_Restore(type, value, tb);
	}
	return ok ? 0 : -1;
}

/* Read exactly len(buf) bytes with f.readinto(), each into the rest of buf. */
static int fill_from(SecretBuffer *buf, PyObject *f)
{
	Py_ssize_t got = 0;

	while (got < buf->size) {
		PyObject *view = PyMemoryView_FromObject((PyObject *)buf);

		if (!view)
			return -1;
		PyObject *rest = PySequence_GetSlice(view, got, buf->size);
		PyObject *n = rest ? PyObject_CallMethod(f, "readinto", "O", rest) : NULL;
		int released = (rest ? release_view(rest) : -1) | release_view(view);

		if (!n)
			return -1;
		if (released < 0) {
			Py_DECREF(n);
			return -1;
		}
		if (n == Py_None) {
			Py_DECREF(n);
			PyErr_SetString(PyExc_BlockingIOError,
					"SecretBuffer.from_file: f.readinto() returned None "
					"(a non-blocking file with no data yet)");
			return -1;
		}
		Py_ssize_t k = PyNumber_AsSsize_t(n, PyExc_OverflowError);

		Py_DECREF(n);
		if (k == -1 && PyErr_Occurred())
			return -1;
		if (k == 0) {
			PyErr_Format(PyExc_EOFError,
				     "SecretBuffer.from_file: end of file after %zd of %zd bytes",
				     got, buf->size);
			return -1;
		}
		if (k < 0 || k > buf->size - got) {
			PyErr_Format(PyExc_RuntimeError,
				     "SecretBuffer.from_file: f.readinto() returned %zd", k);
			return -1;
		}
		got += k;
	}
	return 0;
}

static PyObject *SecretBuffer_from_file(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
					PyObject *kwnames)
{
	static const char *const names[] = { "f", "size" };
	PyObject *pos[2];
	unsigned flags;

	if (parse_args("from_file", args, nargs, kwnames, names, 2, pos, &flags) < 0)
		return NULL;
	PyObject *f = pos[0];
	int buffered = is_buffered(f);

	if (buffered < 0)
		return NULL;
	if (buffered &&
	    PyErr_WarnFormat(CopyWarning, 1,
			     "SecretBuffer.from_file: %.100s keeps its own copy of what it reads "
			     "(open the file with buffering=0)",
			     Py_TYPE(f)->tp_name) < 0)
		return NULL;
	PyObject *buf = make_buffer((PyTypeObject *)cls, pos[1], flags);

	if (!buf)
		return NULL;
	if (fill_from((SecretBuffer *)buf, f) < 0) {
		Py_DECREF(buf); /* frees and wipes what was read so far */
		return NULL;
	}
	return buf;
}

static PyMethodDef SecretBuffer_methods[] = {
	{ "close", (PyCFunction)SecretBuffer_close, METH_NOARGS,
	  "Wipe and unmap the buffer; again is a no-op.\n"
	  "BufferError while a memoryview of it is alive." },
	{ "__enter__", (PyCFunction)SecretBuffer_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)SecretBuffer_exit, METH_VARARGS, NULL },
	{ "stat", (PyCFunction)SecretBuffer_stat, METH_NOARGS,
	  "secbuf_stat() as a dict: size, mapped_bytes, resident_pages,\n"
	  "locked_pages, lock_method (its name), packed, secret." },
	{ "from_file", (PyCFunction)(void (*)(void))SecretBuffer_from_file,
	  METH_FASTCALL | METH_KEYWORDS | METH_CLASS,
	  "from_file(f, size, *, packed=False, secret=False, populate=False,\n"
	  "          best_effort=False)\n"
	  "A new buffer filled by f.readinto() straight into its memory, no bytes\n"
	  "in between.  EOFError if f ends first.  Pass an unbuffered file\n"
	  "(open(path, 'rb', buffering=0)): a buffered one keeps its own copy,\n"
	  "and CopyWarning says so." },
	{ "__reduce__", (PyCFunction)SecretBuffer_reduce, METH_NOARGS, NULL },
	{ "__reduce_ex__", (PyCFunction)SecretBuffer_reduce, METH_O, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef SecretBuffer_getset[] = {
	{ "closed", (getter)SecretBuffer_get_closed, NULL, "True once close() ran.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyBufferProcs SecretBuffer_as_buffer = {
	.bf_getbuffer = (getbufferproc)SecretBuffer_getbuffer,
	.bf_releasebuffer = (releasebufferproc)SecretBuffer_releasebuffer,
};

static PySequenceMethods SecretBuffer_as_sequence = {
	.sq_length = (lenfunc)SecretBuffer_length,
};

static PyTypeObject SecretBufferType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "secbuf.SecretBuffer",
	.tp_basicsize = sizeof(SecretBuffer),
	.tp_dealloc = (destructor)SecretBuffer_dealloc,
	.tp_repr = (reprfunc)SecretBuffer_repr,
	.tp_as_sequence = &SecretBuffer_as_sequence,
	.tp_as_buffer = &SecretBuffer_as_buffer,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "SecretBuffer(size, *, packed=False, secret=False, populate=False,\n"
		  "             best_effort=False)\n"
		  "size bytes of locked, guarded memory from libsecbuf, zero-filled,\n"
		  "read and written through memoryview(buf).  close() (or the end of\n"
		  "a with block) wipes and unmaps it.",
	.tp_methods = SecretBuffer_methods,
	.tp_getset = SecretBuffer_getset,
	.tp_new = SecretBuffer_new,
	.tp_vectorcall = SecretBuffer_vectorcall,
};

/* ---- os.fork(): the parent's views in the child ---- */

static size_t page_size;
static PyTypeObject *managed_buffer_type; /* what memoryview(x) keeps x's export in */

/*
 * Readable zero pages where a buffer of the parent was, in the child, for
 * whatever still holds its address (ctypes, a memoryview that cannot be
 * released): the child reads zeros there and never faults.  What the
 * library left there is never used again in the child: its guarded and
 * packed memory as zeros (MADV_WIPEONFORK: already readable, mprotect() is
 * a no-op), and secret memory (or any, on a kernel without WIPEONFORK) as
 * a PROT_NONE placeholder (sb_region_hold_dropped()), made readable here,
 * or as a hole, filled here.  A hole only: MAP_FIXED_NOREPLACE never
 * replaces a mapping.
 */
static void zeros_under(uintptr_t start, uintptr_t end)
{
	size_t len = end - start;

	if (mprotect((void *)start, len, PROT_READ | PROT_WRITE) == 0)
		return;
	if (errno == ENOMEM) { /* not all of it mapped */
		void *p = mmap((void *)start, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p == (void *)start)
			return;
		/* Before Linux 4.17 NOREPLACE is a hint: not where we asked. */
		if (p != MAP_FAILED && munmap(p, len) < 0)
			return; /* nothing better to do in a child's fork hook */
	}
	if (len > page_size)
		for (uintptr_t a = start; a < end; a += page_size)
			zeros_under(a, a + page_size);
}

/*
 * Release every memoryview of these buffers: any use of one then raises
 * ValueError ("operation forbidden on released memoryview object").
 * CPython offers no list of an object's views; the garbage collector
 * finds them, as the referrers of the managed buffers that refer to the
 * SecretBuffers.  A view whose own buffer is exported (to a PickleBuffer,
 * say) refuses release() with BufferError: it stays, and reads zeros.
 * gc.freeze()d views are not searched, and stay so too.
 */
static int release_views(PyObject *bufs)
{
	PyObject *gc = PyImport_ImportModule("gc"), *referrers = NULL, *mbufs = NULL;
	PyObject *refs = NULL, *views = NULL;
	int ret = -1;

	if (!gc || !(referrers = PyObject_GetAttrString(gc, "get_referrers")) ||
	    !(refs = PyObject_Call(referrers, bufs, NULL)) || !(mbufs = PyList_New(0)))
		goto out;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(refs); i++) {
		PyObject *r = PyList_GET_ITEM(refs, i);

		if (Py_TYPE(r) == managed_buffer_type && PyList_Append(mbufs, r) < 0)
			goto out;
	}
	Py_SETREF(mbufs, PyList_AsTuple(mbufs));
	if (!mbufs || !(views = PyObject_Call(referrers, mbufs, NULL)))
		goto out;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(views); i++) {
		PyObject *v = PyList_GET_ITEM(views, i), *r;
		int ours = 0;

		if (!PyMemoryView_Check(v))
			continue;
		/* Compared, never followed: a view released already may dangle. */
		for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(bufs); j++)
			ours |= PyMemoryView_GET_BASE(v) == PyTuple_GET_ITEM(bufs, j);
		if (!ours)
			continue;
		r = PyObject_CallMethod(v, "release", NULL);
		if (r)
			Py_DECREF(r);
		else if (PyErr_ExceptionMatches(PyExc_BufferError))
			PyErr_Clear(); /* exported from the view itself: it stays, reading zeros */
		else
			goto out;
	}
	ret = 0;
out:
	Py_XDECREF(views);
	Py_XDECREF(refs);
	Py_XDECREF(mbufs);
	Py_XDECREF(referrers);
	Py_XDECREF(gc);
	return ret;
}

/*
 * os.fork()'s after_in_child hook: no Python code of the child has run
 * yet, and every open buffer is the parent's.  A view of one made before
 * fork() holds a raw pointer into memory that is not the child's: zeros
 * for a guarded or packed buffer, nothing at all (SIGSEGV) for a secret
 * one.  So, for each buffer with exports: zero pages under it first, so
 * that nothing can fault, then its memoryviews released, so that they
 * raise ValueError as the buffer itself does.  The walk of the heap is
 * paid by a child whose parent had views alive at fork(), and no other.
 */
static PyObject *after_fork_child(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
	Py_ssize_t n = 0, i = 0;
	PyObject *bufs;
	int ret;

	for (SecretBuffer *b = open_buffers; b; b = b->next) {
		uintptr_t start = (uintptr_t)b->data & ~(uintptr_t)(page_size - 1);
		uintptr_t end = ((uintptr_t)b->data + b->size + page_size - 1) &
				~(uintptr_t)(page_size - 1);

		if (b->exports == 0 || b->generation == fork_generation)
			continue;
		zeros_under(start, end);
		n++;
	}
	if (n == 0)
		Py_RETURN_NONE;
	bufs = PyTuple_New(n);
	if (!bufs)
		return NULL;
	for (SecretBuffer *b = open_buffers; b && i < n; b = b->next)
		if (b->exports > 0 && b->generation != fork_generation)
			PyTuple_SET_ITEM(bufs, i++, Py_NewRef(b));
	ret = release_views(bufs);
	Py_DECREF(bufs);
	if (ret < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyMethodDef after_fork_child_def = { "_after_fork_child", after_fork_child, METH_NOARGS,
					    "secbuf's os.register_at_fork(after_in_child=) hook." };

/* after_fork_child() as os.fork()'s hook; what memoryview keeps its export in. */
static int watch_fork(void)
{
	static char probe_byte;
	PyObject *probe = PyMemoryView_FromMemory(&probe_byte, 1, PyBUF_READ);
	PyObject *os, *hook = NULL, *reg = NULL, *args = NULL, *kw = NULL, *r = NULL;

	if (!probe)
		return -1;
	managed_buffer_type = Py_TYPE(((PyMemoryViewObject *)probe)->mbuf); /* a static type */
	Py_DECREF(probe);
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	os = PyImport_ImportModule("os");
	if (os && (hook = PyCFunction_New(&after_fork_child_def, NULL)) &&
	    (reg = PyObject_GetAttrString(os, "register_at_fork")) && (args = PyTuple_New(0)) &&
	    (kw = Py_BuildValue("{s:O}", "after_in_child", hook)))
		r = PyObject_Call(reg, args, kw);
	Py_XDECREF(r);
	Py_XDECREF(kw);
	Py_XDECREF(args);
	Py_XDECREF(reg);
	Py_XDECREF(hook);
	Py_XDECREF(os);
	return r ? 0 : -1;
}

/* ---- the module ---- */

/*
 * secbuf_lock_method() is the method the probe settled on.  When RLIMIT_
 * MEMLOCK refused lock-on-fault (ulimit -l 0, or the budget spent), that
 * is mlock, and the same limit refuses mlock too: an allocation now fails,
 * or with best_effort=True is not locked at all.  lock_method() says what
 * an allocation gets, so 'none' then; secbuf_lock_reason() is the
 * library's word for it, for whichever method.
 */
static PyObject *lock_method(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
	int m = secbuf_lock_method();

	if (m < 0) {
		int err = errno;
		char why[512];

		secbuf_lock_reason(why, sizeof(why));
		return raise_error(err, why);
	}
	if (m != SECBUF_LOCK_NONE && secbuf_lock_reason(NULL, 0) == SECBUF_REASON_LIMIT)
		m = SECBUF_LOCK_NONE;
	return PyUnicode_FromString(secbuf_lock_method_name(m));
}

static PyObject *purge(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
	secbuf_purge();
	Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
	{ "lock_method", lock_method, METH_NOARGS,
	  "How an allocation made now is locked: 'maplockonfault', 'mlock2',\n"
	  "'mlock' (eager: populate=True buffers only, others are refused) or\n"
	  "'none' (nothing is: allocations are refused unless best_effort=True,\n"
	  "as under ulimit -l 0 without CAP_IPC_LOCK).  secbuf.Error, with the\n"
	  "library's reason, if SECBUF_LOCK names a method this kernel lacks." },
	{ "purge", purge, METH_NOARGS, "Zero every live buffer of the process (they stay open)." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "secbuf._secbuf",
	.m_doc = "libsecbuf's buffers for Python (use the secbuf package).",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__secbuf(void)
{
	PyObject *m;

	if (PyType_Ready(&SecretBufferType) < 0)
		return NULL;
	if (pthread_atfork(NULL, NULL, forked_child) != 0) {
		PyErr_SetString(PyExc_RuntimeError, "pthread_atfork failed");
		return NULL;
	}
	if (watch_fork() < 0)
		return NULL;
	m = PyModule_Create(&module);
	if (!m)
		return NULL;
	SecbufError = PyErr_NewExceptionWithDoc("secbuf.Error",
						"A libsecbuf call failed; errno is its errno.",
						PyExc_OSError, NULL);
	CopyWarning = PyErr_NewExceptionWithDoc(
		"secbuf.CopyWarning", "A secret is about to be copied where secbuf cannot wipe it.",
		PyExc_UserWarning, NULL);
	if (!SecbufError || !CopyWarning || PyModule_AddObjectRef(m, "Error", SecbufError) < 0 ||
	    PyModule_AddObjectRef(m, "CopyWarning", CopyWarning) < 0 ||
	    PyModule_AddObjectRef(m, "SecretBuffer", (PyObject *)&SecretBufferType) < 0 ||
	    PyModule_AddIntConstant(m, "PACKED_MAX", SECBUF_PACKED_MAX) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
