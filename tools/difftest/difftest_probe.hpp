// difftest probe: the real-driver probes as data (docs/probe.md). Named cases, a few op lines
// each (tests/probe/cases/*.cases), run one per fresh process on a driver. On NVIDIA's driver
// their records are checked in (tests/probe/recorded/*.jsonl) with the GPU, driver and CUDA
// versions; `--check` holds another driver's records against them, and the conformance tests
// read their expected codes from them (tests/conformance/real_answers.hpp).
// Included by difftest.cpp after the runner's helpers (run_isolated, parallel, lines_of).
#pragma once

struct ProbeCase {
  std::string name, where, known;  // known: why the emulator still differs (reported, not failed)
  std::vector<std::string> ops;
  bool alone = false;  // runs after the others, by itself: it reads state other processes move
};

// A file: "case NAME" starts a case, "known WHY" and "alone" mark it, other lines are its ops;
// "#" starts a comment. Names are unique across every file given.
static bool load_cases(const std::vector<std::string>& paths, std::vector<ProbeCase>& cases, std::string& err) {
  std::vector<std::string> files;
  for (auto& p : paths) {
    if (!fs::is_directory(p)) { files.push_back(p); continue; }
    for (auto& e : fs::directory_iterator(p)) if (e.path().extension() == ".cases") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::set<std::string> seen;
  for (auto& f : files) {
    if (!fs::exists(f)) { err = f + ": no such file"; return false; }
    int n = 0;
    for (std::string l : lines_of(f)) {
      ++n;
      if (size_t h = l.find('#'); h != std::string::npos) l.erase(h);
      l.erase(0, l.find_first_not_of(" \t"));
      l.erase(l.find_last_not_of(" \t\r") + 1);
      if (l.empty()) continue;
      std::string where = f + ":" + std::to_string(n);
      if (l.rfind("case ", 0) == 0) {
        std::string name = l.substr(5);
        bool ok = !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.-") == std::string::npos;
        if (!ok) { err = where + ": a case name is lower-case letters, digits, '_', '.', '-': " + name; return false; }
        if (!seen.insert(name).second) { err = where + ": case " + name + " is defined twice"; return false; }
        cases.push_back({name, where, "", {}, false});
      } else if (cases.empty() || cases.back().where.rfind(f + ":", 0) != 0) {
        err = where + ": an op before the file's first 'case' line"; return false;
      } else if (l.rfind("known ", 0) == 0) {
        cases.back().known = l.substr(6);
      } else if (l == "alone") {
        cases.back().alone = true;
      } else {
        cases.back().ops.push_back(l);
      }
    }
  }
  for (auto& c : cases) if (c.ops.empty()) { err = c.where + ": case " + c.name + " has no op"; return false; }
  return true;
}

// Recorded lines: {"probe":"header",...} once, then {"case":NAME,<the runner's record>} in order.
static std::map<std::string, Recs> load_recorded(const std::string& path, std::string& header) {
  std::map<std::string, Recs> m;
  for (auto& l : lines_of(path)) {
    if (l.rfind("{\"probe\":\"header\"", 0) == 0) { header = l; continue; }
    if (l.rfind("{\"case\":\"", 0) != 0) continue;
    size_t e = l.find('"', 9);
    if (e == std::string::npos || e + 2 >= l.size()) continue;
    m[l.substr(9, e - 9)].push_back("{" + l.substr(e + 2));
  }
  return m;
}

static bool skipped(const Recs& r) {
  for (auto& x : r) if (x.find("\"skip\":") != std::string::npos) return true;
  return false;
}

static int cmd_probe(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  std::vector<ProbeCase> all, cases;
  std::string err;
  if (pos.empty() || !load_cases(pos, all, err)) {
    fprintf(stderr, "difftest probe: %s\n", pos.empty() ? "name case files or folders (tests/probe/cases)" : err.c_str());
    return 2;
  }
  std::vector<std::string> only;  // --only a,b: the cases whose names start with one of these
  for (std::istringstream in(m.count("only") ? m["only"] : ""); std::getline(in, err, ',');) only.push_back(err);
  // --shard K/N: every Nth case from the Kth (the sanitizer builds run a third of them).
  size_t shard_k = 0, shard_n = 1;
  if (m.count("shard") && sscanf(m["shard"].c_str(), "%zu/%zu", &shard_k, &shard_n) != 2) shard_n = 0;
  if (shard_n == 0 || shard_k >= shard_n) { fprintf(stderr, "difftest probe: --shard K/N with K < N\n"); return 2; }
  for (size_t i = 0; i < all.size(); ++i) {
    const ProbeCase& c = all[i];
    if (i % shard_n != shard_k) continue;
    if (only.empty() || std::any_of(only.begin(), only.end(), [&](auto& o) { return c.name.rfind(o, 0) == 0; })) cases.push_back(c);
  }
  if (m.count("list")) { for (auto& c : cases) printf("%s\t%zu ops\t%s\n", c.name.c_str(), c.ops.size(), c.where.c_str()); return 0; }
  std::string lib = m.count("lib") ? m["lib"] : "system";
  std::vector<Recs> got(cases.size());
  auto t0 = Clock::now();
  // --out FILE keeps each finished case in FILE.parts/ at once, so a run that is stopped (a time
  // limit on a lent GPU) loses nothing: the next run with the same --out and --resume does only
  // what is left.
  std::string parts = m.count("out") ? m["out"] + ".parts" : "";
  std::error_code ec;
  if (!parts.empty() && !m.count("resume")) fs::remove_all(parts, ec);
  if (!parts.empty()) fs::create_directories(parts);
  double budget = m.count("seconds") ? std::stod(m["seconds"]) : 1e9;
  int timeout_s = m.count("timeout") ? std::stoi(m["timeout"]) : 30;
  std::vector<size_t> together, alone;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!parts.empty() && fs::exists(parts + "/" + cases[i].name)) {
      for (auto& l : lines_of(parts + "/" + cases[i].name)) got[i].push_back("{" + l.substr(l.find(',') + 1));
      continue;
    }
    (cases[i].alone ? alone : together).push_back(i);
  }
  std::atomic<size_t> done{0};
  size_t todo = together.size() + alone.size();
  auto one = [&](size_t i) {
    if (secs(t0) > budget) return;  // out of time: left for the next run
    got[i] = run_isolated(lib, cases[i].ops, "-", timeout_s);
    if (!parts.empty()) {
      std::ofstream o(parts + "/" + cases[i].name + ".tmp");
      for (auto& r : got[i]) o << "{\"case\":\"" << cases[i].name << "\"," << r.substr(1) << "\n";
      o.close();
      fs::rename(parts + "/" + cases[i].name + ".tmp", parts + "/" + cases[i].name);
    }
    if (size_t n = ++done; !parts.empty() && n % 250 == 0) fprintf(stderr, "probe: %zu of %zu cases, %.0f s\n", n, todo, secs(t0));
  };
  parallel(together.size(), m.count("jobs") ? std::stoi(m["jobs"]) : 2, [&](size_t k) { one(together[k]); });
  for (size_t i : alone) one(i);
  size_t missing = 0;
  for (auto& r : got) missing += r.empty();
  if (missing) {
    fprintf(stderr, "probe: %zu cases not run in the time given; run again with the same --out and --resume to finish\n", missing);
    return 3;
  }
  if (m.count("out")) {
    std::ofstream o(m["out"]);
    int drv = 0;
    for (auto& r : got) if (!r.empty() && r[0].find("\"drv\":") != std::string::npos) { drv = atoi(r[0].c_str() + r[0].find("\"drv\":") + 6); break; }
    o << "{\"probe\":\"header\",\"label\":\"" << (m.count("label") ? m["label"] : lib) << "\",\"lib\":\"" << lib
      << "\",\"drv\":" << drv << ",\"cases\":" << cases.size() << "}\n";
    for (size_t i = 0; i < cases.size(); ++i)
      for (auto& r : got[i]) o << "{\"case\":\"" << cases[i].name << "\"," << r.substr(1) << "\n";
  }
  if (!m.count("check")) {
    size_t bad = 0;
    for (auto& r : got) bad += r.back().find("\"status\":\"ok\"") == std::string::npos;
    printf("probe: %zu cases on %s in %.1f s, %zu ended abnormally\n", cases.size(), lib.c_str(), secs(t0), bad);
    return 0;
  }
  std::string header;
  auto want = load_recorded(m["check"], header);
  if (want.empty()) { fprintf(stderr, "difftest probe: no recorded case in %s\n", m["check"].c_str()); return 2; }
  int failed = 0, known = 0, fresh = 0, skip = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const ProbeCase& c = cases[i];
    auto it = want.find(c.name);
    if (it == want.end()) { ++fresh; printf("NEW  %s (not recorded on a real driver yet)\n", c.name.c_str()); continue; }
    if (skipped(it->second) || skipped(got[i])) { ++skip; continue; }
    if (it->second == got[i]) continue;
    Div d = first_div(it->second, got[i]);
    std::string w = d.k < static_cast<int>(it->second.size()) ? it->second[d.k] : "-";
    std::string g = d.k < static_cast<int>(got[i].size()) ? got[i][d.k] : "-";
    std::string op = d.k >= 1 && d.k <= static_cast<int>(c.ops.size()) ? c.ops[d.k - 1] : "";
    printf("%s %s (%s)%s%s\n    op    %s\n    real  %s\n    got   %s\n", c.known.empty() ? "FAIL" : "KNOWN", c.name.c_str(),
           c.where.c_str(), c.known.empty() ? "" : ": ", c.known.c_str(), op.c_str(), w.c_str(), g.c_str());
    ++(c.known.empty() ? failed : known);
  }
  printf("probe: %zu cases against %s: %d differ, %d known, %d not recorded, %d skipped\n", cases.size(),
         header.empty() ? m["check"].c_str() : header.c_str(), failed, known, fresh, skip);
  return failed ? 1 : 0;
}
