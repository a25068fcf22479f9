// tools/collc/CmdDisasm.cpp: `collc disasm` — .cplan bytecode back to plan text.
#include "tools/collc/Commands.h"

#include "compiler/Disasm.h"
#include "ir/PlanIO.h"
#include "runtime/bytecode/Listing.h"
#include "runtime/bytecode/Loader.h"
#include "runtime/bytecode/Bundle.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &DisasmCommand() {
  static llvm::cl::SubCommand sub(
      "disasm", "Print a compiled .cplan plan as plan text format v1 (exit 0 printed, 1 "
                "corrupt or foreign file, 2 unreadable input)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("FILE.cplan|-"),
                           cl::sub(DisasmCommand()), cl::cat(category()));
cl::opt<std::string> output("o", cl::desc("Output file (default: standard output)"),
                            cl::value_desc("FILE"), cl::init("-"), cl::sub(DisasmCommand()),
                            cl::cat(category()));
cl::opt<bool> listing("listing",
                      cl::desc("Print the bytecode itself: offsets, bytes and mnemonics"),
                      cl::sub(DisasmCommand()), cl::cat(category()));
} // namespace

int runDisasm() {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(input, /*IsText=*/false);
  if (!buf) {
    llvm::errs() << "collc: cannot read '" << input << "': " << buf.getError().message()
                 << '\n';
    return Misuse;
  }
  llvm::StringRef data = (*buf)->getBuffer();
  const llvm::StringRef name = input == "-" ? llvm::StringRef("<stdin>") : input;
  if (rt::looksLikeBundle(std::span<const uint8_t>(
          reinterpret_cast<const uint8_t *>(data.data()), data.size()))) {
    llvm::errs() << "collc: " << name
                 << " is a bundle (.cbundle), not a compiled plan: 'collc bundle --list "
                 << name << "' lists its plans\n";
    return Misuse;
  }
  rt::Proof proof;
  llvm::Expected<ir::Plan> plan = compiler::disassemble(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data.data()), data.size()),
      &proof);
  if (!plan) {
    llvm::errs() << "collc: " << name << ": " << llvm::toString(plan.takeError()) << '\n';
    return Refused;
  }
  if (listing) {
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t *>(data.data()),
                                         data.size());
    rt::LoadedPlan loaded;
    if (!rt::load(bytes, loaded).ok()) // disassemble() accepted it, so this cannot fail
      return Refused;
    return writeOutput(output, rt::listing(bytes, loaded)) ? Success : Misuse;
  }
  // The proof status as a comment line: the text stays a plan the reader
  // takes back, the printed plan itself is the canonical one.
  return writeOutput(output, "# " + compiler::describeProof(plan->shape, proof) + "\n" +
                                 ir::printPlan(*plan))
             ? Success
             : Misuse;
}

} // namespace collc::tool
