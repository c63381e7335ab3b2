/* Open addressing with linear probing (see keymap.h). */
#include "sim/keymap.h"
#include "sim/reserve.h"
#include <glib.h>
#include <string.h>

/* At most one key in two slots: linear probing then expects 1.5 probes for a key present and
 * 2.5 for one absent, (1 + 1/(1-a))/2 and (1 + 1/(1-a)^2)/2 at load a (Knuth, TAOCP vol. 3,
 * section 6.4). */
#define KEYMAP_LOAD_NUM 1
#define KEYMAP_LOAD_DEN 2

G_STATIC_ASSERT(sizeof(((struct keymap_slot *)0)->key) == KEYMAP_KEY_BYTES);

static uint64_t mix64(uint64_t x) /* MurmurHash3's 64-bit finalizer */
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t key_hash(const uint32_t k[4])
{
    uint64_t lo = (uint64_t)k[1] << 32 | k[0], hi = (uint64_t)k[3] << 32 | k[2];
    return mix64(lo ^ mix64(hi + 0x9e3779b97f4a7c15ULL));
}

static void alloc_slots(struct keymap *m, uint64_t nslots)
{
    m->slots = g_new(struct keymap_slot, nslots);
    huge_pages_hint(m->slots, nslots * sizeof *m->slots); /* before the first touch (the memset) */
    memset(m->slots, 0xff, nslots * sizeof *m->slots); /* every val KEYMAP_EMPTY */
    m->mask = nslots - 1;
    m->len = 0;
}

void keymap_init(struct keymap *m, uint64_t expect)
{
    uint64_t n = 16;
    while (n * KEYMAP_LOAD_NUM / KEYMAP_LOAD_DEN < expect)
        n *= 2;
    alloc_slots(m, n);
}

static struct keymap_slot *probe(const struct keymap *m, const uint32_t key[4])
{
    for (uint64_t i = key_hash(key) & m->mask;; i = (i + 1) & m->mask) {
        struct keymap_slot *s = &m->slots[i];
        if (s->val == KEYMAP_EMPTY || memcmp(s->key, key, sizeof s->key) == 0)
            return s;
    }
}

static void grow(struct keymap *m)
{
    struct keymap_slot *old = m->slots;
    uint64_t n = m->mask + 1, len = m->len;
    alloc_slots(m, 2 * n);
    for (uint64_t i = 0; i < n; i++)
        if (old[i].val != KEYMAP_EMPTY)
            *probe(m, old[i].key) = old[i];
    m->len = len;
    g_free(old);
}

uint32_t *keymap_get_or_add(struct keymap *m, const void *key_bytes, bool *added)
{
    uint32_t key[4];
    memcpy(key, key_bytes, sizeof key);
    struct keymap_slot *s = probe(m, key);
    *added = s->val == KEYMAP_EMPTY;
    if (!*added)
        return &s->val;
    if ((m->len + 1) * KEYMAP_LOAD_DEN > (m->mask + 1) * KEYMAP_LOAD_NUM) {
        grow(m);
        s = probe(m, key);
    }
    memcpy(s->key, key, sizeof s->key);
    s->val = 0;
    m->len++;
    return &s->val;
}

void keymap_prefetch(const struct keymap *m, const void *key_bytes)
{
    uint32_t key[4];
    memcpy(key, key_bytes, sizeof key);
    const char *s = (const char *)&m->slots[key_hash(key) & m->mask];
    __builtin_prefetch(s);
    __builtin_prefetch(s + sizeof(struct keymap_slot) - 1); /* a slot may straddle two lines */
}

void keymap_clear(struct keymap *m)
{
    g_free(m->slots);
    *m = (struct keymap){ 0 };
}
