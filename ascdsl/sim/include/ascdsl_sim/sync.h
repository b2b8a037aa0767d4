// Pipes, events, PipeBarrier and SetFlag/WaitFlag, feeding the hazard checker's vector clocks.
#ifndef ASCDSL_SIM_ASCDSL_SIM_SYNC_H
#define ASCDSL_SIM_ASCDSL_SIM_SYNC_H
#include "cost.h"

enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4 = 7, PIPE_MTE5 = 8, PIPE_V2 = 9, PIPE_FIX = 10 };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace AscendC {

enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3,
    MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S,
    MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};
using TEventID = int8_t;

}  // namespace AscendC

namespace ascdsl_sim {

struct EventPipes {
    bool vector_core;
    Pipe src, dst;
};

inline EventPipes event_pipes(AscendC::HardEvent e) {
    using AscendC::HardEvent;
    switch (e) {
    case HardEvent::MTE2_V: return {true, Pipe::MTE2, Pipe::V};
    case HardEvent::V_MTE2: return {true, Pipe::V, Pipe::MTE2};
    case HardEvent::MTE3_V: return {true, Pipe::MTE3, Pipe::V};
    case HardEvent::V_MTE3: return {true, Pipe::V, Pipe::MTE3};
    case HardEvent::V_V: return {true, Pipe::V, Pipe::V};
    case HardEvent::MTE3_MTE2: return {true, Pipe::MTE3, Pipe::MTE2};
    case HardEvent::MTE2_MTE3: return {true, Pipe::MTE2, Pipe::MTE3};
    case HardEvent::S_V: return {true, Pipe::S, Pipe::V};
    case HardEvent::V_S: return {true, Pipe::V, Pipe::S};
    case HardEvent::S_MTE2: return {true, Pipe::S, Pipe::MTE2};
    case HardEvent::MTE2_S: return {true, Pipe::MTE2, Pipe::S};
    case HardEvent::S_MTE3: return {true, Pipe::S, Pipe::MTE3};
    case HardEvent::MTE3_S: return {true, Pipe::MTE3, Pipe::S};
    default: return {false, Pipe::S, Pipe::S};
    }
}

inline PendingFlag& pending_flag(const char* api, AscendC::HardEvent e, int32_t id) {
    require(event_pipes(e).vector_core, api, "HardEvent ", static_cast<int>(e), " does not exist on a vector core");
    require(id >= 0 && id < 8, api, "event id ", id, " is outside [0, 7]");
    return st().flags[{static_cast<int>(e), id}];
}

inline void set_flag(AscendC::HardEvent e, int32_t id) {
    PendingFlag& f = pending_flag("SetFlag", e, id);
    begin_op("SetFlag");
    count_set_flag(static_cast<int>(e), id, event_pipes(e).src);
    f.set = true;
    f.clock = flag_clock(event_pipes(e).src);
}

inline void wait_flag(AscendC::HardEvent e, int32_t id) {
    PendingFlag& f = pending_flag("WaitFlag", e, id);
    const EventPipes p = event_pipes(e);
    require(f.set, "WaitFlag", "WaitFlag<HardEvent::", pipe_short(p.src), "_", pipe_short(p.dst), ">(", id,
            ") has no matching SetFlag before it: the ", pipe_name(p.dst), " would wait forever");
    begin_op("WaitFlag");
    count_wait_flag(static_cast<int>(e), id, p.dst);
    merge_clock(p.dst, f.clock);
    f.set = false;
}

inline void pipe_barrier(pipe_t p) {
    begin_op("PipeBarrier");
    switch (p) {
    case PIPE_V: barrier(Pipe::V), count_barrier(Pipe::V, false); break;
    case PIPE_MTE2: barrier(Pipe::MTE2), count_barrier(Pipe::MTE2, false); break;
    case PIPE_MTE3: barrier(Pipe::MTE3), count_barrier(Pipe::MTE3, false); break;
    case PIPE_ALL: barrier_all(), count_barrier(Pipe::S, true); break;
    case PIPE_S: fail("PipeBarrier", "PipeBarrier<PIPE_S> is not allowed");
    default: break;  // cube and fixpipe pipes do not touch UB
    }
}

}  // namespace ascdsl_sim

namespace AscendC {

template <pipe_t pipe>
inline void PipeBarrier() { ascdsl_sim::pipe_barrier(pipe); }

template <HardEvent event>
inline void SetFlag(int32_t eventID) { ascdsl_sim::set_flag(event, eventID); }

template <HardEvent event>
inline void WaitFlag(int32_t eventID) { ascdsl_sim::wait_flag(event, eventID); }

inline void SetFlag(HardEvent event, int32_t eventID) { ascdsl_sim::set_flag(event, eventID); }
inline void WaitFlag(HardEvent event, int32_t eventID) { ascdsl_sim::wait_flag(event, eventID); }

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_SYNC_H
