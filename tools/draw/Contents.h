// tools/draw/Contents.h: what each op of a plan moves or produces, as labels.
//
// A light symbolic run of the plan in timeline order, for the picture only
// (the proof is the verifier's): every slot holds nothing, chunk c of rank q's
// data, or a reduction of chunk c over a set of ranks. It gives each message
// the vector chunks it carries ("c2", "c2-4") and each combining op the
// contributions it produces ("x[0..3]"; "x{0,2}" when they are not one rank
// interval).
#ifndef COLLC_TOOLS_DRAW_CONTENTS_H
#define COLLC_TOOLS_DRAW_CONTENTS_H

#include "tools/draw/Timeline.h"

namespace collc::draw {

struct OpContents {
  std::string chunks;     ///< message ops: the vector chunks carried ("c2", "c2-4")
  std::string value;      ///< what the op leaves in the slots it writes ("x[0..3]", "c1 of rank 2")
  bool reduction = false; ///< the op combines (recv_reduce, reduce)
};

/// Labels for every op: contents[rank][op]. Ranks beyond 64 are not tracked
/// (the labels stay empty). Precondition: `t` is a timeline of `plan`.
std::vector<std::vector<OpContents>> computeContents(const ir::Plan &plan, const Timeline &t,
                                                     const compiler::Messages &messages);

} // namespace collc::draw

#endif // COLLC_TOOLS_DRAW_CONTENTS_H
