// CSV loaders and the sparse-mask spec parser: round trips and every documented error.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>


#include "models/io/error.hpp"
#include "models/workload/sparse_gen.hpp"
#include "models/workload/sparse_io.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim;

namespace {

using test::TempDir;

const TempDir& temp() {
  static const TempDir dir;
  return dir;
}

struct Where {
  std::int64_t line;
  std::string field;
};

template <class F>
Where error_of(F&& f) {
  try {
    f();
  } catch (const models::InputError& e) {
    return {e.line(), e.field()};
  }
  FAIL("expected an InputError");
  return {};
}

}  // namespace

TEST_CASE("kept-positions CSV round trip", "[sparse][io]") {
  const auto kept = models::random_kept(40, 3, 0.5, 8);
  std::ostringstream os;
  models::write_kept_csv(os, kept);
  const auto path = temp().write("kept.csv", "# generated\n" + os.str() + "\n");
  const auto back = models::load_kept_csv(path, 40, 3);
  CHECK(back.q == kept.q);
  CHECK(back.k == kept.k);
  // Header optional, fields trimmed, comments after data.
  const auto p2 = temp().write("kept2.csv", "0, q ,3  # kept\n0,k,1\n0,q,7\n");
  const auto k2 = models::load_kept_csv(p2, 8, 1);
  CHECK(k2.q[0] == std::vector<std::int64_t>{3, 7});
  CHECK(k2.k[0] == std::vector<std::int64_t>{1});
}

TEST_CASE("bucket CSV round trip", "[sparse][io]") {
  const auto b = models::random_buckets(30, 2, 5, 0.0, 3);
  std::ostringstream os;
  models::write_buckets_csv(os, b);
  const auto back = models::load_buckets_csv(temp().write("b.csv", os.str()), 30, 2);
  CHECK(back.q == b.q);
  CHECK(back.k == b.k);
  // Any row order.
  const auto p = temp().write("b2.csv", "head,position,q_bucket,k_bucket\n0,1,4,0\n0,0,2,2\n");
  const auto b2 = models::load_buckets_csv(p, 2, 1);
  CHECK(b2.q[0] == std::vector<std::int64_t>{2, 4});
  CHECK(b2.k[0] == std::vector<std::int64_t>{2, 0});
}

TEST_CASE("bad kept-positions files name file, line and column", "[sparse][io]") {
  auto load = [](const std::string& name, const std::string& text, std::int64_t heads = 2) {
    const auto path = temp().write(name, text);
    return error_of([&] { (void)models::load_kept_csv(path, 10, heads); });
  };
  const std::string ok = "head,kind,position\n0,q,1\n1,k,2\n";
  auto w = load("unsorted.csv", ok + "0,q,5\n0,q,5\n");
  CHECK(w.line == 5);
  CHECK(w.field == "position");
  w = load("range.csv", ok + "1,q,10\n");
  CHECK((w.line == 4 && w.field == "position"));
  w = load("neg.csv", ok + "1,q,-1\n");
  CHECK((w.line == 4 && w.field == "position"));
  w = load("head.csv", ok + "2,q,3\n");
  CHECK((w.line == 4 && w.field == "head"));
  w = load("kind.csv", ok + "0,v,3\n");
  CHECK((w.line == 4 && w.field == "kind"));
  w = load("cols.csv", ok + "0,q\n");
  CHECK((w.line == 4 && w.field == "row"));
  w = load("int.csv", ok + "0,q,3.5\n");
  CHECK((w.line == 4 && w.field == "position"));
  w = load("heads.csv", ok, 3);  // head 2 never appears
  CHECK((w.line == 0 && w.field == "head"));
  w = load("late_header.csv", ok + "head,kind,position\n");
  CHECK((w.line == 4 && w.field == "head"));
  CHECK_THROWS_AS(models::load_kept_csv("/nonexistent/ringsim.csv", 10, 1), models::InputError);
  try {
    (void)models::load_kept_csv(temp().write("u2.csv", "0,q,4\n0,q,2\n"), 10, 1);
    FAIL("expected an InputError");
  } catch (const models::InputError& e) {
    CHECK(e.file().ends_with("u2.csv"));
    CHECK(std::string(e.what()).find("strictly increasing") != std::string::npos);
  }
}

TEST_CASE("bad bucket files name file, line and column", "[sparse][io]") {
  auto load = [](const std::string& name, const std::string& text) {
    const auto path = temp().write(name, text);
    return error_of([&] { (void)models::load_buckets_csv(path, 3, 1); });
  };
  const std::string ok = "0,0,1,1\n0,1,2,2\n";
  auto w = load("missing.csv", ok);
  CHECK((w.line == 0 && w.field == "position"));
  w = load("dup.csv", ok + "0,1,3,3\n");
  CHECK((w.line == 3 && w.field == "position"));
  w = load("negq.csv", ok + "0,2,-1,0\n");
  CHECK((w.line == 3 && w.field == "q_bucket"));
  w = load("negk.csv", ok + "0,2,0,-4\n");
  CHECK((w.line == 3 && w.field == "k_bucket"));
  w = load("pos.csv", ok + "0,3,0,0\n");
  CHECK((w.line == 3 && w.field == "position"));
  w = load("head.csv", ok + "1,2,0,0\n");
  CHECK((w.line == 3 && w.field == "head"));
  w = load("cols.csv", ok + "0,2,0,0,9\n");
  CHECK((w.line == 3 && w.field == "row"));
}

TEST_CASE("sparse mask specs", "[sparse][io][spec]") {
  CHECK(models::MaskSpec::parse("qkdrop:0.5").sparse());
  CHECK(models::MaskSpec::parse("hashfile:x.csv").sparse());
  CHECK_FALSE(models::MaskSpec::parse("causal").sparse());

  const auto qk = models::make_sparse_mask(models::MaskSpec::parse("qkdrop:0.25"), 64, 2, 7);
  CHECK(qk->kind() == models::MaskKind::QKDrop);
  CHECK(qk->heads() == 2);
  CHECK(qk->name() == "qkdrop:0.25");
  const auto& qkm = dynamic_cast<const models::QKDropMask&>(*qk);
  CHECK(qkm.kept().q == models::random_kept(64, 2, 0.25, 7).q);

  const auto h = models::make_sparse_mask(models::MaskSpec::parse("hash:4"), 64, 3, 7);
  CHECK(h->kind() == models::MaskKind::Hash);
  CHECK(h->heads() == 3);
  CHECK(models::make_sparse_mask(models::MaskSpec::parse("hash:4:zipf:1.2"), 64, 1, 7)->kind() == models::MaskKind::Hash);
  CHECK(models::make_sparse_mask(models::MaskSpec::parse("lsh:8"), 64, 1, 7)->kind() == models::MaskKind::Hash);
  CHECK(models::make_sparse_mask(models::MaskSpec::parse("lsh:8:4"), 64, 1, 7)->heads() == 1);

  std::ostringstream kept;
  models::write_kept_csv(kept, models::random_kept(16, 2, 0.5, 1));
  const auto kp = temp().write("spec_kept.csv", kept.str());
  CHECK(models::make_sparse_mask(models::MaskSpec::parse("qkfile:" + kp), 16, 2, 0)->heads() == 2);
  std::ostringstream buckets;
  models::write_buckets_csv(buckets, models::random_buckets(16, 2, 3, 0.0, 1));
  const auto bp = temp().write("spec_buckets.csv", buckets.str());
  CHECK(models::make_sparse_mask(models::MaskSpec::parse("hashfile:" + bp), 16, 2, 0)->heads() == 2);

  auto bad = [](const std::string& spec, std::int64_t n_seq = 16, std::int64_t heads = 2) {
    INFO(spec);
    try {
      (void)models::make_sparse_mask(models::MaskSpec::parse(spec), n_seq, heads, 0);
    } catch (const models::InputError& e) {
      CHECK(e.field() == "mask");
      return e;
    }
    FAIL("expected an InputError");
    return models::InputError("");
  };
  for (const char* spec : {"qkdrop:1.5", "qkdrop:-0.1", "qkdrop:", "qkdrop:abc", "qkdrop:nan", "hash:0", "hash:-2",
                           "hash:x", "hash:4:zipf", "hash:4:zipf:-1", "hash:4:pareto:1", "lsh:3", "lsh:0", "lsh:4:0",
                           "lsh:4:2:1", "qkfile:", "hashfile:/nonexistent/x.csv", "sparse:3"})
    bad(spec);
  bad("hash:4", 16, 0);  // no heads
  // Files: wrong head count, unsorted and out-of-range indices keep their file and line.
  const auto e1 = bad("qkfile:" + kp, 16, 3);
  CHECK(e1.file() == kp);
  CHECK(e1.message().find("head 2") != std::string::npos);
  const auto unsorted = temp().write("spec_unsorted.csv", "0,q,3\n0,q,1\n1,k,0\n");
  const auto e2 = bad("qkfile:" + unsorted);
  CHECK(e2.line() == 2);
  CHECK(e2.message().find("column 'position'") != std::string::npos);
  const auto e3 = bad("hashfile:" + bp, 8, 2);  // positions 8.. out of range
  CHECK(e3.file() == bp);
  CHECK(e3.message().find("outside") != std::string::npos);
}
