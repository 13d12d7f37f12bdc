#!/usr/bin/env python3
"""kgen: random, well-typed PTX kernels for the differential kernel tester (docs/difftest.md, Kernels).

  kgen.py gen --families int,bit --count 50 --seed 1 OUTDIR   -> OUTDIR/<family>.kcase
  kgen.py hand OUTDIR                                         -> hand-written kernels, expected
                                                                 bytes from a host reference
  kgen.py input SIZE SEED                                     -> the input bytes, hex (a check)

Each generated kernel: every thread loads typed values from its slot of the input buffer (indexed
by its global thread id), runs a random sequence of one family's instructions over registers and
stores every register to its slot of the output buffer, so every output byte is defined. The same
seed gives the same case, byte for byte. Body lines the minimizer may drop end with "//d".
Families: """

import argparse
import os
import struct
import sys

M64 = (1 << 64) - 1

EXCLUDE = []  # gen --exclude: droppable lines holding one of these are not emitted

FAMILIES = ["int", "bit", "pred", "float", "approx", "cvt", "half", "div", "warp", "shared", "atom", "undefined", "mix"]


# ---- deterministic randomness (no dependence on Python's random module) -------------------------

def splitmix(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


class Rng:
    def __init__(self, seed):
        self.s = seed & M64

    def next(self):
        self.s, v = splitmix(self.s)
        return v

    def below(self, n):
        return self.next() % n

    def pick(self, seq):
        return seq[self.below(len(seq))]

    def chance(self, p):
        return self.next() < p * 2.0 ** 64


# ---- the input bytes: shared with the C++ runner (difftest_kernel.hpp, kernel_input) --------------

F32_SPECIAL = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0x40000000, 0x7F800000,
               0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00000, 0x00000001, 0x007FFFFF, 0x00800000,
               0x7F7FFFFF, 0x3F800001, 0x40400000, 0x40490FDB, 0x501502F9, 0xAEDBE6FF, 0x4B000000,
               0x4B7FFFFF, 0xCF000000, 0x4F000000, 0x3EAAAAAB, 0x80000001, 0x807FFFFF, 0xFF7FFFFF,
               0x5F000000, 0x3FFFFFFF, 0x34000000, 0xC0490FDB]
F64_SPECIAL = [0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
               0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001,
               0x0000000000000001, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
               0x3FF0000000000001, 0x400921FB54442D18, 0x4330000000000000, 0xC3E0000000000000,
               0x43E0000000000000, 0x3FD5555555555555, 0x41DFFFFFFFC00000, 0x47EFFFFFE0000000,
               0x380FFFFFFFFFFFFF, 0x36A0000000000000, 0x3E80000000000000, 0xFFEFFFFFFFFFFFFF]
F16_SPECIAL = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0x4000, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
               0x0001, 0x03FF, 0x0400, 0x7BFF, 0x3C01, 0x4248, 0xFBFF, 0x5BF8, 0x1400, 0x8001]


def input_chunk(a, b):
    """8 bytes of input (a little-endian u64) from two random words."""
    sel = a & 15
    if sel <= 5:
        return b
    if sel <= 7:
        return ((b % 33) - 16) & M64
    if sel == 8:
        return ((((b & 31) - 16) & 0xFFFFFFFF) | ((((b >> 8) & 31) - 16) & 0xFFFFFFFF) << 32)
    if sel <= 10:
        return F32_SPECIAL[(b & 0xFF) % len(F32_SPECIAL)] | F32_SPECIAL[((b >> 8) & 0xFF) % len(F32_SPECIAL)] << 32
    if sel == 11:
        return F64_SPECIAL[(b & 0xFF) % len(F64_SPECIAL)]
    if sel == 12:  # two "nice" floats: k/256 for k in [-32768, 32767]
        lo = struct.unpack("<I", struct.pack("<f", ((b & 0xFFFF) - 32768) / 256.0))[0]
        hi = struct.unpack("<I", struct.pack("<f", (((b >> 16) & 0xFFFF) - 32768) / 256.0))[0]
        return lo | hi << 32
    if sel == 13:
        v = 0
        for k in range(4):
            v |= F16_SPECIAL[((b >> (8 * k)) & 0xFF) % len(F16_SPECIAL)] << (16 * k)
        return v
    if sel == 14:  # a "nice" double
        return struct.unpack("<Q", struct.pack("<d", ((b & 0xFFFFF) - (1 << 19)) / 1024.0))[0]
    v = 0  # four bf16: upper halves of f32 specials
    for k in range(4):
        v |= (F32_SPECIAL[((b >> (8 * k)) & 0xFF) % len(F32_SPECIAL)] >> 16) << (16 * k)
    return v


def input_bytes(size, seed):
    r = Rng(seed)
    out = bytearray()
    while len(out) < size:
        a = r.next()
        b = r.next()
        out += struct.pack("<Q", input_chunk(a, b))
    return bytes(out[:size])


def fnv(data):
    h = 1469598103934665603
    for c in data:
        h = ((h ^ c) * 1099511628211) & M64
    return h


# ---- the kernel layout -----------------------------------------------------------------------------
# Per thread, input and output slots of STRIDE bytes: rd0..rd2 @0, r0..r5 @24, h0..h1 @48, then
# in the input a word of predicate bits @52, in the output p0..p1 as bytes @52; @56..64 the
# atomics family's own word (output only).

STRIDE = 64
N32, N64, N16, NP = 6, 3, 2, 2
R32 = ["%%r%d" % i for i in range(N32)]
R64 = ["%%rd%d" % i for i in range(N64)]
R16 = ["%%h%d" % i for i in range(N16)]
PR = ["%%p%d" % i for i in range(NP)]
OFF64, OFF32, OFF16, OFFP, OFFOWN = 0, 24, 48, 52, 56

REG = {8: R16, 16: R16, 32: R32, 64: R64}
TYPES_INT = ["u16", "s16", "u32", "s32", "u64", "s64"]


def bits(t):
    if t in ("f16", "bf16"):
        return 16
    if t in ("f16x2", "bf16x2"):
        return 32
    return int(t[1:])


def f32imm(u):
    return "0f%08X" % u


def f64imm(u):
    return "0d%016X" % u


class Kernel:
    """Builds one kernel's body; families add lines through self.emit."""

    def __init__(self, seed, family):
        self.rng = Rng(seed * 0x100000001B3 + FAMILIES.index(family) + 1)
        self.seed = seed
        self.family = family
        self.lines = []
        self.labels = 0
        self.tols = []  # (offset, type, ulps, abs)
        self.target = "sm_80"
        self.shared_decl = ""
        self.dyn_shared = 0
        self.outzero = []  # (offset, length) of the output zeroed by the host before the launch
        self.tail = 0  # bytes after the per-thread slots (atomics)
        self.block = 64
        self.grid = 2
        self.uses_own = False
        self.post = []  # lines after the stores (atomics' region copies)

    # -- helpers
    def emit(self, text, drop=True):
        if drop and any(x in text for x in EXCLUDE):
            return  # --exclude: an instruction the engine under test does not run yet
        self.lines.append("\t" + text + ("  //d" if drop else ""))

    def label(self):
        self.labels += 1
        return "L%d" % self.labels

    def reg(self, size):
        return self.rng.pick(REG[size])

    def src(self, size, imm=0.25, signed=False):
        if self.rng.chance(imm):
            r = self.rng
            k = r.below(6)
            if k == 0:
                return str(r.below(8))
            if k == 1 and signed:
                return str(-1 - r.below(8))
            if k == 2:
                return str(r.below(size))
            mask = (1 << min(size, 32)) - 1
            v = r.next() & mask
            return "0x%X" % v
        return self.reg(size)

    def pos(self, imm=0.5):
        """A bit position or length operand: an immediate 0..70 or a register (any value)."""
        return str(self.rng.below(71)) if self.rng.chance(imm) else self.reg(32)

    def fsrc(self, size, imm=0.2):
        if self.rng.chance(imm):
            if size == 32:
                return f32imm(self.rng.pick(F32_SPECIAL[:6] + [0x3F000000, 0x41200000, 0xC0A00000, 0x3DCCCCCD]))
            return f64imm(self.rng.pick(F64_SPECIAL[:4] + [0x3FE0000000000000, 0x4024000000000000]))
        return self.reg(size)

    # -- the whole text
    def ptx(self, name="k"):
        b = []
        b.append(".version 8.0")
        b.append(".target " + self.target)
        b.append(".address_size 64")
        b.append("// kgen family %s seed %d" % (self.family, self.seed))
        if self.shared_decl:
            b.append(self.shared_decl)
        b.append(".visible .entry %s(.param .u64 pin, .param .u64 pout)" % name)
        b.append("{")
        b.append("\t.reg .pred %%p<%d>;\n\t.reg .pred %%tp<4>;\n\t.reg .pred %%lp<4>;" % NP)
        b.append("\t.reg .b16 %%h<%d>;\n\t.reg .b16 %%th<4>;" % N16)
        b.append("\t.reg .b32 %%r<%d>;\n\t.reg .b32 %%t<6>;\n\t.reg .b32 %%lc<4>;\n\t.reg .b32 %%ai<8>;" % N32)
        b.append("\t.reg .b64 %%rd<%d>;\n\t.reg .b64 %%td<4>;\n\t.reg .b64 %%ad<8>;" % N64)
        b.append("\tld.param.u64 %ad0, [pin];")
        b.append("\tld.param.u64 %ad1, [pout];")
        b.append("\tcvta.to.global.u64 %ad0, %ad0;")
        b.append("\tcvta.to.global.u64 %ad1, %ad1;")
        b.append("\tmov.u32 %ai0, %tid.x;")
        b.append("\tmov.u32 %ai1, %ctaid.x;")
        b.append("\tmov.u32 %ai2, %ntid.x;")
        b.append("\tmad.lo.s32 %ai3, %ai1, %ai2, %ai0;")
        b.append("\tmul.wide.u32 %%ad2, %%ai3, %d;" % STRIDE)
        b.append("\tadd.s64 %ad3, %ad0, %ad2;  // my input slot")
        b.append("\tadd.s64 %ad4, %ad1, %ad2;  // my output slot")
        for i, r in enumerate(R64):
            b.append("\tld.global.u64 %s, [%%ad3+%d];" % (r, OFF64 + 8 * i))
        for i, r in enumerate(R32):
            b.append("\tld.global.u32 %s, [%%ad3+%d];" % (r, OFF32 + 4 * i))
        for i, r in enumerate(R16):
            b.append("\tld.global.u16 %s, [%%ad3+%d];" % (r, OFF16 + 2 * i))
        b.append("\tld.global.u32 %%t0, [%%ad3+%d];" % OFFP)
        for i, p in enumerate(PR):
            b.append("\tand.b32 %%t1, %%t0, %d;" % (1 << i))
            b.append("\tsetp.ne.u32 %s, %%t1, 0;" % p)
        b.append("\t// body")
        b.extend(self.lines)
        b.append("\t// stores")
        for i, r in enumerate(R64):
            b.append("\tst.global.u64 [%%ad4+%d], %s;" % (OFF64 + 8 * i, r))
        for i, r in enumerate(R32):
            b.append("\tst.global.u32 [%%ad4+%d], %s;" % (OFF32 + 4 * i, r))
        for i, r in enumerate(R16):
            b.append("\tst.global.u16 [%%ad4+%d], %s;" % (OFF16 + 2 * i, r))
        for i, p in enumerate(PR):
            b.append("\tselp.u16 %%th0, 1, 0, %s;" % p)
            b.append("\tst.global.u8 [%%ad4+%d], %%th0;" % (OFFP + i))
        b.extend(self.post)
        b.append("\tret;")
        b.append("}")
        return "\n".join(b) + "\n"


# ---- the families ----------------------------------------------------------------------------------

def safe_divisor(k, size, s):
    """Lines putting a divisor that is neither 0 nor -1 into a temp: (s & ~2) | 1."""
    t = {16: "%th1", 32: "%t5", 64: "%td3"}[size]
    return t, "and.b%d %s, %s, -3; or.b%d %s, %s, 1;" % (size, t, s, size, t, t)


def op_int(k):
    r = k.rng
    t = r.pick(TYPES_INT)
    sz = bits(t)
    signed = t[0] == "s"
    d, a, b, c = k.reg(sz), k.reg(sz), k.src(sz, signed=signed), k.reg(sz)
    op = r.below(16)
    if op == 0:
        k.emit("add.%s %s, %s, %s;" % (t, d, a, b))
    elif op == 1:
        k.emit("sub.%s %s, %s, %s;" % (t, d, a, b))
    elif op == 2:
        k.emit("%s.sat.s32 %s, %s, %s;" % (r.pick(["add", "sub"]), k.reg(32), k.reg(32), k.src(32, signed=True)))
    elif op == 3:
        k.emit("mul.%s.%s %s, %s, %s;" % (r.pick(["lo", "hi"]), t, d, a, b))
    elif op == 4 and sz < 64:
        k.emit("mul.wide.%s %s, %s, %s;" % (t, k.reg(2 * sz), a, b))
    elif op == 5:
        k.emit("mad.%s.%s %s, %s, %s, %s;" % (r.pick(["lo", "hi"]), t, d, a, b, c))
    elif op == 6 and sz < 64:
        k.emit("mad.wide.%s %s, %s, %s, %s;" % (t, k.reg(2 * sz), a, b, k.reg(2 * sz)))
    elif op == 7:
        k.emit("mad.hi.sat.s32 %s, %s, %s, %s;" % (k.reg(32), k.reg(32), k.src(32, signed=True), k.reg(32)))
    elif op == 8:
        tmp, pre = safe_divisor(k, sz, k.reg(sz))
        k.emit("%s %s.%s %s, %s, %s;" % (pre, r.pick(["div", "rem"]), t, d, a, tmp))
    elif op == 9:
        k.emit("%s.%s %s, %s, %s;" % (r.pick(["min", "max"]), t, d, a, b))
    elif op == 10:
        st = r.pick(["s16", "s32", "s64"])
        k.emit("%s.%s %s, %s;" % (r.pick(["abs", "neg"]), st, k.reg(bits(st)), k.reg(bits(st))))
    elif op == 11:
        t2 = r.pick(["u32", "s32"])
        k.emit("%s.%s.%s %s, %s, %s;" % (r.pick(["mul24"]), r.pick(["lo", "hi"]), t2, k.reg(32), k.reg(32), k.src(32)))
    elif op == 12:
        t2 = r.pick(["u32", "s32"])
        k.emit("mad24.%s.%s %s, %s, %s, %s;" % (r.pick(["lo", "hi"]), t2, k.reg(32), k.reg(32), k.src(32), k.reg(32)))
    elif op == 13:
        k.emit("sad.%s %s, %s, %s, %s;" % (t, d, a, b, c))
    elif op == 14:  # carry chains: 96-bit add or sub over three words
        x = [k.reg(32) for _ in range(3)]
        y = [k.src(32) for _ in range(3)]
        o = r.pick(["add", "sub"])
        k.emit("%s.cc.u32 %%t0, %s, %s; %sc.cc.u32 %%t1, %s, %s; %sc.u32 %%t2, %s, %s; xor.b32 %s, %%t0, %%t1; add.u32 %s, %s, %%t2;"
               % (o, x[0], y[0], o, x[1], y[1], o, x[2], y[2], k.reg(32), d if sz == 32 else k.reg(32), k.reg(32)))
    else:  # mad.lo.cc chain (64-bit product sum of two 32-bit halves)
        k.emit("mad.lo.cc.u32 %%t0, %s, %s, %s; madc.hi.u32 %%t1, %s, %s, 0; add.u32 %s, %%t0, %%t1;"
               % (k.reg(32), k.src(32), k.reg(32), k.reg(32), k.src(32), k.reg(32)))


def op_bit(k):
    r = k.rng
    sz = r.pick([16, 32, 64])
    d, a, b = k.reg(sz), k.reg(sz), k.src(sz)
    op = r.below(15)
    if op == 0:
        k.emit("%s.b%d %s, %s, %s;" % (r.pick(["and", "or", "xor"]), sz, d, a, b))
    elif op == 1:
        k.emit("%s.b%d %s, %s;" % (r.pick(["not", "cnot"]), sz, d, a))
    elif op == 2:
        t = r.pick(["b", "u", "s"]) if r.below(2) else "b"
        o = r.pick(["shl", "shr"])
        if o == "shl":
            t = "b"
        k.emit("%s.%s%d %s, %s, %s;" % (o, t, sz, d, a, k.pos()))
    elif op == 3:
        t = r.pick(["u32", "s32", "u64", "s64"])
        s2 = bits(t)
        k.emit("bfe.%s %s, %s, %s, %s;" % (t, k.reg(s2), k.reg(s2), k.pos(), k.pos()))
    elif op == 4:
        s2 = r.pick([32, 64])
        k.emit("bfi.b%d %s, %s, %s, %s, %s;" % (s2, k.reg(s2), k.reg(s2), k.reg(s2), k.pos(), k.pos()))
    elif op == 5:
        mode = r.pick(["", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"])
        k.emit("prmt.b32%s %s, %s, %s, %s;" % (mode, k.reg(32), k.reg(32), k.src(32), k.src(32)))
    elif op == 6:
        s2 = r.pick([32, 64])
        k.emit("brev.b%d %s, %s;" % (s2, k.reg(s2), k.reg(s2)))
    elif op == 7:
        s2 = r.pick([32, 64])
        k.emit("%s.b%d %s, %s;" % (r.pick(["clz", "popc"]), s2, k.reg(32), k.reg(s2)))
    elif op == 8:
        t = r.pick(["u32", "s32", "u64", "s64"])
        k.emit("bfind%s.%s %s, %s;" % (r.pick(["", ".shiftamt"]), t, k.reg(32), k.reg(bits(t))))
    elif op == 9:
        k.emit("lop3.b32 %s, %s, %s, %s, %d;" % (k.reg(32), k.reg(32), k.src(32), k.src(32), r.below(256)))
    elif op == 10:
        k.emit("shf.%s.%s.b32 %s, %s, %s, %s;" % (r.pick(["l", "r"]), r.pick(["wrap", "clamp"]), k.reg(32), k.reg(32), k.reg(32), k.pos()))
    elif op == 11:
        k.emit("and.b32 %%t0, %s, 31; fns.b32 %s, %s, %%t0, %s;" % (k.reg(32), k.reg(32), k.reg(32), k.pos()))
    elif op == 12:
        k.emit("bmsk.%s.b32 %s, %s, %s;" % (r.pick(["clamp", "wrap"]), k.reg(32), k.pos(), k.pos()))
    elif op == 13:
        k.emit("szext.%s.%s %s, %s, %s;" % (r.pick(["clamp", "wrap"]), r.pick(["u32", "s32"]), k.reg(32), k.reg(32), k.pos()))
    else:
        k.emit("%s.pred %s, %s, %s;" % (r.pick(["and", "or", "xor"]), k.rng.pick(PR), k.rng.pick(PR), k.rng.pick(PR)))


CMP_INT_S = ["eq", "ne", "lt", "le", "gt", "ge"]
CMP_INT_U = ["eq", "ne", "lo", "ls", "hi", "hs"]
CMP_F = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def setp_operands(k):
    r = k.rng
    t = r.pick(TYPES_INT + ["b16", "b32", "b64", "f32", "f64"])
    sz = bits(t)
    if t[0] == "f":
        cmp = r.pick(CMP_F)
        ftz = ".ftz" if t == "f32" and r.below(2) else ""
        return cmp, ftz + "." + t, k.reg(sz), k.fsrc(sz)
    cmp = r.pick(CMP_INT_U if t[0] in "ub" else CMP_INT_S)
    if t[0] == "b":
        cmp = r.pick(["eq", "ne"])
    return cmp, "." + t, k.reg(sz), k.src(sz, signed=t[0] == "s")


def op_pred(k):
    r = k.rng
    op = r.below(6)
    if op == 0:
        cmp, t, a, b = setp_operands(k)
        bop = r.pick(["", ".and", ".or", ".xor"])
        tail = (", %s%s" % (r.pick(["", "!"]), r.pick(PR))) if bop else ""
        two = ("|" + r.pick(PR)) if r.below(2) else ""
        k.emit("setp.%s%s%s %s%s, %s, %s%s;" % (cmp, bop, t, r.pick(PR), two, a, b, tail))
    elif op == 1:
        t = r.pick(["b16", "u16", "s16", "b32", "u32", "s32", "f32", "b64", "s64", "f64"])
        sz = bits(t)
        k.emit("selp.%s %s, %s, %s, %s;" % (t, k.reg(sz), k.reg(sz), k.src(sz) if t[0] != "f" else k.fsrc(sz), r.pick(PR)))
    elif op == 2:
        cmp, t, a, b = setp_operands(k)
        dt = r.pick(["u32", "s32", "f32"])
        bop = r.pick(["", ".and", ".or", ".xor"])
        tail = (", %s%s" % (r.pick(["", "!"]), r.pick(PR))) if bop else ""
        ftz = ""
        if ".ftz" in t:  # .ftz belongs to an f32 source
            t = t.replace(".ftz", "")
            ftz = ".ftz"
        k.emit("set.%s%s%s.%s%s %s, %s, %s%s;" % (cmp, bop, ftz, dt, t, k.reg(32), a, b, tail))
    elif op == 3:  # predicated execution of an integer or bit instruction
        sub = Kernel.__new__(Kernel)
        sub.__dict__ = dict(k.__dict__)
        sub.lines = []
        (op_int if r.below(2) else op_bit)(sub)
        line = sub.lines[0].strip().replace("  //d", "")
        guard = "@%s%s " % (r.pick(["", "!"]), r.pick(PR))
        # several instructions on one line: the guard goes on each
        parts = [p.strip() for p in line.split(";") if p.strip()]
        k.emit(" ".join(guard + p + ";" for p in parts))
    elif op == 4:
        k.emit("not.pred %s, %s;" % (r.pick(PR), r.pick(PR)))
    else:
        t = r.pick(["u32", "s32", "f32", "b64"])
        sz = bits(t)
        k.emit("slct.%s.s32 %s, %s, %s, %s;" % (t, k.reg(sz), k.reg(sz), k.reg(sz), k.reg(32)) if t != "f32" else
               "slct.ftz.%s.f32 %s, %s, %s, %s;" % ("b32", k.reg(32), k.reg(32), k.reg(32), k.reg(32)))


RND = [".rn", ".rz", ".rm", ".rp"]


def op_float(k):
    r = k.rng
    sz = r.pick([32, 32, 64])
    t = "f%d" % sz
    d, a, b, c = k.reg(sz), k.reg(sz), k.fsrc(sz), k.reg(sz)
    ftz = lambda: ".ftz" if sz == 32 and r.below(2) else ""
    sat = lambda: ".sat" if sz == 32 and r.below(4) == 0 else ""
    op = r.below(12)
    if op <= 2:
        k.emit("%s%s%s%s.%s %s, %s, %s;" % (["add", "sub", "mul"][op], r.pick(RND), ftz(), sat(), t, d, a, b))
    elif op == 3:
        k.emit("fma%s%s%s.%s %s, %s, %s, %s;" % (r.pick(RND), ftz(), sat(), t, d, a, b, c))
    elif op == 4:
        k.emit("div%s%s.%s %s, %s, %s;" % (r.pick(RND), ftz(), t, d, a, b))
    elif op == 5:
        k.emit("%s%s%s.%s %s, %s;" % (r.pick(["rcp", "sqrt"]), r.pick(RND), ftz(), t, d, a))
    elif op == 6:
        nan = ".NaN" if sz == 32 and r.below(3) == 0 else ""
        k.emit("%s%s%s.%s %s, %s, %s;" % (r.pick(["min", "max"]), ftz(), nan, t, d, a, b))
    elif op == 7:
        k.emit("%s%s.%s %s, %s;" % (r.pick(["abs", "neg"]), ftz(), t, d, a))
    elif op == 8:
        k.emit("copysign.%s %s, %s, %s;" % (t, d, a, k.reg(sz)))
    elif op == 9:
        k.emit("testp.%s.%s %s, %s;" % (r.pick(["finite", "infinite", "number", "notanumber", "normal", "subnormal"]), t, r.pick(PR), a))
    elif op == 10:  # mad is fma for floats, with a rounding modifier
        k.emit("mad%s%s%s.%s %s, %s, %s, %s;" % (r.pick(RND), ftz(), sat(), t, d, a, b, c))
    else:
        xs = sz == 32 and r.below(3) == 0
        if xs:
            k.target = "sm_90"  # .xorsign.abs: sm_86
        k.emit("%s%s.%s %s, %s, %s;" % (r.pick(["min", "max"]), ".xorsign.abs" if xs else "", t, d, a, b))


# .approx: (text, ulps, abs, ranged): a result passes within ulps units in the last place or abs of
# NVIDIA's (the PTX ISA's stated maximum error of each instruction, taken as the allowed distance
# from NVIDIA's answer, which is itself within that bound of the exact value).
APPROX = [
    ("sin.approx%s.f32", 0, 2.0 ** -20.5, True),    # absolute, in [-pi, pi]
    ("cos.approx%s.f32", 0, 2.0 ** -20.5, True),
    ("ex2.approx%s.f32", 2, 0.0, False),
    ("lg2.approx%s.f32", 0, 2.0 ** -22.6, False),   # absolute near 1, relative 2^-22 elsewhere
    ("rsqrt.approx%s.f32", 3, 0.0, False),         # relative 2^-22.9
    ("sqrt.approx%s.f32", 2, 0.0, False),
    ("rcp.approx%s.f32", 1, 0.0, False),
    ("tanh.approx.f32", 8192, 0.0, False),          # relative 2^-11
]


def gen_approx(k, n):
    """Each approx result goes to its own register, from inputs no approx op wrote."""
    r = k.rng
    dests = R32[3:]
    for d in dests:
        a = r.pick(R32[:3])
        kind = r.below(len(APPROX) + 2)
        ftz = r.pick(["", ".ftz"])
        if kind < len(APPROX):
            text, ulps, ab, ranged = APPROX[kind]
            if ranged:  # into [-pi, pi]: the bound holds there
                k.emit("min.f32 %%t0, %s, 0f40490FDB; max.f32 %%t0, %%t0, 0fC0490FDB; %s %s, %%t0;" % (a, text % ftz, d))
            elif "lg2" in text:
                ulps = 4
                k.emit("%s %s, %s;" % (text % ftz, d, a))
            else:
                k.emit("%s %s, %s;" % ((text % ftz) if "%s" in text else text, d, a))
        else:
            b = r.pick(R32[:3])
            text = r.pick(["div.approx%s.f32", "div.full%s.f32"])
            ulps, ab = 2, 0.0
            k.emit("%s %s, %s, %s;" % (text % ftz, d, a, b))
        k.tols.append((OFF32 + 4 * R32.index(d), "f32", ulps, ab))
    # and exact arithmetic over the other registers
    for _ in range(n // 2):
        t = r.pick(["f64"])
        k.emit("add.rn.f64 %s, %s, %s;" % (k.reg(64), k.reg(64), k.fsrc(64)))


CVT_INT = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]
CVT_FLOAT = ["f16", "f32", "f64", "bf16"]


def cvt_reg(k, t):
    return k.reg(16 if t in ("u8", "s8", "u16", "s16", "f16", "bf16") else 64 if t in ("u64", "s64", "f64") else 32)


_CVT = None


def cvt_forms():
    global _CVT
    if _CVT is None:
        _CVT = []
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "kgen_cvt.txt")) as f:
            for line in f:
                w = line.split()
                if w and not w[0].startswith("#"):
                    _CVT.append((w[0], len(w) > 1))
    return _CVT


def op_cvt(k):
    r = k.rng
    op = r.below(12)
    if op == 10:
        k.emit("cvt.rn%s.%s.f32 %s, %s, %s;" % (r.pick(["", ".relu"]), r.pick(["f16x2", "bf16x2"]), k.reg(32), k.reg(32), k.reg(32)))
        return
    if op == 11:
        k.emit("cvt.rna.tf32.f32 %s, %s;" % (k.reg(32), k.reg(32)))
        return
    form, sm90 = r.pick(cvt_forms())
    if sm90:
        k.target = "sm_90"
    dt, at = form.split(".")[-2:]
    k.emit("%s %s, %s;" % (form, cvt_reg(k, dt), cvt_reg(k, at)))


def op_half(k):
    r = k.rng
    t = r.pick(["f16", "f16x2", "bf16", "bf16x2"])
    sz = 16 if t in ("f16", "bf16") else 32
    d, a, b, c = k.reg(sz), k.reg(sz), k.reg(sz), k.reg(sz)
    isf = t.startswith("f16")
    ftz = lambda: ".ftz" if isf and r.below(2) else ""
    sat = lambda: ".sat" if isf and r.below(4) == 0 else ""
    op = r.below(7)
    if op <= 2:
        k.emit("%s.rn%s%s.%s %s, %s, %s;" % (["add", "sub", "mul"][op], ftz(), sat(), t, d, a, b))
    elif op == 3:
        relu = r.below(4) == 0
        k.emit("fma.rn%s%s.%s %s, %s, %s, %s;" % (ftz() if isf else "", ".relu" if relu else sat(), t, d, a, b, c))
    elif op == 4:
        k.emit("%s%s.%s %s, %s;" % (r.pick(["neg", "abs"]), ftz(), t, d, a))
    elif op == 5:
        nan = ".NaN" if r.below(3) == 0 else ""
        k.emit("%s%s%s.%s %s, %s, %s;" % (r.pick(["min", "max"]), ftz() if isf else "", nan, t, d, a, b))
    else:
        if t in ("f16", "bf16"):
            k.emit("setp.%s%s.%s %s, %s, %s;" % (r.pick(CMP_F), ftz() if isf else "", t, r.pick(PR), a, b))
        else:
            k.emit("cvt.rn.%s.f32 %s, %s, %s;" % (t, d, k.reg(32), k.reg(32)))


def op_simple(k):
    (op_int if k.rng.below(2) else op_bit)(k)


def gen_div(k, n, depth=0):
    r = k.rng
    i = 0
    while i < n:
        c = r.below(10)
        if c <= 5 or depth >= 2:
            op_simple(k)
            i += 1
        elif c <= 7:  # if / else on a per-thread predicate
            cmp, t, a, b = setp_operands(k)
            p = "%%lp%d" % depth
            els, end = k.label(), k.label()
            k.emit("setp.%s%s %s, %s, %s;" % (cmp, t, p, a, b), drop=False)
            k.emit("@%s bra %s;" % (p, els))
            m = 1 + r.below(4)
            gen_div(k, m, depth + 1)
            k.emit("bra %s;" % end)
            k.lines.append(els + ":")
            m2 = r.below(4)
            gen_div(k, m2, depth + 1)
            k.lines.append(end + ":")
            i += m + m2 + 1
        elif c == 8:  # a loop with a per-thread trip count 0..7
            lc, p = "%%lc%d" % depth, "%%lp%d" % depth
            top, end = k.label(), k.label()
            k.emit("and.b32 %s, %s, 7;" % (lc, k.reg(32)), drop=False)
            k.emit("setp.eq.u32 %s, %s, 0;" % (p, lc), drop=False)
            k.emit("@%s bra %s;" % (p, end), drop=False)
            k.lines.append(top + ":")
            m = 1 + r.below(4)
            gen_div(k, m, depth + 1)
            k.emit("sub.u32 %s, %s, 1;" % (lc, lc), drop=False)
            k.emit("setp.ne.u32 %s, %s, 0;" % (p, lc), drop=False)
            k.emit("@%s bra %s;" % (p, top), drop=False)
            k.lines.append(end + ":")
            i += m + 1
        else:  # some threads leave early: their output keeps the bytes the host put there
            if r.below(3) == 0:
                k.emit("setp.eq.u32 %%tp3, %s, 0x%X; @%%tp3 exit;" % (k.reg(32), r.next() & 0xFFFFFFFF) if r.below(2) else
                       "and.b32 %%t4, %s, 0xF; setp.eq.u32 %%tp3, %%t4, 3; @%%tp3 exit;" % k.reg(32))
            else:
                op_simple(k)
            i += 1


def warp_op(k, mask, uniform):
    r = k.rng
    op = r.below(8 if uniform else 4)
    if op == 0:
        k.emit("%svote.sync.%s.pred %s, %s%s, %s;" % (mask[0], r.pick(["all", "any", "uni"]), r.pick(PR), r.pick(["", "!"]), r.pick(PR), mask[1]))
    elif op == 1:
        k.emit("%svote.sync.ballot.b32 %s, %s%s, %s;" % (mask[0], k.reg(32), r.pick(["", "!"]), r.pick(PR), mask[1]))
    elif op == 2:
        t = r.pick(["u32", "s32"])
        o = r.pick(["add", "min", "max", "and", "or", "xor"])
        if o in ("and", "or", "xor"):
            t = "b32"
        k.emit("%sredux.sync.%s.%s %s, %s, %s;" % (mask[0], o, t, k.reg(32), k.reg(32), mask[1]))
    elif op == 3:
        sz = r.pick([32, 64])
        few = "and.b%d %s, %s, %d; " % (sz, "%t3" if sz == 32 else "%td2", k.reg(sz), r.pick([1, 3, 0xF00000003]) & (0xFFFFFFFF if sz == 32 else M64))
        src = "%t3" if sz == 32 else "%td2"
        if r.below(2):
            k.emit("%s%smatch.sync.any.b%d %s, %s, %s;" % (few, mask[0], sz, k.reg(32), src, mask[1]))
        else:
            k.emit("%s%smatch.sync.all.b%d %s|%s, %s, %s;" % (few, mask[0], sz, k.reg(32), r.pick(PR), src, mask[1]))
    elif op == 7:
        # converged first: after a divergent region nothing else says the warp is whole again
        k.emit("bar.warp.sync 0xFFFFFFFF; activemask.b32 %s; mov.u32 %%t2, %%laneid; xor.b32 %s, %s, %%t2;" % (k.reg(32), k.reg(32), k.reg(32)))
    else:
        mode = r.pick(["up", "down", "bfly", "idx"])
        w = r.pick([32, 32, 16, 8, 4, 2])
        cval = ((32 - w) << 8) | (0 if mode == "up" else w - 1)
        pd = ("|" + r.pick(PR)) if r.below(2) else ""
        if r.below(2):
            lane = str(r.below(w))
            pre = ""
        else:
            lane = "%t4"
            pre = "and.b32 %%t4, %s, %d; " % (k.reg(32), w - 1)
        k.emit("%sshfl.sync.%s.b32 %s%s, %s, %s, 0x%X, 0xFFFFFFFF;" % (pre, mode, k.reg(32), pd, k.reg(32), lane, cval))


def gen_warp(k, n):
    r = k.rng
    i = 0
    while i < n:
        if r.below(5) == 0:  # a divergent region: ops whose mask is the active set
            cmp, t, a, b = setp_operands(k)
            end = k.label()
            k.emit("setp.%s%s %%lp0, %s, %s;" % (cmp, t, a, b), drop=False)
            k.emit("@%lp0 bra " + end + ";")
            for _ in range(1 + r.below(3)):
                warp_op(k, ("activemask.b32 %ai7; ", "%ai7"), False)
                i += 1
            k.lines.append(end + ":")
        elif r.below(3) == 0:
            op_simple(k)
            i += 1
        else:
            warp_op(k, ("", "0xFFFFFFFF"), True)
            i += 1


def gen_shared(k, n):
    """Rounds: store to my shared slot, barrier, read a partner's, barrier; compute between."""
    r = k.rng
    k.block = r.pick([32, 64, 128, 256])
    dyn = r.below(2)
    words = k.block * 8
    if dyn:
        k.shared_decl = ".extern .shared .align 8 .b8 sm[];"
        k.dyn_shared = words
    else:
        k.shared_decl = ".shared .align 8 .b8 sm[%d];" % words
    k.emit("mov.u32 %ai4, sm;", drop=False)
    k.emit("mad.lo.u32 %ai5, %ai0, 8, %ai4;", drop=False)
    k.emit("st.shared.u64 [%ai5], %rd0;", drop=False)  # every slot defined before any read
    k.emit("bar.sync 0;", drop=False)
    rounds = 1 + n // 6
    for _ in range(rounds):
        for _ in range(1 + r.below(3)):
            op_simple(k)
        w = r.below(3)
        if w == 0:
            k.emit("st.shared.u64 [%%ai5], %s;" % k.reg(64))
        elif w == 1:
            k.emit("st.shared.u32 [%%ai5+%d], %s;" % (r.pick([0, 4]), k.reg(32)))
        else:
            k.emit("st.shared.v2.u32 [%%ai5], {%s, %s};" % (k.reg(32), k.reg(32)))
        k.emit(r.pick(["bar.sync 0;", "barrier.sync 0;", "bar.sync 0, %d;" % k.block]), drop=False)
        pat = r.below(4)
        if pat == 0:
            part = "xor.b32 %%ai6, %%ai0, %d;" % (1 + r.below(k.block - 1))
        elif pat == 1:
            part = "add.u32 %%ai6, %%ai0, %d; rem.u32 %%ai6, %%ai6, %%ai2;" % (1 + r.below(k.block - 1))
        elif pat == 2:
            part = "sub.u32 %ai6, %ai2, 1; sub.u32 %ai6, %ai6, %ai0;"
        else:
            part = "and.b32 %%ai6, %s, %d;" % (k.reg(32), k.block - 1)
        k.emit(part + " mad.lo.u32 %ai6, %ai6, 8, %ai4;", drop=False)
        lk = r.below(3)
        if lk == 0:
            k.emit("ld.shared.u64 %s, [%%ai6];" % k.reg(64))
        elif lk == 1:
            k.emit("ld.shared.u32 %s, [%%ai6+%d];" % (k.reg(32), r.pick([0, 4])))
        else:
            a, b = r.pick(R32), r.pick(R32)
            while b == a:
                b = r.pick(R32)
            k.emit("ld.shared.v2.u32 {%s, %s}, [%%ai6];" % (a, b))
        if r.below(3) == 0:
            if r.below(2):
                k.emit("bar.red.popc.u32 %s, 0, %s%s;" % (k.reg(32), r.pick(["", "!"]), r.pick(PR)))
            else:
                k.emit("bar.red.%s.pred %s, 0, %s;" % (r.pick(["and", "or"]), r.pick(PR), r.pick(PR)))
        k.emit("bar.sync 0;", drop=False)  # the next round's stores come after every read


ATOM32 = [("add", "u32"), ("add", "s32"), ("min", "u32"), ("max", "u32"), ("min", "s32"), ("max", "s32"),
          ("and", "b32"), ("or", "b32"), ("xor", "b32"), ("inc", "u32"), ("dec", "u32"), ("add", "f32")]
ATOM64 = [("add", "u64"), ("min", "u64"), ("max", "u64"), ("min", "s64"), ("max", "s64"), ("and", "b64"),
          ("or", "b64"), ("xor", "b64"), ("add", "f64")]


def atom_value(k, o, t):
    """A register (or temp) holding the operand: floats are small integers, so sums are exact."""
    if t == "f32":
        return "%t1", "and.b32 %%t1, %s, 255; cvt.rn.f32.u32 %%t1, %%t1; " % k.reg(32)
    if t == "f64":
        return "%td1", "and.b32 %%t1, %s, 255; cvt.rn.f64.u32 %%td1, %%t1; " % k.reg(32)
    if o in ("inc", "dec"):
        return str(k.incdec), ""
    return k.reg(bits(t.replace("b", "u"))), ""


def gen_atom(k, n):
    """Global words (after the per-thread slots), one operation each, order-independent; shared
    words likewise, copied out per block; cas and exch on each thread's own word."""
    r = k.rng
    k.uses_own = True
    k.incdec = r.below(100)
    nthreads = k.grid * k.block
    g32 = [r.pick(ATOM32) for _ in range(8)]
    g64 = [r.pick(ATOM64) for _ in range(4)]
    s32 = [r.pick([a for a in ATOM32]) for _ in range(4)]
    base = nthreads * STRIDE
    k.tail = 8 * 4 + 4 * 8 + k.grid * 4 * 4
    for i, (o, t) in enumerate(g32):
        if t == "f32":
            k.outzero.append((base + 4 * i, 4))
    for i, (o, t) in enumerate(g64):
        if t == "f64":
            k.outzero.append((base + 32 + 8 * i, 8))
    k.shared_decl = ".shared .align 8 .b8 sm[16];"
    k.emit("mov.u32 %ai4, sm;", drop=False)
    # shared words: thread i < 4 sets word i (zero for f32 sums, else its input), then a barrier
    k.emit("setp.lt.u32 %%tp2, %%ai0, 4; mad.lo.u32 %%ai5, %%ai0, 4, %%ai4; selp.b32 %%t0, %s, 0, %%tp2;" % R32[0], drop=False)
    fz = " ".join("setp.eq.u32 %%tp1, %%ai0, %d; @%%tp1 mov.b32 %%t0, 0;" % i for i, (o, t) in enumerate(s32) if t == "f32")
    if fz:
        k.emit(fz, drop=False)
    k.emit("@%tp2 st.shared.u32 [%ai5], %t0;", drop=False)
    k.emit("bar.sync 0;", drop=False)
    k.emit("add.s64 %%ad5, %%ad1, %d;" % base, drop=False)
    k.emit("add.s64 %ad6, %ad4, 56;  // my own word", drop=False)
    for _ in range(n):
        c = r.below(8)
        if c <= 3:
            i = r.below(len(g32))
            o, t = g32[i]
            v, pre = atom_value(k, o, t)
            if r.below(2):
                k.emit("%sred.global.%s.%s [%%ad5+%d], %s;" % (pre, o, t, 4 * i, v))
            else:
                k.emit("%satom.global.%s.%s %%t2, [%%ad5+%d], %s;" % (pre, o, t, 4 * i, v))
        elif c == 4:
            i = r.below(len(g64))
            o, t = g64[i]
            v, pre = atom_value(k, o, t)
            k.emit("%s%s.global.%s.%s %s[%%ad5+%d], %s;" % (pre, r.pick(["red", "atom"]), o, t, "", 32 + 8 * i, v)
                   if False else "%satom.global.%s.%s %%td3, [%%ad5+%d], %s;" % (pre, o, t, 32 + 8 * i, v))
        elif c == 5:
            i = r.below(len(s32))
            o, t = s32[i]
            v, pre = atom_value(k, o, t)
            k.emit("%satom.shared.%s.%s %%t2, [%%ai4+%d], %s;" % (pre, o, t, 4 * i, v))
        elif c == 6:  # exch / cas on my own word: the old value is kept
            if r.below(2):
                k.emit("atom.global.exch.b32 %s, [%%ad6], %s;" % (k.reg(32), k.reg(32)))
            else:
                k.emit("atom.global.exch.b64 %s, [%%ad6], %s;" % (k.reg(64), k.reg(64)))
        else:
            sz = r.pick([32, 64])
            t = "%t2" if sz == 32 else "%td2"
            miss = r.below(2)
            k.emit("ld.global.u%d %s, [%%ad6]; %sxor.b%d %s, %s, %d; atom.global.cas.b%d %s, [%%ad6], %s, %s;"
                   % (sz, t, "", sz, t, t, miss, sz, k.reg(sz), t, k.reg(sz)))
        if r.below(4) == 0:
            op_simple(k)
    k.emit("bar.sync 0;", drop=False)
    k.post.append("\tsetp.lt.u32 %tp2, %ai0, 4;")
    k.post.append("\t@%tp2 ld.shared.u32 %t0, [%ai5];")
    k.post.append("\tmad.lo.u32 %%t1, %%ai1, 16, %d;" % (base + 64))
    k.post.append("\tmad.lo.u32 %t1, %ai0, 4, %t1;")
    k.post.append("\tcvt.u64.u32 %td0, %t1;")
    k.post.append("\tadd.s64 %td0, %ad1, %td0;")
    k.post.append("\t@%tp2 st.global.u32 [%td0], %t0;")


def op_undefined(k):
    r = k.rng
    t = r.pick(TYPES_INT)
    sz = bits(t)
    k.emit("%s.%s %s, %s, %s;" % (r.pick(["div", "rem"]), t, k.reg(sz), k.reg(sz), k.src(sz, imm=0.2, signed=t[0] == "s")))


SIMPLE = {"int": op_int, "bit": op_bit, "pred": op_pred, "float": op_float, "cvt": op_cvt, "half": op_half,
          "undefined": op_undefined}


def make_case(family, seed):
    k = Kernel(seed, family)
    r = k.rng
    n = 8 + r.below(33)
    k.block = r.pick([32, 48, 64, 96, 128])
    k.grid = 1 + r.below(3)
    if family in SIMPLE:
        for _ in range(n):
            SIMPLE[family](k)
    elif family == "mix":  # the exact families' instructions interleaved: values cross types
        ops = [op_int, op_bit, op_pred, op_float, op_cvt, op_half]
        for _ in range(n):
            r.pick(ops)(k)
        if k.target != "sm_90" and any(".bf16" in l and ("add" in l or "sub" in l or "mul" in l) for l in k.lines):
            k.target = "sm_90"
    elif family == "approx":
        gen_approx(k, n)
    elif family == "div":
        gen_div(k, n)
    elif family == "warp":
        k.block = r.pick([32, 64, 96, 128])
        gen_warp(k, n)
    elif family == "shared":
        gen_shared(k, n)
    elif family == "atom":
        k.block = r.pick([32, 64, 128])
        gen_atom(k, n)
    if family in ("half", "mix") and any("bf16" in l for l in k.lines):
        k.target = "sm_90"  # add/sub/mul .bf16 need it
    nthreads = k.grid * k.block
    c = {
        "name": "%s-%06d" % (family, seed),
        "family": family,
        "source": "kgen.py family %s seed %d%s" % (family, seed, (" exclude " + ",".join(EXCLUDE)) if EXCLUDE else ""),
        "kernel": "k",
        "grid": (k.grid, 1, 1),
        "block": (k.block, 1, 1),
        "shared": k.dyn_shared,
        "params": ["in", "out"],
        "slot": STRIDE,
        "input": (nthreads * STRIDE, (seed * 2654435761 + 17) & 0xFFFFFFFF),
        "output": (nthreads * STRIDE + k.tail, (seed * 40503 + 99) & 0xFFFFFFFF),
        "outzero": k.outzero,
        "tols": [(STRIDE, off, t, u, a) for (off, t, u, a) in k.tols],
        "ptx": k.ptx(),
        "status": "new",
    }
    return c


# ---- the case file -----------------------------------------------------------------------------------

def fmt_case(c, expect=None):
    out = ["case " + c["name"], "family " + c["family"], "source " + c["source"], "status " + c["status"],
           "kernel " + c["kernel"], "grid %d %d %d" % tuple(c["grid"]), "block %d %d %d" % tuple(c["block"]),
           "shared %d" % c["shared"], "params " + " ".join(c["params"])]
    if c.get("slot"):
        out.append("slot %d" % c["slot"])
    isize, iseed = c["input"]
    out.append("input %d seed %d fnv 0x%016x" % (isize, iseed, fnv(input_bytes(isize, iseed))))
    osize, oseed = c["output"]
    out.append("output %d seed %d" % (osize, oseed))
    for off, ln in c["outzero"]:
        out.append("outzero %d %d" % (off, ln))
    for stride, off, t, u, a in c["tols"]:
        out.append("tol %d %d %s %d %.9g" % (stride, off, t, u, a))
    out.append("ptx")
    out.append(c["ptx"].rstrip("\n"))
    out.append("endptx")
    if expect is not None:
        out.append("expect load 0 launch 0 sync 0")
        for i in range(0, len(expect), 64):
            out.append(expect[i:i + 64].hex())
        out.append("endexpect")
    out.append("end")
    return "\n".join(out) + "\n"


HEAD = "# difftest kernel cases (docs/difftest.md, Kernels): generated by tools/difftest/kgen.py\n"


def cmd_gen(a):
    fams = FAMILIES if a.families == "all" else a.families.split(",")
    for f in fams:
        if f not in FAMILIES:
            sys.exit("kgen: unknown family %s (%s)" % (f, ", ".join(FAMILIES)))
    os.makedirs(a.outdir, exist_ok=True)
    for f in fams:
        with open(os.path.join(a.outdir, f + ".kcase"), "w") as o:
            o.write(HEAD)
            for s in range(a.seed, a.seed + a.count):
                o.write(fmt_case(make_case(f, s)))


def cmd_ptx(a):
    sys.stdout.write(make_case(a.family, a.seed)["ptx"])


def main():
    ap = argparse.ArgumentParser(description=__doc__ + ", ".join(FAMILIES), formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="random cases, one file a family")
    g.add_argument("--families", default="all", help="comma-separated, or all")
    g.add_argument("--count", type=int, default=20)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--exclude", default="", help="comma-separated texts: instructions holding one are left out (e.g. cvt.rna.tf32,slct)")
    g.add_argument("outdir")
    p = sub.add_parser("ptx", help="one kernel's PTX")
    p.add_argument("family")
    p.add_argument("seed", type=int)
    h = sub.add_parser("hand", help="the hand-written kernels with host-computed expected bytes")
    h.add_argument("outdir")
    i = sub.add_parser("input", help="input bytes, hex")
    i.add_argument("size", type=int)
    i.add_argument("seed", type=int)
    a = ap.parse_args()
    if a.cmd == "gen":
        EXCLUDE.extend(x for x in a.exclude.split(",") if x)
        cmd_gen(a)
    elif a.cmd == "ptx":
        cmd_ptx(a)
    elif a.cmd == "hand":
        import kernels_hand
        kernels_hand.write(a.outdir)
    else:
        print(input_bytes(a.size, a.seed).hex())


if __name__ == "__main__":
    main()
