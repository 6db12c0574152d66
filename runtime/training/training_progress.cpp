// ProgressBar and LossCurve (jet/training_progress.h).
#include "jet/training_progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "jet/file_io.h"

namespace jet {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ProgressBar::ProgressBar(std::string label, int64_t total, std::FILE* out)
    : label_(std::move(label)), total_(std::max<int64_t>(total, 1)), start_s_(now_s()), out_(out) {
  terminal_ = out_ && isatty(fileno(out_));
  line_.reserve(label_.size() + 160);
}

void ProgressBar::update(int64_t done, float loss, double accuracy) {
  done_ = std::min(std::max<int64_t>(done, 0), total_);
  ++updates_;
  loss_sum_ += static_cast<double>(loss);
  if (accuracy >= 0) {
    ++acc_updates_;
    acc_sum_ += accuracy;
  }
  if (terminal_) draw(false);
}

void ProgressBar::finish() { draw(true); }

void ProgressBar::draw(bool final_line) {
  if (!out_) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done_ / total_);
  char bar[kWidth + 1];
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '=' : (i == filled ? '>' : '.');
  if (filled == kWidth) bar[kWidth - 1] = '=';
  bar[kWidth] = 0;
  char stats[128];
  const double acc = mean_accuracy();
  if (acc >= 0) {
    std::snprintf(stats, sizeof stats, " loss %.4f acc %.1f%% %.1f s", mean_loss(), 100.0 * acc, now_s() - start_s_);
  } else {
    std::snprintf(stats, sizeof stats, " loss %.4f %.1f s", mean_loss(), now_s() - start_s_);
  }
  std::fprintf(out_, "%s%s [%s] %lld/%lld%s%s", terminal_ ? "\r" : "", label_.c_str(), bar,
               static_cast<long long>(done_), static_cast<long long>(total_), stats, final_line ? "\n" : "");
  std::fflush(out_);
}

namespace {

// Round tick steps: 1, 2 or 5 times a power of ten, about `want` ticks over [lo, hi].
double tick_step(double lo, double hi, int want) {
  const double raw = (hi - lo) / want;
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

std::string LossCurve::svg() const {
  const double W = 640, H = 400, left = 60, right = 20, top = 40, bottom = 50;
  const double pw = W - left - right, ph = H - top - bottom;
  double lo = INFINITY, hi = -INFINITY;
  for (float v : steps) {
    if (std::isfinite(v)) lo = std::min(lo, static_cast<double>(v)), hi = std::max(hi, static_cast<double>(v));
  }
  for (const auto& p : evaluated) {
    if (std::isfinite(p.second)) lo = std::min(lo, static_cast<double>(p.second)), hi = std::max(hi, static_cast<double>(p.second));
  }
  if (!(lo <= hi)) lo = 0, hi = 1;
  lo = std::min(lo, 0.0);
  if (hi - lo < 1e-6) hi = lo + 1;
  const double ystep = tick_step(lo, hi, 5);
  hi = std::ceil(hi / ystep) * ystep;
  const double n = static_cast<double>(std::max<size_t>(steps.size(), 2) - 1);
  const double xstep = std::max(1.0, tick_step(0, n, 8));
  auto X = [&](double s) { return left + pw * s / n; };
  auto Y = [&](double v) { return top + ph * (1 - (v - lo) / (hi - lo)); };
  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"400\" viewBox=\"0 0 640 400\" "
       "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"640\" height=\"400\" fill=\"white\"/>\n";
  s += "<text x=\"320\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) + "</text>\n";
  for (double v = lo; v <= hi + 1e-9 * ystep; v += ystep) {
    s += "<line x1=\"" + fmt("%.1f", left) + "\" x2=\"" + fmt("%.1f", left + pw) + "\" y1=\"" + fmt("%.1f", Y(v)) +
         "\" y2=\"" + fmt("%.1f", Y(v)) + "\" stroke=\"#ddd\"/>\n";
    s += "<text x=\"" + fmt("%.1f", left - 6) + "\" y=\"" + fmt("%.1f", Y(v) + 4) + "\" text-anchor=\"end\">" +
         fmt("%g", std::round(v / ystep) * ystep) + "</text>\n";
  }
  for (double x = 0; x <= n + 1e-9; x += xstep) {
    s += "<line x1=\"" + fmt("%.1f", X(x)) + "\" x2=\"" + fmt("%.1f", X(x)) + "\" y1=\"" + fmt("%.1f", top + ph) +
         "\" y2=\"" + fmt("%.1f", top + ph + 5) + "\" stroke=\"black\"/>\n";
    s += "<text x=\"" + fmt("%.1f", X(x)) + "\" y=\"" + fmt("%.1f", top + ph + 18) + "\" text-anchor=\"middle\">" +
         fmt("%.0f", x) + "</text>\n";
  }
  s += "<rect x=\"" + fmt("%.1f", left) + "\" y=\"" + fmt("%.1f", top) + "\" width=\"" + fmt("%.1f", pw) +
       "\" height=\"" + fmt("%.1f", ph) + "\" fill=\"none\" stroke=\"black\"/>\n";
  s += "<text x=\"320\" y=\"" + fmt("%.1f", H - 10) + "\" text-anchor=\"middle\">step</text>\n";
  s += "<text x=\"16\" y=\"" + fmt("%.1f", top + ph / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
       fmt("%.1f", top + ph / 2) + ")\">loss</text>\n";
  if (!steps.empty()) {
    s += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"";
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!std::isfinite(steps[i])) continue;
      s += fmt("%.1f", X(static_cast<double>(i))) + "," + fmt("%.1f", Y(steps[i])) + " ";
    }
    s += "\"/>\n";
  }
  for (const auto& p : evaluated) {
    if (!std::isfinite(p.second)) continue;
    s += "<circle cx=\"" + fmt("%.1f", X(static_cast<double>(p.first))) + "\" cy=\"" + fmt("%.1f", Y(p.second)) +
         "\" r=\"4\" fill=\"#d62728\"/>\n";
  }
  s += "<text x=\"" + fmt("%.1f", left + pw - 4) + "\" y=\"" + fmt("%.1f", top + 16) +
       "\" text-anchor=\"end\" fill=\"#1f77b4\">training loss per step</text>\n";
  if (!evaluated.empty()) {
    s += "<text x=\"" + fmt("%.1f", left + pw - 4) + "\" y=\"" + fmt("%.1f", top + 32) +
         "\" text-anchor=\"end\" fill=\"#d62728\">evaluation loss</text>\n";
  }
  s += "</svg>\n";
  return s;
}

Status LossCurve::write_svg(const std::string& path) const {
  if (steps.empty() && evaluated.empty()) return Status(StatusCode::BAD_PARAM, "LossCurve: no losses to draw");
  const std::string text = svg();
  return write_file_atomically(path, text.data(), text.size());
}

}  // namespace jet
