// Serves cameras over RTSP on one port, for trying and testing pipelines on live input without a
// camera (gst-rtsp-server):
//
//   rtsp_serve [--port P] [--address A] [--seconds S] SOURCE...
//
// Each SOURCE becomes rtsp://A:P/camK (K from 0), printed one per line, then the program serves
// until killed (or for S seconds). A SOURCE is:
//   test:NAME[:FPS]  a live test camera of 1280x720 at FPS (default 5) showing "NAME" in large
//                    letters and a running clock, JPEG over RTP; shared by its clients
//   PATH.webm        a VP8 WebM file (render_text's), sent as it is; each client from the start
//   PATH             any other video decodebin reads, sent as JPEG; each client from the start
// Port 0 (the default) takes a free port: read the URLs from stdout. Address 127.0.0.1 by
// default (loopback only).
#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string launch_for(const std::string& source) {
  if (source.rfind("test:", 0) == 0) {
    std::string name = source.substr(5);
    std::string fps = "5";
    if (const auto colon = name.find(':'); colon != std::string::npos) {
      fps = name.substr(colon + 1);
      name = name.substr(0, colon);
    }
    return "( videotestsrc is-live=true pattern=white ! video/x-raw,width=1280,height=720,framerate=" + fps +
           "/1 ! textoverlay text=\"" + name +
           "\" font-desc=\"Sans 48\" valignment=top halignment=left color=0xff000000 auto-resize=false "
           "! timeoverlay font-desc=\"Sans 28\" valignment=bottom halignment=right color=0xff000000 "
           "! videoconvert ! video/x-raw,format=I420 ! jpegenc quality=90 ! rtpjpegpay name=pay0 pt=26 )";
  }
  const bool webm = source.size() > 5 && source.compare(source.size() - 5, 5, ".webm") == 0;
  if (webm) return "( filesrc location=\"" + source + "\" ! matroskademux ! rtpvp8pay name=pay0 pt=96 )";
  return "( filesrc location=\"" + source +
         "\" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! jpegenc quality=90 ! rtpjpegpay "
         "name=pay0 pt=26 )";
}

gboolean quit(gpointer loop) {
  g_main_loop_quit(static_cast<GMainLoop*>(loop));
  return G_SOURCE_REMOVE;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  std::string port = "0", address = "127.0.0.1";
  int seconds = 0;
  std::vector<std::string> sources;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--port" && i + 1 < argc) {
      port = argv[++i];
    } else if (a == "--address" && i + 1 < argc) {
      address = argv[++i];
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: rtsp_serve [--port P] [--address A] [--seconds S] SOURCE...\n");
      return 2;
    } else {
      sources.push_back(a);
    }
  }
  if (sources.empty()) {
    std::fprintf(stderr, "rtsp_serve: no source (test:NAME[:FPS], a .webm file or a video file)\n");
    return 2;
  }
  GstRTSPServer* server = gst_rtsp_server_new();
  gst_rtsp_server_set_address(server, address.c_str());
  gst_rtsp_server_set_service(server, port.c_str());
  GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server);
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const std::string& s = sources[k];
    if (s.rfind("test:", 0) != 0 && !g_file_test(s.c_str(), G_FILE_TEST_IS_REGULAR)) {
      std::fprintf(stderr, "rtsp_serve: no such file: %s\n", s.c_str());
      return 2;
    }
    GstRTSPMediaFactory* f = gst_rtsp_media_factory_new();
    gst_rtsp_media_factory_set_launch(f, launch_for(s).c_str());
    // A live camera is one stream for every client; a file starts over for each.
    gst_rtsp_media_factory_set_shared(f, s.rfind("test:", 0) == 0);
    gst_rtsp_mount_points_add_factory(mounts, ("/cam" + std::to_string(k)).c_str(), f);
  }
  g_object_unref(mounts);
  if (gst_rtsp_server_attach(server, nullptr) == 0) {
    std::fprintf(stderr, "rtsp_serve: cannot listen on %s:%s\n", address.c_str(), port.c_str());
    return 1;
  }
  const int bound = gst_rtsp_server_get_bound_port(server);
  for (std::size_t k = 0; k < sources.size(); ++k)
    std::printf("rtsp://%s:%d/cam%zu\n", address.c_str(), bound, k);
  std::fflush(stdout);
  GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
  if (seconds > 0) g_timeout_add_seconds(static_cast<guint>(seconds), quit, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  g_object_unref(server);
  return 0;
}
