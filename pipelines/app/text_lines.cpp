// text_lines: an application that embeds a Weave pipeline.
//
//   appsrc (RGB frames this program draws) ! weaveconvert ! weaveinfer (PP-OCRv4 text detector)
//     ! appsink (the model's output tensor)
//
// It draws a synthetic page (rows of glyph-like strokes on light paper), pushes it through the
// pipeline as video/x-raw RGB frames, reads the detector's probability map from appsink together
// with its caps (tensor name, dtype, shape), and reports the text lines the model finds next to
// the lines it drew. At the end it reads weaveinfer's statistics properties.
//
//   text_lines MODEL.onnx|MODEL.weave [--frames N] [--width W] [--height H] [--cache-dir DIR]
//
// The plugin must be visible to GStreamer: installed, or GST_PLUGIN_PATH=<build>/gst-plugin.
// pipelines/app.sh runs it on the PP-OCRv4 detector from the build tree.
//
// Only the GStreamer API is used (gst/gst.h, gst/app/gstappsrc.h, gst/app/gstappsink.h): an
// application needs no Weave headers to run models in a pipeline.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

// ---- the input: a synthetic page ----------------------------------------------------------

struct Page {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;           // width * height * 3 bytes, row-major
  std::vector<std::pair<int, int>> lines;  // first and last row of each drawn text line
};

// A tiny deterministic generator (the page must be the same on every machine).
class Rng {
 public:
  explicit Rng(std::uint32_t seed) : s_(seed != 0 ? seed : 0x9E3779B9u) {}
  int uniform(int lo, int hi) {  // in [lo, hi)
    s_ ^= s_ << 13;
    s_ ^= s_ >> 17;
    s_ ^= s_ << 5;
    return lo + static_cast<int>(s_ % static_cast<std::uint32_t>(std::max(1, hi - lo)));
  }

 private:
  std::uint32_t s_;
};

void fill_rect(Page& p, int x0, int y0, int x1, int y1, std::uint8_t ink) {
  for (int y = std::max(0, y0); y < std::min(p.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(p.width, x1); ++x)
      for (int c = 0; c < 3; ++c) p.rgb[(static_cast<std::size_t>(y) * p.width + x) * 3 + c] = ink;
}

// A straight stroke from (x0,y0) to (x1,y1), `thick` pixels wide.
void stroke(Page& p, int x0, int y0, int x1, int y1, int thick, std::uint8_t ink) {
  const int steps = std::max({std::abs(x1 - x0), std::abs(y1 - y0), 1});
  for (int i = 0; i <= steps; ++i) {
    const int x = x0 + (x1 - x0) * i / steps, y = y0 + (y1 - y0) * i / steps;
    fill_rect(p, x, y, x + thick, y + thick, ink);
  }
}

// Lines of "words" whose glyphs are 2-4 strokes from the skeleton of a box (bars, crossbars,
// diagonals): text-like enough for a text detector, and no font needed.
Page draw_page(int width, int height) {
  Page p{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3), {}};
  for (int y = 0; y < height; ++y)  // paper: light, slightly darker towards the bottom
    fill_rect(p, 0, y, width, y + 1, static_cast<std::uint8_t>(240 - 14 * y / std::max(1, height - 1)));
  Rng rng(7);
  const int margin = std::max(4, width / 20), line_h = std::max(10, height / 14);
  for (int y = margin; y + line_h < height - margin; y += line_h + line_h * rng.uniform(50, 110) / 100) {
    const int gh = line_h * rng.uniform(75, 100) / 100, gw = gh * 6 / 10, t = std::max(1, gh / 8);
    const auto ink = static_cast<std::uint8_t>(rng.uniform(15, 60));
    const int right = width - margin - rng.uniform(0, width / 4);
    for (int x = margin + rng.uniform(0, 3 * gw); x + gw < right; x += gw) {  // words, then a space
      for (int n = rng.uniform(2, 9); n > 0 && x + gw < right; --n, x += gw + std::max(1, gw / 4)) {
        const int r = x + gw - t, b = y + gh - t, cx = x + (gw - t) / 2, cy = y + (gh - t) / 2;
        const int skeleton[8][4] = {{x, y, x, b},   {r, y, r, b}, {cx, y, cx, b}, {x, y, r, y},
                                    {x, cy, r, cy}, {x, b, r, b}, {x, b, r, y},   {x, y, r, b}};
        for (int k = rng.uniform(2, 5); k > 0; --k) {
          const int* s = skeleton[rng.uniform(0, 8)];
          stroke(p, s[0], s[1], s[2], s[3], t, ink);
        }
      }
    }
    p.lines.emplace_back(y, y + gh - 1);
  }
  return p;
}

// ---- the output: a tensor and its caps --------------------------------------------------------

// What the caps of a weaveinfer src pad say: tensor/x-raw, name=..., dtype=..., shape=<...>.
struct TensorCaps {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
};

std::optional<TensorCaps> parse_tensor_caps(const GstCaps* caps) {
  if (caps == nullptr || gst_caps_get_size(caps) != 1) return std::nullopt;
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  if (!gst_structure_has_name(s, "tensor/x-raw")) return std::nullopt;
  TensorCaps t;
  if (const char* v = gst_structure_get_string(s, "name")) t.name = v;
  if (const char* v = gst_structure_get_string(s, "dtype")) t.dtype = v;
  // The shape is a GstValueArray of ints (a dynamic dim would be an int range; src caps of a
  // running weaveinfer are always fixed).
  const GValue* shape = gst_structure_get_value(s, "shape");
  if (shape == nullptr || !GST_VALUE_HOLDS_ARRAY(shape)) return std::nullopt;
  for (guint i = 0; i < gst_value_array_get_size(shape); ++i) {
    const GValue* d = gst_value_array_get_value(shape, i);
    if (!G_VALUE_HOLDS_INT(d)) return std::nullopt;
    t.shape.push_back(g_value_get_int(d));
  }
  return t;
}

// A band of consecutive rows where the detector sees text (p > 0.3, PaddleOCR's threshold).
struct Band {
  int top, bottom, left, right;
};

std::vector<Band> text_bands(const float* map, int h, int w) {
  std::vector<Band> bands;
  for (int y = 0; y < h; ++y) {
    int left = w, right = -1;
    for (int x = 0; x < w; ++x)
      if (map[static_cast<std::size_t>(y) * w + x] > 0.3f) {
        left = std::min(left, x);
        right = std::max(right, x);
      }
    if (right < 0) continue;
    if (!bands.empty() && bands.back().bottom == y - 1) {
      Band& b = bands.back();
      b.bottom = y;
      b.left = std::min(b.left, left);
      b.right = std::max(b.right, right);
    } else {
      bands.push_back({y, y, left, right});
    }
  }
  return bands;
}

// ---- the pipeline -------------------------------------------------------------------------------

struct Options {
  std::string model, cache_dir;
  int frames = 3, width = 480, height = 320;
};

std::optional<Options> parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto number = [&](int& out, int lo, int hi) {
      if (i + 1 >= argc) return false;
      out = std::atoi(argv[++i]);
      return out >= lo && out <= hi;
    };
    if (a == "--frames") {
      if (!number(o.frames, 1, 100000)) return std::nullopt;
    } else if (a == "--width") {
      if (!number(o.width, 32, 4096)) return std::nullopt;
    } else if (a == "--height") {
      if (!number(o.height, 32, 4096)) return std::nullopt;
    } else if (a == "--cache-dir" && i + 1 < argc) {
      o.cache_dir = argv[++i];
    } else if (o.model.empty() && !a.empty() && a[0] != '-') {
      o.model = a;
    } else {
      return std::nullopt;
    }
  }
  if (o.model.empty()) return std::nullopt;
  return o;
}

// Owning handles for the GStreamer objects this program creates.
struct Unref {
  void operator()(GstElement* e) const { gst_object_unref(e); }
  void operator()(GstSample* s) const { gst_sample_unref(s); }
  void operator()(GstBus* b) const { gst_object_unref(b); }
  void operator()(GstMessage* m) const { gst_message_unref(m); }
};
template <typename T>
using Ref = std::unique_ptr<T, Unref>;

// The first error posted on the bus, if any ("" = none).
std::string pending_error(GstElement* pipeline) {
  Ref<GstBus> bus(gst_element_get_bus(pipeline));
  Ref<GstMessage> msg(gst_bus_pop_filtered(bus.get(), GST_MESSAGE_ERROR));
  if (!msg) return "";
  GError* err = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(msg.get(), &err, &debug);
  std::string text = std::string(GST_OBJECT_NAME(GST_MESSAGE_SRC(msg.get()))) + ": " + err->message;
  if (debug != nullptr) text += std::string("\n  ") + debug;
  g_clear_error(&err);
  g_free(debug);
  return text;
}

int run(const Options& opt) {
  const Page page = draw_page(opt.width, opt.height);

  // The elements. weaveinfer creates its pads (sink_x, src_sigmoid_0_tmp_0 for PP-OCRv4 det) as
  // soon as `model` is set, so it is set before linking. cache-dir goes first: it says where
  // the ONNX model is compiled to on first use.
  Ref<GstElement> pipeline(gst_pipeline_new("text-lines"));
  GstElement* src = gst_element_factory_make("appsrc", "src");
  GstElement* convert = gst_element_factory_make("weaveconvert", "convert");
  GstElement* det = gst_element_factory_make("weaveinfer", "det");
  GstElement* sink = gst_element_factory_make("appsink", "sink");
  if (src == nullptr || convert == nullptr || det == nullptr || sink == nullptr) {
    std::fprintf(stderr, "missing elements: is the weave plugin on GST_PLUGIN_PATH?\n");
    return 1;
  }
  gst_bin_add_many(GST_BIN(pipeline.get()), src, convert, det, sink, nullptr);

  GstCaps* video =
      gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGB", "width", G_TYPE_INT, opt.width,
                          "height", G_TYPE_INT, opt.height, "framerate", GST_TYPE_FRACTION, 1, 1, nullptr);
  // block=true: push_buffer waits while 2 frames are queued (backpressure instead of memory).
  g_object_set(src, "caps", video, "format", GST_FORMAT_TIME, "block", TRUE, "max-bytes",
               static_cast<guint64>(2 * page.rgb.size()), nullptr);
  gst_caps_unref(video);
  // PP-OCR's normalization (ImageNet mean/std); the tensor size follows the frame (rounded up to
  // a multiple of 32, as the detector needs).
  g_object_set(convert, "mean", "0.485,0.456,0.406", "std", "0.229,0.224,0.225", "multiple", 32, nullptr);
  if (!opt.cache_dir.empty()) g_object_set(det, "cache-dir", opt.cache_dir.c_str(), nullptr);
  g_object_set(det, "model", opt.model.c_str(), nullptr);
  g_object_set(sink, "sync", FALSE, "max-buffers", 4u, nullptr);
  if (!gst_element_link_many(src, convert, det, sink, nullptr)) {
    std::fprintf(stderr, "could not link appsrc ! weaveconvert ! weaveinfer ! appsink (model %s)\n",
                 opt.model.c_str());
    return 1;
  }

  if (gst_element_set_state(pipeline.get(), GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    const std::string err = pending_error(pipeline.get());
    std::fprintf(stderr, "pipeline does not start%s%s\n", err.empty() ? "" : ": ", err.c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();

  // A feeder thread pushes the frames, so the pipeline works on frame k+1 while the main thread
  // reads frame k's result. Each buffer gets its own copy of the page (appsrc takes ownership).
  std::thread feeder([&] {
    for (int i = 0; i < opt.frames; ++i) {
      GstBuffer* buf = gst_buffer_new_memdup(page.rgb.data(), page.rgb.size());
      GST_BUFFER_PTS(buf) = static_cast<GstClockTime>(i) * GST_SECOND;
      GST_BUFFER_DURATION(buf) = GST_SECOND;
      if (gst_app_src_push_buffer(GST_APP_SRC(src), buf) != GST_FLOW_OK) break;  // flushing or error
    }
    gst_app_src_end_of_stream(GST_APP_SRC(src));
  });

  int status = 0, received = 0;
  std::vector<Band> bands;
  while (true) {
    // try_pull with a timeout, so that an error upstream (which ends the stream without EOS)
    // is seen instead of waiting forever.
    Ref<GstSample> sample(gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 200 * GST_MSECOND));
    if (!sample) {
      if (gst_app_sink_is_eos(GST_APP_SINK(sink))) break;
      const std::string err = pending_error(pipeline.get());
      if (err.empty()) continue;
      std::fprintf(stderr, "error: %s\n", err.c_str());
      status = 1;
      break;
    }
    const auto caps = parse_tensor_caps(gst_sample_get_caps(sample.get()));
    if (!caps || caps->dtype != "float32" || caps->shape.size() != 4 || caps->shape[0] != 1 ||
        caps->shape[1] != 1) {
      std::fprintf(stderr, "unexpected output caps; want float32 <1,1,H,W>\n");
      status = 1;
      break;
    }
    const int h = static_cast<int>(caps->shape[2]), w = static_cast<int>(caps->shape[3]);
    GstBuffer* buf = gst_sample_get_buffer(sample.get());
    GstMapInfo map;
    if (!gst_buffer_map(buf, &map, GST_MAP_READ)) {
      status = 1;
      break;
    }
    if (map.size == static_cast<std::size_t>(h) * w * sizeof(float)) {
      if (received == 0) {
        gchar* text = gst_caps_to_string(gst_sample_get_caps(sample.get()));
        std::printf("output caps: %s\n", text);
        g_free(text);
        std::printf("output tensor '%s': %s <1,1,%d,%d>, %zu bytes per frame\n", caps->name.c_str(),
                    caps->dtype.c_str(), h, w, static_cast<std::size_t>(map.size));
      }
      bands = text_bands(reinterpret_cast<const float*>(map.data), h, w);
      ++received;
    } else {
      std::fprintf(stderr, "buffer of %zu bytes does not match its caps\n",
                   static_cast<std::size_t>(map.size));
      status = 1;
    }
    gst_buffer_unmap(buf, &map);
    if (status != 0) break;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status != 0) gst_element_set_state(pipeline.get(), GST_STATE_NULL);  // unblocks the feeder
  feeder.join();

  // weaveinfer's read-only statistics.
  guint64 processed = 0;
  double mean_ms = 0;
  gchar* factory = nullptr;
  g_object_get(det, "frames-processed", &processed, "mean-inference-ms", &mean_ms, "factory-id", &factory,
               nullptr);
  gst_element_set_state(pipeline.get(), GST_STATE_NULL);
  if (status != 0) {
    g_free(factory);
    return status;
  }

  std::printf("page %dx%d, %zu text lines drawn\n", opt.width, opt.height, page.lines.size());
  std::printf("text lines found: %zu\n", bands.size());
  for (const Band& b : bands) {
    // The drawn line this band covers most, if any.
    const std::pair<int, int>* best = nullptr;
    int best_overlap = 0;
    for (const auto& l : page.lines) {
      const int overlap = std::min(b.bottom, l.second) - std::max(b.top, l.first) + 1;
      if (overlap > best_overlap) {
        best_overlap = overlap;
        best = &l;
      }
    }
    std::printf("  rows %4d-%4d  columns %4d-%4d", b.top, b.bottom, b.left, b.right);
    if (best != nullptr)
      std::printf("   (drawn: rows %4d-%4d)\n", best->first, best->second);
    else
      std::printf("   (no drawn line here)\n");
  }
  const auto found = std::count_if(page.lines.begin(), page.lines.end(), [&](const auto& l) {
    return std::any_of(bands.begin(), bands.end(),
                       [&](const Band& b) { return b.top <= l.second && l.first <= b.bottom; });
  });
  std::printf("drawn lines found by the model: %td of %zu\n", found, page.lines.size());
  std::printf("%d frames in %.2f s = %.1f fps; weaveinfer: %llu runs, mean %.1f ms per run, factory %s\n",
              received, seconds, received / seconds, static_cast<unsigned long long>(processed), mean_ms,
              factory != nullptr ? factory : "(none)");
  g_free(factory);
  return received == opt.frames ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  const auto opt = parse_args(argc, argv);
  if (!opt) {
    std::fprintf(stderr,
                 "usage: %s MODEL.onnx|MODEL.weave [--frames N] [--width W] [--height H] [--cache-dir DIR]\n"
                 "  runs the PP-OCRv4 text detector on a page it draws, through appsrc ! weaveconvert !\n"
                 "  weaveinfer ! appsink, and prints the text lines found\n",
                 argv[0]);
    return 2;
  }
  const int status = run(*opt);
  gst_deinit();
  return status;
}
