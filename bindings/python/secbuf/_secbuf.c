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
#include <sys/resource.h>

#include <secbuf.h>

/*
 * Bumped in the child of every fork(): a buffer made before it is not the
 * child's (the library aborts on its use there, and a SECBUF_SECRET
 * buffer is not even mapped), so the child may neither touch nor free it.
 */
static unsigned long fork_generation;

static void forked_child(void)
{
	fork_generation++;
}

typedef struct {
	PyObject ob_base; /* PyObject_HEAD, spelt out for clang-format */
	void *data;	  /* NULL once closed */
	Py_ssize_t size;
	Py_ssize_t exports; /* memoryviews and other buffer users alive */
	unsigned flags;
	unsigned long generation;
} SecretBuffer;

static PyObject *SecbufError;
static PyObject *CopyWarning;

/*
 * secbuf.Error(errno, message): the message says what was asked and,
 * where it can, what would fix it.  An OSError subclass, so that errno is
 * there to test, without OSError's remapping (EAGAIN is not a
 * BlockingIOError here).
 */
static PyObject *raise_errno(int err, const char *what)
{
	char limit[64] = "unlimited", text[512];
	const char *fix = "";
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(limit, sizeof(limit), "%llu kB", (unsigned long long)rl.rlim_cur / 1024);
	if (err == EAGAIN || err == EPERM)
		fix = "RLIMIT_MEMLOCK is %s: raise it with ulimit -l or LimitMEMLOCK=, or pass "
		      "best_effort=True";
	else if (err == ENOMEM)
		fix = "too large, or over vm.max_map_count or RLIMIT_MEMLOCK (%s)";
	else if (err == ENOSYS)
		fix = "no secret memory here: memfd_secret needs secretmem.enable=1 before Linux "
		      "6.5%s; or pass best_effort=True";
	int n = snprintf(text, sizeof(text), "%s: %s", what, strerror(err));

	if (*fix && n > 0 && (size_t)n < sizeof(text)) {
		char more[256];

		snprintf(more, sizeof(more), fix, err == ENOSYS ? "" : limit);
		snprintf(text + n, sizeof(text) - n, " (%s)", more);
	}
	PyObject *args = Py_BuildValue("(is)", err, text);

	if (args) {
		PyErr_SetObject(SecbufError, args);
		Py_DECREF(args);
	}
	return NULL;
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
		char what[64];

		Py_DECREF(self);
		snprintf(what, sizeof(what), "SecretBuffer(%zd)", size);
		return raise_errno(err, what);
	}
	self->data = data;
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

	self->data = NULL;
	if (!data || self->generation != fork_generation)
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

static PyObject *lock_method(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
	int m = secbuf_lock_method();

	if (m < 0)
		return raise_errno(errno, "secbuf_lock_method");
	return PyUnicode_FromString(secbuf_lock_method_name(m));
}

static PyObject *purge(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
	secbuf_purge();
	Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
	{ "lock_method", lock_method, METH_NOARGS,
	  "The process's lock method: 'maplockonfault', 'mlock2', 'mlock' or\n"
	  "'none'.  secbuf.Error if SECBUF_LOCK names a method this kernel lacks." },
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
