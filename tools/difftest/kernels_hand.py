"""Hand-written kernels for the differential kernel tester, each with a host reference that gives its
expected output bytes (no GPU recording needed): `kgen.py hand OUTDIR` writes OUTDIR/hand.kcase.
Once NVIDIA's driver has run them (tools/difftest/kernel_record.sh), the recording replaces the
reference: the two must agree, which checks the references too."""

import ctypes
import os
import struct

import kgen

M32 = 0xFFFFFFFF
HEAD = """.version 8.0
.target sm_80
.address_size 64
"""


def f32_bits(x):
    """x (a double) rounded to f32 (to nearest, ties to even; overflow to infinity), as bits.
    Double rounding of a + b through double is exact for f32 operands (53 >= 2*24 + 2)."""
    if x != x:
        return 0x7FFFFFFF  # the GPU's canonical NaN
    c = ctypes.c_float(x)
    return ctypes.c_uint32.from_buffer(c).value


def bits_f32(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def u32s(b):
    return list(struct.unpack("<%dI" % (len(b) // 4), b))


def case(name, ptx, grid, block, params, isize, iseed, osize, oseed, ref, outzero=(), shared=0, slot=0):
    inp = kgen.input_bytes(isize, iseed)
    out = bytearray(kgen.input_bytes(osize, oseed))
    for off, n in outzero:
        out[off:off + n] = bytes(n)
    ref(inp, out)
    c = {"name": name, "family": "hand", "source": "tools/difftest/kernels_hand.py " + name, "kernel": "k",
         "grid": (grid, 1, 1), "block": (block, 1, 1), "shared": shared, "params": params, "input": (isize, iseed),
         "output": (osize, oseed), "outzero": list(outzero), "tols": [], "ptx": ptx, "slot": slot,
         "status": "expected: host reference (tools/difftest/kernels_hand.py), no GPU recording yet"}
    return kgen.fmt_case(c, bytes(out))


# ---- vector add: c[i] = a[i] + b[i] for i < n, f32 ------------------------------------------------

VADD = HEAD + """.visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .f32 %f<4>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd0, [pin];
	ld.param.u64 %rd1, [pout];
	ld.param.u32 %r0, [n];
	cvta.to.global.u64 %rd0, %rd0;
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r4, %r2, %r3, %r1;
	setp.ge.u32 %p0, %r4, %r0;
	@%p0 bra DONE;
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd3, %rd0, %rd2;
	ld.global.f32 %f0, [%rd3];
	mul.wide.u32 %rd4, %r0, 4;
	add.s64 %rd5, %rd3, %rd4;
	ld.global.f32 %f1, [%rd5];
	add.rn.f32 %f2, %f0, %f1;
	add.s64 %rd6, %rd1, %rd2;
	st.global.f32 [%rd6], %f2;
DONE:
	ret;
}
"""


def vadd_ref(n):
    def ref(inp, out):
        a, b = u32s(inp[:4 * n]), u32s(inp[4 * n:8 * n])
        for i in range(n):
            struct.pack_into("<I", out, 4 * i, f32_bits(bits_f32(a[i]) + bits_f32(b[i])))
    return ref


# ---- integer hash mixing: murmur3's fmix32, a rotate, mul.hi, popc, bfe, brev, clz, mul.wide --------

HASH = HEAD + """.visible .entry k(.param .u64 pin, .param .u64 pout)
{
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd0, [pin];
	ld.param.u64 %rd1, [pout];
	cvta.to.global.u64 %rd0, %rd0;
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r4, %r2, %r3, %r1;
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd2, %rd0, %rd2;
	ld.global.u32 %r5, [%rd2];
	shr.u32 %r6, %r5, 16;
	xor.b32 %r5, %r5, %r6;
	mul.lo.u32 %r5, %r5, 0x85EBCA6B;
	shr.u32 %r6, %r5, 13;
	xor.b32 %r5, %r5, %r6;
	mul.lo.u32 %r5, %r5, 0xC2B2AE35;
	shr.u32 %r6, %r5, 16;
	xor.b32 %r5, %r5, %r6;            // x = fmix32(in)
	shf.l.wrap.b32 %r7, %r5, %r5, 7;  // y = rotl(x, 7)
	mul.hi.u32 %r8, %r7, 0x9E3779B9;
	popc.b32 %r9, %r5;
	add.u32 %r8, %r8, %r9;            // z = mulhi(y, golden) + popc(x)
	bfe.u32 %r10, %r5, 5, 11;
	brev.b32 %r11, %r8;
	xor.b32 %r10, %r10, %r11;         // w = bfe(x, 5, 11) ^ brev(z)
	clz.b32 %r12, %r10;
	mul.wide.u32 %rd3, %r5, %r7;      // x * y, 64 bits
	mul.wide.u32 %rd4, %r4, 24;
	add.s64 %rd4, %rd1, %rd4;
	st.global.u32 [%rd4], %r5;
	st.global.u32 [%rd4+4], %r8;
	st.global.u32 [%rd4+8], %r10;
	st.global.u32 [%rd4+12], %r12;
	st.global.u64 [%rd4+16], %rd3;
	ret;
}
"""


def popc(x):
    return bin(x).count("1")


def brev32(x):
    return int("{:032b}".format(x)[::-1], 2)


def hash_ref(nthreads):
    def ref(inp, out):
        for i, v in enumerate(u32s(inp[:4 * nthreads])):
            x = v
            x ^= x >> 16
            x = (x * 0x85EBCA6B) & M32
            x ^= x >> 13
            x = (x * 0xC2B2AE35) & M32
            x ^= x >> 16
            y = ((x << 7) | (x >> 25)) & M32
            z = (((y * 0x9E3779B9) >> 32) + popc(x)) & M32
            w = ((x >> 5) & 0x7FF) ^ brev32(z)
            clz = 32 - w.bit_length()
            struct.pack_into("<IIIIQ", out, 24 * i, x, z, w, clz, x * y)
    return ref


# ---- shared-memory tree reduction: one u32 sum a block --------------------------------------------

REDUCE = HEAD + """.visible .entry k(.param .u64 pin, .param .u64 pout)
{
	.shared .align 4 .b32 sm[256];
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd0, [pin];
	ld.param.u64 %rd1, [pout];
	cvta.to.global.u64 %rd0, %rd0;
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r4, %r2, %r3, %r1;
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd2, %rd0, %rd2;
	ld.global.u32 %r5, [%rd2];
	mov.u32 %r6, sm;
	shl.b32 %r7, %r1, 2;
	add.u32 %r7, %r6, %r7;            // &sm[tid]
	st.shared.u32 [%r7], %r5;
	bar.sync 0;
	shr.u32 %r8, %r3, 1;              // s = ntid / 2
LOOP:
	setp.eq.u32 %p0, %r8, 0;
	@%p0 bra OUT;
	setp.ge.u32 %p1, %r1, %r8;
	@%p1 bra SKIP;
	shl.b32 %r9, %r8, 2;
	add.u32 %r9, %r7, %r9;
	ld.shared.u32 %r10, [%r9];
	ld.shared.u32 %r11, [%r7];
	add.u32 %r11, %r11, %r10;
	st.shared.u32 [%r7], %r11;
SKIP:
	bar.sync 0;
	shr.u32 %r8, %r8, 1;
	bra.uni LOOP;
OUT:
	setp.ne.u32 %p2, %r1, 0;
	@%p2 bra DONE;
	ld.shared.u32 %r12, [%r6];
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd3, %rd1, %rd3;
	st.global.u32 [%rd3], %r12;
DONE:
	ret;
}
"""


def reduce_ref(grid, block):
    def ref(inp, out):
        v = u32s(inp[:4 * grid * block])
        for b in range(grid):
            struct.pack_into("<I", out, 4 * b, sum(v[b * block:(b + 1) * block]) & M32)
    return ref


# ---- warp reduction with shfl.sync.down, and a ballot ------------------------------------------------

WARP = HEAD + """.visible .entry k(.param .u64 pin, .param .u64 pout)
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd0, [pin];
	ld.param.u64 %rd1, [pout];
	cvta.to.global.u64 %rd0, %rd0;
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r4, %r2, %r3, %r1;
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd2, %rd0, %rd2;
	ld.global.u32 %r5, [%rd2];
	and.b32 %r13, %r5, 1;
	setp.ne.u32 %p1, %r13, 0;
	vote.sync.ballot.b32 %r14, %p1, 0xFFFFFFFF;
	shfl.sync.down.b32 %r6, %r5, 16, 0x1F, 0xFFFFFFFF;
	add.u32 %r5, %r5, %r6;
	shfl.sync.down.b32 %r6, %r5, 8, 0x1F, 0xFFFFFFFF;
	add.u32 %r5, %r5, %r6;
	shfl.sync.down.b32 %r6, %r5, 4, 0x1F, 0xFFFFFFFF;
	add.u32 %r5, %r5, %r6;
	shfl.sync.down.b32 %r6, %r5, 2, 0x1F, 0xFFFFFFFF;
	add.u32 %r5, %r5, %r6;
	shfl.sync.down.b32 %r6, %r5, 1, 0x1F, 0xFFFFFFFF;
	add.u32 %r5, %r5, %r6;
	mov.u32 %r7, %laneid;
	setp.ne.u32 %p0, %r7, 0;
	@%p0 bra DONE;
	shr.u32 %r8, %r4, 5;              // the warp's global index
	mul.wide.u32 %rd3, %r8, 8;
	add.s64 %rd3, %rd1, %rd3;
	st.global.u32 [%rd3], %r5;
	st.global.u32 [%rd3+4], %r14;
DONE:
	ret;
}
"""


def warp_ref(nthreads):
    def ref(inp, out):
        v = u32s(inp[:4 * nthreads])
        for w in range(nthreads // 32):
            lanes = v[32 * w:32 * w + 32]
            ballot = sum(1 << l for l in range(32) if lanes[l] & 1)
            struct.pack_into("<II", out, 8 * w, sum(lanes) & M32, ballot)
    return ref


# ---- histogram with global atomics: 4 bytes a thread, 32 bins ----------------------------------------

HIST = HEAD + """.visible .entry k(.param .u64 pin, .param .u64 pout)
{
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd0, [pin];
	ld.param.u64 %rd1, [pout];
	cvta.to.global.u64 %rd0, %rd0;
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r4, %r2, %r3, %r1;
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd2, %rd0, %rd2;
	ld.global.u32 %r5, [%rd2];
	mov.u32 %r9, 0;
BYTE:
	bfe.u32 %r6, %r5, %r9, 5;         // bits [8k, 8k+5) of the word: the bin
	mul.wide.u32 %rd3, %r6, 4;
	add.s64 %rd3, %rd1, %rd3;
	red.global.add.u32 [%rd3], 1;
	add.u32 %r9, %r9, 8;
	setp.lt.u32 %p0, %r9, 32;
	@%p0 bra BYTE;
	ret;
}
""".replace(".reg .b32 %r<16>;", ".reg .pred %p<2>;\n\t.reg .b32 %r<16>;")


def hist_ref(nthreads):
    def ref(inp, out):
        bins = [0] * 32
        for v in u32s(inp[:4 * nthreads]):
            for k in range(4):
                bins[(v >> (8 * k)) & 31] += 1
        struct.pack_into("<32I", out, 0, *bins)
    return ref


# ---- divergent loop: Collatz steps, capped ------------------------------------------------------------

COLLATZ = HEAD + """.visible .entry k(.param .u64 pin, .param .u64 pout)
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd0, [pin];
	ld.param.u64 %rd1, [pout];
	cvta.to.global.u64 %rd0, %rd0;
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r4, %r2, %r3, %r1;
	mul.wide.u32 %rd2, %r4, 4;
	add.s64 %rd2, %rd0, %rd2;
	ld.global.u32 %r5, [%rd2];
	and.b32 %r5, %r5, 0xFFFF;
	or.b32 %r5, %r5, 1;               // n, odd, < 65536
	mov.u32 %r6, 0;                   // steps
	mov.u32 %r8, 0;                   // odd steps
STEP:
	setp.eq.u32 %p0, %r5, 1;
	setp.ge.or.u32 %p0, %r6, 200, %p0;
	@%p0 bra OUT;
	and.b32 %r7, %r5, 1;
	setp.eq.u32 %p1, %r7, 0;
	@%p1 bra EVEN;
	mad.lo.u32 %r5, %r5, 3, 1;
	add.u32 %r8, %r8, 1;
	bra.uni NEXT;
EVEN:
	shr.u32 %r5, %r5, 1;
NEXT:
	add.u32 %r6, %r6, 1;
	bra.uni STEP;
OUT:
	mul.wide.u32 %rd3, %r4, 12;
	add.s64 %rd3, %rd1, %rd3;
	st.global.u32 [%rd3], %r6;
	st.global.u32 [%rd3+4], %r5;
	st.global.u32 [%rd3+8], %r8;
	ret;
}
"""


def collatz_ref(nthreads):
    def ref(inp, out):
        for i, v in enumerate(u32s(inp[:4 * nthreads])):
            n = (v & 0xFFFF) | 1
            steps = odd = 0
            while n != 1 and steps < 200:
                if n & 1:
                    n = (3 * n + 1) & M32
                    odd += 1
                else:
                    n >>= 1
                steps += 1
            struct.pack_into("<III", out, 12 * i, steps, n, odd)
    return ref


def write(outdir):
    os.makedirs(outdir, exist_ok=True)
    n = 300
    cases = [
        case("hand-vadd-f32", VADD, 3, 128, ["in", "out", "u32:%d" % n], 8 * n, 101, 4 * 384, 102, vadd_ref(n)),
        case("hand-hash-u32", HASH, 2, 96, ["in", "out"], 4 * 192, 201, 24 * 192, 202, hash_ref(192), slot=24),
        case("hand-reduce-shared", REDUCE, 4, 256, ["in", "out"], 4 * 1024, 301, 16, 302, reduce_ref(4, 256)),
        case("hand-reduce-warp", WARP, 2, 128, ["in", "out"], 4 * 256, 401, 8 * 8, 402, warp_ref(256)),
        case("hand-hist-atomic", HIST, 2, 256, ["in", "out"], 4 * 512, 501, 128, 502, hist_ref(512), outzero=[(0, 128)]),
        case("hand-collatz-div", COLLATZ, 2, 64, ["in", "out"], 4 * 128, 601, 12 * 128, 602, collatz_ref(128), slot=12),
    ]
    with open(os.path.join(outdir, "hand.kcase"), "w") as o:
        o.write("# difftest kernel cases: hand-written kernels, expected bytes from the host references in\n"
                "# tools/difftest/kernels_hand.py (regenerate: tools/difftest/kgen.py hand DIR)\n")
        for c in cases:
            o.write(c)
