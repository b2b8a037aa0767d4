// ascdsl CPU simulator: a header-only C++17 implementation of the Ascend C API subset (namespace AscendC)
// that ascdsl emits. Like CANN 8.1, this header also pulls in the high-level APIs.
#ifndef ASCDSL_SIM_KERNEL_OPERATOR_H
#define ASCDSL_SIM_KERNEL_OPERATOR_H
#include "ascdsl_sim/macros.h"
#include "ascdsl_sim/pipe.h"
#include "ascdsl_sim/data_copy.h"
#include "ascdsl_sim/vector.h"
#include "ascdsl_sim/cast.h"
#include "ascdsl_sim/reduce.h"
#include "ascdsl_sim/cmpsel.h"
#include "ascdsl_sim/debug.h"
#include "ascdsl_sim/gather.h"
#include "ascdsl_sim/cube.h"
#include "ascdsl_sim/cross_core.h"
#include "ascdsl_sim/grid_sync.h"
#include "lib/activation/softmaxgrad.h"
#include "lib/index/arithprogression.h"
#include "lib/math/cumsum.h"
#include "lib/math/elementwise_math.h"
#include "lib/math/power.h"
#include "lib/math/xor.h"
#include "lib/reduce/sum.h"

#endif  // ASCDSL_SIM_KERNEL_OPERATOR_H
