// difftest kernel: the differential kernel tester (docs/difftest.md, Kernels). A case is a PTX
// module, a launch shape and seeded input bytes (.kcase files, written by tools/difftest/kgen.py);
// each runs in a fresh process of this binary on a driver: cuModuleLoadDataEx, cuLaunchKernel,
// the output buffer copied back. `record` writes a driver's bytes into the cases (NVIDIA's, on a
// GPU machine), `replay` holds a driver to the recorded bytes (the difftest.kernels test), `diff`
// runs two drivers side by side and minimizes what diverges (drops "//d" lines of the PTX).
// Included by difftest.cpp after the runner's helpers (lines_of, parallel, g_self, g_tmp).
#pragma once

#include <cmath>

namespace kdiff {

struct Tol {
  size_t stride = 0, off = 0;
  std::string type;  // f32 | f64
  long long ulps = 0;
  double abs = 0;
};

struct Case {
  std::vector<std::string> head;  // the lines before the ptx (kept verbatim, expect excluded)
  std::string name, family, status = "new", kernel = "k", ptx;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, shared = 0;
  std::vector<std::string> params;
  size_t isize = 0, osize = 0, slot = 0;
  uint64_t iseed = 0, oseed = 0, ifnv = 0;
  std::vector<std::pair<size_t, size_t>> outzero;
  std::vector<Tol> tols;
  bool has_expect = false;
  int e_load = 0, e_launch = 0, e_sync = 0;
  std::string e_status = "ok";  // the recording's end: ok, or how its process ended
  std::vector<unsigned char> expect;
};

struct Result {
  std::string status = "ok";  // ok | crash SIGn | timeout | exit n | setup: why
  int load = -1, launch = -1, sync = -1;
  std::vector<unsigned char> out;
  std::string log;  // the JIT's error log, first line
};

// ---- input bytes: the same mixer as kgen.py's input_bytes ---------------------------------------

static const uint32_t kF32[] = {0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0x40000000, 0x7F800000,
  0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00000, 0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F800001,
  0x40400000, 0x40490FDB, 0x501502F9, 0xAEDBE6FF, 0x4B000000, 0x4B7FFFFF, 0xCF000000, 0x4F000000, 0x3EAAAAAB,
  0x80000001, 0x807FFFFF, 0xFF7FFFFF, 0x5F000000, 0x3FFFFFFF, 0x34000000, 0xC0490FDB};
static const uint64_t kF64[] = {0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
  0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001, 0x0000000000000001,
  0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000001, 0x400921FB54442D18,
  0x4330000000000000, 0xC3E0000000000000, 0x43E0000000000000, 0x3FD5555555555555, 0x41DFFFFFFFC00000,
  0x47EFFFFFE0000000, 0x380FFFFFFFFFFFFF, 0x36A0000000000000, 0x3E80000000000000, 0xFFEFFFFFFFFFFFFF};
static const uint16_t kF16[] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0x4000, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
  0x0001, 0x03FF, 0x0400, 0x7BFF, 0x3C01, 0x4248, 0xFBFF, 0x5BF8, 0x1400, 0x8001};
constexpr size_t kNF32 = sizeof kF32 / sizeof kF32[0], kNF64 = sizeof kF64 / sizeof kF64[0], kNF16 = sizeof kF16 / sizeof kF16[0];

inline uint64_t splitmix(uint64_t& s) {
  s += 0x9E3779B97F4A7C15ull;
  uint64_t z = s;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
inline uint64_t input_chunk(uint64_t a, uint64_t b) {
  unsigned sel = a & 15;
  if (sel <= 5) return b;
  if (sel <= 7) return static_cast<uint64_t>(static_cast<int64_t>(b % 33) - 16);
  if (sel == 8) return static_cast<uint32_t>(static_cast<int>(b & 31) - 16) | static_cast<uint64_t>(static_cast<uint32_t>(static_cast<int>((b >> 8) & 31) - 16)) << 32;
  if (sel <= 10) return kF32[(b & 0xFF) % kNF32] | static_cast<uint64_t>(kF32[((b >> 8) & 0xFF) % kNF32]) << 32;
  if (sel == 11) return kF64[(b & 0xFF) % kNF64];
  if (sel == 12) {
    float lo = static_cast<float>((static_cast<int>(b & 0xFFFF) - 32768) / 256.0);
    float hi = static_cast<float>((static_cast<int>((b >> 16) & 0xFFFF) - 32768) / 256.0);
    return fbits(lo) | static_cast<uint64_t>(fbits(hi)) << 32;
  }
  uint64_t v = 0;
  if (sel == 13) {
    for (int k = 0; k < 4; ++k) v |= static_cast<uint64_t>(kF16[((b >> (8 * k)) & 0xFF) % kNF16]) << (16 * k);
    return v;
  }
  if (sel == 14) {
    double d = (static_cast<long long>(b & 0xFFFFF) - (1 << 19)) / 1024.0;
    memcpy(&v, &d, 8);
    return v;
  }
  for (int k = 0; k < 4; ++k) v |= static_cast<uint64_t>(kF32[((b >> (8 * k)) & 0xFF) % kNF32] >> 16) << (16 * k);
  return v;
}
inline std::vector<unsigned char> input_bytes(size_t size, uint64_t seed) {
  std::vector<unsigned char> out(size + 8);
  uint64_t s = seed;
  for (size_t i = 0; i < size; i += 8) {
    uint64_t a = splitmix(s), b = splitmix(s);
    uint64_t c = input_chunk(a, b);
    memcpy(&out[i], &c, 8);  // little-endian hosts only (x86-64, aarch64)
  }
  out.resize(size);
  return out;
}

// ---- the case file ----------------------------------------------------------------------------

static std::string tohex(const unsigned char* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) { s[2 * i] = d[p[i] >> 4]; s[2 * i + 1] = d[p[i] & 15]; }
  return s;
}
static bool fromhex(const std::string& s, std::vector<unsigned char>& out) {
  auto v = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
  if (s.size() % 2) return false;
  for (size_t i = 0; i < s.size(); i += 2) {
    int a = v(s[i]), b = v(s[i + 1]);
    if (a < 0 || b < 0) return false;
    out.push_back(static_cast<unsigned char>(a * 16 + b));
  }
  return true;
}

// Several cases a file: "case NAME" .. "end"; "#" lines between cases are comments.
static bool load_kcases(const std::string& path, std::vector<Case>& cases, std::string& err) {
  auto lines = lines_of(path);
  if (lines.empty() && !fs::exists(path)) { err = path + ": no such file"; return false; }
  Case c;
  int mode = 0;  // 0 between cases, 1 header, 2 ptx, 3 expect
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string& l = lines[n];
    std::string where = path + ":" + std::to_string(n + 1);
    if (mode == 2) { if (l == "endptx") mode = 1; else c.ptx += l + "\n"; continue; }
    if (mode == 3) {
      if (l == "endexpect") { mode = 1; continue; }
      if (!fromhex(l, c.expect)) { err = where + ": not hex"; return false; }
      continue;
    }
    if (mode == 0) {
      if (l.empty() || l[0] == '#') continue;
      if (l.rfind("case ", 0) != 0) { err = where + ": expected 'case NAME'"; return false; }
      c = Case();
      c.name = l.substr(5);
      c.head.push_back(l);
      mode = 1;
      continue;
    }
    std::istringstream in(l);
    std::string k;
    in >> k;
    if (k == "ptx") { mode = 2; continue; }
    if (k == "end") {
      if (c.ptx.empty()) { err = where + ": case " + c.name + " has no ptx"; return false; }
      if (c.has_expect && c.e_status == "ok" && !c.e_load && !c.e_launch && !c.e_sync && c.expect.size() != c.osize) {
        err = where + ": case " + c.name + ": expect holds " + std::to_string(c.expect.size()) + " bytes, output is " + std::to_string(c.osize);
        return false;
      }
      cases.push_back(c);
      mode = 0;
      continue;
    }
    if (k == "expect") {
      // expect load RC launch RC sync RC [end STATUS...]
      c.has_expect = true;
      std::string w;
      while (in >> w) {
        if (w == "load") in >> c.e_load;
        else if (w == "launch") in >> c.e_launch;
        else if (w == "sync") in >> c.e_sync;
        else if (w == "end") { std::getline(in, c.e_status); c.e_status.erase(0, c.e_status.find_first_not_of(' ')); }
      }
      mode = 3;
      continue;
    }
    c.head.push_back(l);
    if (k == "family") in >> c.family;
    else if (k == "status") { std::getline(in, c.status); c.status.erase(0, c.status.find_first_not_of(' ')); }
    else if (k == "kernel") in >> c.kernel;
    else if (k == "grid") in >> c.grid[0] >> c.grid[1] >> c.grid[2];
    else if (k == "block") in >> c.block[0] >> c.block[1] >> c.block[2];
    else if (k == "shared") in >> c.shared;
    else if (k == "slot") in >> c.slot;
    else if (k == "params") { for (std::string p; in >> p;) c.params.push_back(p); in.clear(); }
    else if (k == "input") {
      std::string w;
      in >> c.isize >> w >> c.iseed;
      if (in >> w && w == "fnv") { in >> w; c.ifnv = std::stoull(w, nullptr, 16); }
      else in.clear();
    } else if (k == "output") { std::string w; in >> c.osize >> w >> c.oseed; }
    else if (k == "outzero") { size_t o, n2; in >> o >> n2; c.outzero.push_back({o, n2}); }
    else if (k == "tol") { Tol t; in >> t.stride >> t.off >> t.type >> t.ulps >> t.abs; c.tols.push_back(t); }
    else if (k != "source") { err = where + ": unknown line '" + k + "'"; return false; }
    if (in.fail()) { err = where + ": bad '" + k + "' line"; return false; }
  }
  if (mode != 0) { err = path + ": the last case has no 'end'"; return false; }
  return true;
}

static std::vector<std::string> kcase_files(const std::vector<std::string>& pos) {
  std::vector<std::string> files;
  for (auto& p : pos) {
    if (!fs::is_directory(p)) { files.push_back(p); continue; }
    for (auto& e : fs::recursive_directory_iterator(p)) if (e.path().extension() == ".kcase") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Writes a case; with r, its expect block holds r's answers and status is set to status.
static void write_kcase(std::ostream& o, const Case& c, const Result* r = nullptr, const std::string& status = "") {
  for (auto& l : c.head) {
    if (r && l.rfind("status ", 0) == 0) { o << "status " << status << "\n"; continue; }
    o << l << "\n";
  }
  o << "ptx\n" << c.ptx << "endptx\n";
  if (r) {
    o << "expect load " << r->load << " launch " << r->launch << " sync " << r->sync;
    if (r->status != "ok") o << " end " << r->status;
    o << "\n";
    for (size_t i = 0; i < r->out.size(); i += 64) o << tohex(&r->out[i], std::min<size_t>(64, r->out.size() - i)) << "\n";
    o << "endexpect\n";
  } else if (c.has_expect) {
    o << "expect load " << c.e_load << " launch " << c.e_launch << " sync " << c.e_sync;
    if (c.e_status != "ok") o << " end " << c.e_status;
    o << "\n";
    for (size_t i = 0; i < c.expect.size(); i += 64) o << tohex(&c.expect[i], std::min<size_t>(64, c.expect.size() - i)) << "\n";
    o << "endexpect\n";
  }
  o << "end\n";
}

// ---- running one case (in the child process) ---------------------------------------------------

// Writes "load RC launch RC sync RC\n" then the output bytes to outp; the JIT log to stderr.
// fault (a test hook for the minimizer, `diff --fault TEXT`): when the PTX holds TEXT, the first
// output byte comes back flipped, as if an instruction there were computed wrong.
static int exec_case(const std::string& lib, const Case& c, const std::string& outp, const std::string& fault = "") {
  FILE* f = fopen(outp.c_str(), "wb");
  if (!f) return 2;
  difftest::Api api;
  auto done = [&](const char* why) { fprintf(f, "setup %s\n", why); fclose(f); return 3; };
  if (!api.load(lib)) return done("dlopen");
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (api.cuInit(0) || api.cuDeviceGet(&dev, 0) || api.cuDevicePrimaryCtxRetain(&ctx, dev) || api.cuCtxSetCurrent(ctx)) return done("init");
  auto loadex = reinterpret_cast<CUresult (*)(CUmodule*, const void*, unsigned, CUjit_option*, void**)>(api.sym("cuModuleLoadDataEx"));
  auto getfn = reinterpret_cast<CUresult (*)(CUfunction*, CUmodule, const char*)>(api.sym("cuModuleGetFunction"));
  auto launch = reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**)>(api.sym("cuLaunchKernel"));
  if (!loadex || !getfn || !launch) return done("symbols");
  auto in = input_bytes(c.isize, c.iseed);
  if (c.ifnv && difftest::fnv(in.data(), in.size()) != c.ifnv) return done("input-fnv");  // kgen.py and this mixer disagree
  std::vector<unsigned char> out = input_bytes(c.osize, c.oseed);
  for (auto& [o, n] : c.outzero) if (o + n <= out.size()) memset(&out[o], 0, n);
  CUdeviceptr din = 0, dout = 0;
  if (api.cuMemAlloc(&din, std::max<size_t>(c.isize, 1)) || api.cuMemAlloc(&dout, std::max<size_t>(c.osize, 1))) return done("alloc");
  if ((c.isize && api.cuMemcpyHtoD(din, in.data(), c.isize)) || (c.osize && api.cuMemcpyHtoD(dout, out.data(), c.osize))) return done("copy-in");
  char log[4096] = {0};
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[2] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log - 1))};
  CUmodule mod = nullptr;
  int rl = loadex(&mod, c.ptx.c_str(), 2, opts, vals), rn = -1, rs = -1;
  if (log[0]) fprintf(stderr, "jit log: %s\n", log);
  CUfunction fn = nullptr;
  if (!rl) rl = getfn(&fn, mod, c.kernel.c_str());
  if (!rl) {
    std::vector<uint64_t> vals64(c.params.size());
    std::vector<uint32_t> vals32(c.params.size());
    std::vector<void*> args;
    for (size_t i = 0; i < c.params.size(); ++i) {
      const std::string& p = c.params[i];
      if (p == "in") { vals64[i] = din; args.push_back(&vals64[i]); }
      else if (p == "out") { vals64[i] = dout; args.push_back(&vals64[i]); }
      else if (p.rfind("u32:", 0) == 0) { vals32[i] = static_cast<uint32_t>(std::stoul(p.substr(4), nullptr, 0)); args.push_back(&vals32[i]); }
      else if (p.rfind("u64:", 0) == 0) { vals64[i] = std::stoull(p.substr(4), nullptr, 0); args.push_back(&vals64[i]); }
      else return done("param");
    }
    rn = launch(fn, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2], c.shared, nullptr, args.data(), nullptr);
    rs = api.cuCtxSynchronize();
  }
  fprintf(f, "load %d launch %d sync %d\n", rl, rn, rs);
  if (!rl && !rn && !rs && c.osize && api.cuMemcpyDtoH(out.data(), dout, c.osize) == 0) {
    if (!fault.empty() && c.ptx.find(fault) != std::string::npos) out[0] ^= 1;
    fwrite(out.data(), 1, out.size(), f);
  }
  fclose(f);
  return 0;
}

static Result run_case(const std::string& lib, const std::string& file, size_t index, int timeout_s, const std::string& fault = "") {
  std::string base = g_tmp + "/k" + std::to_string(g_counter++);
  std::string outp = base + ".out", errp = base + ".err";
  Result r;
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int dn = open("/dev/null", O_RDWR), ef = open(errp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(dn, 0); dup2(dn, 1); dup2(ef, 2);
    std::string idx = std::to_string(index);
    execl(g_self.c_str(), "difftest", "kexec", lib.c_str(), file.c_str(), idx.c_str(), outp.c_str(), fault.c_str(), static_cast<char*>(nullptr));
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
  kill(-pid, SIGKILL);
  std::ifstream in(outp, std::ios::binary);
  std::string first;
  std::getline(in, first);
  if (sscanf(first.c_str(), "load %d launch %d sync %d", &r.load, &r.launch, &r.sync) == 3)
    r.out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  r.status = timed_out ? "timeout" : WIFSIGNALED(st) ? "crash SIG" + std::to_string(WTERMSIG(st))
           : first.rfind("setup ", 0) == 0 ? first : WEXITSTATUS(st) ? "exit " + std::to_string(WEXITSTATUS(st)) : "ok";
  for (auto& l : lines_of(errp)) if (l.rfind("jit log: ", 0) == 0) { r.log = l.substr(9); break; }
  unlink(outp.c_str());
  if (!getenv("DIFFTEST_KEEP_ERR")) unlink(errp.c_str());
  return r;
}

// ---- comparing -------------------------------------------------------------------------------

static long long ordered(uint64_t bits, int width) {
  uint64_t sign = 1ull << (width - 1);
  uint64_t mag = bits & (sign - 1);
  return (bits & sign) ? -static_cast<long long>(mag) : static_cast<long long>(mag);
}
// Within tolerance: same bits, both NaN, within ulps units in the last place, or within abs.
static bool close_enough(const unsigned char* a, const unsigned char* b, const Tol& t) {
  int w = t.type == "f64" ? 64 : 32;
  uint64_t ua = 0, ub = 0;
  memcpy(&ua, a, w / 8); memcpy(&ub, b, w / 8);
  if (ua == ub) return true;
  double fa, fb;
  if (w == 32) { float x, y; memcpy(&x, &ua, 4); memcpy(&y, &ub, 4); fa = x; fb = y; }
  else { memcpy(&fa, &ua, 8); memcpy(&fb, &ub, 8); }
  if (std::isnan(fa) || std::isnan(fb)) return std::isnan(fa) && std::isnan(fb);
  if (std::isinf(fa) || std::isinf(fb)) return fa == fb;
  if (std::llabs(ordered(ua, w) - ordered(ub, w)) <= t.ulps) return true;
  return t.abs > 0 && std::fabs(fa - fb) <= t.abs;
}

struct Cmp {
  std::string kind;  // "" same; "rc"; "bytes"; "crash"
  std::string what;
  long first = -1;  // first differing byte
  size_t nbytes = 0;
};

static std::string rcs(int l, int n, int s) { return "load " + std::to_string(l) + " launch " + std::to_string(n) + " sync " + std::to_string(s); }

// want: the expected side (the recording or driver A), got: the other.
static Cmp compare(const Case& c, int wl, int wn, int ws, const std::string& wstatus, const std::vector<unsigned char>& want, const Result& got) {
  Cmp d;
  if (wstatus != got.status) { d.kind = "crash"; d.what = "process: want " + wstatus + ", got " + got.status; return d; }
  if (wl != got.load || wn != got.launch || ws != got.sync) { d.kind = "rc"; d.what = "want " + rcs(wl, wn, ws) + ", got " + rcs(got.load, got.launch, got.sync); return d; }
  if (want.size() != got.out.size()) {
    d.kind = "bytes";
    d.what = "output size: want " + std::to_string(want.size()) + ", got " + std::to_string(got.out.size());
    return d;
  }
  std::vector<char> tolerant(want.size(), 0);
  for (auto& t : c.tols) {
    size_t w = t.type == "f64" ? 8 : 4;
    for (size_t at = t.off; t.stride && at + w <= want.size(); at += t.stride) {
      if (!close_enough(&want[at], &got.out[at], t)) {
        if (d.first < 0 || static_cast<long>(at) < d.first) d.first = static_cast<long>(at);
        d.nbytes += w;
      }
      memset(&tolerant[at], 1, w);
    }
  }
  for (size_t i = 0; i < want.size(); ++i)
    if (!tolerant[i] && want[i] != got.out[i]) {
      if (d.first < 0 || static_cast<long>(i) < d.first) d.first = static_cast<long>(i);
      ++d.nbytes;
    }
  if (d.first >= 0) {
    d.kind = "bytes";
    size_t slot = c.slot ? c.slot : (c.tols.empty() ? 0 : c.tols[0].stride);
    char buf[256];
    size_t a = static_cast<size_t>(d.first) & ~size_t(3);
    std::string wv = tohex(&want[a], std::min<size_t>(4, want.size() - a)), gv = tohex(&got.out[a], std::min<size_t>(4, want.size() - a));
    if (slot && static_cast<size_t>(d.first) < slot * c.grid[0] * c.block[0] * c.grid[1] * c.block[1] * c.grid[2] * c.block[2])
      snprintf(buf, sizeof buf, "%zu bytes differ; first at %ld (thread %zu, slot offset %zu): want %s got %s", d.nbytes, d.first,
               d.first / slot, d.first % slot, wv.c_str(), gv.c_str());
    else
      snprintf(buf, sizeof buf, "%zu bytes differ; first at %ld: want %s got %s", d.nbytes, d.first, wv.c_str(), gv.c_str());
    d.what = buf;
  }
  return d;
}
static Cmp compare_expect(const Case& c, const Result& got) { return compare(c, c.e_load, c.e_launch, c.e_sync, c.e_status, c.expect, got); }
static Cmp compare_runs(const Case& c, const Result& a, const Result& b) { return compare(c, a.load, a.launch, a.sync, a.status, a.out, b); }

// Where a divergence is, for the minimizer: the same kind and, for bytes, the same slot offset.
static std::string div_key(const Case& c, const Cmp& d) {
  if (d.kind != "bytes") return d.kind + " " + d.what;
  size_t slot = c.slot ? c.slot : 0;
  return "bytes@" + std::to_string(slot ? d.first % slot : d.first);
}

struct Loaded {
  std::string file;
  size_t index;
  Case c;
};
static bool load_all(const std::vector<std::string>& pos, std::vector<Loaded>& all, const std::string& families) {
  std::set<std::string> want;
  std::istringstream in(families);
  for (std::string f; std::getline(in, f, ',');) if (!f.empty()) want.insert(f);
  for (auto& f : kcase_files(pos)) {
    std::vector<Case> cs;
    std::string err;
    if (!load_kcases(f, cs, err)) { fprintf(stderr, "difftest kernel: %s\n", err.c_str()); return false; }
    for (size_t i = 0; i < cs.size(); ++i) if (want.empty() || want.count(cs[i].family)) all.push_back({f, i, cs[i]});
  }
  return true;
}

// ---- minimizing -------------------------------------------------------------------------------

// Drops "//d" lines of the PTX while drivers A and B still diverge the same way.
static Case minimize(const Case& c0, const std::string& a, const std::string& b, const std::string& fault, int timeout, Clock::time_point deadline, int& tests) {
  std::vector<std::string> lines;
  std::istringstream in(c0.ptx);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<int> drop;
  for (size_t i = 0; i < lines.size(); ++i) if (lines[i].size() > 3 && lines[i].compare(lines[i].size() - 3, 3, "//d") == 0) drop.push_back(static_cast<int>(i));
  auto build = [&](const std::set<int>& gone) {
    Case c = c0;
    c.ptx.clear();
    for (size_t i = 0; i < lines.size(); ++i) if (!gone.count(static_cast<int>(i))) c.ptx += lines[i] + "\n";
    return c;
  };
  // The divergence's key ("" when none, or when A did not run the kernel).
  auto key_of = [&](const std::set<int>& gone) {
    Case c = build(gone);
    std::string f = g_tmp + "/min" + std::to_string(g_counter++) + ".kcase";
    { std::ofstream o(f); write_kcase(o, c); }
    ++tests;
    Result ra = run_case(a, f, 0, timeout), rb = run_case(b, f, 0, timeout, fault);
    unlink(f.c_str());
    Cmp d = compare_runs(c, ra, rb);
    if (d.kind.empty() || ra.status != "ok" || ra.load || ra.launch || ra.sync) return std::string();
    return div_key(c, d);
  };
  std::string want = key_of({});
  if (want.empty()) return c0;
  std::set<int> gone;
  std::vector<int> rem = drop;
  for (size_t n = 2; !rem.empty();) {
    n = std::min(n, rem.size());
    size_t chunk = (rem.size() + n - 1) / n;
    bool cut = false;
    for (size_t k = 0; k < n && !cut; ++k) {
      if (Clock::now() > deadline) return build(gone);
      std::set<int> cand = gone;
      std::vector<int> left;
      for (size_t j = 0; j < rem.size(); ++j) {
        if (j / chunk == k) cand.insert(rem[j]);
        else left.push_back(rem[j]);
      }
      if (key_of(cand) == want) { gone = cand; rem = left; n = std::max<size_t>(n - 1, 2); cut = true; }
    }
    if (!cut) { if (n >= rem.size()) break; n = std::min(n * 2, rem.size()); }
  }
  return build(gone);
}

// ---- commands ---------------------------------------------------------------------------------

struct Tally { size_t cases = 0, same = 0, diverge = 0, error = 0, refused = 0, open = 0, unstable = 0; };

static void print_tally(const std::map<std::string, Tally>& t, FILE* f = stdout) {
  fprintf(f, "%-10s %6s %6s %8s %6s %8s %6s %8s\n", "family", "cases", "same", "diverge", "error", "refused", "open", "unstable");
  Tally all;
  for (auto& [k, v] : t) {
    fprintf(f, "%-10s %6zu %6zu %8zu %6zu %8zu %6zu %8zu\n", k.c_str(), v.cases, v.same, v.diverge, v.error, v.refused, v.open, v.unstable);
    all.cases += v.cases; all.same += v.same; all.diverge += v.diverge; all.error += v.error; all.refused += v.refused; all.open += v.open; all.unstable += v.unstable;
  }
  fprintf(f, "%-10s %6zu %6zu %8zu %6zu %8zu %6zu %8zu\n", "all", all.cases, all.same, all.diverge, all.error, all.refused, all.open, all.unstable);
}

constexpr int kNotSupported = 801;  // CUDA_ERROR_NOT_SUPPORTED: the emulator's launch before kernels run

// record: runs every case on one driver (twice: answers that change are "unstable") and writes
// the cases with its answers as expect, one output file per input file.
static int cmd_record(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  std::string lib = m.count("lib") ? m["lib"] : "system", outdir = m.count("out") ? m["out"] : "";
  if (outdir.empty() || pos.empty()) { fprintf(stderr, "kernel record: --lib LIB --out DIR [--label L] [--jobs N] CASES...\n"); return 2; }
  int jobs = m.count("jobs") ? std::stoi(m["jobs"]) : 4, timeout = m.count("timeout") ? std::stoi(m["timeout"]) : 60;
  int repeat = m.count("repeat") ? std::stoi(m["repeat"]) : 2;
  std::vector<Loaded> all;
  if (!load_all(pos, all, m.count("family") ? m["family"] : "")) return 2;
  std::vector<Result> R(all.size());
  std::vector<int> unstable(all.size());
  auto t0 = Clock::now();
  parallel(all.size(), jobs, [&](size_t i) {
    R[i] = run_case(lib, all[i].file, all[i].index, timeout);
    for (int k = 1; k < repeat; ++k) {
      Result again = run_case(lib, all[i].file, all[i].index, timeout);
      if (again.status != R[i].status || again.load != R[i].load || again.launch != R[i].launch || again.out != R[i].out) unstable[i] = 1;
    }
  });
  fs::create_directories(outdir);
  std::map<std::string, std::ofstream> outs;
  std::map<std::string, Tally> t;
  std::string label = m.count("label") ? m["label"] : lib;
  for (size_t i = 0; i < all.size(); ++i) {
    std::string name = fs::path(all[i].file).filename().string();
    auto& o = outs[name];
    if (!o.is_open()) {
      o.open(outdir + "/" + name);
      o << "# difftest kernel cases, recorded (docs/difftest.md, Kernels)\n# real: " << label << "\n";
    }
    const Result& r = R[i];
    Tally& ft = t[all[i].c.family];
    ++ft.cases;
    std::string status = "recorded";
    if (unstable[i]) { status = "unstable: answers differ between runs"; ++ft.unstable; }
    else if (r.status != "ok") { status = "recorded: " + r.status; ++ft.error; }
    else if (r.load || r.launch || r.sync) { status = "recorded: " + rcs(r.load, r.launch, r.sync) + (r.log.empty() ? "" : " (" + r.log.substr(0, 120) + ")"); ++ft.error; }
    else ++ft.same;
    for (auto& ch : status) if (ch == '\n') ch = ' ';
    write_kcase(o, all[i].c, &r, status);
  }
  printf("kernel record: %zu cases on %s in %.1fs (same = ran and copied back; error = did not)\n", all.size(), label.c_str(), secs(t0));
  print_tally(t);
  return 0;
}

// replay: holds one driver to the recorded answers (--keep DIR: each diverging case is written
// there with status open, to review and keep). Exit 0 when every compared case agrees,
// 1 on a divergence (cases with status "open" are reported, not failed), 77 when no case
// could compare bytes (the emulator refused every launch): CTest reports that as skipped.
static int cmd_kreplay(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  std::string lib = m.count("lib") ? m["lib"] : "system";
  int jobs = m.count("jobs") ? std::stoi(m["jobs"]) : 2, timeout = m.count("timeout") ? std::stoi(m["timeout"]) : 60;
  bool verbose = m.count("verbose");
  std::vector<Loaded> all;
  if (!load_all(pos, all, m.count("family") ? m["family"] : "")) return 2;
  std::vector<std::string> line(all.size());
  std::map<std::string, Tally> t;
  std::mutex mu;
  size_t compared = 0, failed = 0, refused = 0;
  parallel(all.size(), jobs, [&](size_t i) {
    const Case& c = all[i].c;
    if (!c.has_expect || c.status.rfind("unstable", 0) == 0) {
      std::lock_guard<std::mutex> l(mu);
      ++t[c.family].cases;
      ++t[c.family].unstable;
      line[i] = "SKIP " + c.name + ": " + (c.has_expect ? c.status : "no expect block");
      return;
    }
    Result r = run_case(lib, all[i].file, all[i].index, timeout);
    Cmp d = compare_expect(c, r);
    std::lock_guard<std::mutex> l(mu);
    Tally& ft = t[c.family];
    ++ft.cases;
    bool open = c.status.rfind("open", 0) == 0;
    if (d.kind.empty()) { ++ft.same; ++compared; line[i] = "PASS " + c.name + (open ? " (status: open, but it matches now)" : ""); return; }
    if (r.launch == kNotSupported && c.e_launch == 0) {
      ++ft.refused; ++refused;
      line[i] = "NOT RUN " + c.name + ": the launch was refused (CUDA_ERROR_NOT_SUPPORTED): no bytes compared";
      return;
    }
    if (d.kind != "bytes") ++ft.error; else ++ft.diverge;
    if (open) { ++ft.open; compared += d.kind == "bytes"; line[i] = "OPEN " + c.name + ": " + d.what; return; }
    ++failed;
    compared += d.kind == "bytes";
    if (m.count("keep")) {  // the diverging case as a kept one: the recording's bytes, status open
      fs::create_directories(m["keep"]);
      Case k = c;
      for (auto& h : k.head) if (h.rfind("status ", 0) == 0) h = "status open: " + d.what;
      std::ofstream o(m["keep"] + "/" + c.name + ".kcase");
      o << "# difftest kernel case, diverging on replay (docs/difftest.md, Kernels)\n";
      write_kcase(o, k);
    }
    line[i] = "FAIL " + c.name + " [" + c.family + "]: " + d.what + (r.log.empty() ? "" : " (jit: " + r.log.substr(0, 160) + ")");
  });
  for (auto& l : line) if (verbose || l.rfind("PASS", 0) != 0 || l.find("status: open") != std::string::npos) printf("%s\n", l.c_str());
  print_tally(t);
  printf("%zu cases: %zu compared bytes, %zu failed, %zu not run (launch refused)\n", all.size(), compared, failed, refused);
  if (failed) return 1;
  if (refused && !m.count("allow-refused")) {
    if (!compared) {
      printf("NOT RUN: the driver refused every launch (CUDA_SHIM_KERNELS=refuse?), so no byte was compared; skipped, not passed\n");
      return 77;
    }
    printf("FAIL: %zu launches refused where NVIDIA's driver ran them\n", refused);
    return 1;
  }
  return compared ? 0 : 77;
}

// diff: both drivers, live (a GPU machine), per-family counts; then minimizes up to --minimize
// diverging cases of each family and writes them, with A's answers, to OUT/kept/.
static int cmd_kdiff(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  if (!m.count("b") || !m.count("out") || pos.empty()) { fprintf(stderr, "kernel diff: --a LIB --b LIB --out DIR [--minimize N] CASES...\n"); return 2; }
  std::string a = m.count("a") ? m["a"] : "system", b = m["b"], outdir = m["out"];
  int jobs = m.count("jobs") ? std::stoi(m["jobs"]) : 4, timeout = m.count("timeout") ? std::stoi(m["timeout"]) : 60;
  int per_family = m.count("minimize") ? std::stoi(m["minimize"]) : 3;
  std::string fault = m.count("fault") ? m["fault"] : "";
  double min_s = m.count("minimize-seconds") ? std::stod(m["minimize-seconds"]) : 300;
  std::vector<Loaded> all;
  if (!load_all(pos, all, m.count("family") ? m["family"] : "")) return 2;
  std::vector<Result> RA(all.size()), RB(all.size());
  std::vector<Cmp> D(all.size());
  auto t0 = Clock::now();
  parallel(all.size(), jobs, [&](size_t i) {
    RA[i] = run_case(a, all[i].file, all[i].index, timeout);
    RB[i] = run_case(b, all[i].file, all[i].index, timeout, fault);
    D[i] = compare_runs(all[i].c, RA[i], RB[i]);
  });
  fs::create_directories(outdir + "/kept");
  std::map<std::string, Tally> t;
  std::ofstream rep(outdir + "/divergences.txt");
  std::map<std::string, std::vector<size_t>> to_min;
  for (size_t i = 0; i < all.size(); ++i) {
    Tally& ft = t[all[i].c.family];
    ++ft.cases;
    if (D[i].kind.empty()) { ++ft.same; continue; }
    if (RB[i].launch == kNotSupported && RA[i].launch == 0) ++ft.refused;
    else if (D[i].kind == "bytes") ++ft.diverge;
    else ++ft.error;
    rep << all[i].c.name << " [" << all[i].c.family << "]: " << D[i].what << (RB[i].log.empty() ? "" : " (B jit: " + RB[i].log + ")") << "\n";
    bool a_ran = RA[i].status == "ok" && !RA[i].load && !RA[i].launch && !RA[i].sync;
    if (a_ran && RB[i].launch != kNotSupported && to_min[all[i].c.family].size() < static_cast<size_t>(per_family)) to_min[all[i].c.family].push_back(i);
  }
  std::vector<size_t> mins;
  for (auto& [f, v] : to_min) mins.insert(mins.end(), v.begin(), v.end());
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(min_s * 1000));
  std::string label = m.count("label") ? m["label"] : a;
  parallel(mins.size(), jobs, [&](size_t j) {
    size_t i = mins[j];
    int tests = 0;
    Case c = minimize(all[i].c, a, b, fault, timeout, deadline, tests);
    std::string f = outdir + "/kept/" + c.name + ".kcase";
    { std::ofstream o(f); write_kcase(o, c); }
    Result ra = run_case(a, f, 0, timeout), rb = run_case(b, f, 0, timeout, fault);
    Cmp d = compare_runs(c, ra, rb);
    size_t before = 0, after = 0;
    for (char ch : all[i].c.ptx) before += ch == '\n';
    for (char ch : c.ptx) after += ch == '\n';
    std::string status = "open: " + (d.kind.empty() ? std::string("no longer diverges after minimizing") : d.what) + " (minimized " +
                         std::to_string(before) + " -> " + std::to_string(after) + " lines, " + std::to_string(tests) + " tests)";
    std::ofstream o(f);
    o << "# difftest kernel case, minimized (docs/difftest.md, Kernels)\n# real: " << label << "\n";
    write_kcase(o, c, &ra, status);
  });
  printf("kernel diff: %zu cases in %.1fs; A=%s B=%s\n", all.size(), secs(t0), a.c_str(), b.c_str());
  print_tally(t);
  FILE* f = fopen((outdir + "/report.txt").c_str(), "w");
  if (f) { fprintf(f, "kernel diff: A=%s (%s) B=%s\n", a.c_str(), label.c_str(), b.c_str()); print_tally(t, f); fclose(f); }
  printf("divergences: %s/divergences.txt; minimized cases: %s/kept/\n", outdir.c_str(), outdir.c_str());
  return 0;
}

// run: one driver's answers, one line a case (for a look by hand).
static int cmd_krun(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  std::string lib = m.count("lib") ? m["lib"] : "system";
  std::vector<Loaded> all;
  if (!load_all(pos, all, m.count("family") ? m["family"] : "")) return 2;
  for (auto& l : all) {
    Result r = run_case(lib, l.file, l.index, m.count("timeout") ? std::stoi(m["timeout"]) : 60);
    printf("{\"case\":\"%s\",\"status\":\"%s\",\"load\":%d,\"launch\":%d,\"sync\":%d,\"bytes\":%zu,\"fnv\":\"%s\"}\n", l.c.name.c_str(),
           r.status.c_str(), r.load, r.launch, r.sync, r.out.size(), difftest::hex(difftest::fnv(r.out.data(), r.out.size())).c_str());
    if (m.count("hex")) for (size_t i = 0; i < r.out.size(); i += 64) printf("  %s\n", tohex(&r.out[i], std::min<size_t>(64, r.out.size() - i)).c_str());
    if (!r.log.empty()) printf("  jit: %s\n", r.log.c_str());
  }
  return 0;
}

// check: parses the cases and recomputes each input's FNV-1a (kgen.py's mixer and this one
// must agree); no driver.
static int cmd_kcheck(std::map<std::string, std::string>& m, const std::vector<std::string>& pos) {
  std::vector<Loaded> all;
  if (pos.empty() || !load_all(pos, all, m.count("family") ? m["family"] : "")) return 2;
  size_t bad = 0, expect = 0;
  for (auto& l : all) {
    auto in = input_bytes(l.c.isize, l.c.iseed);
    expect += l.c.has_expect;
    if (l.c.ifnv && difftest::fnv(in.data(), in.size()) != l.c.ifnv) { ++bad; printf("FAIL %s: input bytes differ from kgen.py's\n", l.c.name.c_str()); }
    if (l.c.ptx.find(".entry " + l.c.kernel) == std::string::npos) { ++bad; printf("FAIL %s: no .entry %s\n", l.c.name.c_str(), l.c.kernel.c_str()); }
  }
  printf("%zu cases (%zu with expected bytes), %zu bad\n", all.size(), expect, bad);
  return bad || all.empty() ? 1 : 0;
}

}  // namespace kdiff

static int cmd_kernel(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: difftest kernel record|replay|diff|run|check ... (docs/difftest.md, Kernels)\n");
    return 2;
  }
  std::vector<std::string> pos;
  auto m = parse_args(argc, argv, 3, pos);
  std::string c = argv[2];
  return c == "record" ? kdiff::cmd_record(m, pos) : c == "replay" ? kdiff::cmd_kreplay(m, pos)
       : c == "diff" ? kdiff::cmd_kdiff(m, pos) : c == "run" ? kdiff::cmd_krun(m, pos)
       : c == "check" ? kdiff::cmd_kcheck(m, pos) : 2;
}

// The child: difftest kexec LIB FILE INDEX OUT.
static int cmd_kexec(const char* lib, const char* file, const char* index, const char* outp, const char* fault) {
  std::vector<kdiff::Case> cs;
  std::string err;
  size_t i = std::stoul(index);
  if (!kdiff::load_kcases(file, cs, err) || i >= cs.size()) { fprintf(stderr, "kexec: %s\n", err.c_str()); return 2; }
  return kdiff::exec_case(lib, cs[i], outp, fault);
}
