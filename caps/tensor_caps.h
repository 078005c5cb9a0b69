// Tensor caps <-> weave::TensorInfo.
//
// One named tensor per pad:
//   tensor/x-raw, name=(string)logits, dtype=(string)float32, shape=(int)<1,1000>
// `name` is the model's own tensor name (pad names are sanitized, caps keep the original),
// `dtype` uses weave's dtype names (core/common/dtype.h), and `shape` is a GstValueArray of
// ints, outermost dim first. A dynamic dim is an int range [1, G_MAXINT] inside the array until
// negotiation fixes it: caps intersection and fixation work on such arrays element-wise.
//
// `name` describes a tensor; it is never a constraint on a sink. A model input's caps
// therefore omit it (with_name = false), so that one model's output "features" links to
// another's input "x".
//
// Everything here returns owned caps as CapsPtr (unique_ptr with gst_caps_unref) and reports
// problems as weave::Status / Expected with messages that name the pad and both sides.
#pragma once

#include <gst/gst.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/common/dims.h"
#include "core/common/dtype.h"
#include "core/common/status.h"
#include "core/common/tensor.h"

namespace weave::caps {

inline constexpr const char* kMediaType = "tensor/x-raw";

struct CapsUnref {
  void operator()(GstCaps* c) const { gst_caps_unref(c); }
};
using CapsPtr = std::unique_ptr<GstCaps, CapsUnref>;

// "tensor/x-raw" with no fields: the pad template of every tensor pad.
[[nodiscard]] CapsPtr any_tensor_caps();

// The caps a model tensor accepts or produces: its dtype and its shape, dynamic dims as
// ranges. Fails only for a dtype caps cannot carry (undefined) or a rank above kMaxRank.
[[nodiscard]] Expected<CapsPtr> caps_from_info(const TensorInfo& info, bool with_name = true);

// Fixed caps for a concrete tensor. An empty name leaves the field out.
[[nodiscard]] CapsPtr caps_from_dims(std::string_view name, DType dtype, const Dims& dims);

// What fixed tensor caps say.
struct CapsTensor {
  std::string name;  // empty when the caps have no name field
  DType dtype = DType::undefined;
  Dims dims;
  [[nodiscard]] std::size_t bytes() const {
    return static_cast<std::size_t>(dims.numel()) * dtype_size(dtype);
  }
};

// Parses fixed caps (one structure, media type tensor/x-raw, dtype and a fixed int shape with
// 1 <= dim, rank <= kMaxRank, at most 2^36 bytes in all). Errors say what is missing or wrong.
[[nodiscard]] Expected<CapsTensor> parse_fixed_caps(const GstCaps* caps);

// "<1,3,224,224>" for concrete dims.
[[nodiscard]] std::string shape_text(const Dims& dims);
// The shape field of any caps as text ("<[1,2147483647],3,224,224>"); "(no shape)" if absent.
[[nodiscard]] std::string shape_text(const GstCaps* caps);

// Whether a concrete tensor fits a model tensor (same dtype and rank, equal static dims).
// `role` is "input" or "output". On a mismatch the message names the pad and both sides:
//   "pad sink_x: caps shape <1,3,224,224> does not fit model input 'x' float32[?x3x640x640]"
[[nodiscard]] Status check_fits(const CapsTensor& tensor, const TensorInfo& model, std::string_view pad,
                                std::string_view role = "input");

// Same check for caps that may be unfixed (e.g. a peer's caps in a query): true if they can
// intersect with the model tensor's caps. The error names both sides like check_fits.
[[nodiscard]] Status check_caps_fit(const GstCaps* caps, const TensorInfo& model, std::string_view pad,
                                    std::string_view role = "input");

// The planned bound fixed caps promise: the upper end of every dim of the first structure's
// shape, when the shape has at least one int range and every dim is finite (< 2^20). Ranges
// whose product exceeds 2^24 elements are "any size" offers (weaveconvert's
// <[1,16384],[1,16384]>) rather than bounds worth planning memory for: nullopt then too.
[[nodiscard]] std::optional<Shape> shape_bound(const GstCaps* caps);

// a ∩ b (either may be null = "anything": the other is returned).
[[nodiscard]] CapsPtr intersect(const GstCaps* a, const GstCaps* b);
// Fixed caps from possibly unfixed ones: the first structure, every range at its smallest
// value (dynamic dims become 1 unless a peer said otherwise). Returns null for empty caps.
[[nodiscard]] CapsPtr fixate(const GstCaps* caps);

}  // namespace weave::caps
