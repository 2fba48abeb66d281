/* escape.c - byte strings made safe for text, JSON and Prometheus labels. */
#include "escape.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at p (at most left bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	/* No overlong forms, no surrogates, nothing above U+10FFFF. */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (left < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

void print_escaped(FILE *f, const char *str, enum escape_style style)
{
	/* A byte that cannot pass as it is, in each style. */
	static const char *const hex[] = { "\\x%02x", "\\u%04x", "\\\\x%02x" };
	const unsigned char *s = (const unsigned char *)str;
	size_t left = strlen(str);

	if (style != ESCAPE_TEXT)
		fputc('"', f);
	while (left) {
		size_t len = utf8_len(s, left);

		if (style != ESCAPE_TEXT && (*s == '"' || *s == '\\'))
			fprintf(f, "\\%c", *s);
		else if (len && *s >= 0x20 && *s != 0x7f)
			fwrite(s, 1, len, f);
		else
			fprintf(f, hex[style], *s);
		len = len ? len : 1;
		s += len;
		left -= len;
	}
	if (style != ESCAPE_TEXT)
		fputc('"', f);
}
