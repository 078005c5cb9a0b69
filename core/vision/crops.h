// Regions of a frame -> one batched tensor <N,3,H,W> (or <N,H,W,3>) for a second model, the way
// PP-OCR feeds its recognizer and direction classifier:
//  - each region is cut out upright: a rotated box (quad) through a perspective warp to its own
//    width x height, an axis-aligned box as it is; a cut at least 1.5 times taller than wide is
//    turned 90 degrees (vertical text), and a region whose `angle` is 180 is turned over;
//  - it is resized to the tensor height keeping its aspect ratio (its own width, at most the
//    batch width; Lanczos resampling, which keeps small text sharp) and padded on the right with
//    `pad_value`;
//  - the batch is as wide as its widest crop, within [min_width, max_width] and rounded up to
//    `multiple` -- or exactly `width` when that is set;
//  - at most `max_batch` crops per tensor: more regions make several batches;
//  - with a width from the crops, crops of similar widths share a batch: they are taken widest
//    first, and a crop joins the current batch only while its own width is at least
//    (1 - width_tolerance) of the batch's. Padding is wasted work, and a text recognizer reads
//    worse beside a long pad (PP-OCRv4 rec dropped spaces and misread letters: docs/elements.md).
//    width_tolerance 1 batches any widths together, in region order.
// Regions whose box is empty once clipped to the frame are skipped (planned out, never cut).
#pragma once

#include <span>
#include <vector>

#include "core/common/status.h"
#include "core/vision/image.h"
#include "core/vision/preprocess.h"
#include "core/vision/regions.h"

namespace weave::vision {

struct CropSpec {
  int height = 48;               // tensor height (> 0)
  int width = 0;                 // fixed tensor width; 0 = from the crops (see min_width, max_width)
  int min_width = 8;             // least batch width when it comes from the crops
  int max_width = 960;           // greatest batch width (the planned bound); wider crops are squeezed
  int multiple = 8;              // batch width rounded up to a multiple of this
  int max_batch = 16;            // crops per tensor
  double width_tolerance = 1.0;  // how much narrower than its batch a crop may be (0..1)
  // Normalization and layout as for whole frames (width/height/resize of `norm` are unused).
  PreprocessSpec norm;
};

// Checks the sizes (1..kMaxImageSide, min_width <= max_width, max_batch >= 1) and the norm.
[[nodiscard]] Status validate(const CropSpec& spec);

// One tensor's worth of crops.
struct CropBatch {
  int width = 0;             // tensor width
  std::vector<int> regions;  // indices into the region list, in order
  std::vector<int> widths;   // each crop's own width in the tensor (<= width)
  [[nodiscard]] int size() const { return static_cast<int>(regions.size()); }
};

// Plans the batches for `regions` on a frame_width x frame_height frame (no pixels needed): the
// caller can negotiate and allocate before cutting. No batch when no region has a size.
[[nodiscard]] Expected<std::vector<CropBatch>> plan_crops(std::span<const Region> regions, int frame_width,
                                                          int frame_height, const CropSpec& spec);

// Floats one batch needs: batch.size() * 3 * spec.height * batch.width.
[[nodiscard]] std::size_t crop_elements(const CropBatch& batch, const CropSpec& spec);

// Cuts the batch's regions out of `frame` into `dst` (exactly crop_elements floats).
[[nodiscard]] Status crop_batch(const ImageView& frame, std::span<const Region> regions,
                                const CropBatch& batch, const CropSpec& spec, std::span<float> dst);

}  // namespace weave::vision
