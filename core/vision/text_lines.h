// Text boxes on one line joined into lines of text (weavemeta merge=line). A text detector finds
// words, or runs of words, as separate boxes where the space between them is wide (monospaced
// fonts, small text, "Word   12"); a reader wants the line. Two boxes are on one row when:
//  - both run within `max_slope_degrees` of horizontal, neither was read turned over (`angle`
//    not 0) nor is a column of vertical text (1.5 times taller than wide, more than one
//    character), and every corner is finite and within a frame;
//  - their heights (a tilted box's own, not its bounds') differ by at most `max_height_ratio`
//    (a caption is not joined to a title);
//  - their vertical extents overlap by at least `min_overlap` of the lower one's.
// Lines are built left to right: a box joins the line on whose row every word already is and
// whose right end is at most `max_gap` heights (of the taller) away -- the nearest by centre if
// several -- else it starts one. So a tall box touching two close rows cannot chain them. Each
// line reads left to right, words joined by one space; lines come in reading order (top to
// bottom, left to right on a row).
#pragma once

#include <span>
#include <vector>

#include "core/vision/regions.h"

namespace weave::vision {

struct LineMergeOptions {
  float min_overlap = 0.5f;         // vertical overlap, as a fraction of the lower box's height
  float max_gap = 1.5f;             // horizontal gap, in heights of the taller box (3 monospaced spaces)
  float max_height_ratio = 1.8f;    // taller box height / lower box height
  float max_slope_degrees = 10.0f;  // of a box's top edge from horizontal
};

// One line: the regions it joins, and the region that stands for it.
struct TextLine {
  std::vector<int> words;  // indices into the region list, left to right
  // type "text"; box and quad: the axis-aligned box around the words (their own quad when the
  // line is one word); text: the words' texts joined by a space (words without a text are
  // skipped), its score the words' scores weighted by their length in characters; the detection
  // score the least of the words'; no track (each word keeps its own).
  Region region;
};

// The lines of the regions of type "text" (other regions are not looked at), in reading order.
// A region that joins no other is a line of its own.
[[nodiscard]] std::vector<TextLine> merge_text_lines(std::span<const Region> regions,
                                                     const LineMergeOptions& options = {});

}  // namespace weave::vision
