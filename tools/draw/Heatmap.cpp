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
  const size_t nr = h.rows.size(), nc = h.columns.size(), np = h.panels.size();
  // One panel as wide as 900 px allows; several a little narrower each.
  const double budget = np == 1 ? 900.0 : 640.0, gap = 48;
  const double cellW = std::clamp(budget / std::max<size_t>(nc, 1), 14.0, 44.0);
  const double cellH = std::clamp(700.0 / std::max<size_t>(nr, 1), 4.0, 28.0);
  const double left = 96, top = 64;
  const double gridW = nc * cellW, gridH = nr * cellH;
  auto panelLeft = [&](size_t k) { return left + k * (gridW + gap); };
  bool anyDots = false;
  for (const HeatmapPanel &p : h.panels)
    anyDots = anyDots || !p.dots.empty();
  const double legendY = top + gridH + 64;
  const double legendRows = double((h.categories.size() + 2) / 3) + (anyDots ? 1 : 0);
  const double width = std::max(panelLeft(np) - gap + 40, 720.0);
  const double height = legendY + 22 * legendRows + 20;
  const size_t rowStep = cellH >= 11 ? 1 : static_cast<size_t>(11 / cellH) + 1;

  std::string s;
  llvm::raw_string_ostream os(s);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" viewBox=\"0 0 " << num(width) << ' ' << num(height)
     << "\" font-family=\"sans-serif\">\n"
     << "<style>\n.cell:hover rect{stroke:#000000;stroke-width:2}\n"
        ".axis text{font-size:10px;fill:#374151}\n.legend text{font-size:11px;fill:#374151}\n"
        ".caption{font-size:12px;font-weight:bold;fill:#1f2937}\n"
        "</style>\n"
     << "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" fill=\"#ffffff\"/>\n"
     << "<text class=\"title\" x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">"
     << escapeXml(h.title) << "</text>\n"
     << "<text class=\"subtitle\" x=\"12\" y=\"40\" font-size=\"11\" fill=\"#4b5563\">"
     << escapeXml(h.subtitle) << "</text>\n";
  const double dotR = std::max(1.5, std::min(cellW, cellH) * 0.18);
  for (size_t k = 0; k < np; ++k) {
    const HeatmapPanel &panel = h.panels[k];
    const double x0 = panelLeft(k);
    if (!panel.caption.empty())
      os << "<text class=\"caption\" data-panel=\"" << k << "\" x=\"" << num(x0) << "\" y=\""
         << num(top - 7) << "\">" << escapeXml(panel.caption) << "</text>\n";
    for (size_t r = 0; r < nr; ++r)
      for (size_t c = 0; c < nc; ++c) {
        const uint32_t cat = panel.cells[r][c];
        const std::string &text = panel.hover[r][c];
        std::string attrText;
        for (char ch : escapeXml(text))
          attrText += ch == '\n' ? std::string("&#10;") : std::string(1, ch);
        const double x = x0 + c * cellW, y = top + r * cellH;
        os << "<g class=\"cell\" data-panel=\"" << k << "\" data-row=\"" << r
           << "\" data-col=\"" << c << "\" data-choice=\"" << escapeXml(h.categories[cat])
           << "\" data-v1=\"" << attrText << "\"><title>" << escapeXml(text)
           << "</title><rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(cellW)
           << "\" height=\"" << num(cellH) << "\" fill=\"" << categoryColor(cat)
           << "\" stroke=\"#ffffff\" stroke-width=\"0.5\"/>";
        if (!panel.dots.empty() && panel.dots[r][c])
          os << "<circle class=\"dot\" cx=\"" << num(x + cellW / 2) << "\" cy=\""
             << num(y + cellH / 2) << "\" r=\"" << num(dotR)
             << "\" fill=\"#ffffff\" stroke=\"#111827\" stroke-width=\"0.8\"/>";
        os << "</g>\n";
      }
  }
  os << "<g class=\"axis\">\n";
  for (size_t r = 0; r < nr; ++r) {
    const bool pow2 = isPowerOfTwo(h.rows[r]);
    if (r % rowStep == 0 || (pow2 && rowStep <= 4))
      os << "<text x=\"" << num(left - 6) << "\" y=\"" << num(top + (r + 0.5) * cellH + 3.5)
         << "\" text-anchor=\"end\">" << escapeXml(h.rows[r]) << "</text>\n";
  }
  const size_t colStep = cellW >= 30 ? 1 : 2;
  for (size_t k = 0; k < np; ++k) {
    const double x0 = panelLeft(k);
    for (size_t c = 0; c < nc; c += colStep) {
      const double x = x0 + (c + 0.5) * cellW, y = top + gridH + 8;
      os << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" text-anchor=\"end\" "
         << "transform=\"rotate(-60 " << num(x) << ' ' << num(y) << ")\">"
         << escapeXml(h.columns[c]) << "</text>\n";
    }
    os << "<text x=\"" << num(x0 + gridW / 2) << "\" y=\"" << num(top + gridH + 50)
       << "\" text-anchor=\"middle\" font-size=\"11\">" << escapeXml(h.columnAxis) << "</text>\n";
  }
  os << "<text x=\"14\" y=\"" << num(top + gridH / 2) << "\" font-size=\"11\" "
     << "transform=\"rotate(-90 14 " << num(top + gridH / 2) << ")\" text-anchor=\"middle\">"
     << escapeXml(h.rowAxis) << "</text>\n</g>\n<g class=\"legend\">\n";
  for (size_t k = 0; k < h.categories.size(); ++k) {
    const double x = 12 + (k % 3) * 230, y = legendY + (k / 3) * 22;
    os << "<rect x=\"" << num(x) << "\" y=\"" << num(y - 10) << "\" width=\"18\" height=\"12\" "
       << "fill=\"" << categoryColor(static_cast<uint32_t>(k)) << "\"/><text x=\"" << num(x + 24)
       << "\" y=\"" << num(y) << "\">" << escapeXml(h.categories[k]) << "</text>\n";
  }
  if (anyDots) {
    const double y = legendY + double((h.categories.size() + 2) / 3) * 22;
    os << "<circle cx=\"21\" cy=\"" << num(y - 4) << "\" r=\"4\" fill=\"#ffffff\" "
       << "stroke=\"#111827\" stroke-width=\"0.8\"/><text x=\"36\" y=\"" << num(y) << "\">"
       << escapeXml(h.dotLegend) << "</text>\n";
  }
  os << "</g>\n</svg>\n";
  return s;
}

} // namespace collc::draw
