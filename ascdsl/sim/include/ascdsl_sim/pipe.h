// TPipe, TQue/TQueBind and TBuf: sequential UB allocation, queue buffers with their hidden events,
// and the queue-misuse checks (reference §2.2).
#ifndef ASCDSL_SIM_ASCDSL_SIM_PIPE_H
#define ASCDSL_SIM_ASCDSL_SIM_PIPE_H
#include "sync.h"
#include "tensor.h"

namespace ascdsl_sim {

using AscendC::TPosition;

inline const char* position_name(int pos) {
    switch (static_cast<TPosition>(pos)) {
    case TPosition::VECIN: return "VECIN";
    case TPosition::VECOUT: return "VECOUT";
    case TPosition::VECCALC: return "VECCALC";
    case TPosition::A1: return "A1";
    case TPosition::A2: return "A2";
    case TPosition::B1: return "B1";
    case TPosition::B2: return "B2";
    case TPosition::CO1: return "CO1";
    default: return "other";
    }
}

inline std::string buffer_list() {
    std::ostringstream os;
    const State& s = st();
    for (size_t q = 0; q < s.queues.size(); ++q) {
        const Queue& Q = s.queues[q];
        const QueueBuffer& b = s.buffers[Q.buffers[0]];
        os << (q ? "; " : "") << "#" << q << " " << (Q.is_tbuf ? "TBuf " : "TQue ") << position_name(Q.position)
           << " " << Q.buffers.size() << " x " << b.bytes << " B at 0x" << std::hex << b.addr << std::dec;
    }
    return os.str();
}

// `num` buffers of `bytes` each for queue `q` (then registered), taken in order from a memory whose
// allocated bytes are `used` (the UB, or one of the cube core's).
inline void take_buffers(Queue& q, uint32_t num, uint32_t bytes, uint64_t& used) {
    State& s = st();
    for (uint32_t i = 0; i < num; ++i) {
        q.buffers.push_back(static_cast<int>(s.buffers.size()));
        s.buffers.push_back(QueueBuffer{static_cast<int>(s.queues.size()), static_cast<uint32_t>(used), bytes});
        used += bytes;
    }
    s.queues.push_back(q);
}

// InitBuffer on a cube position: `num` buffers of `len32` bytes taken in order from that memory (L1, L0A,
// L0B or L0C), which has its own capacity (reference section 4) and the alignment of its buffers.
inline int create_cube_queue(Queue& q, uint32_t num, uint32_t len32) {
    const char* api = "InitBuffer";
    State& s = st();
    const int m = cube_mem_of(q.position);
    const uint32_t align = m == static_cast<int>(CubeMem::L0A) || m == static_cast<int>(CubeMem::L0B) ? 512
                           : m == static_cast<int>(CubeMem::L0C) ? 64 : 32;
    if (s.cube[m] == nullptr) {
        s.cube_storage[m].assign(kCubeMemBytes[m] + 512, 0xFF);
        s.cube[m] = s.cube_storage[m].data() + (512 - reinterpret_cast<uintptr_t>(s.cube_storage[m].data()) % 512) % 512;
    }
    take_buffers(q, num, (len32 + align - 1) / align * align, s.cube_used[m]);
    require(s.cube_used[m] <= kCubeMemBytes[m], api, cube_mem_name(m), " total ", s.cube_used[m], " B exceeds the ",
            kCubeMemBytes[m], " B ", cube_mem_name(m), " of the cube core");
    return static_cast<int>(s.queues.size()) - 1;
}

// InitBuffer: `num` buffers of `len` bytes (rounded up to 32) taken in order from the UB pool.
inline int create_queue(int src_pos, int dst_pos, int depth, bool is_tbuf, uint32_t num, uint32_t len) {
    const char* api = "InitBuffer";
    State& s = st();
    const auto pos = static_cast<TPosition>(src_pos), dpos = static_cast<TPosition>(dst_pos);
    Queue q{src_pos, depth, is_tbuf, Pipe::V, Pipe::V, {}, {}};
    if (pos == TPosition::VECIN && dpos == TPosition::VECOUT) q.producer = Pipe::MTE2, q.consumer = Pipe::MTE3;
    else if (pos == TPosition::VECIN) q.producer = Pipe::MTE2;
    else if (pos == TPosition::VECOUT) q.consumer = Pipe::MTE3;
    else if (pos == TPosition::A1 || pos == TPosition::B1) q.producer = Pipe::MTE2, q.consumer = Pipe::MTE1;  // GM -> L1
    else if (pos == TPosition::A2 || pos == TPosition::B2) q.producer = Pipe::MTE1, q.consumer = Pipe::M;  // L1 -> L0A/B
    else if (pos == TPosition::CO1) q.producer = Pipe::M, q.consumer = Pipe::MTE3;  // Fixpipe charged as MTE3
    else require(pos == TPosition::VECCALC || cube_mem_of(src_pos) >= 0, api, "TPosition ", src_pos,
                 " is neither a UB position (VECIN/VECOUT/VECCALC) nor a cube one (A1/B1/A2/B2/CO1)");
    require(num >= 1, api, "buffer count must be at least 1");
    const uint32_t len32 = (len + 31) / 32 * 32;
    if (cube_mem_of(src_pos) >= 0) return create_cube_queue(q, num, len32);
    take_buffers(q, num, len32, s.ub_used);
    s.counters.ub_peak_bytes = std::max<uint64_t>(s.counters.ub_peak_bytes, s.ub_used);
    require(s.ub_used <= s.ub_bytes, api, "UB total ", s.ub_used, " B exceeds the ", s.ub_bytes, " B UB of ", s.platform,
            "; buffers: ", buffer_list());
    require(s.buffers.size() <= 64, api, s.buffers.size(), " buffers exceed the 64 a TPipe manages; buffers: ",
            buffer_list());
    if (!is_tbuf) {
        size_t same = 0;
        for (const Queue& other : s.queues)
            if (!other.is_tbuf && other.position == src_pos) same += other.buffers.size();
        require(same <= 8, api, same, " queue buffers on ", position_name(src_pos),
                " exceed the 8 hardware event ids; buffers: ", buffer_list());
    }
    return static_cast<int>(s.queues.size()) - 1;
}

inline Queue& queue(const char* api, int id) {
    require(id >= 0, api, "queue used before TPipe::InitBuffer");
    return st().queues[id];
}

inline void poison(uint32_t addr, uint32_t bytes, int position = static_cast<int>(TPosition::VECCALC)) {
    if (cube_mem_of(position) >= 0) return void(std::memset(mem_base(position) + addr, 0xFF, bytes));
    std::memset(st().ub + addr, 0xFF, bytes);
    std::fill_n(st().stamp.data() + addr, bytes, 0u);
    for (auto& r : st().read_stamp)
        if (!r.empty()) std::fill_n(r.data() + addr, bytes, 0u);
}

inline int alloc_buffer(int qid) {
    const char* api = "AllocTensor";
    Queue& q = queue(api, qid);
    for (size_t i = 0; i < q.buffers.size(); ++i) {
        const int b = q.buffers[(q.cursor + i) % q.buffers.size()];
        QueueBuffer& buf = st().buffers[b];
        if (buf.state != BufState::Free) continue;
        q.cursor = (q.cursor + i + 1) % q.buffers.size();
        begin_op(api);
        count_acquire(b, q.producer);
        buf.state = BufState::Allocated;
        buf.gen += 1;
        merge_clock(q.producer, buf.flag);
        poison(buf.addr, buf.bytes, q.position);
        return b;
    }
    fail(api, "all ", q.buffers.size(), " buffers of the queue are in use (missing FreeTensor?)");
}

inline QueueBuffer& own_buffer(const char* api, int qid, int buf) {
    require(buf >= 0, api, "the tensor does not come from a queue's AllocTensor");
    QueueBuffer& b = st().buffers[buf];
    require(b.queue == qid, api, "the tensor belongs to queue #", b.queue, ", not to this queue #", qid);
    return b;
}

// The pipes a hand-over between user positions synchronises, as CANN's GetQueEvt picks them: from GM
// (a DataCopy in) on MTE2, to GM (a DataCopy out) on MTE3, the vector unit otherwise.
inline Pipe handing_pipe(TPosition src) { return src == TPosition::GM ? Pipe::MTE2 : Pipe::V; }
inline Pipe taking_pipe(TPosition dst) { return dst == TPosition::GM ? Pipe::MTE3 : Pipe::V; }

// EnQue: the buffer handed from `by` to `to` (a plain EnQue: the queue's producer to its consumer).
inline void enqueue(int qid, int buf, uint32_t gen, Pipe by, Pipe to) {
    const char* api = "EnQue";
    Queue& q = queue(api, qid);
    QueueBuffer& b = own_buffer(api, qid, buf);
    touch_buffer(api, buf, gen, "tensor");
    require(static_cast<int>(q.queued.size()) < std::max(q.depth, 1), api, "the queue already holds ",
            q.queued.size(), " tensors (depth ", q.depth, ")");
    begin_op(api);
    count_release(buf, by);
    b.state = BufState::Queued;
    b.flag = flag_clock(by);
    b.handed_by = by, b.handed_to = to;
    q.queued.push_back(buf);
}

inline void enqueue(int qid, int buf, uint32_t gen) {
    const Queue& q = queue("EnQue", qid);
    enqueue(qid, buf, gen, q.producer, q.consumer);
}

// DeQue: the buffer taken by `to`, which must be the pipe its EnQue handed it to (CANN asserts
// "EnQue and DeQue Event should be same").
inline int dequeue(int qid, Pipe by, Pipe to) {
    const char* api = "DeQue";
    Queue& q = queue(api, qid);
    require(!q.queued.empty(), api, "DeQue on an empty queue (no EnQue before it)");
    const int buf = q.queued.front();
    QueueBuffer& b = st().buffers[buf];
    require(b.handed_by == by && b.handed_to == to, api, "the DeQue's positions hand the buffer from ",
            pipe_short(by), " to ", pipe_short(to), ", its EnQue's from ", pipe_short(b.handed_by), " to ",
            pipe_short(b.handed_to));
    begin_op(api);
    q.queued.pop_front();
    count_acquire(buf, to);
    merge_clock(to, b.flag);
    b.state = BufState::Dequeued;
    return buf;
}

inline int dequeue(int qid) {
    const Queue& q = queue("DeQue", qid);
    return dequeue(qid, q.producer, q.consumer);
}

inline void free_buffer(int qid, int buf, uint32_t gen) {
    const char* api = "FreeTensor";
    Queue& q = queue(api, qid);
    QueueBuffer& b = own_buffer(api, qid, buf);
    require(b.state != BufState::Free && b.gen == gen, api, "the tensor was already freed (FreeTensor twice)");
    require(b.state != BufState::Queued, api, "the tensor is still queued (EnQue without DeQue)");
    begin_op(api);
    count_release(buf, q.consumer);
    b.state = BufState::Free;
    b.flag = flag_clock(q.consumer);
}

}  // namespace ascdsl_sim

namespace AscendC {

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
public:
    template <typename T>
    LocalTensor<T> AllocTensor() { return tensor<T>(ascdsl_sim::alloc_buffer(id_)); }
    template <typename T>
    void FreeTensor(LocalTensor<T>& tensor) { ascdsl_sim::free_buffer(id_, tensor.buffer(), tensor.generation()); }
    template <typename T>
    bool EnQue(const LocalTensor<T>& tensor) {
        ascdsl_sim::enqueue(id_, tensor.buffer(), tensor.generation());
        return true;
    }
    template <typename T>
    LocalTensor<T> DeQue() { return tensor<T>(ascdsl_sim::dequeue(id_)); }
    // The hand-over between user positions (a TQueBind<VECIN, VECOUT> loaded, computed in, stored).
    template <TPosition srcUser, TPosition dstUser, typename T>
    bool EnQue(const LocalTensor<T>& tensor) {
        ascdsl_sim::enqueue(id_, tensor.buffer(), tensor.generation(), ascdsl_sim::handing_pipe(srcUser),
                            ascdsl_sim::taking_pipe(dstUser));
        return true;
    }
    template <TPosition srcUser, TPosition dstUser, typename T>
    LocalTensor<T> DeQue() {
        return tensor<T>(ascdsl_sim::dequeue(id_, ascdsl_sim::handing_pipe(srcUser), ascdsl_sim::taking_pipe(dstUser)));
    }
    bool VacantInQue() { return static_cast<int>(que().queued.size()) < std::max(depth, 1); }
    bool HasTensorInQue() { return !que().queued.empty(); }
    int32_t GetTensorCountInQue() { return static_cast<int32_t>(que().queued.size()); }
    bool HasIdleBuffer() {
        for (int b : que().buffers)
            if (ascdsl_sim::st().buffers[b].state == ascdsl_sim::BufState::Free) return true;
        return false;
    }
    void FreeAllEvent() {}

    void sim_init(uint8_t num, uint32_t len) {
        id_ = ascdsl_sim::create_queue(static_cast<int>(src), static_cast<int>(dst), depth, false, num, len);
    }

private:
    ascdsl_sim::Queue& que() { return ascdsl_sim::queue("TQue", id_); }
    template <typename T>
    LocalTensor<T> tensor(int buf) {
        const ascdsl_sim::QueueBuffer& b = ascdsl_sim::st().buffers[buf];
        return LocalTensor<T>(b.addr, static_cast<uint32_t>(b.bytes / sizeof(T)), buf, b.gen, src);
    }
    int id_ = -1;
};

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {};

template <TPosition pos = TPosition::LCM>
class TBuf {
public:
    template <typename T>
    LocalTensor<T> Get() { return Get<T>(static_cast<uint32_t>(bytes("TBuf::Get") / sizeof(T))); }
    template <typename T>
    LocalTensor<T> Get(uint32_t len) { return GetWithOffset<T>(len, 0); }
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        const uint64_t total = bytes("TBuf::Get");
        ascdsl_sim::require(bufOffset + uint64_t(size) * sizeof(T) <= total, "TBuf::Get", size, " elements of ",
                            sizeof(T), " B at byte offset ", bufOffset, " exceed the ", total, "-byte TBuf");
        return LocalTensor<T>(addr_ + bufOffset, size, -1, 0, pos);
    }
    void sim_init(uint32_t len) {
        const int id = ascdsl_sim::create_queue(static_cast<int>(pos), static_cast<int>(pos), 0, true, 1, len);
        const ascdsl_sim::QueueBuffer& b = ascdsl_sim::st().buffers[ascdsl_sim::st().queues[id].buffers[0]];
        addr_ = b.addr;
        len_ = b.bytes;
    }

private:
    uint64_t bytes(const char* api) const {
        ascdsl_sim::require(len_ > 0, api, "TBuf used before TPipe::InitBuffer");
        return len_;
    }
    uint32_t addr_ = 0, len_ = 0;
};

class TPipe {
public:
    template <class T>
    bool InitBuffer(T& que, uint8_t num, uint32_t len) {
        que.sim_init(num, len);
        return true;
    }
    template <TPosition pos>
    bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
        buf.sim_init(len);
        return true;
    }
    template <HardEvent evt>
    TEventID AllocEventID() {
        uint8_t& used = ids_[static_cast<int>(evt)];
        for (int i = 0; i < 8; ++i)
            if (!(used >> i & 1)) {
                used |= static_cast<uint8_t>(1 << i);
                return static_cast<TEventID>(i);
            }
        ascdsl_sim::fail("AllocEventID", "all 8 event ids of this HardEvent are allocated");
    }
    template <HardEvent evt>
    void ReleaseEventID(TEventID id) { ids_[static_cast<int>(evt)] &= static_cast<uint8_t>(~(1 << id)); }
    template <HardEvent evt>
    TEventID FetchEventID() { return FetchEventID(evt); }
    TEventID FetchEventID(HardEvent evt) {
        const uint8_t used = ids_[static_cast<int>(evt)];
        for (int i = 0; i < 8; ++i)
            if (!(used >> i & 1)) return static_cast<TEventID>(i);
        ascdsl_sim::fail("FetchEventID", "all 8 event ids of this HardEvent are allocated");
    }
    void Destroy() {}
    void Reset() {}

private:
    uint8_t ids_[static_cast<int>(HardEvent::MAX)] = {};
};

template <pipe_t src, pipe_t dst>
class TQueSync {
public:
    void SetFlag(TEventID id) { ascdsl_sim::set_flag(event(), id); }
    void WaitFlag(TEventID id) { ascdsl_sim::wait_flag(event(), id); }

private:
    static constexpr HardEvent event() {
        if constexpr (src == PIPE_MTE2 && dst == PIPE_V) return HardEvent::MTE2_V;
        else if constexpr (src == PIPE_V && dst == PIPE_MTE2) return HardEvent::V_MTE2;
        else if constexpr (src == PIPE_V && dst == PIPE_MTE3) return HardEvent::V_MTE3;
        else if constexpr (src == PIPE_MTE3 && dst == PIPE_V) return HardEvent::MTE3_V;
        else if constexpr (src == PIPE_S && dst == PIPE_V) return HardEvent::S_V;
        else if constexpr (src == PIPE_V && dst == PIPE_S) return HardEvent::V_S;
        else if constexpr (src == PIPE_MTE2 && dst == PIPE_MTE3) return HardEvent::MTE2_MTE3;
        else if constexpr (src == PIPE_MTE3 && dst == PIPE_MTE2) return HardEvent::MTE3_MTE2;
        else if constexpr (src == PIPE_S && dst == PIPE_MTE2) return HardEvent::S_MTE2;
        else if constexpr (src == PIPE_MTE2 && dst == PIPE_S) return HardEvent::MTE2_S;
        else if constexpr (src == PIPE_S && dst == PIPE_MTE3) return HardEvent::S_MTE3;
        else if constexpr (src == PIPE_MTE3 && dst == PIPE_S) return HardEvent::MTE3_S;
        else return HardEvent::MAX;
    }
};

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_PIPE_H
