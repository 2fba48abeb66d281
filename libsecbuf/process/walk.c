/*
 * Walks of resident pages with the calling thread's vector.  That vector
 * is written (made resident) when the thread makes a large buffer, not
 * when it walks one, so a free faults nothing in; only a thread that frees
 * a large buffer it never allocated one like may take its four faults then.
 */
#include "process.h"

int sb_walk(unsigned char *start, size_t len, sb_page_fn fn, size_t *count)
{
	struct sb_thread *t = NULL;

	if (len / sb_caps()->page > SB_WALK_STACK)
		t = sb_thread_get(); /* without it, the stack's vector will do */
	return sb_resident_walk(start, len, t ? t->walk_vec : NULL, t ? SB_WALK_VEC : 0, fn, NULL,
				count);
}

/*
 * The thread's state is made at its first allocation of any size, so that
 * the mapping it may add appears once per process, not with the first
 * large buffer; without it, walks fall back to the stack's vector.
 */
void sb_walk_prepare(size_t len)
{
	struct sb_thread *t = sb_thread_get();

	if (!t || t->walk_ready || len / sb_caps()->page <= SB_WALK_STACK)
		return;
	sb_wipe(t->walk_vec, SB_WALK_VEC);
	t->walk_ready = 1;
}

int sb_wipe_resident(unsigned char *start, size_t len)
{
	return sb_walk(start, len, sb_wipe_page, NULL);
}
