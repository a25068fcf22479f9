// tools/draw/Heatmap.cpp: layout of the heatmap. Cells are square-ish, at most
// 28 px, at least 4 px; row labels are thinned out to every k-th row (and the
// powers of two) when rows get too low for text.
#include "tools/draw/Heatmap.h"

#include "tools/draw/Svg.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace collc::draw {

llvm::StringRef categoryColor(uint32_t i) {
  static const char *const palette[] = {"#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2",
                                        "#ca8a04", "#db2777", "#4b5563", "#65a30d", "#7c2d12"};
  return palette[i % 10];
}

namespace {
/// A label that is a power of two ("64"): always labelled when rows thin out.
bool isPowerOfTwo(const std::string &label) {
  unsigned long v = 0;
  for (char ch : label) {
    if (ch < '0' || ch > '9' || v > (1ul << 40))
      return false;
    v = v * 10 + unsigned(ch - '0');
  }
  return v && (v & (v - 1)) == 0;
}
} // namespace

std::string heatmapSvg(const Heatmap &h) {
  const size_t nr = h.rows.size(), nc = h.columns.size();
  const double cellW = std::clamp(900.0 / std::max<size_t>(nc, 1), 14.0, 44.0);
  const double cellH = std::clamp(700.0 / std::max<size_t>(nr, 1), 4.0, 28.0);
  const double left = 96, top = 64;
  const double gridW = nc * cellW, gridH = nr * cellH;
  const double legendY = top + gridH + 64;
  const double width = std::max(left + gridW + 40, 720.0);
  const double height = legendY + 22 * ((h.categories.size() + 2) / 3) + 20;
  const size_t rowStep = cellH >= 11 ? 1 : static_cast<size_t>(11 / cellH) + 1;

  std::string s;
  llvm::raw_string_ostream os(s);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" viewBox=\"0 0 " << num(width) << ' ' << num(height)
     << "\" font-family=\"sans-serif\">\n"
     << "<style>\n.cell:hover rect{stroke:#000000;stroke-width:2}\n"
        ".axis text{font-size:10px;fill:#374151}\n.legend text{font-size:11px;fill:#374151}\n"
        "</style>\n"
     << "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" fill=\"#ffffff\"/>\n"
     << "<text class=\"title\" x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">"
     << escapeXml(h.title) << "</text>\n"
     << "<text class=\"subtitle\" x=\"12\" y=\"40\" font-size=\"11\" fill=\"#4b5563\">"
     << escapeXml(h.subtitle) << "</text>\n";
  for (size_t r = 0; r < nr; ++r)
    for (size_t c = 0; c < nc; ++c) {
      const uint32_t k = h.cells[r][c];
      std::string text = h.hover[r][c];
      std::string attrText;
      for (char ch : escapeXml(text))
        attrText += ch == '\n' ? std::string("&#10;") : std::string(1, ch);
      os << "<g class=\"cell\" data-row=\"" << r << "\" data-col=\"" << c << "\" data-choice=\""
         << escapeXml(h.categories[k]) << "\" data-v1=\"" << attrText << "\"><title>"
         << escapeXml(text) << "</title><rect x=\"" << num(left + c * cellW) << "\" y=\""
         << num(top + r * cellH) << "\" width=\"" << num(cellW) << "\" height=\"" << num(cellH)
         << "\" fill=\"" << categoryColor(k)
         << "\" stroke=\"#ffffff\" stroke-width=\"0.5\"/></g>\n";
    }
  os << "<g class=\"axis\">\n";
  for (size_t r = 0; r < nr; ++r) {
    const bool pow2 = isPowerOfTwo(h.rows[r]);
    if (r % rowStep == 0 || (pow2 && rowStep <= 4))
      os << "<text x=\"" << num(left - 6) << "\" y=\"" << num(top + (r + 0.5) * cellH + 3.5)
         << "\" text-anchor=\"end\">" << escapeXml(h.rows[r]) << "</text>\n";
  }
  const size_t colStep = cellW >= 30 ? 1 : 2;
  for (size_t c = 0; c < nc; c += colStep) {
    const double x = left + (c + 0.5) * cellW, y = top + gridH + 8;
    os << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" text-anchor=\"end\" "
       << "transform=\"rotate(-60 " << num(x) << ' ' << num(y) << ")\">" << escapeXml(h.columns[c])
       << "</text>\n";
  }
  os << "<text x=\"" << num(left + gridW / 2) << "\" y=\"" << num(top + gridH + 50)
     << "\" text-anchor=\"middle\" font-size=\"11\">" << escapeXml(h.columnAxis) << "</text>\n"
     << "<text x=\"14\" y=\"" << num(top + gridH / 2) << "\" font-size=\"11\" "
     << "transform=\"rotate(-90 14 " << num(top + gridH / 2) << ")\" text-anchor=\"middle\">"
     << escapeXml(h.rowAxis) << "</text>\n</g>\n<g class=\"legend\">\n";
  for (size_t k = 0; k < h.categories.size(); ++k) {
    const double x = 12 + (k % 3) * 230, y = legendY + (k / 3) * 22;
    os << "<rect x=\"" << num(x) << "\" y=\"" << num(y - 10) << "\" width=\"18\" height=\"12\" "
       << "fill=\"" << categoryColor(static_cast<uint32_t>(k)) << "\"/><text x=\"" << num(x + 24)
       << "\" y=\"" << num(y) << "\">" << escapeXml(h.categories[k]) << "</text>\n";
  }
  os << "</g>\n</svg>\n";
  return s;
}

} // namespace collc::draw
