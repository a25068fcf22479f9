// tools/draw/Heatmap.h: categorical heatmaps as SVG (`collc explain`).
//
// Rows and columns with labels; every cell names one category (e.g. the
// algorithm chosen for that rank count and size), coloured by it, with hover
// text (a <title> and a data-v1 attribute) and data-panel / data-row /
// data-col / data-choice attributes. Rows run top to bottom, columns left to
// right. Several panels over the same rows and columns (say, two ways of
// choosing) stand side by side with one legend; a panel may put a dot on
// some of its cells (explained in the legend by `dotLegend`).
#ifndef COLLC_TOOLS_DRAW_HEATMAP_H
#define COLLC_TOOLS_DRAW_HEATMAP_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::draw {

/// One grid of cells over the heatmap's rows and columns.
struct HeatmapPanel {
  std::string caption; ///< above the grid ("drop-in default table"); may be empty
  /// cells[row][column]: an index into Heatmap::categories.
  std::vector<std::vector<uint32_t>> cells;
  /// hover[row][column]: the cell's text.
  std::vector<std::vector<std::string>> hover;
  /// dots[row][column]: mark the cell with a dot; empty: no dots.
  std::vector<std::vector<uint8_t>> dots;
};

struct Heatmap {
  std::string title, subtitle;
  std::string rowAxis, columnAxis;        ///< "ranks", "bytes per rank"
  std::vector<std::string> rows, columns; ///< labels
  std::vector<std::string> categories;    ///< legend order; colours follow it
  std::vector<HeatmapPanel> panels;       ///< left to right
  std::string dotLegend;                  ///< what a dot means (when a panel has dots)
};

/// The colour of category `i` ("#rrggbb"; ten distinct ones, then repeating).
llvm::StringRef categoryColor(uint32_t i);

/// Preconditions: at least one panel; each panel's cells and hover (and dots,
/// unless empty) are rows × columns; every index < categories.size().
std::string heatmapSvg(const Heatmap &h);

} // namespace collc::draw

#endif // COLLC_TOOLS_DRAW_HEATMAP_H
