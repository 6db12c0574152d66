// "Use it in your robot": the camera loop in an application, as README.md shows it. Built with
// the samples (the target camera_loop_robot_example) so that the snippet stays true.
#include <cstdio>

#include "camera_loop.h"

void steer_towards(float x) { std::printf("face at %.2f of the image width\n", x); }  // your robot

int main() {
  std::shared_ptr<jet::Engine> engine;  // BlazeFace, converted once: jet-convert face.onnx -o face.jet
  jet::LoadOptions load;                // the GPU (Backend::CUDA) by default
  jet::Status st = jet::Engine::load("face.jet", load, &engine);
  std::unique_ptr<jet::camera::FrameSource> camera;
  if (st.ok()) st = jet::camera::open_frame_source("/dev/video0:640x480", &camera);
  std::unique_ptr<jet::camera::CameraLoop> loop;  // owns the ExecutionContext, buffers, streams
  if (st.ok()) st = jet::camera::CameraLoop::create(engine, camera.get(), {}, &loop);
  // Every frame: capture, preprocess, CUDA graph replay, decode, then this callback with the
  // faces in frame pixels, best first. Nothing is allocated per frame.
  if (st.ok()) st = loop->run(0, [](const jet::camera::FrameResult& frame) {
    if (frame.detection_count > 0) {
      const jet::blazeface::Detection& face = frame.detections[0];
      steer_towards(0.5f * (face.xmin + face.xmax) / static_cast<float>(frame.size.width));
    }
  });  // 0 frames: until loop->stop() (e.g. from a signal handler)
  if (!st.ok()) std::fprintf(stderr, "%s\n", st.to_string().c_str());
  return st.ok() ? 0 : 1;
}
