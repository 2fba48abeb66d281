/*
 * escape.h - any byte string, a process name above all, printed so that
 * the output stays valid: on a terminal, in JSON, in a Prometheus label.
 */
#ifndef SECBUF_AUDIT_ESCAPE_H
#define SECBUF_AUDIT_ESCAPE_H

#include <stdio.h>

enum escape_style {
	ESCAPE_TEXT, /* bare; \xXX for control bytes and bytes that are not UTF-8 */
	ESCAPE_JSON, /* a string literal: \" \\ and \u00XX */
	ESCAPE_PROM, /* a label value in quotes: \" \\ and a literal \xXX (written \\xXX) */
};

/*
 * Print str to f in style.  Valid UTF-8 passes as it is; a control byte
 * or a byte that is not part of valid UTF-8 becomes an escape, so that a
 * name of arbitrary bytes gives valid output.
 */
void print_escaped(FILE *f, const char *str, enum escape_style style);

#endif
