// A grid of line-plot panels as a standalone SVG document (the papers' sample figures, e.g. the
// compositional-uncertainty paper's Figure 5): each panel scales its own data to its box, draws
// sample curves as thin translucent polylines and observations as dots, with a title and the
// extreme values of its axes. Text only, no dependency.
#pragma once

#include <armadillo>
#include <string>
#include <vector>

namespace dkp::report {

/// Escapes XML's special characters (& < > ") in SVG text and attribute values.
std::string xml_escape(const std::string& s);

struct PlotPanel {
  std::string title;
  arma::vec x;                    ///< abscissae shared by the curves
  std::vector<arma::vec> curves;  ///< each with x.n_elem values
  arma::vec px, py;               ///< observations drawn as dots (may be empty)
};

/// The panels row by row, `columns` per row, each `width` x `height` pixels. Throws dkp::Error
/// when a curve's length differs from its x, when px and py differ in length, or for 0 columns.
std::string svg_panels(const std::vector<PlotPanel>& panels, size_t columns, double width = 260.0,
                       double height = 200.0);

}  // namespace dkp::report
