// tools/draw/PlanDiagram.cpp: layout and SVG of the space-time diagram.
//
// Geometry (pixels): lane r's centre is at top + (r + 0.5) * laneH; time t is
// at left + t * unitW. An op of the logical timeline fills the middle 76 % of
// its step, centred on its lane; an arrow runs from the centre of its send's
// box to the centre of its receive's box, edge to edge vertically. In a
// simulated timeline a box spans the op's start to its end exactly; sends sit
// just above the lane's line and every other op just below it (a rank sends
// while it receives or combines), an arrow runs from when the message leaves
// to when it arrives, the time axis under the lanes gives the scale, and the
// stretches of a lane where the rank has nothing running and nothing arriving
// are shaded as idle.
#include "tools/draw/PlanDiagram.h"

#include "tools/draw/Contents.h"
#include "tools/draw/Svg.h"

#include "ir/PlanIO.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

namespace collc::draw {

llvm::StringRef kindColor(ir::OpKind k) {
  switch (k) {
  case ir::OpKind::Send: return "#2563eb";
  case ir::OpKind::Recv: return "#16a34a";
  case ir::OpKind::RecvReduce: return "#ea580c";
  case ir::OpKind::Reduce: return "#9333ea";
  case ir::OpKind::Copy: return "#94a3b8";
  }
  return "#000000";
}

std::string defaultTitle(const ir::Plan &plan) {
  const ir::Shape &s = plan.shape;
  std::string t = ir::name(s.collective).str() + " '" + plan.algorithm + "', " +
                  std::to_string(s.ranks) + (s.ranks == 1 ? " rank" : " ranks");
  if (ir::hasRoot(s.collective))
    t += ", root " + std::to_string(s.root);
  return t;
}

std::vector<Mark> marksFor(const ir::Plan &plan, std::optional<uint32_t> rank,
                           std::optional<uint32_t> op, llvm::StringRef message,
                           llvm::StringRef note, llvm::StringRef detail) {
  std::vector<Mark> marks;
  auto add = [&](uint64_t r, uint64_t i, bool primary) {
    if (r >= plan.programs.size() || i >= plan.programs[r].ops.size())
      return;
    for (const Mark &m : marks)
      if (m.op == OpRef{uint32_t(r), uint32_t(i)})
        return;
    marks.push_back({{uint32_t(r), uint32_t(i)}, note.str(), detail.str(), primary});
  };
  if (rank && op)
    add(*rank, *op, true);
  static const std::regex ref("(rank ([0-9]+) )?op ([0-9]+) \\(");
  const std::string text = message.str();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ref); it != std::sregex_iterator();
       ++it) {
    const std::smatch &m = *it;
    if (!m[2].matched && !rank)
      continue;
    const uint64_t r = m[2].matched ? std::stoull(m[2].str()) : *rank;
    add(r, std::stoull(m[3].str()), false);
  }
  return marks;
}

namespace {

/// An attribute value: escaped, newlines kept as character references.
std::string attr(llvm::StringRef s) {
  std::string e = escapeXml(s), out;
  for (char c : e)
    out += c == '\n' ? std::string("&#10;") : std::string(1, c);
  return out;
}

const char *kindClass(ir::OpKind k) {
  switch (k) {
  case ir::OpKind::Send: return "send";
  case ir::OpKind::Recv: return "recv";
  case ir::OpKind::RecvReduce: return "recv_reduce";
  case ir::OpKind::Reduce: return "reduce";
  case ir::OpKind::Copy: return "copy";
  }
  return "op";
}

bool usesScratch(const ir::Op &op) {
  return op.buf == ir::Buffer::Tmp || (ir::hasSrc(op.kind) && op.src == ir::Buffer::Tmp) ||
         (op.hasDst && op.dst == ir::Buffer::Tmp);
}

/// The drawing surface: geometry shared by the detailed and summary views.
struct Canvas {
  double left = 84, top = 60, laneH = 48, unitW = 48;
  uint32_t lanes = 1;
  bool tracks = false; ///< simulated: sends above the lane's line, other ops below
  double laneY(uint32_t lane) const { return top + (lane + 0.5) * laneH; }
  double x(double t) const { return left + t * unitW; }
  double boxH() const { return tracks ? std::min(14.0, laneH * 0.3) : std::min(18.0, laneH * 0.55); }
  /// The top of an op's box on its lane.
  double boxTop(uint32_t lane, ir::OpKind k) const {
    const double y = laneY(lane), h = boxH();
    return !tracks ? y - h / 2 : k == ir::OpKind::Send ? y - h : y;
  }
  double bottom() const { return top + lanes * laneH; }
};

/// A time as the hover text and the axis print it: 3 decimals.
std::string timeText(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

/// A value for a data- attribute: 9 significant digits, no exponent for
/// integers below 10^9 (logical steps print as "12").
std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// The time axis of a simulated timeline at height y: a line from 0 to the
/// span, ticks at a round step (1, 2 or 5 × 10^k, 4 to 10 of them) with their
/// time, and faint lines through the lanes at each tick. data-origin and
/// data-scale give x = origin + t × scale.
void timeAxis(llvm::raw_ostream &os, const Canvas &c, const Timeline &t, double y) {
  const double span = t.span > 0 ? t.span : 1;
  double step = std::pow(10.0, std::floor(std::log10(span / 4)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (span / (step * m) <= 10) {
      step *= m;
      break;
    }
  const std::string unit = unitLabel(t.unit);
  char scale[40];
  std::snprintf(scale, sizeof scale, "%.9g", c.unitW);
  os << "<g class=\"axis\" data-unit=\"" << t.unit << "\" data-origin=\"" << num(c.left)
     << "\" data-scale=\"" << scale << "\">\n<line x1=\"" << num(c.x(0)) << "\" y1=\"" << num(y)
     << "\" x2=\"" << num(c.x(span)) << "\" y2=\"" << num(y)
     << "\" stroke=\"#374151\" stroke-width=\"1\"/>\n";
  for (int k = 0; k * step <= span * (1 + 1e-9); ++k) {
    const double v = k * step, x = c.x(v);
    char label[40];
    std::snprintf(label, sizeof label, "%.6g", v);
    os << "<g class=\"tick\" data-t=\"" << exact(v) << "\"><line x1=\"" << num(x) << "\" y1=\""
       << num(c.top) << "\" x2=\"" << num(x) << "\" y2=\"" << num(y - 1)
       << "\" stroke=\"#eef0f3\" stroke-width=\"1\"/><line x1=\"" << num(x) << "\" y1=\"" << num(y)
       << "\" x2=\"" << num(x) << "\" y2=\"" << num(y + 5)
       << "\" stroke=\"#374151\" stroke-width=\"1\"/><text x=\"" << num(x) << "\" y=\""
       << num(y + 16) << "\" text-anchor=\"middle\">" << label << (k == 0 ? "" : " " + unit)
       << "</text></g>\n";
  }
  os << "<text x=\"" << num(c.x(span)) << "\" y=\"" << num(y + 30)
     << "\" text-anchor=\"end\" font-size=\"11\">time (" << unit << ")</text>\n</g>\n";
}

void header(llvm::raw_ostream &os, double width, double height, llvm::StringRef title,
            llvm::StringRef subtitle) {
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" viewBox=\"0 0 " << num(width) << ' ' << num(height)
     << "\" font-family=\"sans-serif\">\n"
     << "<style>\n"
        ".op rect.box{stroke:#1f2937;stroke-width:0.8}\n"
        ".op.crit rect.box{stroke:"
     << criticalColor
     << ";stroke-width:2.5}\n"
        ".op.scratch rect.box{stroke-dasharray:3 2;stroke-width:1.6}\n"
        ".op.stuck{opacity:0.35}\n"
        ".op:hover rect.box,.msg:hover line,.cell:hover rect{stroke:#000000;stroke-width:3}\n"
        ".msg line{stroke:"
     << arrowColor
     << ";stroke-width:1.2}\n"
        ".msg.stuck line{stroke-dasharray:4 3}\n"
        ".msg.crit line{stroke:"
     << criticalColor
     << ";stroke-width:2.5}\n"
        ".lbl{font-size:10px;fill:#111827;paint-order:stroke;stroke:#ffffff;stroke-width:3px}\n"
        ".val{font-size:9px;fill:#7c2d12}\n"
        ".note{font-size:10px;font-weight:bold;fill:#991b1b}\n"
        ".lane line{shape-rendering:crispEdges;stroke:"
     << laneColor
     << ";stroke-width:1}\n"
        ".lane text,.legend text{font-size:11px;fill:#374151}\n"
        ".axis text{font-size:10px;fill:#374151}\n"
        ".axis line{shape-rendering:crispEdges}\n"
        ".idle rect{fill:"
     << idleColor
     << "}\n"
        "</style>\n"
     << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
        "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
        "<path d=\"M0,0 L10,5 L0,10 z\" fill=\""
     << arrowColor << "\"/></marker>"
     << "<marker id=\"arrow-crit\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
        "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\">"
        "<path d=\"M0,0 L10,5 L0,10 z\" fill=\""
     << criticalColor << "\"/></marker></defs>\n"
     << "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" fill=\"#ffffff\"/>\n"
     << "<text class=\"title\" x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">"
     << escapeXml(title) << "</text>\n"
     << "<text class=\"subtitle\" x=\"12\" y=\"40\" font-size=\"11\" fill=\"#4b5563\">"
     << escapeXml(subtitle) << "</text>\n";
}

void lanes(llvm::raw_ostream &os, const Canvas &c, double right,
           const std::vector<std::string> &names) {
  for (uint32_t l = 0; l < c.lanes; ++l) {
    const double y = c.laneY(l);
    os << "<g class=\"lane\" data-lane=\"" << l << "\"><line x1=\"" << num(c.left - 6) << "\" y1=\""
       << num(y) << "\" x2=\"" << num(right) << "\" y2=\"" << num(y) << "\"/><text x=\"8\" y=\""
       << num(y + 4) << "\">" << escapeXml(names[l]) << "</text></g>\n";
  }
}

void legend(llvm::raw_ostream &os, double y0, bool summary, bool simulated) {
  os << "<g class=\"legend\">\n";
  double x = 12;
  for (ir::OpKind k : {ir::OpKind::Send, ir::OpKind::Recv, ir::OpKind::RecvReduce,
                       ir::OpKind::Reduce, ir::OpKind::Copy}) {
    os << "<rect x=\"" << num(x) << "\" y=\"" << num(y0 - 9) << "\" width=\"18\" height=\"11\" "
       << "fill=\"" << kindColor(k) << "\" stroke=\"#1f2937\" stroke-width=\"0.8\"/>"
       << "<text x=\"" << num(x + 24) << "\" y=\"" << num(y0) << "\">" << ir::name(k)
       << "</text>\n";
    x += ir::name(k).size() * 7 + 44;
  }
  const double y1 = y0 + 22;
  os << "<line x1=\"12\" y1=\"" << num(y1 - 4) << "\" x2=\"40\" y2=\"" << num(y1 - 4)
     << "\" stroke=\"" << arrowColor << "\" stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>"
     << "<text x=\"46\" y=\"" << num(y1) << "\">message (label: vector chunks)</text>\n"
     << "<line x1=\"250\" y1=\"" << num(y1 - 4) << "\" x2=\"278\" y2=\"" << num(y1 - 4)
     << "\" stroke=\"" << criticalColor << "\" stroke-width=\"2.5\"/>"
     << "<text x=\"284\" y=\"" << num(y1) << "\">critical path</text>\n";
  if (summary) {
    os << "<text x=\"390\" y=\"" << num(y1)
       << "\">summary: a lane per group of ranks, shade = ops in the cell</text>\n";
  } else {
    os << "<rect x=\"390\" y=\"" << num(y1 - 9) << "\" width=\"18\" height=\"11\" fill=\"#ffffff\" "
       << "stroke=\"#1f2937\" stroke-width=\"1.6\" stroke-dasharray=\"3 2\"/>"
       << "<text x=\"414\" y=\"" << num(y1) << "\">uses scratch (tmp)</text>\n"
       << "<rect x=\"540\" y=\"" << num(y1 - 10) << "\" width=\"20\" height=\"13\" fill=\""
       << markColor << "\"/><text x=\"566\" y=\"" << num(y1) << "\">diagnostic</text>\n"
       << "<text x=\"650\" y=\"" << num(y1) << "\">x[a..b]: reduced over ranks a..b</text>\n";
  }
  if (simulated)
    os << "<rect x=\"12\" y=\"" << num(y1 + 13) << "\" width=\"28\" height=\"11\" fill=\""
       << idleColor << "\"/><text x=\"46\" y=\"" << num(y1 + 22)
       << "\">idle: nothing running, nothing arriving</text>"
       << "<text x=\"300\" y=\"" << num(y1 + 22)
       << "\">sends above a lane's line, receives and local ops below it</text>\n";
  os << "</g>\n";
}

std::string subtitleOf(const ir::Plan &plan, const Timeline &t, size_t critical) {
  const ir::Shape &s = plan.shape;
  std::string sub = std::to_string(s.chunks) + (s.chunks == 1 ? " chunk" : " chunks") +
                    ", scratch " + std::to_string(s.scratch) +
                    (s.scratch == 1 ? " slot" : " slots");
  if (ir::reduces(s.collective))
    sub += s.commutative ? ", commutative operations" : ", any associative operation";
  sub += s.inPlace ? ", also in place" : ", not in place";
  sub += "; critical path " + std::to_string(critical) + " ops (red); time: ";
  sub += t.logical ? "dependency order, one step per op"
                   : t.description.empty() ? "simulated, in " + unitLabel(t.unit) : t.description;
  return sub;
}

double unitWidth(const Timeline &t) {
  const double span = std::max(1.0, t.span);
  if (t.logical)
    return span * 48 <= 1400 ? 48 : std::max(12.0, 1400 / span);
  return 1400 / span;
}

std::string opText(const ir::Plan &plan, OpRef o, const OpTime &ot, const OpContents &c,
                   const Timeline &t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const ir::Op &op = plan.programs[o.rank].ops[o.op];
  os << "rank " << o.rank << ", op " << o.op;
  if (op.loc.line)
    os << " (" << (plan.source.empty() ? "line " : plan.source + ":") << op.loc.line << ")";
  os << ": ";
  ir::printOp(op, os);
  if (!c.chunks.empty())
    os << "\ncarries " << c.chunks;
  if (!c.value.empty() && ir::writesBuf(op.kind))
    os << "\nleaves " << c.value;
  if (ot.stuck)
    os << "\nnever runs: waits on a cycle";
  else if (t.logical)
    os << "\nstep " << num(ot.start);
  else
    os << "\n" << timeText(ot.start) << " .. " << timeText(ot.end) << ' ' << unitLabel(t.unit);
  if (!ot.detail.empty())
    os << '\n' << ot.detail;
  return s;
}

/// The stretches of [0, the rank's last end) in which rank `r` has no op
/// running and no message arriving (simulated timelines).
std::vector<std::pair<double, double>> idleStretches(const ir::Plan &plan, const Timeline &t,
                                                     const compiler::Messages &messages,
                                                     uint32_t r) {
  std::vector<std::pair<double, double>> busy;
  double last = 0;
  for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i) {
    const OpTime &ot = t.times[r][i];
    busy.push_back({ot.start, ot.end});
    last = std::max(last, ot.end);
    const ir::Op &op = plan.programs[r].ops[i];
    if (op.kind != ir::OpKind::Send && ir::isMessage(op.kind))
      if (std::optional<compiler::MsgEnd> s = messages.partner(r, i))
        busy.push_back({t.times[s->rank][s->op].wire, ot.wire}); // on its way in
  }
  std::sort(busy.begin(), busy.end());
  std::vector<std::pair<double, double>> idle;
  const double eps = 1e-9 * std::max(1.0, t.span);
  double covered = 0;
  for (const auto &[a, b] : busy) {
    if (a > covered + eps)
      idle.push_back({covered, a});
    covered = std::max(covered, b);
  }
  if (last > covered + eps)
    idle.push_back({covered, last});
  return idle;
}

void detailed(llvm::raw_ostream &os, const ir::Plan &plan, const Timeline &t,
              const DrawOptions &opts, const std::vector<OpRef> &path) {
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  const compiler::Messages messages(plan);
  // The labels need an order in which every op follows what it waits for:
  // dependency order is one, whatever the times.
  const auto contents =
      computeContents(plan, t.logical ? t : logicalTimeline(plan, messages), messages);
  const bool sim = !t.logical;
  Canvas c;
  c.lanes = std::max(1u, p);
  c.tracks = sim;
  // Room between lanes for a value label under each box and, below it, the
  // labels of the arrows at their midpoints.
  c.laneH = p <= 16 ? 56 : p <= 32 ? 32 : 22;
  c.unitW = unitWidth(t);
  size_t mostOps = 1;
  for (const ir::Program &prog : plan.programs)
    mostOps = std::max(mostOps, prog.ops.size());
  // Labels where there is room for them: a step 30 px wide, or (simulated)
  // 30 px per op of the busiest rank.
  const bool labels = c.laneH >= 32 && (sim ? 1400.0 / mostOps >= 30 : c.unitW >= 30);
  const double right = c.x(sim ? t.span : std::max(1.0, t.span)) + 16;
  const double width = std::max(right + 24, 860.0);
  const double axisY = c.bottom() + 8;
  const double legendY = c.bottom() + (sim ? 70 : 30);
  const double height = legendY + (sim ? 62 : 40);
  std::set<std::pair<uint32_t, uint32_t>> onPath;
  for (OpRef o : path)
    onPath.insert({o.rank, o.op});
  std::map<std::pair<uint32_t, uint32_t>, const Mark *> marks;
  for (const Mark &m : opts.marks)
    marks[{m.op.rank, m.op.op}] = &m;

  header(os, width, height, opts.title.empty() ? defaultTitle(plan) : opts.title,
         subtitleOf(plan, t, path.size()));
  std::vector<std::string> names;
  for (uint32_t r = 0; r < c.lanes; ++r)
    names.push_back("rank " + std::to_string(r));
  if (sim)
    timeAxis(os, c, t, axisY);
  lanes(os, c, right, names);

  // Box of an op: [x0, x1] at its lane.
  auto boxOf = [&](OpRef o) {
    const OpTime &ot = t.at(o);
    double x0 = c.x(ot.start), x1 = c.x(ot.end);
    if (t.logical) {
      x0 += 0.12 * c.unitW;
      x1 -= 0.12 * c.unitW;
    }
    if (x1 - x0 < 2)
      x1 = x0 + 2;
    return std::pair<double, double>(x0, x1);
  };
  auto kindOf = [&](OpRef o) { return plan.programs[o.rank].ops[o.op].kind; };

  // Idle stretches, then marks, under everything else.
  if (sim)
    for (uint32_t r = 0; r < p; ++r)
      for (const auto &[a, b] : idleStretches(plan, t, messages, r)) {
        const std::string text = "rank " + std::to_string(r) + " idle " + timeText(a) + " .. " +
                                 timeText(b) + ' ' + unitLabel(t.unit) + " (" +
                                 timeText(b - a) + ' ' + unitLabel(t.unit) + ")";
        const double h = c.boxH();
        os << "<g class=\"idle\" data-rank=\"" << r << "\" data-from=\"" << exact(a)
           << "\" data-to=\"" << exact(b) << "\" data-v1=\"" << attr(text) << "\"><title>"
           << escapeXml(text) << "</title><rect x=\"" << num(c.x(a)) << "\" y=\""
           << num(c.laneY(r) - h) << "\" width=\"" << num(std::max(0.5, (b - a) * c.unitW))
           << "\" height=\"" << num(2 * h) << "\"/></g>\n";
      }
  for (const Mark &m : opts.marks) {
    auto [x0, x1] = boxOf(m.op);
    const double y0 = c.boxTop(m.op.rank, kindOf(m.op)), h = c.boxH();
    os << "<g class=\"mark" << (m.primary ? " primary" : "") << "\" data-rank=\"" << m.op.rank
       << "\" data-op=\"" << m.op.op << "\"><rect x=\"" << num(x0 - 5) << "\" y=\""
       << num(y0 - 5) << "\" width=\"" << num(x1 - x0 + 10) << "\" height=\"" << num(h + 10)
       << "\" rx=\"3\" fill=\"" << markColor << "\"/>";
    if (m.primary)
      os << "<text class=\"note\" x=\"" << num(x0 - 4) << "\" y=\"" << num(y0 - 8) << "\">"
         << escapeXml(m.note) << "</text>";
    os << "</g>\n";
  }

  // Messages.
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i) {
      if (plan.programs[r].ops[i].kind != ir::OpKind::Send)
        continue;
      std::optional<compiler::MsgEnd> m = messages.partner(r, i);
      if (!m)
        continue;
      const OpRef s{r, i}, d{m->rank, m->op};
      // A message that never completes (on or behind a wait-for cycle): dashed.
      const bool stuck = t.at(s).stuck || t.at(d).stuck;
      const bool crit = onPath.count({d.rank, d.op}) && t.at(d).binding == s;
      // From the edge of the send's box that faces the receiver to the facing
      // edge of the receive's box: box centres in dependency order, the
      // moments the message leaves and arrives in a simulated timeline.
      double x1 = c.x(t.at(s).wire), x2 = c.x(t.at(d).wire);
      if (t.logical) {
        x1 = c.x((t.at(s).start + t.at(s).end) / 2);
        x2 = c.x((t.at(d).start + t.at(d).end) / 2);
      }
      const bool down = d.rank > r;
      const double h = c.boxH();
      const double sTop = c.boxTop(r, ir::OpKind::Send), dTop = c.boxTop(d.rank, kindOf(d));
      const double y1 = down ? sTop + h : sTop, y2 = down ? dTop - 1 : dTop + h + 1;
      const std::string &chunks = contents[d.rank][d.op].chunks;
      std::string text = "message rank " + std::to_string(r) + " op " + std::to_string(i) +
                         " -> rank " + std::to_string(d.rank) + " op " + std::to_string(d.op) +
                         (chunks.empty() ? "" : ": " + chunks);
      if (sim)
        text += "\nleaves " + timeText(t.at(s).wire) + ", arrives " + timeText(t.at(d).wire) +
                ' ' + unitLabel(t.unit);
      os << "<g class=\"msg" << (crit ? " crit" : "") << (stuck ? " stuck" : "")
         << "\" data-from=\"" << r << ':' << i << "\" data-to=\"" << d.rank << ':' << d.op;
      if (sim)
        os << "\" data-leaves=\"" << exact(t.at(s).wire) << "\" data-arrives=\""
           << exact(t.at(d).wire);
      os << "\" data-v1=\"" << attr(text) << "\"><title>" << escapeXml(text)
         << "</title><line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2)
         << "\" y2=\"" << num(y2) << "\" marker-end=\"url(#" << (crit ? "arrow-crit" : "arrow")
         << ")\"/>";
      if (labels && !chunks.empty())
        // Beside the midpoint, below the value labels of the lane above.
        os << "<text class=\"lbl\" x=\"" << num((x1 + x2) / 2 + 4) << "\" y=\""
           << num((y1 + y2) / 2 + 4) << "\">" << escapeXml(chunks) << "</text>";
      os << "</g>\n";
    }

  // Ops.
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i) {
      const OpRef o{r, i};
      const ir::Op &op = plan.programs[r].ops[i];
      const OpTime &ot = t.at(o);
      auto [x0, x1] = boxOf(o);
      const double y0 = c.boxTop(r, op.kind), h = c.boxH();
      std::string text = opText(plan, o, ot, contents[r][i], t);
      if (auto it = marks.find({r, i}); it != marks.end())
        text += "\n" + (it->second->detail.empty() ? it->second->note : it->second->detail);
      os << "<g class=\"op " << kindClass(op.kind) << (onPath.count({r, i}) ? " crit" : "")
         << (usesScratch(op) ? " scratch" : "") << (ot.stuck ? " stuck" : "") << "\" data-rank=\""
         << r << "\" data-op=\"" << i << "\" data-start=\"" << exact(ot.start);
      if (sim)
        os << "\" data-end=\"" << exact(ot.end);
      os << "\" data-v1=\"" << attr(text) << "\"><title>" << escapeXml(text)
         << "</title><rect class=\"box\" x=\"" << num(x0) << "\" y=\"" << num(y0)
         << "\" width=\"" << num(x1 - x0) << "\" height=\"" << num(h) << "\" rx=\""
         << (sim ? "1" : "2") << "\" fill=\"" << kindColor(op.kind) << "\"/>";
      if (labels && contents[r][i].reduction && !contents[r][i].value.empty())
        os << "<text class=\"val\" x=\"" << num(x0) << "\" y=\"" << num(y0 + h + 10) << "\">"
           << escapeXml(contents[r][i].value) << "</text>";
      os << "</g>\n";
    }
  legend(os, legendY, /*summary=*/false, sim);
}

void summary(llvm::raw_ostream &os, const ir::Plan &plan, const Timeline &t,
             const DrawOptions &opts, const std::vector<OpRef> &path) {
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  const uint32_t group = (p + 31) / 32;
  Canvas c;
  c.lanes = (p + group - 1) / group;
  c.laneH = 28;
  const double span = std::max(1.0, t.span);
  const double bucket = t.logical ? std::max(1.0, std::ceil(span / 240)) : span / 240;
  const uint32_t buckets = static_cast<uint32_t>(std::ceil(span / bucket));
  c.unitW = std::min(48.0, 1400 / span);
  const double right = c.x(span) + 16;
  const double width = std::max(right + 24, 860.0);
  const double legendY = c.bottom() + (t.logical ? 30 : 70);
  const double height = legendY + 40;
  auto bucketOf = [&](double time) {
    return std::min(buckets - 1, static_cast<uint32_t>(time / bucket));
  };
  std::set<std::pair<uint32_t, uint32_t>> onPath;
  for (OpRef o : path)
    onPath.insert({o.rank, o.op});

  struct Cell {
    uint32_t counts[5] = {0, 0, 0, 0, 0};
    uint32_t total = 0;
    bool crit = false, marked = false;
  };
  std::map<std::pair<uint32_t, uint32_t>, Cell> cells;
  std::set<std::pair<uint32_t, uint32_t>> markedOps;
  for (const Mark &m : opts.marks)
    markedOps.insert({m.op.rank, m.op.op});
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i) {
      Cell &cell = cells[{r / group, bucketOf(t.times[r][i].start)}];
      ++cell.counts[static_cast<int>(plan.programs[r].ops[i].kind)];
      ++cell.total;
      cell.crit = cell.crit || onPath.count({r, i});
      cell.marked = cell.marked || markedOps.count({r, i});
    }
  uint32_t most = 1;
  for (auto &kv : cells)
    most = std::max(most, kv.second.total);

  std::string sub = subtitleOf(plan, t, path.size()) + "; summarized: " + std::to_string(group) +
                    " ranks per lane";
  header(os, width, height, opts.title.empty() ? defaultTitle(plan) : opts.title, sub);
  auto groupName = [&](uint32_t l) {
    const uint32_t a = l * group, b = std::min(p, a + group) - 1;
    return "ranks " + std::to_string(a) + ".." + std::to_string(b);
  };
  std::vector<std::string> names;
  for (uint32_t l = 0; l < c.lanes; ++l)
    names.push_back(groupName(l));
  if (!t.logical)
    timeAxis(os, c, t, c.bottom() + 8);
  lanes(os, c, right, names);

  // Messages between cells, counted.
  const compiler::Messages messages(plan);
  std::map<std::array<uint32_t, 4>, std::pair<uint32_t, bool>> flows;
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i) {
      if (plan.programs[r].ops[i].kind != ir::OpKind::Send)
        continue;
      std::optional<compiler::MsgEnd> m = messages.partner(r, i);
      if (!m || t.times[r][i].stuck || t.times[m->rank][m->op].stuck)
        continue;
      auto &f = flows[{r / group, bucketOf(t.times[r][i].start), m->rank / group,
                       bucketOf(t.times[m->rank][m->op].start)}];
      ++f.first;
      f.second = f.second || (onPath.count({m->rank, m->op}) && onPath.count({r, i}));
    }
  const size_t maxFlows = 4000;
  if (flows.size() <= maxFlows) {
    for (const auto &[k, f] : flows) {
      const double x1 = c.x((k[1] + 0.85) * bucket), x2 = c.x((k[3] + 0.15) * bucket);
      const std::string text = std::to_string(f.first) +
                               (f.first == 1 ? " message from " : " messages from ") +
                               groupName(k[0]) + " to " + groupName(k[2]);
      os << "<g class=\"msg" << (f.second ? " crit" : "") << "\" data-v1=\"" << attr(text)
         << "\"><title>" << escapeXml(text) << "</title><line x1=\"" << num(x1) << "\" y1=\""
         << num(c.laneY(k[0])) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(c.laneY(k[2]))
         << "\" stroke-opacity=\"0.6\" marker-end=\"url(#" << (f.second ? "arrow-crit" : "arrow")
         << ")\"/></g>\n";
    }
  }
  for (const auto &[k, cell] : cells) {
    int dominant = 0;
    for (int j = 1; j < 5; ++j)
      if (cell.counts[j] > cell.counts[dominant])
        dominant = j;
    std::string text =
        groupName(k.first) + ", " +
        (t.logical ? "steps " + num(k.second * bucket) + ".." + num((k.second + 1) * bucket)
                   : timeText(k.second * bucket) + " .. " + timeText((k.second + 1) * bucket) +
                         ' ' + unitLabel(t.unit)) +
        ": " + std::to_string(cell.total) + " ops (";
    bool first = true;
    for (int j = 0; j < 5; ++j)
      if (cell.counts[j]) {
        text += (first ? "" : ", ") + std::to_string(cell.counts[j]) + " " +
                ir::name(static_cast<ir::OpKind>(j)).str();
        first = false;
      }
    text += ")";
    if (cell.marked)
      text += "\nholds a marked op";
    const double x0 = c.x(k.second * bucket) + 1, w = std::max(2.0, bucket * c.unitW - 2);
    const double y = c.laneY(k.first), h = c.boxH();
    if (cell.marked)
      os << "<rect x=\"" << num(x0 - 4) << "\" y=\"" << num(y - h / 2 - 4) << "\" width=\""
         << num(w + 8) << "\" height=\"" << num(h + 8) << "\" fill=\"" << markColor << "\"/>\n";
    os << "<g class=\"cell" << (cell.crit ? " crit" : "") << "\" data-lane=\"" << k.first
       << "\" data-bucket=\"" << k.second << "\" data-v1=\"" << attr(text) << "\"><title>"
       << escapeXml(text) << "</title><rect x=\"" << num(x0) << "\" y=\"" << num(y - h / 2)
       << "\" width=\"" << num(w) << "\" height=\"" << num(h) << "\" fill=\""
       << kindColor(static_cast<ir::OpKind>(dominant)) << "\" fill-opacity=\""
       << num(0.3 + 0.7 * cell.total / most) << "\" stroke=\""
       << (cell.crit ? llvm::StringRef(criticalColor) : llvm::StringRef("#1f2937"))
       << "\" stroke-width=\"" << (cell.crit ? "2" : "0.5") << "\"/></g>\n";
  }
  if (flows.size() > maxFlows)
    os << "<text x=\"" << num(c.left) << "\" y=\"" << num(c.bottom() + 8) << "\" font-size=\"10\">"
       << flows.size() << " message flows between cells: too many to draw</text>\n";
  legend(os, legendY, /*summary=*/true, /*simulated=*/false);
}

} // namespace

std::string planSvg(const ir::Plan &plan, const Timeline &t, const DrawOptions &opts) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const std::vector<OpRef> path = t.criticalPath();
  if (plan.programs.size() > opts.maxDetailedRanks)
    summary(os, plan, t, opts, path);
  else
    detailed(os, plan, t, opts, path);
  os << "</svg>\n";
  return s;
}

std::string drawPlan(const ir::Plan &plan, const DrawOptions &opts, PictureKind kind,
                     const Timeline *times) {
  std::optional<Timeline> logical;
  if (!times)
    times = &logical.emplace(logicalTimeline(plan, compiler::Messages(plan)));
  std::string svg = planSvg(plan, *times, opts);
  if (kind == PictureKind::Svg)
    return svg;
  return htmlPage(opts.title.empty() ? defaultTitle(plan) : opts.title, svg);
}

} // namespace collc::draw
