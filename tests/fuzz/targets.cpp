#include "targets.hpp"

#include <fstream>
#include <iterator>

#include "data/checksums.hpp"
#include "data/mnist.hpp"
#include "data/uci.hpp"
#include "data/user_dataset.hpp"
#include "experiments/grid.hpp"
#include "experiments/lr_schedule.hpp"
#include "experiments/run_spec.hpp"
#include "experiments/store.hpp"
#include "experiments/verify.hpp"
#include "platform/memory.hpp"
#include "report/claims.hpp"
#include "report/reference.hpp"
#include "report/summary.hpp"
#include "training/adam.hpp"
#include "training/checkpoint.hpp"
#include "training/trace.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace dkp::fuzz {

namespace fs = std::filesystem;

namespace {

fs::path put(const fs::path& file, std::string_view bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  return file;
}

void check(bool ok, const std::string& what) {
  if (!ok) throw FuzzFailure(what);
}

// A checkpoint of two small parameters, as the trainer writes one (the checkpoint target's seed
// and the shapes it is loaded against).
training::Checkpoint small_checkpoint() {
  training::Checkpoint ck;
  ck.step = 7;
  ck.params["a"] = arma::mat(2, 2);
  ck.params["a"](0, 0) = 1.0;
  ck.params["a"](0, 1) = -2.5;
  ck.params["a"](1, 0) = 0.125;
  ck.params["a"](1, 1) = 3.0;
  ck.params["b"] = arma::mat(1, 1);
  ck.params["b"](0, 0) = 0.5;
  ck.adam.t = 7;
  ck.adam.m = ck.params;
  ck.adam.v = ck.params;
  ck.identity = {"0123456789abcdef", std::string(64, 'e')};
  return ck;
}

void grid_yaml(std::string_view in, const fs::path&) {
  experiments::parse_grid(std::string(in), "fuzz.yaml");
}

void run_spec(std::string_view in, const fs::path&) {
  const std::string text(in);
  const auto spec = experiments::RunSpec::parse_canonical(text);
  check(spec.canonical() == text, "parse_canonical accepted text that canonical() does not give");
}

void json(std::string_view in, const fs::path&) {
  util::parse_json(in, "fuzz.json");
}

void result_json(std::string_view in, const fs::path& scratch) {
  experiments::read_result_values(put(scratch / "result.json", in));
}

void trace_csv(std::string_view in, const fs::path&) {
  const auto rows = training::parse_trace_csv(in, "fuzz.csv");
  const auto again = training::parse_trace_csv(training::trace_csv(rows), "again.csv");
  check(again.size() == rows.size(), "trace.csv: rows lost writing back");
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto &a = rows[i], &b = again[i];
    const auto same = [](double x, double y) { return x == y || (x != x && y != y); };
    check(a.step == b.step && same(a.elbo, b.elbo) && same(a.expected_loglik, b.expected_loglik) &&
              same(a.kl, b.kl) && same(a.kl_weight, b.kl_weight) && same(a.lr, b.lr),
          "trace.csv: a row changed writing back");
  }
}

void checkpoint(std::string_view in, const fs::path& scratch) {
  const fs::path file = put(scratch / "checkpoint.bin", in);
  training::read_checkpoint_header(file);
  training::load_checkpoint(file, small_checkpoint().params);
}

void claims_yaml(std::string_view in, const fs::path&) {
  report::parse_claims(std::string(in), "claims.yaml");
}

void explanations_csv(std::string_view in, const fs::path&) {
  report::parse_explanations(std::string(in), "explanations.csv");
}

void reference_csv(std::string_view in, const fs::path& scratch) {
  report::load_reference_csv(put(scratch / "reference.csv", in));
}

void checksums(std::string_view in, const fs::path&) {
  data::parse_checksums(std::string(in));
}

void lr_schedule(std::string_view in, const fs::path&) {
  const auto s = experiments::parse_lr_schedule(std::string(in));
  const auto again = experiments::parse_lr_schedule(experiments::format_lr_schedule(s));
  check(again.size() == s.size(), "lr schedule: points lost writing back");
}

void byte_size(std::string_view in, const fs::path&) {
  platform::parse_byte_size(in);
}

void adam_state(std::string_view in, const fs::path&) {
  const auto a = training::AdamState::deserialise(std::string(in));
  check(training::AdamState::deserialise(a.serialise()).serialise() == a.serialise(),
        "adam state: serialise does not round-trip");
}

// The committed toy cell whose files seed the JSON targets (small files).
const char* const kToyCell = "results/runs/toy/toy/split0/06b65cf93a57bd3f/";

// A manifest.json read as the store reads a finished cell's (its canonical configuration must
// hash to the cell's name, which a real result.json beside it also carries) and as `grid verify`
// reads its provenance.
void manifest(std::string_view in, const fs::path& scratch) {
  const fs::path dir = scratch / "g" / "toy" / "split0" / "06b65cf93a57bd3f";
  fs::create_directories(dir);
  fs::copy_file(fs::path(DKP_SOURCE_DIR) / kToyCell / "result.json", dir / "result.json",
                fs::copy_options::overwrite_existing);
  put(dir / "manifest.json", in);
  experiments::read_provenance(dir / "manifest.json");  // fields "" when unreadable
  const std::string problem = experiments::finished_cell_problem(dir);
  const auto cell = experiments::read_finished_cell(dir);
  check(cell.has_value() == problem.empty(), "manifest: read_finished_cell and its problem differ");
  if (!problem.empty()) throw Error(problem);  // refused, with its reason
  check(cell->spec.hash() == "06b65cf93a57bd3f", "manifest: a cell read under another hash");
}

void uci_table(std::string_view in, const fs::path& scratch) {
  data::read_table(put(scratch / "data.txt", in));
}

void index_file(std::string_view in, const fs::path& scratch) {
  data::read_index_file(put(scratch / "index_train_0.txt", in));
}

void predict_input(std::string_view in, const fs::path& scratch) {
  data::read_points(put(scratch / "input.csv", in));
}

// A big-endian 32-bit integer, as IDX headers store them.
std::string be32(uint32_t v) {
  return {char(v >> 24), char((v >> 16) & 0xff), char((v >> 8) & 0xff), char(v & 0xff)};
}

// Two 2 x 2 images in IDX (magic 0x803) and their two labels (magic 0x801).
std::string idx_images() {
  return be32(0x803) + be32(2) + be32(2) + be32(2) +
         std::string("\x00\x40\x80\xff\x10\x20\x30\x40", 8);
}
std::string idx_labels() {
  return be32(0x801) + be32(2) + std::string("\x03\x07", 2);
}

void mnist_idx(std::string_view in, const fs::path& scratch) {
  const fs::path labels = put(scratch / "labels.idx", idx_labels());
  data::read_idx_pair(put(scratch / "images.idx", in), labels);
}

// Two Rectangle-Images lines: 784 pixels and a label each.
std::string amat_seed() {
  std::string s;
  for (int line = 0; line < 2; ++line) {
    for (int p = 0; p < 784; ++p) s += (p % 3 == line ? "0.5 " : "0 ");
    s += line == 0 ? "0\n" : "1\n";
  }
  return s;
}

void amat_images(std::string_view in, const fs::path& scratch) {
  data::read_amat_images(put(scratch / "images.amat", in), 2);
}

const char* const kUserYaml =
    "file: d.csv\ntask: regression\ntarget: y\nsplits: {kind: kfold, count: 2, seed: 0}\n";
const char* const kUserCsv = "a,b,y\n1,2,3\n2,3,4.5\n3,1,0\n4,4,-1\n5,0,2\n6,2,1e-3\n";

void user_dataset(const fs::path& dir) {
  const auto spec = data::read_user_dataset_spec(dir / "d.yaml");
  const auto ds = data::load_user_dataset(spec);
  for (int k = 0; k < 2 && k < int(ds.spec.splits.count); ++k) data::user_split(ds, k);
}

void user_dataset_yaml(std::string_view in, const fs::path& scratch) {
  put(scratch / "user" / "d.csv", kUserCsv);
  put(scratch / "user" / "d.yaml", in);
  user_dataset(scratch / "user");
}

void user_dataset_csv(std::string_view in, const fs::path& scratch) {
  put(scratch / "user" / "d.yaml", kUserYaml);
  put(scratch / "user" / "d.csv", in);
  user_dataset(scratch / "user");
}

std::string checkpoint_seed() {
  const fs::path tmp = fs::temp_directory_path() / "dkp-fuzz-checkpoint-seed.bin";
  training::save_checkpoint(tmp, small_checkpoint());
  std::ifstream f(tmp, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  fs::remove(tmp);
  return s;
}

std::vector<Target> make_targets() {
  const std::string cell = kToyCell;
  return {
      {"grid-yaml", {"experiments/smoke.yaml", "experiments/toy.yaml"}, {}, grid_yaml},
      {"run-spec",
       {},
       {experiments::RunSpec::parse_canonical(
            "dkp-run-v1\ndataset=yacht\nsplit=0\nmodel=sgp\ninference=\nposterior=\ndepth=1\n"
            "kernel=se\nsteps=10\nlr_schedule=0:0.01\nkl_anneal=0\ntrain_samples=1\n"
            "test_samples=1\ninducing=10\nbatch=10\nwidth=input\nseed=0\n")
            .canonical()},
       run_spec},
      {"json", {cell + "manifest.json"}, {"{\"a\": [1, 2.5e-3, null, true]}"}, json},
      {"result-json",
       {cell + "result.json"},
       {"{\"config_hash\": \"0123456789abcdef\", \"data_sha256\": \"ab\", \"elbo\": 1.5, "
        "\"test_ll\": -0.5, \"n_train\": 10}"},
       result_json},
      {"trace-csv",
       {cell + "trace.csv"},
       {"step,elbo,expected_loglik,kl,kl_weight,lr\n10,-1.5,-1,0.5,1,0.01\n20,-1.25,-1,0.25,1,"
        "0.001\n"},
       trace_csv},
      {"checkpoint", {}, {checkpoint_seed()}, checkpoint},
      {"claims-yaml", {"results/reference/claims.yaml"}, {}, claims_yaml},
      {"explanations-csv", {"results/explanations.csv"}, {}, explanations_csv},
      {"reference-csv", {"results/reference/deep-kernel-processes.csv"}, {}, reference_csv},
      {"checksums", {"data-scripts/SHA256SUMS"}, {}, checksums},
      {"lr-schedule", {}, {"0:0.01,10000:0.001", "0:1e-3"}, lr_schedule},
      {"byte-size", {}, {"512M", "1.5G", "8GiB"}, byte_size},
      {"adam-state", {}, {small_checkpoint().adam.serialise()}, adam_state},
      {"user-dataset-yaml", {}, {kUserYaml}, user_dataset_yaml},
      {"user-dataset-csv", {}, {kUserCsv}, user_dataset_csv},
      {"manifest", {cell + "manifest.json"}, {}, manifest},
      {"uci-table", {}, {"1 2 3\n4 5 6\n0.5 -1e-3 7\n"}, uci_table},
      {"index-file", {}, {"0\n2\n5\n"}, index_file},
      {"predict-input", {}, {"0.5,1.5\n-2,3e-1\n", "x,y\n1,2\n"}, predict_input},
      {"mnist-idx", {}, {idx_images()}, mnist_idx},
      {"amat-images", {}, {amat_seed()}, amat_images},
  };
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> t = make_targets();
  return t;
}

std::vector<std::string> seed_corpus(const Target& t) {
  std::vector<std::string> corpus = t.seeds;
  for (const auto& f : t.seed_files) {
    std::ifstream in(fs::path(DKP_SOURCE_DIR) / f, std::ios::binary);
    if (!in) throw Error("fuzz target " + t.name + ": cannot read its seed file " + f);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return corpus;
}

const Target* find_target(const std::string& name) {
  for (const auto& t : targets())
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace dkp::fuzz
