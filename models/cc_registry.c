/* The congestion-control registry: `none` and the algorithms of models/cc_registry.h. */
#include "models/cc.h"

#define CC_ENTRY_(name) &cc_##name##_ops,
const struct cc_ops *const cc_registry[CC_COUNT] = { &cc_none_ops, CC_ALGORITHMS(CC_ENTRY_) };
#undef CC_ENTRY_

const struct cc_ops *cc_ops_for(int id)
{
    return id >= 0 && id < CC_COUNT ? cc_registry[id] : &cc_none_ops;
}

void *cc_params(const struct scenario *s, const struct cc_ops *ops)
{
    for (int i = 0; i < CC_COUNT; i++)
        if (cc_registry[i] == ops)
            return s->cc_params[i];
    return NULL;
}

struct cc_env cc_env_make(const struct scenario *s, const struct cc_ops *ops, double line)
{
    return (struct cc_env){ .params = s ? cc_params(s, ops) : NULL, .line = line };
}
