// tests/bytecode/MakeCorpus.cpp: `collc-make-loader-corpus DIR` — (re)writes the
// loader fuzzer's seed corpus (fuzz/corpus/loader) from real plans.
#include "tests/bytecode/LoaderCorpus.h"

#include <cstdio>
#include <fstream>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: collc-make-loader-corpus DIR\n");
    return 2;
  }
  for (const auto &[name, bytes] : collc::test::loaderCorpus()) {
    const std::string path = std::string(argv[1]) + "/" + name;
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "collc-make-loader-corpus: cannot write %s\n", path.c_str());
      return 1;
    }
    std::printf("%6zu bytes  %s\n", bytes.size(), path.c_str());
  }
  return 0;
}
