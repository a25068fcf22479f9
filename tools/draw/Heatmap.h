// tools/draw/Heatmap.h: a categorical heatmap as SVG (`collc explain`).
//
// Rows and columns with labels; every cell names one category (e.g. the
// algorithm chosen for that rank count and size), coloured by it, with hover
// text (a <title> and a data-v1 attribute) and data-row / data-col /
// data-choice attributes. Rows run top to bottom, columns left to right.
#ifndef COLLC_TOOLS_DRAW_HEATMAP_H
#define COLLC_TOOLS_DRAW_HEATMAP_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::draw {

struct Heatmap {
  std::string title, subtitle;
  std::string rowAxis, columnAxis;        ///< "ranks", "bytes per rank"
  std::vector<std::string> rows, columns; ///< labels
  std::vector<std::string> categories;    ///< legend order; colours follow it
  /// cells[row][column]: an index into categories.
  std::vector<std::vector<uint32_t>> cells;
  /// hover[row][column]: the cell's text.
  std::vector<std::vector<std::string>> hover;
};

/// The colour of category `i` ("#rrggbb"; ten distinct ones, then repeating).
llvm::StringRef categoryColor(uint32_t i);

/// Preconditions: cells and hover are rows × columns, every index < categories.size().
std::string heatmapSvg(const Heatmap &h);

} // namespace collc::draw

#endif // COLLC_TOOLS_DRAW_HEATMAP_H
