/*
 * bench_textkey.c
 *	  What text keys would cost as multi-word keys (issue 21; src/README,
 *	  "Multi-word keys"): the words hold an order-preserving prefix of the
 *	  value, and entries whose prefixes tie need a full comparison.  For
 *	  five synthetic data sets, in "C" order (the bytes) and in ICU's
 *	  en-US order (the collation's sort key, as ucol_getSortKey gives it):
 *	    - the share of neighbours in sorted order whose first 8, 16, 24
 *	      or 32 bytes tie while the values differ (each one a full
 *	      comparison in a search that lands between them);
 *	    - the sort key's mean length;
 *	    - ns to make one sort key, against ns for one comparison
 *	      (strcmp, ucol_strcollUTF8).
 *	  No server involved.
 *
 *	  make bench-textkey   (prints a markdown table)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unicode/ucol.h>
#include "bench_util.h"

#define NSTR	200000
#define MAXLEN	128
#define MAXKEY	512

static const char *first[] = {"anna", "bob", "carlos", "dmitri", "eva", "fatima", "george",
	"hiro", "ines", "jamal", "karin", "li", "maria", "nils", "olga", "pedro"};
static const char *last[] = {"smith", "garcia", "müller", "nguyen", "kowalski", "rossi",
	"dubois", "andersson", "tanaka", "silva", "ivanova", "okafor"};
static const char *accented[] = {"Ångström", "angstrom", "Éclair", "eclair", "Zoë", "zoe",
	"Çelik", "celik", "Øresund", "oresund", "Straße", "strasse", "naïve", "naive", "Émile", "emile"};
static const char *categories[] = {"books", "electronics", "garden", "kitchen", "outdoor",
	"toys", "sports", "music"};

static void
make_value(int set, int i, char *out)
{
	switch (set)
	{
		case 0:					/* emails */
			snprintf(out, MAXLEN, "%s.%s%" PRIu64 "@%s.example.com", first[xrand() % 16], last[xrand() % 12],
					 xrand() % 1000, xrand() % 2 ? "mail" : "corp");
			break;
		case 1:					/* URLs: a long common prefix */
			snprintf(out, MAXLEN, "https://shop.example.com/products/%s/item-%" PRIu64,
					 categories[xrand() % 8], xrand() % 1000000);
			break;
		case 2:					/* words, some capitalized */
			{
				int			n = 3 + (int) (xrand() % 10);

				for (int j = 0; j < n; j++)
					out[j] = (char) ('a' + xrand() % 26);
				if (xrand() % 4 == 0)
					out[0] = (char) (out[0] - 'a' + 'A');
				out[n] = '\0';
				break;
			}
		case 3:					/* uuids as text */
			snprintf(out, MAXLEN, "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-%04" PRIx64 "-%012" PRIx64, xrand() & 0xFFFFFFFF,
					 xrand() & 0xFFFF, xrand() & 0xFFF, (xrand() & 0x3FFF) | 0x8000,
					 xrand() & UINT64_C(0xFFFFFFFFFFFF));
			break;
		default:				/* names with accents and case */
			snprintf(out, MAXLEN, "%s %s %d", accented[xrand() % 16], last[xrand() % 12], i % 100);
			break;
	}
}

typedef struct Item
{
	const char *s;
	const uint8_t *key;			/* bytes compared: the value, or its sort key */
	int			keylen;
} Item;

static int
item_cmp(const void *a, const void *b)
{
	const Item *x = a,
			   *y = b;
	int			n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int			c = memcmp(x->key, y->key, n);

	return c ? c : (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

/* neighbours whose first p bytes tie (zero-padded) while the keys differ */
static double
tie_share(Item *it, int n, int p)
{
	int			ties = 0;

	for (int i = 1; i < n; i++)
	{
		uint8_t		a[64] = {0},
					b[64] = {0};

		memcpy(a, it[i - 1].key, it[i - 1].keylen < p ? it[i - 1].keylen : p);
		memcpy(b, it[i].key, it[i].keylen < p ? it[i].keylen : p);
		if (memcmp(a, b, p) == 0 && item_cmp(&it[i - 1], &it[i]) != 0)
			ties++;
	}
	return 100.0 * ties / (n - 1);
}

int
main(void)
{
	static const char *names[] = {"emails", "URLs (long common prefix)", "words",
	"uuids as text", "names with accents"};
	UErrorCode err = U_ZERO_ERROR;
	UCollator  *coll = ucol_open("en-US", &err);
	char	   *vals = malloc((size_t) NSTR * MAXLEN);
	uint8_t    *keys = malloc((size_t) NSTR * MAXKEY);
	Item	   *it = malloc(sizeof(Item) * NSTR);
	volatile long sink = 0;

	rng = 0x9E3779B97F4A7C15ULL;
	if (U_FAILURE(err))
	{
		fprintf(stderr, "ucol_open: %s\n", u_errorName(err));
		return 1;
	}
	printf("| data set | order | mean key bytes | ties at 8 B | 16 B | 24 B | 32 B | ns a sort key | ns a comparison |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (int set = 0; set < 5; set++)
	{
		for (int i = 0; i < NSTR; i++)
			make_value(set, i, vals + (size_t) i * MAXLEN);
		for (int icu = 0; icu <= 1; icu++)
		{
			double		t0,
						keyns = 0,
						cmpns;
			double		total = 0;

			t0 = now_ns();
			for (int i = 0; i < NSTR; i++)
			{
				const char *s = vals + (size_t) i * MAXLEN;

				it[i].s = s;
				if (icu)
				{
					UCharIterator ui;
					uint32_t	state[2] = {0, 0};
					uint8_t    *k = keys + (size_t) i * MAXKEY;
					int32_t		len;
					UErrorCode	e = U_ZERO_ERROR;

					/* the whole sort key, as ucol_getSortKey gives it for UTF-8 */
					uiter_setUTF8(&ui, s, -1);
					len = ucol_nextSortKeyPart(coll, &ui, state, k, MAXKEY, &e);
					it[i].key = k;
					it[i].keylen = len;
				}
				else
				{
					it[i].key = (const uint8_t *) s;
					it[i].keylen = (int) strlen(s);
				}
				total += it[i].keylen;
			}
			if (icu)
				keyns = (now_ns() - t0) / NSTR;
			/* a comparison: neighbours in generation order */
			t0 = now_ns();
			for (int i = 1; i < NSTR; i++)
			{
				if (icu)
				{
					UErrorCode	e = U_ZERO_ERROR;

					sink += ucol_strcollUTF8(coll, it[i - 1].s, -1, it[i].s, -1, &e);
				}
				else
					sink += strcmp(it[i - 1].s, it[i].s);
			}
			cmpns = (now_ns() - t0) / (NSTR - 1);
			qsort(it, NSTR, sizeof(Item), item_cmp);
			{
				char		kbuf[32] = "-";

				if (icu)
					snprintf(kbuf, sizeof(kbuf), "%.0f", keyns);
				printf("| %s | %s | %.1f | %.2f%% | %.2f%% | %.2f%% | %.2f%% | %s | %.1f |\n",
					   names[set], icu ? "ICU en-US" : "C (bytes)", total / NSTR,
					   tie_share(it, NSTR, 8), tie_share(it, NSTR, 16), tie_share(it, NSTR, 24),
					   tie_share(it, NSTR, 32), kbuf, cmpns);
			}
		}
	}
	ucol_close(coll);
	return sink == 42;
}
