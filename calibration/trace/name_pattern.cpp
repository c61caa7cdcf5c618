#include "calibration/trace/name_pattern.hpp"

#include <stdexcept>
#include <string>

namespace ringsim::calibration {

namespace {

using Set = std::bitset<256>;

unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c - 'A' + 'a') : c; }
bool is_word(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

Set range(unsigned char lo, unsigned char hi) {
  Set s;
  for (unsigned c = lo; c <= hi; ++c) s.set(c);
  return s;
}
Set digits() { return range('0', '9'); }
Set words() { return range('a', 'z') | range('A', 'Z') | digits() | range('_', '_'); }
Set spaces() { return range(' ', ' ') | range('\t', '\r'); }  // \t \n \v \f \r
// ECMAScript's `.`: every character but the line terminators.
Set any() { return ~(range('\n', '\n') | range('\r', '\r')); }
// Case-insensitive: a letter in the set brings its other case.
Set folded(Set s) {
  for (unsigned c = 'a'; c <= 'z'; ++c)
    if (s.test(c) || s.test(c - 'a' + 'A')) s.set(c), s.set(c - 'a' + 'A');
  return s;
}

[[noreturn]] void fail(const std::string& why) { throw std::invalid_argument(why); }

// The parsed pattern: concatenation and alternation hold their parts in one vector each, so the
// tree is as deep as the groups and quantifiers nest (bounded), not as long as the pattern.
struct Node {
  enum Kind { Empty, Char, Class, Begin, End, WordBoundary, NotWordBoundary, Cat, Alt, Repeat } kind = Empty;
  explicit Node(Kind k = Empty) : kind(k) {}
  unsigned char ch = 0;
  Set set;
  std::vector<Node> kids;
  int min = 0, max = 0;  // Repeat: max -1 for unbounded
};

class Parser {
 public:
  explicit Parser(std::string_view p) : p_(p) {}

  Node parse() {
    Node n = alternation(0);
    if (i_ < p_.size()) fail("unbalanced ')' at offset " + std::to_string(i_));
    return n;
  }

 private:
  bool more() const { return i_ < p_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(p_[i_]); }
  unsigned char next() { return static_cast<unsigned char>(p_[i_++]); }

  Node alternation(std::size_t depth) {
    Node alt(Node::Alt);
    alt.kids.push_back(concatenation(depth));
    while (more() && peek() == '|') {
      ++i_;
      alt.kids.push_back(concatenation(depth));
    }
    return alt.kids.size() == 1 ? std::move(alt.kids.front()) : alt;
  }

  Node concatenation(std::size_t depth) {
    Node cat(Node::Cat);
    while (more() && peek() != '|' && peek() != ')') {
      Node atom = this->atom(depth);
      const bool assertion = atom.kind == Node::Begin || atom.kind == Node::End || atom.kind == Node::WordBoundary ||
                             atom.kind == Node::NotWordBoundary;
      if (more() && quantifier_here()) {
        if (assertion) fail("a quantifier after an assertion (^, $, \\b, \\B) at offset " + std::to_string(i_));
        atom = quantified(std::move(atom));
        if (more() && quantifier_here()) fail("nothing to repeat at offset " + std::to_string(i_) + " (two quantifiers in a row)");
      }
      cat.kids.push_back(std::move(atom));
    }
    return cat;
  }

  bool quantifier_here() const {
    const unsigned char c = peek();
    return c == '*' || c == '+' || c == '?' || c == '{';
  }

  int bound() {
    if (!more() || peek() < '0' || peek() > '9') fail("expected a number in {n,m} at offset " + std::to_string(i_));
    long v = 0;
    while (more() && peek() >= '0' && peek() <= '9') {
      v = v * 10 + (next() - '0');
      if (v > static_cast<long>(NamePattern::kMaxRepeat))
        fail("a repetition bound above " + std::to_string(NamePattern::kMaxRepeat));
    }
    return static_cast<int>(v);
  }

  Node quantified(Node atom) {
    Node r(Node::Repeat);
    const unsigned char q = next();
    if (q == '*') r.min = 0, r.max = -1;
    else if (q == '+') r.min = 1, r.max = -1;
    else if (q == '?') r.min = 0, r.max = 1;
    else {  // {n}, {n,}, {n,m}
      if (!more() || peek() < '0' || peek() > '9') fail("'{' starts a repetition {n}, {n,} or {n,m}; write \\{ for the character");
      r.min = r.max = bound();
      if (more() && peek() == ',') {
        ++i_;
        r.max = more() && peek() == '}' ? -1 : bound();
      }
      if (!more() || next() != '}') fail("'{' starts a repetition {n}, {n,} or {n,m}; write \\{ for the character");
      if (r.max >= 0 && r.max < r.min) fail("a repetition {n,m} with m < n");
    }
    if (more() && peek() == '?') ++i_;  // lazy: the same set of matches
    r.kids.push_back(std::move(atom));
    return r;
  }

  Node atom(std::size_t depth) {
    const std::size_t at = i_;
    const unsigned char c = next();
    switch (c) {
      case '(': {
        if (depth + 1 > NamePattern::kMaxDepth) fail("groups nested deeper than " + std::to_string(NamePattern::kMaxDepth));
        if (more() && peek() == '?') {
          if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') i_ += 2;
          else fail("lookaround and named groups ((?=, (?!, (?<) are not supported (offset " + std::to_string(at) + ")");
        }
        Node inner = alternation(depth + 1);
        if (!more() || next() != ')') fail("unbalanced '(' at offset " + std::to_string(at));
        return inner;
      }
      case '[': return char_class(at);
      case '.': return set_node(any());
      case '^': return Node(Node::Begin);
      case '$': return Node(Node::End);
      case '\\': return escape(at);
      case '*':
      case '+':
      case '?':
      case '{': fail("nothing to repeat at offset " + std::to_string(at) + " (write \\" + std::string(1, static_cast<char>(c)) + " for the character)");
      default: {
        Node n(Node::Char);
        n.ch = c;
        return n;
      }
    }
  }

  static Node set_node(const Set& s) {
    Node n(Node::Class);
    n.set = s;
    return n;
  }

  // An escape's character (or set, with `set` non-null). In a class, \b is the backspace.
  bool escaped(std::size_t at, bool in_class, unsigned char& ch, Set& set) {
    if (!more()) fail("a pattern ending in a backslash");
    const unsigned char e = next();
    switch (e) {
      case 'd': set = digits(); return true;
      case 'D': set = ~digits(); return true;
      case 'w': set = words(); return true;
      case 'W': set = ~words(); return true;
      case 's': set = spaces(); return true;
      case 'S': set = ~spaces(); return true;
      case 't': ch = '\t'; return false;
      case 'n': ch = '\n'; return false;
      case 'r': ch = '\r'; return false;
      case 'f': ch = '\f'; return false;
      case 'v': ch = '\v'; return false;
      case 'x': {
        int v = 0;
        for (int k = 0; k < 2; ++k) {
          if (!more()) fail("\\x needs two hexadecimal digits (offset " + std::to_string(at) + ")");
          const unsigned char h = next();
          const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (d < 0) fail("\\x needs two hexadecimal digits (offset " + std::to_string(at) + ")");
          v = v * 16 + d;
        }
        ch = static_cast<unsigned char>(v);
        return false;
      }
      case '0':
        if (more() && peek() >= '0' && peek() <= '9') fail("back-references are not supported (offset " + std::to_string(at) + ")");
        ch = 0;
        return false;
      case 'b':
        if (in_class) {
          ch = '\b';
          return false;
        }
        break;
      default: break;
    }
    if (e >= '1' && e <= '9') fail("back-references are not supported (offset " + std::to_string(at) + ")");
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z'))
      fail(std::string("the escape \\") + static_cast<char>(e) + " is not supported (offset " + std::to_string(at) + ")");
    ch = e;  // punctuation (or any other byte) stands for itself
    return false;
  }

  Node escape(std::size_t at) {
    if (more() && (peek() == 'b' || peek() == 'B')) return Node(next() == 'b' ? Node::WordBoundary : Node::NotWordBoundary);
    unsigned char ch = 0;
    Set set;
    if (escaped(at, false, ch, set)) return set_node(set);
    Node n(Node::Char);
    n.ch = ch;
    return n;
  }

  Node char_class(std::size_t at) {
    bool negated = false;
    if (more() && peek() == '^') ++i_, negated = true;
    Set s;
    while (true) {
      if (!more()) fail("unbalanced '[' at offset " + std::to_string(at));
      if (peek() == ']') {
        ++i_;
        break;
      }
      unsigned char lo = 0;
      Set item;
      bool is_set = false;
      if (peek() == '\\') {
        ++i_;
        is_set = escaped(i_ - 1, true, lo, item);
      } else {
        lo = next();
      }
      if (is_set) {
        s |= item;
        continue;
      }
      // A range lo-hi, unless '-' is last (then it is the character).
      if (i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        unsigned char hi = 0;
        if (peek() == '\\') {
          ++i_;
          if (escaped(i_ - 1, true, hi, item)) fail("a range ending in a class escape (offset " + std::to_string(at) + ")");
        } else {
          hi = next();
        }
        if (hi < lo) fail("a range out of order in [...] (offset " + std::to_string(at) + ")");
        s |= range(lo, hi);
      } else {
        s.set(lo);
      }
    }
    s = folded(s);
    return set_node(negated ? ~s : s);
  }

  std::string_view p_;
  std::size_t i_ = 0;
};

}  // namespace

// Emits the program of a parsed pattern (one instruction list, Pike's layout).
class PatternCompiler {
 public:
  static NamePattern::Inst inst(NamePattern::Op op) {
    NamePattern::Inst i;
    i.op = op;
    return i;
  }

  explicit PatternCompiler(NamePattern& out) : out_(out) {}

  void emit(const Node& n) {
    switch (n.kind) {
      case Node::Empty: return;
      case Node::Char: {
        NamePattern::Inst i = inst(NamePattern::Op::Char);
        i.ch = lower(n.ch);  // compared with the name's character, lowered alike
        push(i);
        return;
      }
      case Node::Class: {
        NamePattern::Inst i = inst(NamePattern::Op::Class);
        i.x = static_cast<std::uint32_t>(out_.classes_.size());
        out_.classes_.push_back(n.set);
        push(i);
        return;
      }
      case Node::Begin: push(inst(NamePattern::Op::Begin)); return;
      case Node::End: push(inst(NamePattern::Op::End)); return;
      case Node::WordBoundary: push(inst(NamePattern::Op::WordBoundary)); return;
      case Node::NotWordBoundary: push(inst(NamePattern::Op::NotWordBoundary)); return;
      case Node::Cat:
        for (const Node& k : n.kids) emit(k);
        return;
      case Node::Alt: {
        std::vector<std::size_t> jumps;
        for (std::size_t k = 0; k < n.kids.size(); ++k) {
          if (k + 1 < n.kids.size()) {
            const std::size_t split = push(inst(NamePattern::Op::Split));
            at(split).x = here();
            emit(n.kids[k]);
            jumps.push_back(push(inst(NamePattern::Op::Jmp)));
            at(split).y = here();
          } else {
            emit(n.kids[k]);
          }
        }
        for (const std::size_t j : jumps) at(j).x = here();
        return;
      }
      case Node::Repeat: {
        const Node& x = n.kids.front();
        for (int k = 0; k < n.min; ++k) emit(x);
        if (n.max < 0) {  // x*: L: split(body, out); body: x; jmp L
          const std::size_t split = push(inst(NamePattern::Op::Split));
          at(split).x = here();
          emit(x);
          NamePattern::Inst back = inst(NamePattern::Op::Jmp);
          back.x = static_cast<std::uint32_t>(split);
          push(back);
          at(split).y = here();
        } else {  // (max - min) optional copies, each skipping to the end
          std::vector<std::size_t> splits;
          for (int k = n.min; k < n.max; ++k) {
            splits.push_back(push(inst(NamePattern::Op::Split)));
            at(splits.back()).x = here();
            emit(x);
          }
          for (const std::size_t s : splits) at(s).y = here();
        }
        return;
      }
    }
  }

  void finish() { push(inst(NamePattern::Op::Match)); }

 private:
  std::uint32_t here() const { return static_cast<std::uint32_t>(out_.program_.size()); }
  NamePattern::Inst& at(std::size_t k) { return out_.program_[k]; }
  std::size_t push(NamePattern::Inst i) {
    if (out_.program_.size() >= NamePattern::kMaxProgram)
      fail("the pattern compiles to more than " + std::to_string(NamePattern::kMaxProgram) +
           " instructions (large counted repetitions)");
    out_.program_.push_back(i);
    return out_.program_.size() - 1;
  }
  NamePattern& out_;
};

NamePattern NamePattern::compile(std::string_view pattern) {
  if (pattern.size() > kMaxPatternChars) fail("a pattern longer than " + std::to_string(kMaxPatternChars) + " characters");
  const Node tree = Parser(pattern).parse();
  NamePattern p;
  PatternCompiler c(p);
  c.emit(tree);
  c.finish();
  return p;
}

bool NamePattern::search(std::string_view text, std::uint64_t* steps) const {
  const std::size_t n = program_.size();
  // The live states of one position: a list, and per instruction the position (+1) it was last
  // added at, so each instruction enters a position's list at most once.
  std::vector<std::uint32_t> cur, nxt, stack;
  cur.reserve(n), nxt.reserve(n), stack.reserve(n);
  std::vector<std::size_t> mark(n, 0);
  std::uint64_t work = 0;
  bool matched = false;
  const auto word_at = [&](std::size_t k) { return k < text.size() && is_word(static_cast<unsigned char>(text[k])); };
  // Follows the non-consuming instructions from `pc` at position `pos` (an explicit stack: no
  // recursion), adding the consuming ones to `list`.
  const auto add = [&](std::vector<std::uint32_t>& list, std::uint32_t start, std::size_t pos) {
    stack.push_back(start);
    while (!stack.empty()) {
      const std::uint32_t pc = stack.back();
      stack.pop_back();
      if (mark[pc] == pos + 1) continue;
      mark[pc] = pos + 1;
      ++work;
      const Inst& in = program_[pc];
      switch (in.op) {
        case Op::Match: matched = true; break;
        case Op::Jmp: stack.push_back(in.x); break;
        case Op::Split:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Op::Begin:
          if (pos == 0) stack.push_back(pc + 1);
          break;
        case Op::End:
          if (pos == text.size()) stack.push_back(pc + 1);
          break;
        case Op::WordBoundary:
        case Op::NotWordBoundary:
          if (((pos > 0 && word_at(pos - 1)) != word_at(pos)) == (in.op == Op::WordBoundary)) stack.push_back(pc + 1);
          break;
        case Op::Char:
        case Op::Class: list.push_back(pc); break;
      }
    }
  };
  for (std::size_t pos = 0;; ++pos) {
    add(cur, 0, pos);  // a match may start at every position
    if (matched || pos == text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    const unsigned char lc = lower(c);
    nxt.clear();
    for (const std::uint32_t pc : cur) {
      ++work;
      const Inst& in = program_[pc];
      if (in.op == Op::Char ? in.ch == lc : classes_[in.x].test(c)) add(nxt, pc + 1, pos + 1);
    }
    if (matched) break;
    cur.swap(nxt);
  }
  if (steps) *steps = work;
  return matched;
}

}  // namespace ringsim::calibration
