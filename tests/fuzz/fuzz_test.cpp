// The fuzz targets (targets.hpp) run by a deterministic driver inside `make test`: for each, its
// seeds and 10,000 inputs mutated from them with a fixed seed (bit flips, byte changes, cuts,
// duplications, insertions of bytes that matter to the formats, splices of two seeds). Every input
// must be parsed or refused with a dkp::Error; another exception, a broken round trip or a crash
// fails the test and prints the input. DKP_FUZZ_RUNS=N changes the count (libFuzzer, `make fuzz`,
// runs them for longer with coverage guidance).
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <typeinfo>

#include "targets.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
namespace fz = dkp::fuzz;

namespace {

std::string mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  static const std::string tokens[] = {
      "\n",   ",",    ":",      "{",    "}",   "[",  "]",  "\"", "\\",
      "-",    "0",    "1e308",  "nan",  "inf", "-1", " ",  "\t", "\0",
      "\xff", "null", "0x1p+0", "  - ", "#",   "&a", "*a", "!!", "99999999999999999999"};
  auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
  std::string s = corpus[pick(corpus.size())];
  const int edits = 1 + int(pick(4));
  for (int e = 0; e < edits; ++e) {
    switch (pick(7)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= char(1u << pick(8));
        break;
      case 1:  // replace a byte
        if (!s.empty()) s[pick(s.size())] = char(pick(256));
        break;
      case 2: {  // cut a range
        if (s.empty()) break;
        const size_t a = pick(s.size()), n = 1 + pick(std::min<size_t>(s.size() - a, 64));
        s.erase(a, n);
        break;
      }
      case 3: {  // duplicate a range
        if (s.empty()) break;
        const size_t a = pick(s.size()), n = 1 + pick(std::min<size_t>(s.size() - a, 64));
        s.insert(a, s.substr(a, n));
        break;
      }
      case 4: {  // insert a token
        const std::string& t = tokens[pick(std::size(tokens))];
        s.insert(pick(s.size() + 1), t.empty() ? std::string(1, '\0') : t);
        break;
      }
      case 5: {  // splice with another seed
        const std::string& o = corpus[pick(corpus.size())];
        s = s.substr(0, pick(s.size() + 1)) + o.substr(pick(o.size() + 1));
        break;
      }
      default:  // truncate
        s.resize(pick(s.size() + 1));
    }
  }
  return s;
}

std::string printable(const std::string& s) {
  return dkp::printable_message(s.substr(0, 400)) + (s.size() > 400 ? "..." : "");
}

long runs() {
  const char* e = std::getenv("DKP_FUZZ_RUNS");
  return e ? std::atol(e) : 10000;
}

}  // namespace

TEST_CASE("fuzz: every target takes its seeds, and mutated inputs are parsed or refused") {
  const fs::path scratch = dkp::test::temp_dir("fuzz");
  for (const fz::Target& t : fz::targets()) {
    const std::vector<std::string> corpus = fz::seed_corpus(t);
    REQUIRE(!corpus.empty());
    // The seeds are valid inputs: accepted.
    for (const auto& s : corpus) {
      INFO(t.name, " seed: ", printable(s));
      CHECK_NOTHROW(t.run(s, scratch / t.name));
    }
    std::mt19937_64 rng(12345);
    long refused = 0, accepted = 0, defects = 0;
    for (long i = 0; i < runs(); ++i) {
      const std::string input = mutate(corpus, rng);
      try {
        t.run(input, scratch / t.name);
        ++accepted;
      } catch (const dkp::Error&) {
        ++refused;
      } catch (const std::exception& e) {
        ++defects;
        if (defects <= 3) {
          const std::string what = e.what(), type = typeid(e).name();
          FAIL_CHECK(t.name << ": input " << i << " threw " << type << ": " << what
                            << "\n--- input ---\n"
                            << printable(input));
        }
      }
    }
    MESSAGE(t.name << ": " << runs() << " inputs, " << accepted << " accepted, " << refused
                   << " refused, " << defects << " defects");
    CHECK(defects == 0);
  }
}
