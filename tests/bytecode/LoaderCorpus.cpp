// tests/bytecode/LoaderCorpus.cpp: the seed corpus of the loader fuzzer.
#include "tests/bytecode/LoaderCorpus.h"

#include "compiler/Lower.h"
#include "ir/PlanIO.h"
#include "schedules/Generators.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

namespace collc::test {

const char *const encodingPathsPlan = R"(format: collc-plan/1
collective: allreduce
algorithm: encoding-paths
ranks: 3
chunks: 300
scratch: 200
commutative: false
in_place: false
programs:
  0:
    - {op: copy, buf: tmp, chunk: 0, count: 150, src: in, src_chunk: 150}
    - {step: 0, op: send, to: 1, buf: tmp, chunk: 5}
    - {step: 0, op: send, to: 2, buf: in, chunk: 299}
    - {step: 100000, op: recv_reduce, from: 2, buf: out, chunk: 7, order: buf_first}
    - {step: 100001, op: recv_reduce, from: 1, buf: out, chunk: 8, count: 2, order: recv_first}
    - {after: [3, 0], op: reduce, buf: out, chunk: 10, src: tmp, src_chunk: 3, order: src_first}
    - {after: [5], op: reduce, buf: out, chunk: 200, count: 100, src: in, order: buf_first}
    - {op: copy, buf: out, chunk: 0, src: out, src_chunk: 299}
    - {step: 100001, op: reduce, buf: out, chunk: 20, src: tmp, src_chunk: 30, dst: tmp, dst_chunk: 150, order: buf_first}
    - {op: reduce, buf: in, chunk: 21, count: 2, src: out, dst: tmp, order: src_first}
    - {after: [8], op: recv_reduce, from: 2, buf: tmp, chunk: 1, dst: out, dst_chunk: 250, order: recv_first}
    - {op: recv_reduce, from: 1, buf: out, chunk: 40, dst: tmp, order: buf_first}
  1:
    - {step: 3, op: recv, from: 0, buf: out, chunk: 5}
    - {step: 3, op: send, to: 0, buf: out, chunk: 8, count: 2}
    - {op: send, to: 0, buf: out, chunk: 9}
  2:
    - {op: recv, from: 0, buf: tmp, chunk: 199}
    - {after: [0], op: send, to: 0, buf: tmp, chunk: 199}
    - {op: send, to: 0, buf: in, chunk: 3}
)";

std::vector<std::pair<std::string, std::vector<uint8_t>>> loaderCorpus() {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  auto add = [&](std::string name, llvm::Expected<ir::Plan> plan) {
    if (!plan) {
      llvm::errs() << name << ": " << llvm::toString(plan.takeError()) << '\n';
      std::abort();
    }
    files.emplace_back(std::move(name), compiler::lower(*plan));
  };
  for (const sched::Algorithm &a : sched::algorithms()) {
    sched::GenOptions o;
    o.ranks = 3;
    o.root = ir::hasRoot(a.collective) ? 1 : 0;
    if (!a.accepts(o))
      continue; // the file's `require` refuses p = 3
    add((ir::name(a.collective) + "-" + a.name + "-p3.cplan").str(),
        sched::generate(a.collective, a.name, o));
  }
  sched::GenOptions one;
  add("allreduce-ring-p1.cplan", sched::generate(ir::Collective::Allreduce, "ring", one));
  add("encoding-paths.cplan", ir::parsePlan(encodingPathsPlan, "encoding-paths"));
  // Partial plans (docs/bytecode.md, "Partial plans"): one rank's program
  // with its peers' (recursive doubling: relative and absolute peers, tmp).
  for (uint32_t own : {0u, 5u}) {
    sched::GenOptions o;
    o.ranks = 7;
    llvm::Expected<ir::Plan> plan =
        sched::generate(ir::Collective::Allreduce, "recursive_doubling", o);
    if (!plan) {
      llvm::errs() << llvm::toString(plan.takeError()) << '\n';
      std::abort();
    }
    std::vector<uint32_t> sections{own};
    for (const ir::Op &op : plan->programs[own].ops)
      if (ir::isMessage(op.kind))
        sections.push_back(op.peer);
    std::sort(sections.begin(), sections.end());
    sections.erase(std::unique(sections.begin(), sections.end()), sections.end());
    files.emplace_back("allreduce-recursive_doubling-p7-partial" + std::to_string(own) +
                           ".cplan",
                       compiler::lowerPartial(*plan, own, sections));
  }
  return files;
}

} // namespace collc::test
