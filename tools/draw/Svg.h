// tools/draw/Svg.h: small helpers for writing SVG and HTML text by hand.
#ifndef COLLC_TOOLS_DRAW_SVG_H
#define COLLC_TOOLS_DRAW_SVG_H

#include "ir/Wording.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace collc::draw {

/// Text with &, <, > and " escaped, for element content and attribute values.
std::string escapeXml(llvm::StringRef s);

/// A coordinate with at most one decimal ("12", "12.5"); deterministic.
std::string num(double v);

/// A byte count as a picture labels it (ir/Wording.h).
using ir::bytesText;

/// What a picture is written as.
enum class PictureKind { Svg, Html };

/// The kind `format` names ("svg", "html"), or else the one `path` ends in
/// (.svg, .html, .htm; "-" or no extension: svg); an error for anything else.
llvm::Expected<PictureKind> pictureKindFor(llvm::StringRef path, llvm::StringRef format);

/// A self-contained HTML page (no network, no external file) around an SVG
/// document: the picture inline, and a panel that shows the text
/// of the element under the pointer (its data-v1 attribute). The page is also
/// well-formed XML. The SVG carries the visible title.
std::string htmlPage(llvm::StringRef title, llvm::StringRef svg);

} // namespace collc::draw

#endif // COLLC_TOOLS_DRAW_SVG_H
