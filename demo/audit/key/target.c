/*
 * target.c - one target's record: its hits, copies counted per key and
 * class; the ranges it could not read, and why; the verdicts.
 */
#include <stdio.h>
#include <stdlib.h>

#include "key.h"

void key_target_hit(struct key_target *t, const struct key_patterns *ps, const struct key_hit *h)
{
	const struct key_pattern *p = &ps->p[h->pattern];
	struct key_hit *last = t->nhits ? &t->hits[t->nhits - 1] : NULL;

	/* The next line of a PEM text right after the last (LF or CRLF): the same copy. */
	if (h->form == FORM_TEXT && last && last->form == FORM_TEXT &&
	    ps->p[last->pattern].key == p->key && p->line == last->last_line + 1 &&
	    last->map == h->map && h->at >= last->at + last->span &&
	    h->at <= last->at + last->span + 2) {
		last->span = (size_t)(h->at + h->span - last->at);
		last->last_line = p->line;
		return;
	}
	t->copies[p->key][h->exposed != 0]++;
	if (t->nhits >= KEY_HITS_LISTED) {
		t->unlisted++; /* counted in copies all the same */
		return;
	}
	if (t->nhits == t->cap_hits) {
		size_t cap = t->cap_hits ? t->cap_hits * 2 : 16;
		struct key_hit *grown = realloc(t->hits, cap * sizeof(*grown));

		if (!grown) {
			t->unlisted++;
			return;
		}
		t->hits = grown;
		t->cap_hits = cap;
	}
	t->hits[t->nhits++] = *h;
}

int key_target_unread(struct key_target *t, uint64_t start, uint64_t end, size_t map,
		      const char *reason)
{
	struct key_unread *last = t->nunread ? &t->unread[t->nunread - 1] : NULL;

	/* Page after page of one range, for one reason: one entry. */
	if (last && last->end == start && last->map == map) {
		last->end = end;
		return 0;
	}
	if (t->nunread == t->cap_unread) {
		size_t cap = t->cap_unread ? t->cap_unread * 2 : 8;
		struct key_unread *grown = realloc(t->unread, cap * sizeof(*grown));

		if (!grown)
			return -1;
		t->unread = grown;
		t->cap_unread = cap;
	}
	t->unread[t->nunread].start = start;
	t->unread[t->nunread].end = end;
	t->unread[t->nunread].map = map;
	snprintf(t->unread[t->nunread++].reason, sizeof(t->unread[0].reason), "%s", reason);
	return 0;
}

enum key_verdict key_verdict_of(const unsigned long copies[2])
{
	return copies[1] ? VERDICT_EXPOSED : copies[0] ? VERDICT_PROTECTED : VERDICT_NOT_FOUND;
}

const char *key_verdict_name(enum key_verdict v)
{
	static const char *const names[] = { "NOT FOUND", "PROTECTED", "EXPOSED" };

	return names[v];
}

enum key_verdict key_overall(const struct key_run *run, size_t k)
{
	enum key_verdict worst = VERDICT_NOT_FOUND, v;

	for (size_t i = 0; i < run->ntargets; i++) {
		if (run->targets[i].error[0])
			continue;
		v = key_verdict_of(run->targets[i].copies[k]);
		worst = v > worst ? v : worst;
	}
	return worst;
}

const char *key_form_name(enum key_form f)
{
	static const char *const names[] = {
		[FORM_BE] = "big-endian",    [FORM_BE_FIXED] = "big-endian, fixed width",
		[FORM_LIMBS64] = "limbs64",  [FORM_LIMBS32] = "limbs32",
		[FORM_LE] = "little-endian", [FORM_RAW] = "raw",
		[FORM_TEXT] = "base64",
	};

	return names[f];
}

const char *key_target_label(const struct key_target *t, char *buf, size_t size)
{
	static const char *const kinds[] = { [TARGET_PID] = "pid",
					     [TARGET_SELF] = "self",
					     [TARGET_CORE] = "core",
					     [TARGET_IMAGE] = "image",
					     [TARGET_SWAP] = "swap" };

	if (t->kind == TARGET_PID)
		snprintf(buf, size, "pid %d", (int)t->pid);
	else if (t->kind == TARGET_SELF)
		snprintf(buf, size, "self, pid %d", (int)t->pid);
	else
		snprintf(buf, size, "%s %s", kinds[t->kind], t->path);
	return buf;
}
