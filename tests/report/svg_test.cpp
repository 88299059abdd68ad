// report::svg_panels: panels laid out in a grid, data scaled to each panel's box, escaping, errors.
#include <doctest/doctest.h>

#include <string>

#include "report/svg.hpp"
#include "util/error.hpp"

using dkp::report::PlotPanel;
using dkp::report::svg_panels;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("svg_panels: curves, dots and the grid layout") {
  PlotPanel a;
  a.title = "a <b> & c";
  a.x = {0.0, 0.5, 1.0};
  a.curves = {arma::vec{0.0, 0.25, 1.0}, arma::vec{0.5, 0.5, 0.5}};
  PlotPanel b;
  b.title = "dots";
  b.px = {2.0, 4.0};
  b.py = {-1.0, 1.0};
  PlotPanel c = a;
  const std::string svg = svg_panels({a, b, c}, 2, 260.0, 200.0);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"520\" height=\"400\"", 0) ==
        0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count(svg, "<polyline") == 4);
  CHECK(count(svg, "<circle") == 2);
  CHECK(count(svg, "<g>") == 3);
  CHECK(svg.find("a &lt;b&gt; &amp; c") != std::string::npos);
  // Panel 1 (top left, margins 40 / 10 / 20 / 20): (0, 0) at the box's bottom left, (1, 1) at its
  // top right; the flat curve's y range is the panel's, 0..1, so it sits at half height.
  CHECK(svg.find("points=\"40.00,180.00 145.00,140.00 250.00,20.00 \"") != std::string::npos);
  CHECK(svg.find("points=\"40.00,100.00 145.00,100.00 250.00,100.00 \"") != std::string::npos);
  // Panel 2 (top right): its dots at the corners of its own box.
  CHECK(svg.find("cx=\"300.00\" cy=\"180.00\"") != std::string::npos);
  CHECK(svg.find("cx=\"510.00\" cy=\"20.00\"") != std::string::npos);
  // Panel 3 (second row): shifted down by one panel height.
  CHECK(svg.find("points=\"40.00,380.00 145.00,340.00 250.00,220.00 \"") != std::string::npos);
}

TEST_CASE("svg_panels: bad shapes") {
  PlotPanel a;
  a.x = {0.0, 1.0};
  a.curves = {arma::vec{1.0, 2.0, 3.0}};
  CHECK_THROWS_AS(svg_panels({a}, 1), dkp::Error);
  PlotPanel b;
  b.px = {1.0};
  CHECK_THROWS_AS(svg_panels({b}, 1), dkp::Error);
  CHECK_THROWS_AS(svg_panels({}, 0), dkp::Error);
  CHECK(svg_panels({}, 3).find("</svg>") != std::string::npos);  // no panels: an empty picture
}
