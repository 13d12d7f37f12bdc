// difftest: differential testing of cuda-shim against NVIDIA's driver (docs/difftest.md).
// One binary: it generates op sequences, runs each in a fresh process of itself on a given
// libcuda.so.1 ("system" = the dynamic linker's, i.e. NVIDIA's; or a folder holding ours),
// compares two drivers' records, minimizes divergences and replays the kept cases; `kernel`
// does the same for PTX kernels (difftest_kernel.hpp).
//   g++ -std=c++20 -O1 -I<cuda include> tools/difftest/difftest.cpp -o difftest -ldl -lpthread
#include <fcntl.h>
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "difftest_exec.hpp"
#include "difftest_gen.hpp"

using namespace difftest;
namespace fs = std::filesystem;
using Recs = std::vector<std::string>;
using Clock = std::chrono::steady_clock;

static std::string g_self, g_tmp;
static std::atomic<unsigned> g_counter{0};

static std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> v;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}
static std::vector<std::string> ops_of(const std::vector<std::string>& lines) {
  std::vector<std::string> v;
  for (auto& l : lines) if (!l.empty() && l[0] != '#') v.push_back(l);
  return v;
}
static void write_lines(const std::string& path, const std::vector<std::string>& v, const std::string& head = "") {
  std::ofstream o(path);
  o << head;
  for (auto& l : v) o << l << "\n";
}
static std::string op_name(const std::string& line) {
  std::istringstream in(line);
  std::string a, b;
  in >> a >> b;
  return a == "peer" ? "peer:" + b : a;
}
static double secs(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Executes a sequence in this process: an init record, then one record per op.
static int cmd_exec(const std::string& lib, const std::string& seq, const std::string& outp, const std::string& fault) {
  FILE* f = fopen(outp.c_str(), "w");
  if (!f) return 2;
  Exec ex;
  ex.fault = fault == "-" ? "" : fault;
  std::string init = ex.init(lib);
  int drv = 0;
  if (ex.api.cuDriverGetVersion) ex.api.cuDriverGetVersion(&drv);
  fprintf(f, "{\"i\":-1,\"op\":\"init\",%s,\"drv\":%d}\n", init.c_str(), drv);
  fflush(f);
  if (init.find("\"rc\":0") == std::string::npos) return 3;
  auto ops = ops_of(lines_of(seq));
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string rec = ex.run(ops[i]);
    fprintf(f, "{\"i\":%zu,\"op\":\"%s\"%s%s}\n", i, op_name(ops[i]).c_str(), rec.empty() ? "" : ",", rec.c_str());
    fflush(f);
    if (ex.stop) break;  // the machine lacks what the case needs (need_devices)
  }
  ex.stop_peer();
  fclose(f);
  return 0;
}

// Runs ops on lib in a fresh process of this binary, so that a crash or a hang ends one sequence
// only. The records end with {"op":"exit"} or with the op that crashed or hung.
static Recs run_isolated(const std::string& lib, const std::vector<std::string>& ops, const std::string& fault = "-", int timeout_s = 30) {
  std::string base = g_tmp + "/r" + std::to_string(g_counter++);
  write_lines(base + ".seq", ops);
  std::string seq = base + ".seq", outp = base + ".out", errp = base + ".err";
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int dn = open("/dev/null", O_RDWR), ef = open(errp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(dn, 0); dup2(dn, 1); dup2(ef, 2);
    execl(g_self.c_str(), "difftest", "exec", lib.c_str(), seq.c_str(), outp.c_str(), fault.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  int st = 0;
  bool timed_out = false;
  auto t0 = Clock::now();
  for (useconds_t nap = 200; waitpid(pid, &st, WNOHANG) == 0; nap = std::min<useconds_t>(nap * 2, 20000)) {
    if (secs(t0) > timeout_s) { kill(-pid, SIGKILL); waitpid(pid, &st, 0); timed_out = true; break; }
    usleep(nap);
  }
  kill(-pid, SIGKILL);  // a peer process left behind
  Recs recs = lines_of(outp);
  std::string status = timed_out ? "timeout" : WIFSIGNALED(st) ? "crash SIG" + std::to_string(WTERMSIG(st))
                     : WEXITSTATUS(st) ? "exit " + std::to_string(WEXITSTATUS(st)) : "ok";
  size_t done = recs.empty() ? 0 : recs.size() - 1;
  if (status != "ok" && done < ops.size())
    recs.push_back("{\"i\":" + std::to_string(done) + ",\"op\":\"" + op_name(ops[done]) + "\",\"crash\":\"" + status + "\"}");
  else
    recs.push_back("{\"i\":" + std::to_string(ops.size()) + ",\"op\":\"exit\",\"status\":\"" + status + "\"}");
  unlink(seq.c_str()); unlink(outp.c_str());
  if (!getenv("DIFFTEST_KEEP_ERR")) unlink(errp.c_str());  // with CUDA_SHIM_EXPLAIN=1: the reasons
  return recs;
}

static void parallel(size_t n, int jobs, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> ts;
  for (int j = 0; j < std::max(jobs, 1); ++j)
    ts.emplace_back([&] { for (size_t i; (i = next++) < n;) fn(i); });
  for (auto& t : ts) t.join();
}

// ---- comparing -------------------------------------------------------------------------------

static std::vector<std::pair<std::string, std::string>> fields(const std::string& rec) {
  std::vector<std::pair<std::string, std::string>> v;
  std::string s = rec.size() >= 2 ? rec.substr(1, rec.size() - 2) : "";
  std::istringstream in(s);
  for (std::string kv; std::getline(in, kv, ',');) {
    size_t c = kv.find("\":");
    if (c == std::string::npos) continue;
    std::string k = kv.substr(1, c - 1), val = kv.substr(c + 2);
    if (val.size() >= 2 && val[0] == '"') val = val.substr(1, val.size() - 2);
    v.push_back({k, val});
  }
  return v;
}
static std::string get(const std::string& rec, const std::string& key) {
  for (auto& [k, v] : fields(rec)) if (k == key) return v;
  return "";
}

struct Div {
  int k = -1;  // index into the records (0 is init), -1: none
  std::string op, field, va, vb;
};
static Div first_div(const Recs& A, const Recs& B) {
  Div d;
  for (size_t k = 0; k < std::max(A.size(), B.size()); ++k) {
    std::string a = k < A.size() ? A[k] : "{}", b = k < B.size() ? B[k] : "{}";
    if (a == b) continue;
    d.k = static_cast<int>(k);
    auto fa = fields(a), fb = fields(b);
    d.op = get(a, "op").empty() ? get(b, "op") : get(a, "op");
    auto find = [](auto& f, const std::string& key) { for (auto& [k2, v] : f) if (k2 == key) return v; return std::string("-"); };
    for (auto* f : {&fa, &fb})
      for (auto& [key, v] : *f)
        if (find(fa, key) != find(fb, key)) { d.field = key; d.va = find(fa, key); d.vb = find(fb, key); return d; }
    return d;
  }
  return d;
}
// A group key: the op, the field and both values with slot numbers dropped (a3+0x200 -> a+0x200),
// plus the attribute an attribute query asked for.
static std::string group_key(const Div& d, const std::string& line) {
  auto strip = [](const std::string& s) {
    std::string o;
    bool ident = false;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (!isalnum(static_cast<unsigned char>(c))) ident = false;
      else if (!ident && isalpha(static_cast<unsigned char>(c)) && (i == 0 || !isalnum(static_cast<unsigned char>(s[i - 1])))) ident = true;
      if (ident && isdigit(static_cast<unsigned char>(c))) continue;
      o += c;
    }
    return o;
  };
  std::istringstream in(line);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  size_t off = !t.empty() && t[0] == "peer" ? 1 : 0;
  std::string name = t.size() > off ? t[off] : d.op, attr;
  std::map<std::string, size_t> at = {{"ptr_attr", 3}, {"pool_get", 2}, {"pool_set", 2}, {"range_attr", 4}, {"advise", 4}};
  if (at.count(name) && t.size() > at[name] + off) attr = " attr=" + t[at[name] + off];
  return d.op + attr + " " + d.field + ": " + strip(d.va) + " | " + strip(d.vb);
}

struct Opts {
  std::string a = "system", b, fault = "-", label_a = "A", label_b = "B";
  int jobs = 4, timeout = 30;
};

// Delta debugging: drop chunks of ops (never the target) while the first divergence stays the
// same op with the same field and values. Returns the kept op indices.
static std::vector<int> minimize(const std::vector<std::string>& ops, int target, const Div& want, const Opts& o,
                                 Clock::time_point deadline, int max_tests, int& tests) {
  std::vector<int> cur;
  for (int i = 0; i < static_cast<int>(ops.size()) && (target < 0 || i <= target); ++i) cur.push_back(i);
  auto pred = [&](const std::vector<int>& sel) {
    std::vector<std::string> v;
    for (int i : sel) v.push_back(ops[i]);
    ++tests;
    Recs A = run_isolated(o.a, v, "-", o.timeout), B = run_isolated(o.b, v, o.fault, o.timeout);
    Div d = first_div(A, B);
    if (d.k < 1) return false;
    int at = d.k - 1 < static_cast<int>(sel.size()) ? sel[d.k - 1] : -1;
    return at == target && d.field == want.field && d.va == want.va && d.vb == want.vb;
  };
  if (!pred(cur)) return cur;  // the truncated sequence no longer shows it: keep everything
  for (size_t n = 2; cur.size() > 1;) {
    std::vector<int> rem;
    for (int i : cur) if (i != target) rem.push_back(i);
    if (rem.empty()) break;
    n = std::min(n, rem.size());
    size_t chunk = (rem.size() + n - 1) / n;
    bool cut = false;
    for (size_t c = 0; c < n && !cut; ++c) {
      if (Clock::now() > deadline || tests >= max_tests) return cur;
      std::vector<int> cand;
      for (size_t j = 0; j < rem.size(); ++j) if (j / chunk != c) cand.push_back(rem[j]);
      if (target >= 0) cand.insert(std::upper_bound(cand.begin(), cand.end(), target), target);
      if (pred(cand)) { cur = cand; n = std::max<size_t>(n - 1, 2); cut = true; }
    }
    if (!cut) { if (n >= rem.size()) break; n = std::min(n * 2, rem.size()); }
  }
  return cur;
}

static std::map<std::string, std::string> parse_args(int argc, char** argv, int from, std::vector<std::string>& pos) {
  std::map<std::string, std::string> m;
  for (int i = from; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--list" || s == "--resume" || s == "--verbose" || s == "--hex" || s == "--allow-refused") m[s.substr(2)] = "1";  // flags without a value
    else if (s.rfind("--", 0) == 0 && i + 1 < argc) m[s.substr(2)] = argv[++i];
    else pos.push_back(s);
  }
  return m;
}
static std::vector<std::pair<std::string, std::vector<std::string>>> load_dir(const std::string& dir) {
  std::vector<std::pair<std::string, std::vector<std::string>>> v;
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir)) if (e.path().extension() == ".seq") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (auto& p : files) v.push_back({p.stem().string(), ops_of(lines_of(p.string()))});
  return v;
}
static size_t calls(const Recs& r) { return r.size() >= 2 ? r.size() - 2 : 0; }

// ---- commands ---------------------------------------------------------------------------------

static int cmd_gen(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  if (pos.empty()) { fprintf(stderr, "gen: OUTDIR missing\n"); return 2; }
  fs::create_directories(pos[0]);
  uint64_t seed = std::stoull(m.count("seed") ? m["seed"] : "1"), count = std::stoull(m.count("count") ? m["count"] : "100");
  double bad = std::stod(m.count("bad") ? m["bad"] : "0.1");
  int len = m.count("len") ? std::stoi(m["len"]) : 0;
  for (uint64_t s = seed; s < seed + count; ++s) {
    Gen g(s, bad);
    int n = len ? len : 10 + static_cast<int>(Rng{s}.below(31));
    char name[64];
    snprintf(name, sizeof name, "/s%06llu.seq", static_cast<unsigned long long>(s));
    write_lines(pos[0] + name, g.make(n), "# difftest sequence: seed " + std::to_string(s) + ", bad " + std::to_string(bad) + "\n");
  }
  if (m.count("probes")) {
    auto q = Gen::probes();
    for (size_t i = 0; i < q.size(); ++i) {
      char name[32];
      snprintf(name, sizeof name, "/p%02zu.seq", i + 1);
      write_lines(pos[0] + name, q[i], "# difftest probe\n");
    }
  }
  if (m.count("questions")) {
    auto q = Gen::questions();
    for (size_t i = 0; i < q.size(); ++i) write_lines(pos[0] + "/q" + std::to_string(i + 1) + ".seq", q[i], "# difftest question\n");
  }
  return 0;
}

static int cmd_run(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  for (auto& p : pos)
    for (auto& l : run_isolated(m.count("lib") ? m["lib"] : "system", ops_of(lines_of(p)))) printf("%s\n", l.c_str());
  return 0;
}

static void write_case(const std::string& path, const std::string& title, const std::vector<std::string>& ops,
                       const Recs& expect, const std::string& source, const Opts& o, const Div& d) {
  std::ofstream c(path);
  c << "# difftest case: " << title << "\n# source: " << source << "\n# real: " << o.label_a
    << "\n# divergence: op " << d.k - 1 << " " << d.op << ": " << d.field << " real=" << d.va << " emulator=" << d.vb
    << "\n# status: open\nseq\n";
  for (auto& l : ops) c << l << "\n";
  c << "expect\n";
  for (auto& l : expect) c << l << "\n";
}

// Runs every sequence on A and B, reports the divergences grouped, minimizes one sequence of
// each group and writes it as a case (the real driver is A).
static int cmd_diff(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  if (pos.size() < 2 || !m.count("b")) { fprintf(stderr, "diff: --a LIB --b LIB SEQDIR OUTDIR\n"); return 2; }
  Opts o;
  o.a = m.count("a") ? m["a"] : "system"; o.b = m["b"];
  if (m.count("fault")) o.fault = m["fault"];
  if (m.count("jobs")) o.jobs = std::stoi(m["jobs"]);
  if (m.count("label")) o.label_a = m["label"];
  double min_s = m.count("minimize-seconds") ? std::stod(m["minimize-seconds"]) : 120;
  int max_tests = m.count("max-tests") ? std::stoi(m["max-tests"]) : 300;
  auto seqs = load_dir(pos[0]);
  std::string out = pos[1];
  fs::create_directories(out + "/cases");
  auto t0 = Clock::now();
  std::vector<Recs> RA(seqs.size()), RB(seqs.size());
  std::vector<Div> D(seqs.size());
  std::vector<int> flaky(seqs.size());
  double batch_s = m.count("batch-seconds") ? std::stod(m["batch-seconds"]) : 1e9;
  std::atomic<size_t> skipped{0};
  parallel(seqs.size(), o.jobs, [&](size_t i) {
    if (secs(t0) > batch_s) { ++skipped; return; }  // out of time: not run
    RA[i] = run_isolated(o.a, seqs[i].second, "-", o.timeout);
    RB[i] = run_isolated(o.b, seqs[i].second, o.fault, o.timeout);
    D[i] = first_div(RA[i], RB[i]);
    // Answers that change from run to run (timing, parallel processes) are not divergences.
    if (D[i].k >= 0 && (run_isolated(o.a, seqs[i].second, "-", o.timeout) != RA[i] ||
                        run_isolated(o.b, seqs[i].second, o.fault, o.timeout) != RB[i])) flaky[i] = 1;
  });
  double run_s = secs(t0);
  size_t ca = 0, cb = 0, crash_a = 0, crash_b = 0, nflaky = 0;
  std::map<std::string, std::vector<size_t>> groups;
  std::vector<std::pair<std::string, std::vector<size_t>>> summary_known;
  std::ofstream all(out + "/divergences.txt");
  std::ofstream qs(out + "/questions.txt");
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (RA[i].empty()) continue;
    if (seqs[i].first[0] == 'q' || seqs[i].first[0] == 'p') {  // questions' and probes' full answers
      qs << "== " << seqs[i].first << "\n";
      for (size_t k = 0; k < std::max(RA[i].size(), RB[i].size()); ++k)
        qs << (!k ? "init" : k - 1 < seqs[i].second.size() ? seqs[i].second[k - 1] : "exit") << "\n  A: " << (k < RA[i].size() ? RA[i][k] : "-")
           << "\n  B: " << (k < RB[i].size() ? RB[i][k] : "-") << "\n";
    }
    ca += calls(RA[i]); cb += calls(RB[i]);
    crash_a += RA[i].back().find("\"crash\"") != std::string::npos || RA[i].back().find("\"status\":\"ok\"") == std::string::npos;
    crash_b += RB[i].back().find("\"crash\"") != std::string::npos || RB[i].back().find("\"status\":\"ok\"") == std::string::npos;
    if (D[i].k < 0) continue;
    if (flaky[i]) { ++nflaky; continue; }
    int k = D[i].k - 1;
    std::string line = k >= 0 && k < static_cast<int>(seqs[i].second.size()) ? seqs[i].second[k] : "";
    std::string key = group_key(D[i], line);
    groups[key].push_back(i);
    all << seqs[i].first << " op " << k << " [" << line << "] " << key << "\n  A: " << RA[i][D[i].k] << "\n  B: "
        << (D[i].k < static_cast<int>(RB[i].size()) ? RB[i][D[i].k] : "-") << "\n";
  }
  std::set<std::string> known;  // groups minimized before (--known: a report.txt): not again
  if (m.count("known"))
    for (auto& l : lines_of(m["known"])) if (l.size() > 6 && l[0] == 'g' && l.find(" seqs  ") != std::string::npos) known.insert(l.substr(l.find(" seqs  ") + 7));
  std::vector<std::pair<std::string, std::vector<size_t>>> gs;
  for (auto& g : groups) (known.count(g.first) ? summary_known : gs).push_back(g);
  std::sort(gs.begin(), gs.end(), [](auto& x, auto& y) { return x.second.size() > y.second.size(); });
  // One minimization per group (its shortest sequence), all groups in parallel.
  std::vector<std::string> summary(gs.size());
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(min_s * 1000));
  parallel(gs.size(), o.jobs, [&](size_t g) {
    auto& [key, idx] = gs[g];
    size_t best = *std::min_element(idx.begin(), idx.end(), [&](size_t x, size_t y) { return D[x].k < D[y].k; });
    const auto& ops = seqs[best].second;
    int target = D[best].k - 1 < static_cast<int>(ops.size()) ? D[best].k - 1 : -1;
    int tests = 0;
    auto keep = minimize(ops, target, D[best], o, deadline, max_tests, tests);
    std::vector<std::string> mops;
    for (int i : keep) mops.push_back(ops[i]);
    Recs A = run_isolated(o.a, mops, "-", o.timeout), A2 = run_isolated(o.a, mops, "-", o.timeout);
    Recs B = run_isolated(o.b, mops, o.fault, o.timeout);
    Div d = first_div(A, B);
    char name[32];
    snprintf(name, sizeof name, "g%03zu", g + 1);
    std::string src = seqs[best].first + ", op " + std::to_string(target) + " (" + std::to_string(mops.size()) + " of " +
                      std::to_string(ops.size()) + " ops after " + std::to_string(tests) + " tests" + (A == A2 ? "" : "; real answers unstable") + ")";
    write_case(out + "/cases/" + name + ".case", key, mops, A, src, o, d.k >= 0 ? d : D[best]);
    summary[g] = std::string(name) + "  " + std::to_string(idx.size()) + " seqs  " + key + "\n    minimized: " + src + "\n";
  });
  std::ofstream rep(out + "/report.txt");
  char head[512];
  snprintf(head, sizeof head, "difftest diff: %zu sequences (%zu not run: out of time); calls A=%zu B=%zu; runs %.1fs, total %.1fs\n"
           "A=%s (%s)  B=%s\nabnormal ends A=%zu B=%zu; divergent %zu (flaky, not counted: %zu); groups %zu\n\n",
           seqs.size(), skipped.load(), ca, cb, run_s, secs(t0), o.a.c_str(), o.label_a.c_str(), o.b.c_str(), crash_a, crash_b,
           [&] { size_t n = 0; for (auto& g : gs) n += g.second.size(); return n; }(), nflaky, gs.size());
  rep << head;
  for (auto& s : summary) rep << s;
  for (auto& [key, idx] : summary_known) rep << "known  " << idx.size() << " seqs  " << key << "\n";
  printf("%s", head);
  for (auto& s : summary) printf("%s", s.c_str());
  return 0;
}

// Replays case files on one driver: each must give the recorded answers (status: open cases
// are reported, not failed). Used by the difftest.cases test on the emulator.
static int cmd_replay(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  std::string lib = m.count("lib") ? m["lib"] : "system";
  std::vector<std::string> files;
  for (auto& p : pos) {
    if (fs::is_directory(p)) { for (auto& e : fs::directory_iterator(p)) if (e.path().extension() == ".case") files.push_back(e.path().string()); }
    else files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  int failed = 0, open = 0;
  std::mutex mu;
  parallel(files.size(), m.count("jobs") ? std::stoi(m["jobs"]) : 2, [&](size_t i) {
    auto lines = lines_of(files[i]);
    std::vector<std::string> ops, expect;
    bool is_open = false;
    int section = 0;
    for (auto& l : lines) {
      if (l.rfind("# status: open", 0) == 0) is_open = true;
      if (l.empty() || l[0] == '#') continue;
      if (l == "seq") { section = 1; continue; }
      if (l == "expect") { section = 2; continue; }
      (section == 1 ? ops : expect).push_back(l);
    }
    Recs got = run_isolated(lib, ops);
    std::string why;
    for (size_t k = 0; k < expect.size() && why.empty(); ++k)
      if (k >= got.size() || got[k] != expect[k]) why = "record " + std::to_string(k) + "\n    want " + expect[k] + "\n    got  " + (k < got.size() ? got[k] : "-");
    if (why.empty() && got.back().find("\"status\":\"ok\"") == std::string::npos) why = "abnormal end: " + got.back();
    std::lock_guard<std::mutex> l(mu);
    std::string n = fs::path(files[i]).filename().string();
    if (why.empty()) printf("PASS %s%s\n", n.c_str(), is_open ? " (status: open, but it matches now)" : "");
    else if (is_open) { ++open; printf("OPEN %s: %s\n", n.c_str(), why.c_str()); }
    else { ++failed; printf("FAIL %s: %s\n", n.c_str(), why.c_str()); }
  });
  printf("%zu cases: %d failed, %d open\n", files.size(), failed, open);
  return failed ? 1 : 0;
}

// The emulator alone: fixed seeds run twice; no abnormal end, identical records.
static int cmd_selfcheck(std::map<std::string, std::string>& m, const std::vector<std::string>&) {
  std::string lib = m.count("lib") ? m["lib"] : "system";
  int seeds = m.count("seeds") ? std::stoi(m["seeds"]) : 40;
  double bad = m.count("bad") ? std::stod(m["bad"]) : 0.15;
  auto q = Gen::questions();
  std::vector<std::vector<std::string>> seqs(q.begin(), q.begin() + 5);  // the rest probe crashes
  for (int s = 1; s <= seeds; ++s) seqs.push_back(Gen(static_cast<uint64_t>(s), bad, false).make(10 + static_cast<int>(Rng{static_cast<uint64_t>(s)}.below(31))));
  std::atomic<int> bad_runs{0};
  std::atomic<size_t> ncalls{0};
  std::mutex mu;
  parallel(seqs.size(), m.count("jobs") ? std::stoi(m["jobs"]) : 2, [&](size_t i) {
    Recs a = run_isolated(lib, seqs[i]), b = run_isolated(lib, seqs[i]);
    ncalls += calls(a);
    std::string why;
    if (a.back().find("\"status\":\"ok\"") == std::string::npos) why = "abnormal end: " + a.back();
    else if (a != b) { Div d = first_div(a, b); why = "not deterministic at record " + std::to_string(d.k) + ": " + a[d.k] + " vs " + (d.k < static_cast<int>(b.size()) ? b[d.k] : "-"); }
    for (auto& r : a) if (r.find("unknown op") != std::string::npos) why = "unknown op: " + r;
    if (why.empty()) return;
    ++bad_runs;
    std::lock_guard<std::mutex> l(mu);
    printf("FAIL sequence %zu: %s\n", i, why.c_str());
    for (auto& op : seqs[i]) printf("    %s\n", op.c_str());
  });
  printf("selfcheck: %zu sequences, %zu calls, %d failed\n", seqs.size(), ncalls.load(), bad_runs.load());
  return bad_runs ? 1 : 0;
}

#include "difftest_probe.hpp"
#include "difftest_kernel.hpp"

int main(int argc, char** argv) {
  if (argc >= 4 && !strcmp(argv[1], "--peer")) return Exec::peer_main(atoi(argv[2]), argv[3]);
  if (argc >= 6 && !strcmp(argv[1], "exec")) return cmd_exec(argv[2], argv[3], argv[4], argv[5]);
  if (argc >= 6 && !strcmp(argv[1], "kexec")) return cmd_kexec(argv[2], argv[3], argv[4], argv[5], argc >= 7 ? argv[6] : "");
  if (argc < 2) {
    fprintf(stderr, "usage: difftest gen|run|diff|replay|selfcheck|probe|kernel ... (docs/difftest.md, docs/probe.md)\n");
    return 2;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  g_self = n > 0 ? std::string(self, n) : argv[0];
  char tmpl[] = "/tmp/difftest.XXXXXX";
  g_tmp = mkdtemp(tmpl) ? tmpl : "/tmp";
  // The cases come from a CUDA 13.0 driver: the emulator reports the same version.
  setenv("CUDA_SHIM_DRIVER_VERSION", "13000", 0);
  std::vector<std::string> pos;
  auto m = parse_args(argc, argv, 2, pos);
  std::string c = argv[1];
  int rc = c == "gen" ? cmd_gen(m, pos) : c == "run" ? cmd_run(m, pos) : c == "diff" ? cmd_diff(m, pos)
         : c == "replay" ? cmd_replay(m, pos) : c == "selfcheck" ? cmd_selfcheck(m, pos)
         : c == "probe" ? cmd_probe(m, pos) : c == "kernel" ? cmd_kernel(argc, argv) : 2;
  std::error_code ec;
  if (g_tmp != "/tmp" && !getenv("DIFFTEST_KEEP_ERR")) fs::remove_all(g_tmp, ec);
  return rc;
}
