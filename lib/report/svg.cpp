#include "report/svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::report {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

namespace {

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  void add(const arma::vec& v) {
    for (const double x : v)
      if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  }
  // A degenerate or empty range widened to one of positive width.
  void settle() {
    if (!(lo <= hi)) lo = 0.0, hi = 1.0;
    if (hi - lo < 1e-300) lo -= 0.5, hi += 0.5;
  }
};

}  // namespace

std::string svg_panels(const std::vector<PlotPanel>& panels, size_t columns, double width,
                       double height) {
  if (columns == 0) throw Error("svg_panels: 0 columns");
  const size_t rows = (panels.size() + columns - 1) / columns;
  const double W = width * double(columns), H = height * double(std::max<size_t>(rows, 1));
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"10\">\n<rect width=\"{:.0f}\" height=\"{:.0f}\" "
      "fill=\"white\"/>\n",
      W, H, W, H);
  const double ml = 40.0, mr = 10.0, mt = 20.0, mb = 20.0;  // margins inside a panel
  for (size_t k = 0; k < panels.size(); ++k) {
    const PlotPanel& p = panels[k];
    for (const arma::vec& c : p.curves) {
      if (c.n_elem != p.x.n_elem) {
        throw Error(fmt::format("svg_panels: panel '{}' has a curve of {} values for {} x", p.title,
                                c.n_elem, p.x.n_elem));
      }
    }
    if (p.px.n_elem != p.py.n_elem) {
      throw Error(fmt::format("svg_panels: panel '{}' has {} dot x and {} dot y", p.title,
                              p.px.n_elem, p.py.n_elem));
    }
    Range rx, ry;
    if (!p.curves.empty()) rx.add(p.x);
    rx.add(p.px);
    for (const arma::vec& c : p.curves) ry.add(c);
    ry.add(p.py);
    rx.settle();
    ry.settle();
    const double x0 = double(k % columns) * width + ml, y0 = double(k / columns) * height + mt;
    const double w = width - ml - mr, h = height - mt - mb;
    auto sx = [&](double x) { return x0 + (x - rx.lo) / (rx.hi - rx.lo) * w; };
    auto sy = [&](double y) { return y0 + h - (y - ry.lo) / (ry.hi - ry.lo) * h; };
    out += fmt::format(
        "<g>\n<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"none\" "
        "stroke=\"black\"/>\n<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>\n",
        x0, y0, w, h, x0 + w / 2, y0 - 6, xml_escape(p.title));
    out += fmt::format(
        "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\">{:.3g}</text>\n<text x=\"{:.2f}\" "
        "y=\"{:.2f}\" text-anchor=\"end\">{:.3g}</text>\n",
        x0 - 3, y0 + 8, ry.hi, x0 - 3, y0 + h, ry.lo);
    out += fmt::format(
        "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"start\">{:.3g}</text>\n<text x=\"{:.2f}\" "
        "y=\"{:.2f}\" text-anchor=\"end\">{:.3g}</text>\n",
        x0, y0 + h + 12, rx.lo, x0 + w, y0 + h + 12, rx.hi);
    for (const arma::vec& c : p.curves) {
      out += "<polyline fill=\"none\" stroke=\"steelblue\" stroke-opacity=\"0.5\" points=\"";
      for (arma::uword i = 0; i < c.n_elem; ++i)
        if (std::isfinite(c[i]) && std::isfinite(p.x[i]))
          out += fmt::format("{:.2f},{:.2f} ", sx(p.x[i]), sy(c[i]));
      out += "\"/>\n";
    }
    for (arma::uword i = 0; i < p.px.n_elem; ++i)
      out += fmt::format("<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"1.8\" fill=\"black\"/>\n",
                         sx(p.px[i]), sy(p.py[i]));
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace dkp::report
