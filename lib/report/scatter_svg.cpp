#include "report/scatter_svg.hpp"
#include "report/svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::report {

namespace {

// Characters of a UTF-8 string (for the legend's width estimate).
size_t text_length(const std::string& s) {
  size_t n = 0;
  for (const char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

// Okabe-Ito colours (without the yellow, too pale on white) and six marker shapes; series i
// takes colour i mod 7 and shape i mod 6, so the first 42 series differ.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000"};
constexpr size_t kShapes = 6;
constexpr const char* kFlag = "#D62728";

// A filled marker, or with `hollow` a white one outlined in the series' colour.
std::string marker(size_t series, double cx, double cy, bool hollow = false) {
  const char* c = kColours[series % 7];
  const std::string paint =
      hollow ? fmt::format("fill=\"white\" stroke=\"{}\" stroke-width=\"1.5\"", c)
             : fmt::format("fill=\"{}\" stroke=\"white\" stroke-width=\"0.6\"", c);
  switch (series % kShapes) {
    case 0:
      return fmt::format("<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"4.0\" {}/>\n", cx, cy, paint);
    case 1:
      return fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"7.00\" height=\"7.00\" {}/>\n",
                         cx - 3.5, cy - 3.5, paint);
    case 2:
      return fmt::format("<path d=\"M{:.2f},{:.2f} L{:.2f},{:.2f} L{:.2f},{:.2f} Z\" {}/>\n", cx,
                         cy - 5.0, cx + 4.5, cy + 3.5, cx - 4.5, cy + 3.5, paint);
    case 3:
      return fmt::format(
          "<path d=\"M{:.2f},{:.2f} L{:.2f},{:.2f} L{:.2f},{:.2f} L{:.2f},{:.2f} Z\" {}/>\n", cx,
          cy - 5.0, cx + 4.5, cy, cx, cy + 5.0, cx - 4.5, cy, paint);
    case 4:
      return fmt::format("<path d=\"M{:.2f},{:.2f} L{:.2f},{:.2f} L{:.2f},{:.2f} Z\" {}/>\n", cx,
                         cy + 5.0, cx + 4.5, cy - 3.5, cx - 4.5, cy - 3.5, paint);
    default:  // a cross: strokes only, thinner when hollow
      return fmt::format(
          "<path d=\"M{:.2f},{:.2f} L{:.2f},{:.2f} M{:.2f},{:.2f} L{:.2f},{:.2f}\" fill=\"none\" "
          "stroke=\"{}\" stroke-width=\"{}\"/>\n",
          cx - 4.0, cy - 4.0, cx + 4.0, cy + 4.0, cx - 4.0, cy + 4.0, cx + 4.0, cy - 4.0, c,
          hollow ? "1" : "2");
  }
}

std::string ring(double cx, double cy) {
  return fmt::format(
      "<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"7.5\" fill=\"none\" stroke=\"{}\" "
      "stroke-width=\"1.3\"/>\n",
      cx, cy, kFlag);
}

// The smallest step of 1, 2 or 5 times a power of ten with at most six intervals over `span` > 0
// (so at least two ticks fall in it).
double nice_step(double span) {
  double mag = std::pow(10.0, std::floor(std::log10(span / 6.0)));
  for (;;) {
    for (const double f : {1.0, 2.0, 5.0}) {
      if (span / (f * mag) <= 6.0 + 1e-9) return f * mag;
    }
    mag *= 10.0;
  }
}

// A tick value with as many decimals as the step needs; never "-0".
std::string tick_text(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s = s.substr(1);
  return s;
}

struct Axis {
  double lo = 0, hi = 1, step = 0.2;
  long first = 0, last = 5;  ///< ticks at first * step .. last * step
  int decimals = 1;
  bool log = false;  ///< lo, hi and the ticks are log10 of the values
};

// Whether a point is drawn in a panel: finite, and positive on a log scale.
bool shown(const ScatterPoint& p, bool log) {
  return std::isfinite(p.x) && std::isfinite(p.y) && (!log || (p.x > 0 && p.y > 0));
}

// The common range of a panel's points and error bars, widened by 4% on each side, with ticks at
// the multiples of a nice step inside it. On a log scale the range is of log10 of the values
// (error bars' lower ends at or below 0 left out) and the ticks are at powers of ten, the range
// widened to whole decades when fewer than two would fall in it.
Axis axis_of(const std::vector<ScatterPoint>& pts, bool log) {
  const auto tr = [log](double v) { return log ? std::log10(v) : v; };
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& p : pts) {
    if (!shown(p, log)) continue;
    const double xe = std::isfinite(p.x_err) ? std::fabs(p.x_err) : 0.0;
    const double ye = std::isfinite(p.y_err) ? std::fabs(p.y_err) : 0.0;
    lo = std::min({lo, tr(p.x), tr(p.y)});
    hi = std::max({hi, tr(p.x + xe), tr(p.y + ye)});
    if (!log || p.x - xe > 0) lo = std::min(lo, tr(p.x - xe));
    if (!log || p.y - ye > 0) lo = std::min(lo, tr(p.y - ye));
  }
  if (!(lo <= hi)) lo = 0.0, hi = 1.0;
  if (hi - lo < 1e-9 * std::max(1.0, std::fabs(lo))) {
    const double pad = log ? 0.5 : std::max(0.05 * std::fabs(lo), 0.5);
    lo -= pad, hi += pad;
  }
  const double pad = 0.04 * (hi - lo);
  Axis a;
  a.log = log;
  a.lo = lo - pad;
  a.hi = hi + pad;
  if (log) {
    if (std::floor(a.hi) - std::ceil(a.lo) < 1.0) a.lo = std::floor(lo), a.hi = std::ceil(hi);
    if (a.hi - a.lo < 1.0) a.hi = a.lo + 1.0;
    a.step = std::max(1.0, std::ceil((a.hi - a.lo) / 6.0));
    a.decimals = 0;
  } else {
    a.step = nice_step(a.hi - a.lo);
    a.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(a.step) + 1e-9)));
  }
  a.first = std::lround(std::ceil(a.lo / a.step - 1e-9));
  a.last = std::lround(std::floor(a.hi / a.step + 1e-9));
  return a;
}

// A tick's label: the value, or on a log scale 10 with the exponent raised.
std::string tick_label(const Axis& a, double v) {
  if (!a.log) return tick_text(v, a.decimals);
  return fmt::format("10<tspan dy=\"-5\" font-size=\"8\">{}</tspan>", std::lround(v));
}

}  // namespace

std::string svg_scatter(const std::string& title, const std::vector<ScatterPanel>& panels,
                        const std::vector<std::string>& series, const ScatterOptions& opt) {
  if (opt.max_columns == 0) throw Error("svg_scatter: 0 columns");
  bool any_flagged = false, any_hollow = false;
  for (const auto& p : panels) {
    for (const auto& q : p.points) {
      if (q.series >= series.size()) {
        throw Error(fmt::format("svg_scatter: panel '{}' has a point of series {} of {}", p.title,
                                q.series, series.size()));
      }
      any_flagged = any_flagged || (q.flagged && shown(q, p.log_scale));
      any_hollow = any_hollow || (q.hollow && shown(q, p.log_scale));
    }
  }
  // Panel geometry: a square plot area with margins for the titles, ticks and axis labels.
  const double side = 220.0, ml = 62.0, mr = 18.0, mt = 44.0, mb = 48.0;
  const double pw = ml + side + mr, ph = mt + side + mb;
  const size_t cols = std::max<size_t>(1, std::min(opt.max_columns, panels.size()));
  const size_t rows = (panels.size() + cols - 1) / cols;
  const double title_h = 30.0;
  const double W = std::max(pw * double(cols), 320.0);

  // Legend items (marker and label), wrapped into lines of the figure's width.
  struct Item {
    double x, y;
    std::string label;
    long series;  ///< -1: the flag ring, -2: the hollow marker
  };
  std::vector<Item> items;
  const double lx0 = 20.0, line_h = 20.0;
  double lx = lx0, ly = 0.0;
  auto add_item = [&](const std::string& label, long s) {
    const double w = 22.0 + 6.0 * double(text_length(label)) + 18.0;
    if (lx > lx0 && lx + w > W - 10.0) lx = lx0, ly += line_h;
    items.push_back({lx, ly, label, s});
    lx += w;
  };
  for (size_t i = 0; i < series.size(); ++i) add_item(series[i], static_cast<long>(i));
  if (any_hollow && !opt.hollow_label.empty()) add_item(opt.hollow_label, -2);
  if (any_flagged && !opt.flag_label.empty()) add_item(opt.flag_label, -1);
  const double legend_h = items.empty() ? 0.0 : ly + line_h + 12.0;
  const double H = title_h + ph * double(rows) + legend_h;

  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"white\"/>\n"
      "<text x=\"{:.2f}\" y=\"20.00\" text-anchor=\"middle\" font-size=\"14\" "
      "font-weight=\"bold\">{}</text>\n",
      W, H, W, H, W, H, W / 2, xml_escape(title));

  for (size_t k = 0; k < panels.size(); ++k) {
    const ScatterPanel& p = panels[k];
    const Axis a = axis_of(p.points, p.log_scale);
    const double x0 = double(k % cols) * pw + ml, y0 = title_h + double(k / cols) * ph + mt;
    // Axis positions of tick values (already log10 on a log scale), and of data values, whose
    // nonpositive values (error bars' lower ends on a log scale) go to the axis' low end.
    auto tx = [&](double t) { return x0 + (t - a.lo) / (a.hi - a.lo) * side; };
    auto ty = [&](double t) { return y0 + side - (t - a.lo) / (a.hi - a.lo) * side; };
    auto tv = [&](double v) { return !a.log ? v : v > 0 ? std::log10(v) : a.lo; };
    auto sx = [&](double v) { return tx(tv(v)); };
    auto sy = [&](double v) { return ty(tv(v)); };
    o += "<g>\n";
    // Grid, frame and ticks.
    std::string grid, ticks, labels;
    for (long i = a.first; i <= a.last; ++i) {
      const double v = double(i) * a.step;
      const double gx = tx(v), gy = ty(v);
      grid += fmt::format("M{:.2f},{:.2f} V{:.2f} M{:.2f},{:.2f} H{:.2f} ", gx, y0, y0 + side, x0,
                          gy, x0 + side);
      ticks += fmt::format("M{:.2f},{:.2f} v4 M{:.2f},{:.2f} h-4 ", gx, y0 + side, x0, gy);
      const std::string t = tick_label(a, v);
      labels += fmt::format(
          "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>\n"
          "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\">{}</text>\n",
          gx, y0 + side + 16.0, t, x0 - 7.0, gy + 4.0, t);
    }
    if (!grid.empty()) {
      o += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#E6E6E6\"/>\n", grid);
    }
    o += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"none\" "
        "stroke=\"black\"/>\n<path d=\"{}\" fill=\"none\" stroke=\"black\"/>\n",
        x0, y0, side, side, ticks);
    o += labels;
    // y = x: the diagonal of the common square range.
    o += fmt::format(
        "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#888888\" "
        "stroke-dasharray=\"5 3\"/>\n",
        x0, y0 + side, x0 + side, y0);
    // Error bars (with small caps), then markers, then the flag rings.
    std::string bars;
    for (const auto& q : p.points) {
      if (!shown(q, a.log)) continue;
      const double cx = sx(q.x), cy = sy(q.y);
      std::string d;
      if (std::isfinite(q.x_err) && q.x_err > 0) {
        const double a1 = sx(q.x - std::fabs(q.x_err)), a2 = sx(q.x + std::fabs(q.x_err));
        d += fmt::format("M{:.2f},{:.2f} H{:.2f} M{:.2f},{:.2f} v5 M{:.2f},{:.2f} v5 ", a1, cy, a2,
                         a1, cy - 2.5, a2, cy - 2.5);
      }
      if (std::isfinite(q.y_err) && q.y_err > 0) {
        const double b1 = sy(q.y - std::fabs(q.y_err)), b2 = sy(q.y + std::fabs(q.y_err));
        d += fmt::format("M{:.2f},{:.2f} V{:.2f} M{:.2f},{:.2f} h5 M{:.2f},{:.2f} h5 ", cx, b1, b2,
                         cx - 2.5, b1, cx - 2.5, b2);
      }
      if (!d.empty()) {
        bars += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-opacity=\"0.7\"/>\n",
                            d, kColours[q.series % 7]);
      }
    }
    o += bars;
    for (const auto& q : p.points)
      if (shown(q, a.log)) o += marker(q.series, sx(q.x), sy(q.y), q.hollow);
    for (const auto& q : p.points)
      if (q.flagged && shown(q, a.log)) o += ring(sx(q.x), sy(q.y));
    // Titles and axis labels.
    o += fmt::format(
        "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" font-size=\"13\" "
        "font-weight=\"bold\">{}</text>\n",
        x0 + side / 2, y0 - (p.subtitle.empty() ? 10.0 : 22.0), xml_escape(p.title));
    if (!p.subtitle.empty()) {
      o += fmt::format(
          "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" fill=\"#555555\">{}</text>\n",
          x0 + side / 2, y0 - 8.0, xml_escape(p.subtitle));
    }
    o += fmt::format(
        "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>\n"
        "<text transform=\"translate({:.2f},{:.2f}) rotate(-90)\" text-anchor=\"middle\">{}"
        "</text>\n</g>\n",
        x0 + side / 2, y0 + side + 36.0, xml_escape(p.x_label), x0 - ml + 16.0, y0 + side / 2,
        xml_escape(p.y_label));
  }

  // Legend.
  const double ly0 = title_h + ph * double(rows) + 10.0;
  for (const auto& it : items) {
    const double mx = it.x + 8.0, my = ly0 + it.y;
    if (it.series >= 0) {
      o += marker(static_cast<size_t>(it.series), mx, my);
    } else if (it.series == -2) {
      o += fmt::format(
          "<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"4.0\" fill=\"white\" stroke=\"#555555\" "
          "stroke-width=\"1.5\"/>\n",
          mx, my);
    } else {
      o += ring(mx, my);
    }
    o += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\">{}</text>\n", it.x + 22.0, my + 4.0,
                     xml_escape(it.label));
  }
  o += "</svg>\n";
  return o;
}

}  // namespace dkp::report
