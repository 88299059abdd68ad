#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"

using dkp::util::Json;
using dkp::util::JsonValue;
using dkp::util::parse_json;
namespace fs = std::filesystem;

namespace {

// The message of the DataError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const dkp::DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json writer escapes, round-trips doubles exactly and maps non-finite to null") {
  Json j = Json::object();
  j.set("name", "a \"quoted\"\\ line\nnext\t\x01");
  j.set("pi", 3.141592653589793);
  j.set("third", 1.0 / 3.0);
  j.set("n", 42);
  j.set("ok", true);
  j.set("nan", std::numeric_limits<double>::quiet_NaN());
  j.set("list", Json::array().push(1).push("x").push(Json()));
  j.set("n", 43);  // replace keeps one key, in its place
  const std::string s = j.dump();
  const JsonValue back = parse_json(s, "s");
  CHECK(back["name"].get<std::string>() == "a \"quoted\"\\ line\nnext\t\x01");
  CHECK(back["pi"].get<double>() == 3.141592653589793);
  CHECK(back["third"].get<double>() == 1.0 / 3.0);
  CHECK(back["n"].get<int>() == 43);
  CHECK(back["ok"].get<bool>());
  CHECK(back["nan"].is_null());
  CHECK(back["list"].size() == 3);
  std::vector<std::string> keys;
  for (const auto& [k, v] : back.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"name", "pi", "third", "n", "ok", "nan", "list"});
  CHECK(Json::object().dump(0) == "{}");
  CHECK(Json::array().push(1).push(2).dump(0) == "[1,2]");
  CHECK_THROWS(Json(1).set("k", 1));
  CHECK_THROWS(Json::object().push(1));
}

TEST_CASE("json writer: dkp's bytes, not nlohmann's dump") {
  // Doubles with 17 significant digits, integral ones without a point; nlohmann's own dump
  // writes 0.1 and 100.0.
  CHECK(Json(0.1).dump(0) == "0.10000000000000001");
  CHECK(Json(100.0).dump(0) == "100");
  CHECK(Json(-0.0).dump(0) == "-0");
  CHECK(Json(1e300).dump(0) == "1.0000000000000001e+300");
  CHECK(Json(5e-324).dump(0) == "4.9406564584124654e-324");
  CHECK(Json(std::numeric_limits<double>::infinity()).dump(0) == "null");
  // Unsigned values keep their value above INT64_MAX (a seed given as 2^64 - 1).
  CHECK(Json(static_cast<unsigned long long>(18446744073709551615ull)).dump(0) ==
        "18446744073709551615");
  CHECK(Json(static_cast<unsigned long long>(9223372036854775808ull)).dump(0) ==
        "9223372036854775808");
  CHECK(Json(3u).dump(0) == "3");
  CHECK(Json(-7L).dump(0) == "-7");
  // Control characters: \b and \f as \u00XX (nlohmann writes \b, \f).
  CHECK(Json("\b\f\x1f\x7f").dump(0) == "\"\\u0008\\u000c\\u001f\x7f\"");
  // UTF-8 as it is; a byte that is not UTF-8 becomes U+FFFD, so the text stays readable.
  CHECK(Json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80").dump(0) ==
        "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  CHECK(Json("a\xff"
             "b\xc3")
            .dump(0) ==
        "\"a\xef\xbf\xbd"
        "b\xef\xbf\xbd\"");
  CHECK(Json("\xed\xa0\x80").dump(0) == "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");  // surrogate
  CHECK(parse_json(Json("x\xff").dump(0), "s").get<std::string>() == "x\xef\xbf\xbd");
  // Pretty-printed: two spaces, ": ", a final newline, empty containers closed on one line.
  Json j = Json::object();
  j.set("a", 1).set("b", Json::array().push(2.5).push(Json::object())).set("c", Json::array());
  CHECK(j.dump() == "{\n  \"a\": 1,\n  \"b\": [\n    2.5,\n    {}\n  ],\n  \"c\": []\n}\n");
}

TEST_CASE("json writer reproduces the committed result store byte for byte") {
  // Every result.json and manifest.json of the committed store, read and written again.
  const fs::path runs = fs::path(DKP_SOURCE_DIR) / "results" / "runs";
  REQUIRE(fs::is_directory(runs));
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(runs)) {
    const std::string name = e.path().filename().string();
    if (name != "result.json" && name != "manifest.json") continue;
    const std::string text = dkp::util::read_file(e.path());
    INFO(e.path().string());
    CHECK(Json(parse_json(text, e.path().string())).dump() == text);
    ++files;
  }
  CHECK(files >= 100);
}

TEST_CASE("json writer: a result built key by key gives the bytes of a committed result.json") {
  // The head of results/runs/agw-tables/yacht/split0/157fc66a079ad520/result.json, built as
  // `dkp run` builds it (integers, strings, doubles, nested objects).
  Json j = Json::object();
  j.set("config_hash", "157fc66a079ad520").set("dataset", "yacht").set("split", 0);
  j.set("model", "dwp").set("inference", "").set("posterior", "gw").set("depth", 2L);
  j.set("kernel", "se").set("width", size_t(6)).set("inducing", 100L).set("steps", 20000L);
  j.set("seed", uint64_t(0)).set("elbo", 2.0002018820779286).set("elbo_mean", 2.0033578248040222);
  j.set("elbo_se", 0.0026874677812506638).set("elbo_repeats", 10);
  j.set("test_ll", 0.13664434746521978).set("test_rmse", 0.29536953893685686);
  j.set("test_coverage_50", 25.0 / 31.0).set("test_coverage_90", 27.0 / 31.0);
  Json chol = Json::object();
  for (const char* stage : {"train", "final_elbo"}) {
    Json s = Json::object();
    s.set("factorisations", stage[0] == 't' ? 440000L : 220L).set("jittered", 0).set("retries", 0);
    s.set("max_jitter_rel", 0.0);
    chol.set(stage, s);
  }
  j.set("cholesky", chol);
  const std::string want =
      "{\n"
      "  \"config_hash\": \"157fc66a079ad520\",\n"
      "  \"dataset\": \"yacht\",\n"
      "  \"split\": 0,\n"
      "  \"model\": \"dwp\",\n"
      "  \"inference\": \"\",\n"
      "  \"posterior\": \"gw\",\n"
      "  \"depth\": 2,\n"
      "  \"kernel\": \"se\",\n"
      "  \"width\": 6,\n"
      "  \"inducing\": 100,\n"
      "  \"steps\": 20000,\n"
      "  \"seed\": 0,\n"
      "  \"elbo\": 2.0002018820779286,\n"
      "  \"elbo_mean\": 2.0033578248040222,\n"
      "  \"elbo_se\": 0.0026874677812506638,\n"
      "  \"elbo_repeats\": 10,\n"
      "  \"test_ll\": 0.13664434746521978,\n"
      "  \"test_rmse\": 0.29536953893685686,\n"
      "  \"test_coverage_50\": 0.80645161290322576,\n"
      "  \"test_coverage_90\": 0.87096774193548387,\n";
  const std::string text = j.dump();
  CHECK(text.substr(0, want.size()) == want);
  CHECK(text.ends_with(
      "  \"cholesky\": {\n    \"train\": {\n      \"factorisations\": 440000,\n"
      "      \"jittered\": 0,\n      \"retries\": 0,\n      \"max_jitter_rel\": 0\n    },\n"
      "    \"final_elbo\": {\n      \"factorisations\": 220,\n      \"jittered\": 0,\n"
      "      \"retries\": 0,\n      \"max_jitter_rel\": 0\n    }\n  }\n}\n"));
  // The committed file starts with the same lines.
  const fs::path committed = fs::path(DKP_SOURCE_DIR) /
                             "results/runs/agw-tables/yacht/split0/157fc66a079ad520/result.json";
  if (fs::exists(committed)) CHECK(dkp::util::read_file(committed).starts_with(want));
}

TEST_CASE("parse_json names the source, line and column of an error") {
  // A truncated file stops just past its end.
  CHECK(error_of([] { parse_json("{\n  \"a\": 1,\n  \"b\": 2", "r.json"); }) ==
        "r.json:3:9: not valid JSON: syntax error while parsing object - unexpected end of input; "
        "expected '}'");
  CHECK(error_of([] {
          parse_json("{\n  \"a\": 1,\n", "r.json");
        }).starts_with("r.json:3:1: not valid JSON: "));
  CHECK(error_of([] { parse_json("{\n  \"a\": \"0.12", "r.json"); })
            .starts_with("r.json:2:13: not valid JSON: syntax error while parsing value - invalid "
                         "string: missing closing quote"));
  CHECK(error_of([] { parse_json("", "e.json"); })
            .starts_with("e.json:1:1: not valid JSON: syntax error while parsing value - "
                         "unexpected end of input"));
  // A newline inside a string: the newline's own line and column (nlohmann's message would say
  // the next line, column 0).
  CHECK(error_of([] { parse_json("{\"a\":\n \"x\ny\"}", "n.json"); })
            .starts_with("n.json:2:4: not valid JSON: syntax error while parsing value - invalid "
                         "string: control character U+000A (LF) must be escaped"));
  CHECK(error_of([] { parse_json("{\"a\": 1}}", "x.json"); })
            .starts_with("x.json:1:9: not valid JSON: syntax error while parsing value - "
                         "unexpected '}'; expected end of input"));
  // No position for a number out of range, still the source.
  CHECK(error_of([] { parse_json("[1e400]", "big.json"); }) ==
        "big.json: not valid JSON: number overflow parsing '1e400'");
  CHECK(error_of([] { parse_json("{\"a\": [1, 2]}", "ok.json"); }).empty());
}

TEST_CASE("read_json_object and the typed members name the file and what is wrong") {
  const fs::path dir = dkp::test::temp_dir("json");
  const fs::path f = dir / "result.json";
  const std::string p = f.string();
  // A truncated result as dkp run writes it.
  Json j = Json::object();
  j.set("config_hash", "0123456789abcdef").set("test_ll", -1.25).set("steps", 100);
  const std::string whole = j.dump();
  dkp::util::write_file_atomic(f, whole.substr(0, whole.size() - 10));
  CHECK(error_of([&] { dkp::util::read_json_object(f); })
            .starts_with(p + ":4:8: not valid JSON: syntax error while parsing object key - "
                             "invalid string: missing closing quote"));
  dkp::util::write_file_atomic(f, "[1, 2]\n");
  CHECK(error_of([&] { dkp::util::read_json_object(f); }) == p + ": not a JSON object");
  CHECK(error_of([&] { dkp::util::read_json_object(dir / "missing.json"); }) != "");
  // Wrong types.
  dkp::util::write_file_atomic(f,
                               "{\"config_hash\": 12, \"threads\": \"4\", \"ok\": \"x\", "
                               "\"n\": null, \"big\": 18446744073709551615, \"o\": {}}");
  const JsonValue v = dkp::util::read_json_object(f);
  CHECK(error_of([&] { dkp::util::json_string(v, "config_hash", p); }) ==
        p + ": config_hash is a number, not a string");
  CHECK(error_of([&] { dkp::util::json_string(v, "o", p); }) ==
        p + ": o is an object, not a string");
  CHECK(dkp::util::json_string(v, "ok", p) == "x");
  CHECK(dkp::util::json_string(v, "n", p).empty());
  CHECK(dkp::util::json_string(v, "absent", p).empty());
  CHECK(error_of([&] { dkp::util::json_integer(v, "threads", p, 1); }) ==
        p + ": threads is a string, not an integer");
  CHECK(error_of([&] { dkp::util::json_integer(v, "big", p, 1); }) ==
        p + ": big is out of range (18446744073709551615)");
  CHECK(dkp::util::json_integer(v, "absent", p, 7) == 7);
  CHECK(dkp::util::json_integer(parse_json("{\"t\": 3}", "s"), "t", "s", 1) == 3);
}
