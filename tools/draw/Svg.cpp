// tools/draw/Svg.cpp: escaping, numbers, the HTML page.
#include "tools/draw/Svg.h"

#include "llvm/Support/Path.h"

#include <cmath>
#include <cstdio>

namespace collc::draw {

std::string escapeXml(llvm::StringRef s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  const long tenths = std::lround(v * 10);
  char buf[32];
  if (tenths % 10 == 0)
    std::snprintf(buf, sizeof buf, "%ld", tenths / 10);
  else
    std::snprintf(buf, sizeof buf, "%s%ld.%ld", tenths < 0 ? "-" : "", std::labs(tenths) / 10,
                  std::labs(tenths) % 10);
  return buf;
}

llvm::Expected<PictureKind> pictureKindFor(llvm::StringRef path, llvm::StringRef format) {
  if (format.empty()) {
    const llvm::StringRef ext = llvm::sys::path::extension(path);
    if (path == "-" || ext.empty() || ext.equals_insensitive(".svg"))
      return PictureKind::Svg;
    if (ext.equals_insensitive(".html") || ext.equals_insensitive(".htm"))
      return PictureKind::Html;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot tell the picture format of '%s' (use .svg or "
                                   ".html, or --format svg|html)",
                                   path.str().c_str());
  }
  if (format == "svg")
    return PictureKind::Svg;
  if (format == "html")
    return PictureKind::Html;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown --format '%s' (expected svg or html)",
                                 format.str().c_str());
}

std::string htmlPage(llvm::StringRef title, llvm::StringRef svg) {
  // The script holds no '<' or '&', so the page stays well-formed XML too.
  return "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
         "<meta charset=\"utf-8\"/>\n<title>" +
         escapeXml(title) +
         "</title>\n<style>\n"
         "body{font-family:sans-serif;margin:16px;background:#ffffff;color:#111827}\n"
         "#hover{font-family:monospace;font-size:13px;min-height:1.4em;padding:6px 8px;"
         "margin:0 0 8px 0;background:#f3f4f6;border:1px solid #d1d5db;white-space:pre-wrap}\n"
         "</style>\n</head>\n<body>\n<div id=\"hover\">point at an op, a message or a cell to see "
         "it here</div>\n" +
         svg.str() +
         "\n<script>//<![CDATA[\n"
         "(function () {\n"
         "  var panel = document.getElementById('hover');\n"
         "  document.querySelectorAll('[data-v1]').forEach(function (e) {\n"
         "    e.addEventListener('mouseenter', function () {\n"
         "      panel.textContent = e.getAttribute('data-v1');\n"
         "    });\n"
         "  });\n"
         "})();\n"
         "//]]></script>\n</body>\n</html>\n";
}

} // namespace collc::draw
