/* The environment a congestion-control unit test gives its flow: init keeps a pointer to it
 * (struct cc_flow.env), so it must outlive the flow. One per test file is enough: a test's
 * flows live one after another, or at the same time on the same scenario and line rate. */
#ifndef ROCESIM_TESTS_CC_TESTUTIL_H
#define ROCESIM_TESTS_CC_TESTUTIL_H
#include "models/cc.h"

static struct cc_env cc_test_env;

static inline const struct cc_env *cc_test_env_for(const struct scenario *s, const struct cc_ops *ops,
                                                   double line)
{
    cc_test_env = cc_env_make(s, ops, line);
    return &cc_test_env;
}

#endif
