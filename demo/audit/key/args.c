/*
 * args.c - the options of --key mode as main.c collects them, and what
 * clashes with them.  Built into every secbuf-audit, the guest's without
 * libcrypto too, so that its options parse the same and fail in words.
 */
#include <errno.h>
#include <stdlib.h>

#include "../audit.h"
#include "key.h"

int key_arg_add(struct key_args *a, enum key_arg_kind kind, const char *path)
{
	struct key_arg *l = realloc(a->list, (a->n + 1) * sizeof(*l));

	if (!l)
		return -1;
	a->list = l;
	a->list[a->n].kind = kind;
	a->list[a->n++].path = path;
	return 0;
}

int key_args_given(const struct key_args *a)
{
	return a->n || a->swap || a->self;
}

const char *key_args_conflict(const struct key_args *a, const struct audit_opts *o, int host,
			      int operands)
{
	int keys = 0, targets = operands || a->swap || a->self;

	for (size_t i = 0; i < a->n; i++) {
		keys += a->list[i].kind == KEY_ARG_KEY || a->list[i].kind == KEY_ARG_SECRET;
		targets |= a->list[i].kind == KEY_ARG_CORE || a->list[i].kind == KEY_ARG_IMAGE;
	}
	if (host)
		return "--host audits how secret memory is held; --key finds where a key is: "
		       "one or the other";
	if (o->sel.all || o->sel.have_range)
		return "--all and --range select secbuf memory; --key searches all of it";
	if (o->format == FORMAT_PROM || o->output)
		return "--format=prometheus and --output are for --host";
	if (!keys)
		return "which key? --core, --image, --swap and --self search for --key FILE or "
		       "--secret-file FILE";
	if (!targets)
		return "where? give a PID, --self, --core FILE, --image FILE or --swap";
	return NULL;
}
