// ir/YamlDoc.h: a compact, read-only YAML document for the readers of plans
// and topologies, and their shared syntax errors.
//
// yaml-cpp's YAML::Load builds a tree of reference-counted nodes: for a
// 17 MB plan (ring, 256 ranks) that is 1.4 GB and 8 s, most of it allocating
// and freeing. The subset of YAML that plans are written in is read
// directly (Doc::parseSubset); anything else, and every error, goes to
// yaml-cpp's parser. YamlDoc is built from that parser's events (so it accepts
// what YAML::Load accepts and fails with the same exceptions, except that it
// refuses documents past 32-bit offsets: over 4 GiB of scalar text, or 2^32
// nodes or children) into flat arrays: 20 bytes per node, scalars in one
// string, the children of each collection contiguous. An alias is the node its anchor names, as in
// YAML::Load; a cycle through aliases is harmless because readers only walk
// down a fixed number of levels.
#ifndef COLLC_IR_YAMLDOC_H
#define COLLC_IR_YAMLDOC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::ir::yaml {

class Doc;

/// A node of a Doc (valid while the Doc lives). A default Node is "absent".
class Node {
public:
  Node() = default;
  explicit operator bool() const { return doc_ != nullptr; }

  bool isNull() const;
  bool isScalar() const;
  bool isSequence() const;
  bool isMap() const;
  /// A scalar's text (empty for other nodes).
  llvm::StringRef scalar() const;
  /// Whether a scalar was plain: no quotes and no explicit tag (yaml-cpp's tag "?").
  bool plain() const;
  /// 0-based line and column of the node's start; `hasMark()` is false for
  /// the empty document.
  bool hasMark() const;
  int line() const;
  int column() const;

  /// Elements of a sequence, key/value pairs of a map (0 for other nodes).
  uint32_t size() const;
  Node element(uint32_t i) const; ///< sequence element i
  Node key(uint32_t i) const;     ///< map pair i's key
  Node value(uint32_t i) const;   ///< map pair i's value
  /// The value of the first pair whose key is the scalar `k`, or absent.
  Node lookup(llvm::StringRef k) const;

private:
  friend class Doc;
  Node(const Doc *doc, uint32_t index) : doc_(doc), index_(index) {}
  const Doc *doc_ = nullptr;
  uint32_t index_ = 0;
};

/// Malformed YAML: where (0-based line and column) and what, in the words of
/// a YAML author.
struct SyntaxError {
  int line = 0, column = 0;
  std::string message;
};

/// A problem at a node of a document: where (the node's mark) and what.
struct NodeProblem {
  Node at;
  std::string message;
};

/// A mapping's pairs by key name (at most a few dozen: a linear search).
struct Fields {
  struct Field {
    llvm::StringRef name;
    Node key, value;
  };
  llvm::SmallVector<Field, 12> list;
  const Field *find(llvm::StringRef name) const {
    for (const Field &f : list)
      if (f.name == name)
        return &f;
    return nullptr;
  }
  bool has(llvm::StringRef name) const { return find(name) != nullptr; }
  /// The key node, or the value, of `name`; absent nodes if there is none.
  Node key(llvm::StringRef name) const { return has(name) ? find(name)->key : Node(); }
  Node value(llvm::StringRef name) const { return has(name) ? find(name)->value : Node(); }
};

/// The pairs of mapping `map` into `out`, or the first problem with its keys
/// (`where` names the mapping in the message): a key that is no scalar, one
/// not in `allowed` (empty: any key), or one repeated.
std::optional<NodeProblem> readFields(Node map, llvm::ArrayRef<llvm::StringRef> allowed,
                                      llvm::StringRef where, Fields &out);
/// Whether two nodes are alike down to `depth` levels: kind, plainness,
/// mark, text and children (for comparing the two readers of a Doc).
bool sameTree(Node a, Node b, int depth = 16);
/// "a, b, c".
std::string joined(llvm::ArrayRef<llvm::StringRef> names);

class Doc {
public:
  /// Parses the first document of `text` (as YAML::Load does); throws the
  /// parser's YAML::Exception on malformed input.
  explicit Doc(llvm::StringRef text);
  /// The same without exceptions: null and `error` on malformed input. A tab
  /// in the indentation is named as such (yaml-cpp's message for it, "illegal
  /// block entry" or "end of map not found", does not say so), and so is
  /// nesting past the parser's depth limit.
  static std::unique_ptr<Doc> parse(llvm::StringRef text, SyntaxError &error);
  /// The two readers parse() uses, for tests: the subset of YAML that plans
  /// and topologies are written in, read directly (null for anything else,
  /// malformed input included), and yaml-cpp's event parser (every document;
  /// a null Doc and `error` on malformed input). On the subset both give the
  /// same document, the subset's reader about ten times faster.
  static std::unique_ptr<Doc> parseSubset(llvm::StringRef text);
  static std::unique_ptr<Doc> parseEvents(llvm::StringRef text, SyntaxError &error);
  /// The document's root: a null node without a mark for empty input.
  Node root() const { return Node(this, root_); }

private:
  Doc() = default;
  bool readSubset(llvm::StringRef text);
  void readEvents(llvm::StringRef text);
  friend class Node;
  friend class Builder;
  enum class Kind : uint8_t { Null, Scalar, Sequence, Map };
  struct Entry {
    Kind kind = Kind::Null;
    bool plain = false;
    bool marked = false;
    int line = 0, column = 0;
    uint32_t begin = 0; ///< scalar: offset into text_; collection: into kids_
    uint32_t count = 0; ///< scalar: length; collection: entries in kids_
  };
  std::vector<Entry> nodes_;
  std::vector<uint32_t> kids_; ///< children of each collection, contiguous
  std::string text_;           ///< every scalar's text
  uint32_t root_ = 0;
};

} // namespace collc::ir::yaml

#endif // COLLC_IR_YAMLDOC_H
