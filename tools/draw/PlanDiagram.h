// tools/draw/PlanDiagram.h: the space-time diagram of a plan, as SVG.
//
// One lane per rank (ranks down, time across); each op a box on its rank's
// lane at its time, coloured by kind; each message an arrow from its send to
// its receive, labelled with the vector chunks it carries; combining ops
// labelled with the contributions they produce (x[0..3]); ops using scratch
// (tmp) outlined dashed; the critical path in red; a legend. Every op and
// arrow carries its text (the op as a line of plan format v1) in a <title>
// and a data-v1 attribute, and data-rank/data-op attributes, so tools and
// tests can find them. Above DrawOptions::maxDetailedRanks ranks the diagram
// is summarized: one lane per group of consecutive ranks, time in buckets,
// each cell shaded by how many ops it holds. A simulated timeline adds a
// time axis and shades the stretches where a rank is idle.
#ifndef COLLC_TOOLS_DRAW_PLANDIAGRAM_H
#define COLLC_TOOLS_DRAW_PLANDIAGRAM_H

#include "tools/draw/Svg.h"
#include "tools/draw/Timeline.h"

namespace collc::draw {

/// An op to point at, e.g. the one a diagnostic names.
struct Mark {
  OpRef op;
  std::string note;    ///< shown above the op ("deadlock")
  std::string detail;  ///< added to its hover text (the whole diagnostic)
  bool primary = true; ///< the op the diagnostic is about (else one it refers to)
};

struct DrawOptions {
  std::string title; ///< default: "allreduce 'ring', 4 ranks"
  std::vector<Mark> marks;
  uint32_t maxDetailedRanks = 64; ///< summarize plans with more ranks
};

/// The fill colours of the op kinds, "#rrggbb" (the legend's; tests sample them).
llvm::StringRef kindColor(ir::OpKind k);
inline constexpr llvm::StringLiteral criticalColor = "#dc2626", arrowColor = "#4b5563",
                                     markColor = "#facc15", laneColor = "#d1d5db",
                                     idleColor = "#fde7c4";

/// The diagram as a standalone SVG document. Preconditions: `plan` is
/// well-formed and `t` is a timeline of it.
std::string planSvg(const ir::Plan &plan, const Timeline &t, const DrawOptions &opts);

/// The picture of `plan` as `kind` (SVG, or the HTML page around it), drawn
/// at the times of `times` (a timeline of this plan, e.g. simulated), or in
/// dependency order (logicalTimeline) when null. Precondition: `plan` is
/// well-formed.
std::string drawPlan(const ir::Plan &plan, const DrawOptions &opts, PictureKind kind,
                     const Timeline *times = nullptr);

/// The default title: "allreduce 'ring', 4 ranks" (", root 0" where it has one).
std::string defaultTitle(const ir::Plan &plan);

/// Marks for a diagnostic: the op it names (primary) and every op its message
/// refers to ("rank 2 op 1 (...)", "op 1 (...)" of the same rank), each with
/// `note` and `detail`. Ops outside the plan are skipped.
std::vector<Mark> marksFor(const ir::Plan &plan, std::optional<uint32_t> rank,
                           std::optional<uint32_t> op, llvm::StringRef message,
                           llvm::StringRef note, llvm::StringRef detail);

} // namespace collc::draw

#endif // COLLC_TOOLS_DRAW_PLANDIAGRAM_H
