// Drawing detections into RGB images: box outlines and landmark dots, clipped to the image.
#include <algorithm>
#include <cmath>

#include "ninegrid/detect.h"

namespace ninegrid {

namespace {

struct Rgb {
  uint8_t r, g, b;
};

// Fills the pixels [x0, x1) x [y0, y1), clipped to the image.
void fill_rect(Image& img, int x0, int y0, int x1, int y1, Rgb c) {
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, img.w);
  y1 = std::min(y1, img.h);
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      uint8_t* p = img.pixel(x, y);
      p[0] = c.r;
      p[1] = c.g;
      p[2] = c.b;
    }
}

// Fills the pixels whose centres lie within `radius` of (cx, cy).
void fill_disc(Image& img, float cx, float cy, float radius, Rgb c) {
  if (!std::isfinite(cx) || !std::isfinite(cy)) return;
  const int x0 = static_cast<int>(std::floor(std::max(cx - radius, 0.f)));
  const int x1 = static_cast<int>(std::ceil(std::min(cx + radius, static_cast<float>(img.w))));
  const int y0 = static_cast<int>(std::floor(std::max(cy - radius, 0.f)));
  const int y1 = static_cast<int>(std::ceil(std::min(cy + radius, static_cast<float>(img.h))));
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const float dx = x + 0.5f - cx, dy = y + 0.5f - cy;
      if (dx * dx + dy * dy > radius * radius) continue;
      uint8_t* p = img.pixel(x, y);
      p[0] = c.r;
      p[1] = c.g;
      p[2] = c.b;
    }
}

// Image coordinate -> pixel index, saturated so that far-away boxes cannot overflow an int.
int to_pixel(float v) { return static_cast<int>(std::lround(std::min(1e8f, std::max(-1e8f, v)))); }

}  // namespace

void draw_faces(Image& image, const std::vector<Face>& faces) {
  if (image.w <= 0 || image.h <= 0 || image.rgb.size() != static_cast<size_t>(image.w) * image.h * 3) return;
  // About 2 px on a 512 px photo, thicker on large ones so the box stays visible when scaled down.
  const int thickness = std::max(2, static_cast<int>(std::lround(std::min(image.w, image.h) / 250.0)));
  const float radius = thickness + 1.5f;
  const Rgb box_colour{0, 230, 0};
  const Rgb landmark_colours[5] = {{40, 120, 255}, {40, 120, 255}, {255, 220, 0}, {255, 40, 40}, {255, 40, 40}};
  for (const Face& f : faces) {
    if (!std::isfinite(f.x1) || !std::isfinite(f.y1) || !std::isfinite(f.x2) || !std::isfinite(f.y2)) continue;
    // The outline straddles the box edges, half inside and half outside.
    const int half = thickness / 2;
    const int x1 = to_pixel(f.x1) - half, y1 = to_pixel(f.y1) - half;
    const int x2 = to_pixel(f.x2) - half, y2 = to_pixel(f.y2) - half;
    fill_rect(image, x1, y1, x2 + thickness, y1 + thickness, box_colour);  // top
    fill_rect(image, x1, y2, x2 + thickness, y2 + thickness, box_colour);  // bottom
    fill_rect(image, x1, y1, x1 + thickness, y2 + thickness, box_colour);  // left
    fill_rect(image, x2, y1, x2 + thickness, y2 + thickness, box_colour);  // right
    for (int k = 0; k < 5; ++k) fill_disc(image, f.landmarks[k][0], f.landmarks[k][1], radius, landmark_colours[k]);
  }
}

}  // namespace ninegrid
