//===- JsonReader.cpp - RFC 8259 JSON with positions and a depth limit ----===//
#include "JsonReader.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ConvertUTF.h"

#include <cerrno>
#include <cstdlib>

using namespace reshard::json;

const Value *Value::find(llvm::StringRef key) const {
  const Value *found = nullptr;
  for (const auto &[k, v] : members)
    if (k == key)
      found = &v;
  return found;
}

const char *Value::describe() const {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Integer:
    return "an integer";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

namespace {
class Parser {
public:
  Parser(llvm::StringRef text, unsigned maxDepth)
      : text(text), maxDepth(maxDepth) {}

  bool parseDocument(Value &out) {
    if (text.starts_with("\xEF\xBB\xBF"))
      pos = 3;
    skipSpace();
    if (!parseValue(out, 0))
      return false;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the JSON value");
    return true;
  }

  ParseError error;

private:
  bool fail(const std::string &message) {
    error = {pos, message};
    return false;
  }
  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  void skipSpace() {
    while (!atEnd() && (text[pos] == ' ' || text[pos] == '\t' ||
                        text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool consumeWord(llvm::StringRef word) {
    if (!text.substr(pos).starts_with(word))
      return false;
    pos += word.size();
    return true;
  }

  bool parseValue(Value &out, unsigned depth) {
    out.offset = pos;
    if (atEnd())
      return fail("unexpected end of input, expected a value");
    char c = peek();
    if (c == '{' || c == '[') {
      if (depth >= maxDepth)
        return fail("JSON nested deeper than " + std::to_string(maxDepth) +
                    " levels");
      return c == '{' ? parseObject(out, depth + 1)
                      : parseArray(out, depth + 1);
    }
    if (c == '"') {
      out.kind = Value::Kind::String;
      return parseString(out.string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    if (consumeWord("true")) {
      out.kind = Value::Kind::Bool;
      out.boolean = true;
      return true;
    }
    if (consumeWord("false")) {
      out.kind = Value::Kind::Bool;
      return true;
    }
    if (consumeWord("null")) {
      out.kind = Value::Kind::Null;
      return true;
    }
    return fail("invalid JSON value");
  }

  bool parseArray(Value &out, unsigned depth) {
    out.kind = Value::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (peek() == ']') {
      ++pos;
      return true;
    }
    while (true) {
      out.elements.emplace_back();
      if (!parseValue(out.elements.back(), depth))
        return false;
      skipSpace();
      if (peek() == ',') {
        ++pos;
        skipSpace();
        continue;
      }
      if (peek() == ']') {
        ++pos;
        return true;
      }
      return fail(atEnd() ? "unexpected end of input in an array"
                          : "expected ',' or ']' in an array");
    }
  }

  bool parseObject(Value &out, unsigned depth) {
    out.kind = Value::Kind::Object;
    llvm::StringSet<> keys;
    ++pos; // '{'
    skipSpace();
    if (peek() == '}') {
      ++pos;
      return true;
    }
    while (true) {
      if (peek() != '"')
        return fail(atEnd() ? "unexpected end of input in an object"
                            : "expected a string key in an object");
      std::string key;
      size_t keyOffset = pos;
      if (!parseString(key))
        return false;
      if (!keys.insert(key).second) {
        pos = keyOffset;
        return fail("duplicate key \"" + key + "\" in an object");
      }
      skipSpace();
      if (peek() != ':')
        return fail(atEnd() ? "unexpected end of input in an object"
                            : "expected ':' after an object key");
      ++pos;
      skipSpace();
      out.members.emplace_back(std::move(key), Value());
      if (!parseValue(out.members.back().second, depth))
        return false;
      skipSpace();
      if (peek() == ',') {
        ++pos;
        skipSpace();
        continue;
      }
      if (peek() == '}') {
        ++pos;
        return true;
      }
      return fail(atEnd() ? "unexpected end of input in an object"
                          : "expected ',' or '}' in an object");
    }
  }

  bool parseHex4(uint32_t &out) {
    out = 0;
    for (int i = 0; i < 4; ++i, ++pos) {
      char c = peek();
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= c - '0';
      else if (c >= 'a' && c <= 'f')
        out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        out |= c - 'A' + 10;
      else
        return fail("expected four hex digits after \\u");
    }
    return true;
  }

  bool parseString(std::string &out) {
    ++pos; // opening quote
    size_t start = pos;
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      char c = text[pos];
      if (c == '"') {
        ++pos;
        break;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out.push_back(c);
        ++pos;
        continue;
      }
      ++pos;
      if (atEnd())
        return fail("unterminated string");
      char e = peek();
      ++pos;
      switch (e) {
      case '"':
        out.push_back('"');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '/':
        out.push_back('/');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low;
          if (!consumeWord("\\u") || !parseHex4(low) || low < 0xDC00 ||
              low > 0xDFFF)
            return fail("unpaired UTF-16 surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail("unpaired UTF-16 surrogate in \\u escape");
        }
        char buf[4];
        char *ptr = buf;
        llvm::ConvertCodePointToUTF8(cp, ptr);
        out.append(buf, ptr);
        break;
      }
      default:
        --pos;
        return fail("invalid escape in a string");
      }
    }
    llvm::StringRef raw = text.slice(start, pos - 1);
    const auto *begin = reinterpret_cast<const llvm::UTF8 *>(raw.begin());
    const auto *end = reinterpret_cast<const llvm::UTF8 *>(raw.end());
    if (!llvm::isLegalUTF8String(&begin, end)) {
      pos = start + (reinterpret_cast<const char *>(begin) - raw.data());
      return fail("string is not valid UTF-8");
    }
    return true;
  }

  bool parseNumber(Value &out) {
    size_t start = pos;
    bool integral = true;
    if (peek() == '-')
      ++pos;
    if (peek() == '0') {
      ++pos;
      if (peek() >= '0' && peek() <= '9') {
        --pos; // point at the leading zero
        return fail("leading zeros are not allowed in JSON numbers");
      }
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    } else {
      return fail("invalid number");
    }
    if (peek() == '.') {
      integral = false;
      ++pos;
      if (!(peek() >= '0' && peek() <= '9'))
        return fail("expected a digit after '.'");
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos;
      if (peek() == '+' || peek() == '-')
        ++pos;
      if (!(peek() >= '0' && peek() <= '9'))
        return fail("expected a digit in an exponent");
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    }
    std::string digits = text.slice(start, pos).str();
    if (integral) {
      errno = 0;
      long long v = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno != ERANGE) {
        out.kind = Value::Kind::Integer;
        out.integer = v;
        return true;
      }
    }
    out.kind = Value::Kind::Number;
    out.integralLiteral = integral;
    out.number = std::strtod(digits.c_str(), nullptr);
    return true;
  }

  llvm::StringRef text;
  unsigned maxDepth;
  size_t pos = 0;
};
} // namespace

bool reshard::json::parse(llvm::StringRef text, Value &out, ParseError &error,
                          unsigned maxDepth) {
  Parser parser(text, maxDepth);
  if (parser.parseDocument(out))
    return true;
  error = parser.error;
  return false;
}
