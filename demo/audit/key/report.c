/*
 * report.c - what --key found, as text or as one JSON object.  A key is
 * named by the SHA-256 of its public key (SubjectPublicKeyInfo, DER) and
 * a secret by its file: the report holds nothing private.  Each hit says
 * where (the mapping, or the offset), what (the value and its encoding)
 * and its class; each target what it could not read, so that a verdict
 * is never clean by omission.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../escape.h"
#include "../scan.h"
#include "key.h"

/* What a mapping is, in a word or two. */
static const char *where(const struct key_map *m)
{
	if (!strcmp(m->name, SECRETMEM_NAME))
		return "secret memory";
	/* Unnamed where the kernel cannot name mappings: secbuf's signature, dd and wf. */
	if (!strncmp(m->name, "[anon:secbuf", 12) || (!m->name[0] && m->dd && m->wf))
		return "secbuf";
	if (!strcmp(m->name, "[heap]"))
		return "heap";
	if (!strncmp(m->name, "[stack", 6))
		return "stack";
	if (m->name[0] == '/')
		return "file-backed";
	if (!strncmp(m->name, "[anon:", 6))
		return "anonymous, named";
	return m->name[0] ? m->name : "anonymous";
}

/* Why a mapping's copy is exposed, or how it is protected. */
static const char *class_why(const struct key_map *m, int exposed, char *buf, size_t size)
{
	if (!exposed)
		snprintf(buf, size, "%s",
			 !strcmp(m->name, SECRETMEM_NAME) ? "out of the kernel's direct map" :
							    "locked, not in core dumps");
	else
		snprintf(buf, size, "%s%s%s", m->lo ? "" : "not locked", m->lo || m->dd ? "" : ", ",
			 m->dd ? "" : "in core dumps");
	return buf;
}

static const char *file_class(const struct key_target *t)
{
	return t->kind == TARGET_CORE ? "a core file is outside the process" :
	       t->kind == TARGET_SWAP ? "in swap, on disk" :
					"a file is outside the process";
}

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

static void text_size(uint64_t bytes)
{
	if (bytes >= 1 << 20)
		printf("%.1f MiB", bytes / 1048576.0);
	else
		printf("%llu bytes", (unsigned long long)bytes);
}

static void text_key(const struct key_item *k, size_t i)
{
	printf("key %zu: ", i + 1);
	if (k->secret) {
		printf("secret ");
		print_escaped(stdout, k->name, ESCAPE_TEXT);
		printf(" (%zu bytes; named by its file, never by a hash of it)\n", k->secret_len);
		return;
	}
	printf("%s %s, from ", k->name, k->type);
	for (size_t f = 0; f < k->nfiles; f++) {
		printf("%s", f ? ", " : "");
		print_escaped(stdout, k->files[f], ESCAPE_TEXT);
		printf(" (%s)", k->forms[f]);
	}
	printf(": %u private value%s, %u patterns (%u PEM lines)\n", k->values,
	       k->values == 1 ? "" : "s", k->patterns, k->pem_lines);
}

/* "RSA d, limbs64 (whole, 256 bytes)" */
static void text_what(const struct key_run *run, const struct key_hit *h)
{
	const struct key_pattern *p = &run->ps.p[h->pattern];

	printf("key %u %s, %s", p->key + 1, p->value, key_form_name(h->form));
	if (h->form == FORM_TEXT)
		printf(" (lines %u-%u, %zu bytes)", p->line, h->last_line, h->span);
	else if (h->whole)
		printf(" (whole, %zu bytes)", h->span);
	else
		printf(" (a %zu-byte window from the middle of %zu bytes)", h->span, p->len);
}

static void text_hit(const struct key_run *run, const struct key_target *t, const struct key_hit *h)
{
	char why[80];

	printf("  hit ");
	text_what(run, h);
	if (h->map != (size_t)-1) {
		const struct key_map *m = &t->maps[h->map];

		printf(" at 0x%llx in %s %lx-%lx %s +0x%llx", (unsigned long long)h->at, where(m),
		       m->start, m->end, m->perms, (unsigned long long)(h->at - m->start));
		if (m->name[0]) {
			putchar(' ');
			print_escaped(stdout, m->name, ESCAPE_TEXT);
		}
		printf(": %s (%s)\n", h->exposed ? "exposed" : "protected",
		       class_why(m, h->exposed, why, sizeof(why)));
	} else {
		printf(" at offset %llu (0x%llx", (unsigned long long)h->at,
		       (unsigned long long)h->at);
		if (t->kind == TARGET_SWAP)
			printf(", page %llu", (unsigned long long)(h->at / page_size()));
		printf("): exposed (%s)\n", file_class(t));
	}
}

static void text_unread(const struct key_target *t, const struct key_unread *u)
{
	if (u->map == (size_t)-1) {
		printf("  unreadable offsets %llu-%llu: %s\n", (unsigned long long)u->start,
		       (unsigned long long)u->end, u->reason);
		return;
	}
	printf("  unreadable %llx-%llx (%llu kB) in %s ", (unsigned long long)u->start,
	       (unsigned long long)u->end, (unsigned long long)((u->end - u->start) >> 10),
	       where(&t->maps[u->map]));
	print_escaped(stdout, t->maps[u->map].name, ESCAPE_TEXT);
	printf(": %s\n", u->reason);
}

static void text_header(const struct key_target *t, const char *label)
{
	printf("%s", label);
	if (t->kind == TARGET_PID || t->kind == TARGET_SELF) {
		printf(" (");
		print_escaped(stdout, t->comm, ESCAPE_TEXT);
		printf("): read ");
		text_size(t->read);
		printf(" of %zu mappings; not read: %lu untouched (%lu PROT_NONE), %lu pages swapped "
		       "out (--swap reads swap), %lu zero pages, %lu of the kernel's, %zu ranges "
		       "unreadable",
		       t->nmaps, t->untouched, t->noaccess, t->swapped, t->zero, t->kernel,
		       t->nunread);
	} else {
		printf("%s%s%s: ", t->swap_type[0] ? " (" : "", t->swap_type,
		       t->swap_type[0] ? ")" : "");
		text_size(t->size);
		printf(", read ");
		text_size(t->read);
		printf("; %zu ranges unreadable", t->nunread);
	}
	printf("%s\n", t->vanished ? t->kind == TARGET_PID ? "; it EXITED mid-scan: partial" :
							     "; it SHRANK mid-scan: partial" :
				     "");
}

static void text_target(const struct key_run *run, const struct key_target *t)
{
	char label[300], advice[1024];
	int in_swap = 0;

	key_target_label(t, label, sizeof(label));
	if (t->error[0]) {
		printf("%s: NOT AUDITED: %s%s\n", label, t->error,
		       t->listed ? " (an active swap area: counted, not an error)" : "");
		return;
	}
	text_header(t, label);
	for (size_t u = 0; u < t->nunread; u++)
		text_unread(t, &t->unread[u]);
	for (size_t h = 0; h < t->nhits; h++)
		text_hit(run, t, &t->hits[h]);
	if (t->unlisted)
		printf("  ... and %lu more hits, counted below\n", t->unlisted);
	printf("  verdict %s:", label);
	for (size_t k = 0; k < run->nkeys; k++) {
		enum key_verdict v = key_verdict_of(t->copies[k]);

		in_swap |= v == VERDICT_EXPOSED;
		printf("%s key %zu %s", k ? "," : "", k + 1, key_verdict_name(v));
		if (v != VERDICT_NOT_FOUND)
			printf(" (%lu exposed, %lu protected copies)", t->copies[k][1],
			       t->copies[k][0]);
	}
	if (t->nunread || t->swapped || t->vanished)
		printf("; in what could be read only");
	putchar('\n');
	if (t->kind == TARGET_SWAP && in_swap)
		printf("  advice: %s\n", key_swap_advice(t, advice, sizeof(advice)));
}

static void text_report(const struct key_run *run)
{
	size_t failed = 0, audited = 0;

	printf("secbuf-audit: --key, %zu key%s, %zu target%s\n", run->nkeys,
	       run->nkeys == 1 ? "" : "s", run->ntargets, run->ntargets == 1 ? "" : "s");
	for (size_t k = 0; k < run->nkeys; k++)
		text_key(&run->keys[k], k);
	printf("searched: each private value big-endian (as DER holds it) and little-endian "
	       "(OpenSSL's BIGNUM limbs); raw keys as they are; the PEM lines that encode private "
	       "bytes; a value longer than %d bytes by its middle %d, then whole around each hit; "
	       "one pass for all\n",
	       KEY_WINDOW, KEY_WINDOW);
	printf("class: protected = locked and not in core dumps (VmFlags lo and dd: secbuf's "
	       "memory), or memfd_secret memory; exposed = anything else, and every copy in a "
	       "file or swap\n");
	for (size_t i = 0; i < run->ntargets; i++) {
		text_target(run, &run->targets[i]);
		failed += run->targets[i].error[0] && !run->targets[i].listed;
		audited += !run->targets[i].error[0];
	}
	if (!run->ntargets)
		printf("no target: no active swap area (/proc/swaps lists none)\n");
	printf("summary:");
	for (size_t k = 0; k < run->nkeys; k++)
		printf("%s key %zu %s", k ? "," : "", k + 1, key_verdict_name(key_overall(run, k)));
	printf("; %zu of %zu targets audited, %zu failed%s\n", audited, run->ntargets, failed,
	       audited ? "" : ": NOTHING AUDITED");
}

static void json_str(const char *s)
{
	print_escaped(stdout, s, ESCAPE_JSON);
}

static void json_key(const struct key_item *k, size_t i)
{
	printf("%s{\"key\":%zu,\"secret\":%s,\"name\":", i ? "," : "", i + 1,
	       k->secret ? "true" : "false");
	json_str(k->name);
	printf(",\"type\":");
	json_str(k->type);
	printf(",\"files\":[");
	for (size_t f = 0; f < k->nfiles; f++) {
		printf("%s{\"file\":", f ? "," : "");
		json_str(k->files[f]);
		printf(",\"form\":");
		json_str(k->forms[f]);
		printf("}");
	}
	printf("],\"values\":%u,\"patterns\":%u,\"pem_lines\":%u", k->values, k->patterns,
	       k->pem_lines);
	if (k->secret)
		printf(",\"bytes\":%zu", k->secret_len);
	printf("}");
}

static void json_map(const struct key_map *m)
{
	printf("{\"start\":\"0x%lx\",\"end\":\"0x%lx\",\"perms\":\"%s\",\"name\":", m->start,
	       m->end, m->perms);
	json_str(m->name);
	printf(",\"vmflags\":");
	json_str(m->vmflags);
	printf(",\"where\":");
	json_str(where(m));
	printf("}");
}

static void json_hit(const struct key_run *run, const struct key_target *t, const struct key_hit *h,
		     size_t i)
{
	const struct key_pattern *p = &run->ps.p[h->pattern];
	char why[80];

	printf("%s{\"key\":%u,\"value\":", i ? "," : "", p->key + 1);
	json_str(p->value);
	printf(",\"encoding\":\"%s\",\"whole\":%s,\"bytes\":%zu,\"value_bytes\":%zu",
	       key_form_name(h->form), h->whole ? "true" : "false", h->span, p->len);
	if (h->form == FORM_TEXT)
		printf(",\"lines\":[%u,%u]", p->line, h->last_line);
	printf(",\"class\":\"%s\"", h->exposed ? "exposed" : "protected");
	if (h->map != (size_t)-1) {
		const struct key_map *m = &t->maps[h->map];

		printf(",\"address\":\"0x%llx\",\"offset\":%llu,\"where\":",
		       (unsigned long long)h->at, (unsigned long long)(h->at - m->start));
		json_str(where(m));
		printf(",\"why\":");
		json_str(class_why(m, h->exposed, why, sizeof(why)));
		printf(",\"mapping\":");
		json_map(m);
	} else {
		printf(",\"offset\":%llu,\"why\":", (unsigned long long)h->at);
		json_str(file_class(t));
	}
	printf("}");
}

static void json_target(const struct key_run *run, const struct key_target *t, size_t i)
{
	static const char *const kinds[] = { "pid", "self", "core", "image", "swap" };
	char advice[1024];
	int exposed = 0;

	printf("%s{\"target\":\"%s\"", i ? "," : "", kinds[t->kind]);
	if (t->kind == TARGET_PID || t->kind == TARGET_SELF) {
		printf(",\"pid\":%d,\"comm\":", (int)t->pid);
		json_str(t->comm);
	} else {
		printf(",\"file\":");
		json_str(t->path);
		if (t->kind == TARGET_SWAP)
			printf(",\"swap_type\":\"%s\",\"listed\":%s",
			       t->swap_type[0] ? t->swap_type : "named",
			       t->listed ? "true" : "false");
	}
	if (t->error[0]) {
		printf(",\"error\":");
		json_str(t->error);
		printf(",\"verdicts\":null}");
		return;
	}
	printf(",\"error\":null,\"size\":%llu,\"read_bytes\":%llu,\"mappings\":%zu,"
	       "\"untouched_mappings\":%lu,\"noaccess_mappings\":%lu,\"kernel_mappings\":%lu,"
	       "\"swapped_pages\":%lu,\"zero_pages\":%lu,\"vanished\":%s,\"unreadable\":[",
	       (unsigned long long)t->size, (unsigned long long)t->read, t->nmaps, t->untouched,
	       t->noaccess, t->kernel, t->swapped, t->zero, t->vanished ? "true" : "false");
	for (size_t u = 0; u < t->nunread; u++) {
		const struct key_unread *r = &t->unread[u];

		printf("%s{\"start\":%llu,\"end\":%llu,\"reason\":", u ? "," : "",
		       (unsigned long long)r->start, (unsigned long long)r->end);
		json_str(r->reason);
		if (r->map != (size_t)-1) {
			printf(",\"mapping\":");
			json_map(&t->maps[r->map]);
		}
		printf("}");
	}
	/* The guard pages and other PROT_NONE mappings with nothing in them, by name. */
	printf("],\"noaccess\":[");
	for (size_t m = 0, n = 0; m < t->nmaps; m++) {
		const struct key_map *map = &t->maps[m];

		if (strncmp(map->perms, "---", 3) || map->rss_kb || map->swap_kb)
			continue;
		printf("%s{\"start\":\"0x%lx\",\"end\":\"0x%lx\",\"name\":", n++ ? "," : "",
		       map->start, map->end);
		json_str(map->name);
		printf("}");
	}
	printf("],\"hits\":[");
	for (size_t h = 0; h < t->nhits; h++)
		json_hit(run, t, &t->hits[h], h);
	printf("],\"hits_unlisted\":%lu,\"verdicts\":[", t->unlisted);
	for (size_t k = 0; k < run->nkeys; k++) {
		enum key_verdict v = key_verdict_of(t->copies[k]);

		exposed |= v == VERDICT_EXPOSED;
		printf("%s{\"key\":%zu,\"verdict\":\"%s\",\"exposed\":%lu,\"protected\":%lu}",
		       k ? "," : "", k + 1, key_verdict_name(v), t->copies[k][1], t->copies[k][0]);
	}
	printf("]");
	if (t->kind == TARGET_SWAP && exposed) {
		printf(",\"advice\":");
		json_str(key_swap_advice(t, advice, sizeof(advice)));
	}
	printf("}");
}

static void json_report(const struct key_run *run)
{
	size_t failed = 0, audited = 0;

	printf("{\"mode\":\"key\",\"keys\":[");
	for (size_t k = 0; k < run->nkeys; k++)
		json_key(&run->keys[k], k);
	printf("],\"targets\":[");
	for (size_t i = 0; i < run->ntargets; i++) {
		json_target(run, &run->targets[i], i);
		failed += run->targets[i].error[0] && !run->targets[i].listed;
		audited += !run->targets[i].error[0];
	}
	printf("],\"summary\":{\"targets\":%zu,\"audited\":%zu,\"failed\":%zu,\"verdicts\":[",
	       run->ntargets, audited, failed);
	for (size_t k = 0; k < run->nkeys; k++)
		printf("%s{\"key\":%zu,\"verdict\":\"%s\"}", k ? "," : "", k + 1,
		       key_verdict_name(key_overall(run, k)));
	printf("]}}\n");
}

int key_report(const struct key_run *run)
{
	if (run->json)
		json_report(run);
	else
		text_report(run);
	return fflush(stdout) == 0 ? 0 : -1;
}
