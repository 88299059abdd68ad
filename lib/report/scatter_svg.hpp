// Scatter plots of one quantity against another as a standalone SVG document (ours against the
// papers' printed values): small multiples, each panel over its own square range shared by both
// axes, with numbered ticks, error bars, the line y = x and a legend of the series' markers.
// Text only, no dependency; numbers are printed with fixed precision (deterministic output).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dkp::report {

struct ScatterPoint {
  double x = 0, y = 0;
  double x_err = 0, y_err = 0;  ///< half-lengths of the error bars (0: none)
  size_t series = 0;            ///< index into the series labels (marker shape and colour)
  bool flagged = false;         ///< drawn with a red ring (e.g. a disagreement)
  bool hollow = false;          ///< drawn unfilled (e.g. not every split done)
};

struct ScatterPanel {
  std::string title;     ///< above the panel
  std::string subtitle;  ///< below the title, smaller (may be empty)
  std::string x_label, y_label;
  std::vector<ScatterPoint> points;
  /// Both axes logarithmic, ticks at powers of ten (values spanning orders of magnitude): points
  /// with a coordinate <= 0 are left out, and an error bar reaching 0 or below is drawn to the
  /// axis' end.
  bool log_scale = false;
};

struct ScatterOptions {
  size_t max_columns = 3;    ///< panels per row
  std::string flag_label;    ///< legend text of the red ring (shown when a point is flagged)
  std::string hollow_label;  ///< legend text of hollow markers (shown when a point is hollow)
};

/// The panels row by row under `title`, with a legend of `series` (marker and label) below them,
/// plus the ring and the hollow marker when some point is flagged or hollow and its label is not
/// empty. Each panel's range covers its points with their error bars (the same range on both
/// axes, so y = x is the diagonal; in log10 for a log_scale panel); non-finite points are left
/// out and non-finite error bars
/// drawn as none. Only the y = x lines are SVG <line> elements (one per panel). Throws dkp::Error
/// when a point's series is not one of `series`, or for 0 columns.
std::string svg_scatter(const std::string& title, const std::vector<ScatterPanel>& panels,
                        const std::vector<std::string>& series, const ScatterOptions& opt = {});

}  // namespace dkp::report
