// Regions (core/vision/regions.h) <-> GstVideoRegionOfInterestMeta on video buffers, the one
// convention every Weave element reads and writes:
//
//   roi_type       the region's type: "text", or the detected class's label
//   id             unique on the buffer (0, 1, 2, ... in the order regions were added)
//   x, y, w, h     the bounding box, clipped to the frame
//   params         GstStructures:
//     detection       confidence (double), label-id (int, when a class), label (string),
//                     corners (GstValueArray of 8 doubles: x0,y0 .. x3,y3 of a rotated box)
//     angle           degrees (int), confidence (double)        -- e.g. weavemeta mode=angle
//     text            text (string, UTF-8), confidence (double), char-confidences (array of
//                     doubles, one per character, when known)  -- weavemeta mode=ctc
//     track           id (guint64, from 1), age (int, frames since the track was born),
//                     predicted (boolean: no detection, the box is the track's prediction)
//                                                                 -- weavetrack
//     <name>          label (string), label-id (int), confidence (double): a classification
//                     (weavemeta mode=classification, name "classification" unless set)
#pragma once

#include <gst/gst.h>

#include <string_view>
#include <vector>

#include "core/vision/decoder.h"
#include "core/vision/regions.h"

namespace weave::caps {

// The regions on `buffer` in meta order; with a non-empty `type`, only those of that type.
[[nodiscard]] std::vector<vision::Region> read_regions(GstBuffer* buffer, std::string_view type = {});

// Adds `region` as a new ROI meta (its id is the next free one) and returns the id. The buffer
// must be writable.
int add_region(GstBuffer* buffer, const vision::Region& region);

// Attaches a row's results to the ROI with `id` (replacing params of the same names): classes
// under `class_name`, angle, text. False when the buffer has no such ROI. Writable buffer.
bool attach_row(GstBuffer* buffer, int id, const vision::RowResult& row, std::string_view class_name);

// A frame the detector skipped (weaveinfer inference-interval: weavemeta marks a frame whose
// detection tensor was a gap): its regions are unknown, not absent. weavetrack fills them in
// from its tracks. A meta without fields or tags ("WeaveSkippedFrameMeta").
void mark_skipped(GstBuffer* buffer);  // writable buffer; marking twice is one mark
[[nodiscard]] bool is_skipped(GstBuffer* buffer);

// Sets the track param of the ROI with `id`. False when the buffer has no such ROI. Writable
// buffer.
bool attach_track(GstBuffer* buffer, int id, const vision::TrackTag& track);

}  // namespace weave::caps
