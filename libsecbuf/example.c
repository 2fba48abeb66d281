/* Keep a key in a secbuf buffer: locked, not dumped, wiped on free. */
#include <secbuf.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	struct secbuf_stat st;
	unsigned char *key = secbuf_alloc(32);

	if (!key) {
		perror("secbuf_alloc");
		return 1;
	}
	memset(key, 0x42, 32);				/* stand-in for a real key */
	if (secbuf_protect(key, SECBUF_READONLY) < 0 ||	/* writes now fault */
	    secbuf_stat(key, &st) < 0) {
		perror("secbuf");
		secbuf_free(key);
		return 1;
	}
	printf("%zu bytes, %zu page(s) locked with %s\n", st.size,
	       st.locked_pages, secbuf_lock_method_name(st.lock_method));
	secbuf_free(key);				/* wiped, then unmapped */
	return 0;
}
