// Enums, constants, GlobalTensor, LocalTensor, GetBlockIdx/GetBlockNum.
#ifndef ASCDSL_SIM_ASCDSL_SIM_TENSOR_H
#define ASCDSL_SIM_ASCDSL_SIM_TENSOR_H
#include "cost.h"
#include "dcache.h"

namespace AscendC {

enum class TPosition : uint8_t {
    GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM,
    C2PIPE2GM, C2PIPE2LOCAL, MAX
};
using QuePosition = TPosition;

enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr int32_t BLOCK_CUBE = 16;
constexpr int32_t B16_DATA_NUM_PER_REPEAT = 128;
constexpr int32_t B32_DATA_NUM_PER_REPEAT = 64;

// CANN 8.1 (dav_c220 GetBlockIdxImpl): on an AIV of a MIX kernel, the AIV's own index
// get_block_idx() * GetTaskRation() + GetSubBlockIdx(), 0 .. 2 x blockDim - 1; on an AIC, and in a kernel of
// one core type, the block's. GetBlockNum() is blockDim (the AIC groups of a MIX kernel) on every core.
inline int64_t GetBlockIdx() {
    const ascdsl_sim::State& s = ascdsl_sim::st();
    return s.mix && s.core == AIV ? s.block_idx * 2 + s.sub_block : s.block_idx;
}
inline int64_t GetBlockNum() { return ascdsl_sim::st().block_num; }

template <typename T> using PrimT = T;

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    void SetGlobalBuffer(T* buffer, uint64_t bufferSize) { addr_ = buffer; size_ = bufferSize; }
    void SetGlobalBuffer(T* buffer) { addr_ = buffer; size_ = 0; }
    const T* GetPhyAddr() const { return addr_; }
    T* GetPhyAddr(const uint64_t offset) const { return addr_ + offset; }
    uint64_t GetSize() const { return size_; }
    GlobalTensor operator[](const uint64_t offset) const {
        GlobalTensor g;
        g.addr_ = addr_ + offset;
        g.size_ = size_ > offset ? size_ - offset : 0;
        return g;
    }
    T GetValue(const uint64_t offset) const {
        ascdsl_sim::gm_read("GlobalTensor::GetValue", addr_ + offset, sizeof(T));
        ascdsl_sim::scalar_gm("GlobalTensor::GetValue", addr_ + offset, sizeof(T), false);
        ascdsl_sim::count_scalar(true);
        return addr_[offset];
    }
    T& operator()(const uint64_t offset) const {
        ascdsl_sim::gm_region("GlobalTensor::operator()", addr_ + offset, sizeof(T), "access");
        return addr_[offset];
    }
    void SetValue(const uint64_t offset, T value) const {
        ascdsl_sim::gm_write("GlobalTensor::SetValue", addr_ + offset, sizeof(T), false, &value);
        ascdsl_sim::scalar_gm("GlobalTensor::SetValue", addr_ + offset, sizeof(T), true);
        ascdsl_sim::count_scalar(true);
        addr_[offset] = value;
    }

private:
    T* addr_ = nullptr;
    uint64_t size_ = 0;
};

template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    LocalTensor() = default;
    LocalTensor(uint32_t addr, uint32_t size, int buf, uint32_t gen, TPosition pos)
        : addr_(addr), size_(size), buf_(buf), gen_(gen), pos_(pos) {}

    T GetValue(const uint32_t index) const {
        const char* api = "LocalTensor::GetValue";
        check_index(api, index);
        ascdsl_sim::touch_buffer(api, buf_, gen_, "tensor");
        ascdsl_sim::begin_op(api);
        ascdsl_sim::count_scalar();
        ascdsl_sim::ub_read(api, ascdsl_sim::Pipe::S, addr_ + index * sizeof(T), sizeof(T));
        return ptr()[index];
    }
    template <typename T1>
    void SetValue(const uint32_t index, const T1 value) const {
        const char* api = "LocalTensor::SetValue";
        check_index(api, index);
        ascdsl_sim::touch_buffer(api, buf_, gen_, "tensor");
        const uint32_t t = ascdsl_sim::begin_op(api);
        ascdsl_sim::count_scalar();
        ascdsl_sim::ub_write(api, ascdsl_sim::Pipe::S, t, addr_ + index * sizeof(T), sizeof(T));
        ptr()[index] = static_cast<T>(value);
    }
    T& operator()(const uint32_t offset) const { return ptr()[offset]; }
    LocalTensor operator[](const uint32_t offset) const {
        ascdsl_sim::require(offset <= size_, "LocalTensor::operator[]", "offset ", offset,
                            " is past the end of a tensor of ", size_, " elements");
        return LocalTensor(addr_ + offset * sizeof(T), size_ - offset, buf_, gen_, pos_);
    }
    template <typename U>
    LocalTensor<U> ReinterpretCast() const {
        return LocalTensor<U>(addr_, static_cast<uint32_t>(size_ * sizeof(T) / sizeof(U)), buf_, gen_, pos_);
    }
    uint32_t GetSize() const { return size_; }
    void SetSize(const uint32_t size) { size_ = size; }
    int32_t GetPosition() const { return static_cast<int32_t>(pos_); }
    T* GetPhyAddr() const { return ptr(); }

    // Simulator internals (not Ascend C API).
    T* ptr() const { return reinterpret_cast<T*>(ascdsl_sim::mem_base(static_cast<int>(pos_)) + addr_); }
    uint32_t addr() const { return addr_; }
    int buffer() const { return buf_; }
    uint32_t generation() const { return gen_; }
    TPosition position() const { return pos_; }

private:
    void check_index(const char* api, uint32_t index) const {
        ascdsl_sim::require(index < size_, api, "index ", index, " is outside a tensor of ", size_, " elements");
    }
    uint32_t addr_ = 0, size_ = 0;
    int buf_ = -1;
    uint32_t gen_ = 0;
    TPosition pos_ = TPosition::VECCALC;
};

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_TENSOR_H
