#pragma once
// A kernel-name pattern of the class rules (configs/trace/kernel_classes.json), matched in time
// linear in the name whatever the pattern. std::regex backtracks and recurses once per character:
// a name of tens of thousands of characters overflowed its stack, and a pattern such as (a+)+b
// took exponential time on a long run of a's. Here a pattern compiles to a small automaton
// (Thompson's construction) that is simulated over the name once, keeping the set of live states
// (at most one entry per instruction), so a search costs at most (name length + 1) x 2 x the
// program's size, with no recursion and no backtracking.
//
// The regular-expression subset (ECMAScript syntax, what the rules need), matched anywhere in the
// name and case-insensitively (ASCII letters), as std::regex_search with icase did:
//   literal characters; `.` (any character but \n and \r); `[...]` and `[^...]` with ranges and
//   the class escapes; `\d \D \w \W \s \S`; `\t \n \r \f \v \0 \xHH`; a backslash before any
//   other punctuation for itself; `^` and `$` (the name's start and end); `\b \B`; groups `(...)`
//   and `(?:...)`; alternation `|`; quantifiers `* + ? {n} {n,} {n,m}` (bounds up to 1000) and
//   their lazy forms (a search asks only whether a match exists, which laziness does not change).
// Refused with the reason (std::invalid_argument): back-references, lookaround, named groups,
// other escapes (\u, \c, \k, ...), unbalanced parentheses or brackets, a quantifier with nothing
// to repeat, a pattern longer than 4096 characters, groups nested deeper than 64, and a compiled
// program of more than 50000 instructions (counted repetition copies its operand).
#include <bitset>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ringsim::calibration {

class NamePattern {
 public:
  static constexpr std::size_t kMaxPatternChars = 4096, kMaxDepth = 64, kMaxRepeat = 1000, kMaxProgram = 50000;

  // std::invalid_argument with the reason (without the pattern: the caller names it and where).
  [[nodiscard]] static NamePattern compile(std::string_view pattern);

  // Whether the pattern matches anywhere in `text`. `steps`, when given, receives the work done
  // (instructions visited), which never exceeds 2 x program_size() x (text.size() + 1).
  [[nodiscard]] bool search(std::string_view text, std::uint64_t* steps = nullptr) const;
  [[nodiscard]] std::size_t program_size() const noexcept { return program_.size(); }

 private:
  enum class Op : std::uint8_t { Char, Class, Split, Jmp, Match, Begin, End, WordBoundary, NotWordBoundary };
  struct Inst {
    Op op = Op::Match;
    unsigned char ch = 0;   // Char: the lower-case character
    std::uint32_t x = 0;    // Class: index into classes_; Split, Jmp: target
    std::uint32_t y = 0;    // Split: second target
  };
  friend class PatternCompiler;
  std::vector<Inst> program_;
  std::vector<std::bitset<256>> classes_;
};

}  // namespace ringsim::calibration
