/* The fixed sections' checks across keys, after every default is derived. */
#ifndef ROCESIM_SCENARIO_CHECK_H
#define ROCESIM_SCENARIO_CHECK_H
#include "models/scenario.h"

gboolean scenario_validate_fixed(struct scenario *s, GError **err);

#endif
