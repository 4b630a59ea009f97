#!/usr/bin/env python3
"""Derive the affine constants used by the sm4 backends (run: python3 derive_sbox.py).

SM4's S-box is S(x) = A * inv(A * x + 0xD3) + 0xD3, inversion in GF(2^8) mod
x^8+x^7+x^6+x^5+x^4+x^2+1 (0x1F5), A the circulant matrix with rows
0xA7 rotated (row i = output bit i). Fields of the same size are isomorphic,
so the inversion can be done in any other representation F through a linear
isomorphism phi: GF(2^8)/0x1F5 -> F, which we fold into the affine maps:
S(x) = (A phi^-1) * inv_F((phi A) x + phi(0xD3)) + 0xD3.
F = the AES field (GFNI, AES-NI) or the tower GF((2^4)^2) (soft backend).
The SM4 table below is the standard one (GB/T 32907); every map is checked
against it for all 256 inputs.
"""
# The SM4 S-box table (GB/T 32907).
SB = bytes.fromhex(
    "d690e9fecce13db716b614c228fb2c052b679a762abe04c3aa44132649860699"
    "9c4250f491ef987a33540b43edcfac62e4b31ca9c908e89580df94fa758f3fa6"
    "4707a7fcf37317ba83593c19e6854fa8686b81b27164da8bf8eb0f4b70569d35"
    "1e240e5e6358d1a225227c3b01217887d40046579fd327524c3602e7a0c4c89e"
    "eabf8ad240c738b5a3f7f2cef96115a1e0ae5da49b341a55ad933230f58cb1e3"
    "1df6e22e8266ca60c02923ab0d534e6fd5db3745defd8e2f03ff6a726d6c5b51"
    "8d1baf92bbddbc7f11d95c411f105ad80ac13188a5cd7bbd2d74d012b8e5b4b0"
    "8969974a0c96777e65b9f109c56ec68418f07dec3adc4d2079ee5f3ed7cb3948"
)


def par(x): return bin(x).count('1') & 1
def matvec(rows, x): return sum(par(rows[i] & x) << i for i in range(8))
def cols_to_rows(cols):  # cols[j] = image of bit j
    return [sum(((cols[j] >> i) & 1) << j for j in range(8)) for i in range(8)]
def matmul(r1, r2):  # r1 after r2
    cols = [matvec(r1, matvec(r2, 1 << j)) for j in range(8)]
    return cols_to_rows(cols)
def matinv(rows):
    cols = [None]*8
    for x in range(256):
        y = matvec(rows, x)
        for j in range(8):
            if y == 1 << j: cols[j] = x
    return cols_to_rows(cols)
def gmul(a, b, poly):
    r = 0
    while b:
        if b & 1: r ^= a
        b >>= 1; a <<= 1
        if a & 0x100: a ^= poly
    return r
def gpow(a, e, mul):
    r = 1
    for _ in range(e): r = mul(r, a)
    return r

A = [((0xa7 << i) | (0xa7 >> (8 - i))) & 0xff for i in range(8)]
C = 0xd3
P_SM4 = 0x1f5
ginv_sm4 = lambda a: gpow(a, 254, lambda x, y: gmul(x, y, P_SM4))
assert all(matvec(A, ginv_sm4(matvec(A, x) ^ C)) ^ C == SB[x] for x in range(256))

def iso(mul):
    """Linear map phi from the SM4 field to the field with multiplication mul."""
    for beta in range(2, 256):
        # beta must be a root of P_SM4 in the target field
        pw = [1]
        for _ in range(8): pw.append(mul(pw[-1], beta))
        v = 0
        for i in range(9):
            if (P_SM4 >> i) & 1: v ^= pw[i]
        if v == 0:
            return cols_to_rows(pw[:8])
    raise Exception

# ---- AES field ----
aesmul = lambda a, b: gmul(a, b, 0x11b)
aesinv = lambda a: gpow(a, 254, aesmul)
phi = iso(aesmul)
M1 = matmul(phi, A); c1 = matvec(phi, C)
M2 = matmul(A, matinv(phi)); c2 = C
assert all(matvec(M2, aesinv(matvec(M1, x) ^ c1)) ^ c2 == SB[x] for x in range(256))
def gfni_qword(rows): return sum(rows[i] << (8 * (7 - i)) for i in range(8))
print("// GFNI: S(x) = affineinv(affine(x, PRE, PRE_C), POST, POST_C)")
print(f"const PRE: u64 = 0x{gfni_qword(M1):016x};\nconst PRE_C: u8 = 0x{c1:02x};")
print(f"const POST: u64 = 0x{gfni_qword(M2):016x};\nconst POST_C: u8 = 0x{c2:02x};")
# AES-NI: SubBytes(y) = AFF * inv(y) + 0x63, AFF rows: bit i = b_i ^ b_{i+4} ^ b_{i+5} ^ b_{i+6} ^ b_{i+7}
AFF = [sum(1 << ((i + k) % 8) for k in (0, 4, 5, 6, 7)) for i in range(8)]
def subbytes(y): return matvec(AFF, aesinv(y)) ^ 0x63
M3 = matmul(M2, matinv(AFF)); c3 = matvec(M3, 0x63) ^ c2
assert all(matvec(M3, subbytes(matvec(M1, x) ^ c1)) ^ c3 == SB[x] for x in range(256))
lo = lambda rows, c: [matvec(rows, n) ^ c for n in range(16)]
hi = lambda rows: [matvec(rows, n << 4) for n in range(16)]
fmt = lambda t: "[" + ", ".join(f"0x{v:02x}" for v in t) + "]"
print("// AES-NI: y = PRE_LO[x & 15] ^ PRE_HI[x >> 4]; S = POST_LO[z & 15] ^ POST_HI[z >> 4], z = SubBytes(y)")
print("const PRE_LO: [u8; 16] =", fmt(lo(M1, c1)) + ";")
print("const PRE_HI: [u8; 16] =", fmt(hi(M1)) + ";")
print("const POST_LO: [u8; 16] =", fmt(lo(M3, c3)) + ";")
print("const POST_HI: [u8; 16] =", fmt(hi(M3)) + ";")
# InvShiftRows index for pshufb: feeding y' = y[idx] to AESENCLAST gives SubBytes(y) in place
idx = [0] * 16
for r in range(4):
    for c in range(4):
        idx[r + 4 * ((c + r) % 4)] = r + 4 * c
# check: ShiftRows(out)[r+4c] = in[r + 4((c+r)%4)]
sr = lambda s: [s[(i % 4) + 4 * (((i // 4) + (i % 4)) % 4)] for i in range(16)]
assert sr([idx[k] for k in range(16)]) == list(range(16))
print("const INV_SHIFT_ROWS: [u8; 16] =", fmt(idx) + ";")

# ---- tower field GF((2^4)^2): GF(16) = GF(2)[z]/(z^4+z+1), GF(256) = GF(16)[y]/(y^2+y+LAMBDA) ----
def m16(a, b):
    r = 0
    for i in range(4):
        if (b >> i) & 1: r ^= a << i
    for i in (6, 5, 4):
        if (r >> i) & 1: r ^= 0b10011 << (i - 4)
    return r
def tr16(x):
    t, s = 0, x
    for _ in range(4): t ^= s; s = m16(s, s)
    return t
LAMBDA = next(l for l in range(1, 16) if tr16(l) == 1)
def tmul(u, v):
    a, b, c, d = u >> 4, u & 15, v >> 4, v & 15
    # (a y + b)(c y + d) = ac y^2 + (ad + bc) y + bd, y^2 = y + LAMBDA
    ac = m16(a, c)
    return ((ac ^ m16(a, d) ^ m16(b, c)) << 4) | (m16(ac, LAMBDA) ^ m16(b, d))
tinv = lambda a: gpow(a, 254, tmul)
psi = iso(tmul)
T1 = matmul(psi, A); t1 = matvec(psi, C)
T2 = matmul(A, matinv(psi)); t2 = C
assert all(matvec(T2, tinv(matvec(T1, x) ^ t1)) ^ t2 == SB[x] for x in range(256))
# LAMBDA * a^2 as a 4x4 linear map
lsq = [m16(LAMBDA, m16(1 << j, 1 << j)) for j in range(4)]
lsq_rows = [sum(((lsq[j] >> i) & 1) << j for j in range(4)) for i in range(4)]
# check inverse formula: (a y + b)^-1 = (a y + (a + b)) / (LAMBDA a^2 + a b + b^2)
def inv16(x): return gpow(x, 14, m16)
for u in range(1, 256):
    a, b = u >> 4, u & 15
    d = m16(LAMBDA, m16(a, a)) ^ m16(a, b) ^ m16(b, b)
    di = inv16(d)
    assert ((m16(a, di) << 4) | m16(a ^ b, di)) == tinv(u)
print(f"// soft tower field: LAMBDA = {LAMBDA}")
print("const IN_ROWS: [u8; 8] =", fmt(T1) + ";", f"const IN_C: u8 = 0x{t1:02x};")
print("const OUT_ROWS: [u8; 8] =", fmt(T2) + ";", f"const OUT_C: u8 = 0x{t2:02x};")
print("const LAMBDA_SQ_ROWS: [u8; 4] =", fmt(lsq_rows) + ";")

# ---- single-block latency path of the GFNI kernels ----
# Next round's S-box input after the first affine step, computed straight
# from the inversion: y' = M1·q + c1 + M1·L(s) with s = M2·inv(y) + c2 and
# M1·L(s) = sM ^ rol24(sM) ^ (sP ^ rol8 sP ^ rol16 sP) ^ (rol8 sQ ^ rol16 sQ ^ rol24 sQ)
# where sM = M1·s, sP = M1·(s << 2), sQ = M1·(s >> 6) (bytewise shifts),
# each one gf2p8affineinvqb of y.
SHL2 = [(1 << (i - 2)) if i >= 2 else 0 for i in range(8)]
SHR6 = [(1 << (i + 6)) if i <= 1 else 0 for i in range(8)]
for name, T in (("SM", M1), ("SP", matmul(M1, SHL2)), ("SQ", matmul(M1, SHR6))):
    rows = matmul(T, M2)
    print(f"const {name}: i64 = 0x{gfni_qword(rows):016x}_u64 as i64;  const {name}_C: i32 = 0x{matvec(T, c2):02x};")
# Single-block path keeps the state as X = M1·x (bytewise), leaving it with M1^-1:
print(f"const PRE_INV: i64 = 0x{gfni_qword(matinv(M1)):016x}_u64 as i64;")

# Fewer rotations: M1·L(s) = sA ^ rol8(sD) ^ rol16(sD) ^ rol24(sE) with
# sA = M1·(s ^ (s << 2)), sD = M1·((s << 2) ^ (s >> 6)), sE = M1·(s ^ (s >> 6)).
I8 = [1 << i for i in range(8)]
madd = lambda a, b: [x ^ y for x, y in zip(a, b)]
MA = matmul(M1, madd(I8, SHL2)); MD = matmul(M1, madd(SHL2, SHR6)); ME = matmul(M1, madd(I8, SHR6))
def ML_check():
    import random
    rol = lambda w, n: ((w << n) | (w >> (32 - n))) & 0xffffffff
    bw = lambda m, w: sum(matvec(m, (w >> (8 * i)) & 255) << (8 * i) for i in range(4))
    for _ in range(1000):
        s = random.getrandbits(32)
        L = s ^ rol(s, 2) ^ rol(s, 10) ^ rol(s, 18) ^ rol(s, 24)
        assert bw(M1, L) == bw(MA, s) ^ rol(bw(MD, s), 8) ^ rol(bw(MD, s), 16) ^ rol(bw(ME, s), 24)
ML_check()
print("// GFNI single-block: gf2p8affineinvqb straight to sA, sD, sE")
for name, T in (("SA", MA), ("SD", MD), ("SE", ME)):
    print(f"const {name}: i64 = 0x{gfni_qword(matmul(T, M2)):016x}_u64 as i64;  const {name}_C: i32 = 0x{matvec(T, c2):02x};")
print("// AES-NI single-block: nibble tables from z = SubBytes(y) to sA, sD, sE; M1 and M1^-1")
for name, T in (("SA", MA), ("SD", MD), ("SE", ME)):
    R = matmul(T, M3); c = matvec(T, c3)
    print(f"const {name}_LO: [u8; 16] =", fmt(lo(R, c)) + ";")
    print(f"const {name}_HI: [u8; 16] =", fmt(hi(R)) + ";")
print("const M1_LO: [u8; 16] =", fmt(lo(M1, 0)) + ";")
print("const M1_HI: [u8; 16] =", fmt(hi(M1)) + ";")
print("const M1_INV_LO: [u8; 16] =", fmt(lo(matinv(M1), 0)) + ";")
print("const M1_INV_HI: [u8; 16] =", fmt(hi(matinv(M1))) + ";")
