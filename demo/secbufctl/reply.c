/* reply.c - a reply's fields checked for its operation, and printed. */
#include "reply.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "secbuf.h"

static int fields(const struct kd_reply *r, unsigned n, const uint32_t *lens)
{
	if (r->nf != n)
		return 0;
	for (unsigned i = 0; i < n; i++)
		if (lens[i] != r->f[i].len)
			return 0;
	return 1;
}

/* A LIST entry: a type byte, then a key name as the daemon accepts it. */
static int list_entry(const struct kd_field *f)
{
	return f->len >= 1 && kd_name_valid(f->p + 1, f->len - 1);
}

/* A STATS record: its fixed part, then "*total", "*buffer" or a key name. */
static int stats_record(const struct kd_field *f)
{
	struct kd_stat_rec rec;

	if (kd_stat_unpack(f, &rec) < 0 || strlen(rec.name) != f->len - KD_STAT_FIXED)
		return 0;
	return !strcmp(rec.name, "*total") || !strcmp(rec.name, "*buffer") ||
	       kd_name_valid((const uint8_t *)rec.name, strlen(rec.name));
}

int reply_check(uint8_t op, const struct kd_reply *r)
{
	static const uint32_t pk[] = { KD_PK_BYTES }, typed_pk[] = { 1, KD_PK_BYTES },
			      sig[] = { KD_SIG_BYTES };
	int ok = 0;

	switch (op) {
	case KD_OP_KEYGEN:
	case KD_OP_IMPORT:
		ok = fields(r, 1, pk);
		break;
	case KD_OP_PUBKEY:
		ok = fields(r, 2, typed_pk);
		break;
	case KD_OP_SIGN:
		ok = fields(r, 1, sig);
		break;
	case KD_OP_VERIFY:
	case KD_OP_DELETE:
		ok = r->nf == 0;
		break;
	case KD_OP_SEAL:
	case KD_OP_OPEN:
		ok = r->nf == 1;
		break;
	case KD_OP_LIST:
		ok = 1;
		for (unsigned i = 0; i < r->nf; i++)
			ok &= list_entry(&r->f[i]);
		break;
	case KD_OP_STATS:
		ok = r->nf >= 1; /* the totals come first */
		for (unsigned i = 0; i < r->nf; i++)
			ok &= stats_record(&r->f[i]);
		break;
	}
	if (!ok)
		errno = EPROTO;
	return ok ? 0 : -1;
}

static void print_hex(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		printf("%02x", p[i]);
	putchar('\n');
}

static void print_stats(const struct kd_reply *r)
{
	struct kd_stat_rec rec;

	for (unsigned i = 0; i < r->nf; i++) {
		if (kd_stat_unpack(&r->f[i], &rec) < 0)
			continue;
		if (i == 0)
			printf("# lock method %s, page size %llu\n%-24s %-8s %12s %9s %9s\n",
			       secbuf_lock_method_name(rec.lock_method),
			       (unsigned long long)rec.page_size, "name", "type", "capacity_kB",
			       "resident", "locked");
		printf("%-24s %-8s %12llu %9llu %9llu\n", rec.name,
		       rec.type ? kd_keytype_name(rec.type) : "-",
		       (unsigned long long)rec.capacity >> 10,
		       (unsigned long long)rec.resident_pages,
		       (unsigned long long)rec.locked_pages);
	}
}

void reply_print(uint8_t op, const struct kd_reply *r)
{
	switch (op) {
	case KD_OP_KEYGEN:
	case KD_OP_IMPORT:
	case KD_OP_SIGN:
	case KD_OP_SEAL:
	case KD_OP_OPEN:
		print_hex(r->f[0].p, r->f[0].len);
		break;
	case KD_OP_PUBKEY:
		printf("%s ", kd_keytype_name(r->f[0].p[0]));
		print_hex(r->f[1].p, r->f[1].len);
		break;
	case KD_OP_LIST:
		for (unsigned i = 0; i < r->nf; i++)
			printf("%-8s %.*s\n", kd_keytype_name(r->f[i].p[0]), (int)r->f[i].len - 1,
			       r->f[i].p + 1);
		break;
	case KD_OP_STATS:
		print_stats(r);
		break;
	case KD_OP_VERIFY:
		printf("signature OK\n");
		break;
	}
}
