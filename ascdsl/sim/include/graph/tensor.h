// Host-side ge::Shape, as far as the high-level APIs' tiling functions use it (CANN: graph/tensor.h).
#ifndef ASCDSL_SIM_GRAPH_TENSOR_H
#define ASCDSL_SIM_GRAPH_TENSOR_H
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ge {
class Shape {
public:
    Shape() = default;
    explicit Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t idx) const { return idx < dims_.size() ? dims_[idx] : 0; }  // 0 for an invalid idx
    std::vector<int64_t> GetDims() const { return dims_; }
    int64_t GetShapeSize() const {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return dims_.empty() ? 0 : n;
    }

private:
    std::vector<int64_t> dims_;
};
}  // namespace ge

#endif  // ASCDSL_SIM_GRAPH_TENSOR_H
