//===- JsonReader.h - A JSON reader that remembers where values are -------===//
//
// llvm::json drops source positions and recurses without bound; layout errors
// must point at a line and column, and hostile inputs (deep nesting, huge
// numbers, random bytes) must end in a diagnostic, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LIB_TARGET_LAYOUTJSON_JSONREADER_H
#define RESHARD_LIB_TARGET_LAYOUTJSON_JSONREADER_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace reshard::json {

struct Value {
  enum class Kind { Null, Bool, Integer, Number, String, Array, Object };
  Kind kind = Kind::Null;
  size_t offset = 0; // byte offset of the value's first character
  bool boolean = false;
  int64_t integer = 0;          // Kind::Integer: fits int64_t exactly
  double number = 0;            // Kind::Number: has a fraction, an exponent, or
                                // is an integer outside int64_t
  bool integralLiteral = false; // Kind::Number written without . or e
  std::string string;           // Kind::String, decoded
  std::vector<Value> elements;  // Kind::Array
  std::vector<std::pair<std::string, Value>> members; // Kind::Object, in order

  /// The member named `key`, or nullptr (the last one if repeated).
  const Value *find(llvm::StringRef key) const;
  /// "an integer", "a string", ... for error messages.
  const char *describe() const;
};

struct ParseError {
  size_t offset = 0;
  std::string message;
};

/// Parses `text` as one JSON value (RFC 8259; a leading UTF-8 byte order
/// mark is skipped). Nesting deeper than `maxDepth` is an error rather than
/// a stack overflow, and so is a key repeated within one object.
bool parse(llvm::StringRef text, Value &out, ParseError &error,
           unsigned maxDepth = 64);

} // namespace reshard::json

#endif // RESHARD_LIB_TARGET_LAYOUTJSON_JSONREADER_H
