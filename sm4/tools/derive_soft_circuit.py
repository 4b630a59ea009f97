#!/usr/bin/env python3
"""Derive the soft backend's S-box circuit (run: python3 derive_soft_circuit.py).

The S-box is computed in the tower field GF((2^4)^2) of derive_sbox.py:
u = IN*x + IN_C = a*y + b (a, b in GF(2^4) = GF(2)[z]/(z^4+z+1), y^2 + y +
LAMBDA = 0, LAMBDA = z^3), and

    (a*y + b)^-1 = (a*y + a + b) * d^-1,   d = LAMBDA*a^2 + a*b + b^2,
    S(x) = OUT*[lo, hi] + OUT_C,   hi = a * d^-1,   lo = (a + b) * d^-1.

Each GF(2^4) product is Karatsuba's nine ANDs of sums of the operands' bits
("pre-sums", P below) followed by a linear map R back to four bits. All
the linear work is merged into three layers, each one matrix:

  top:    x -> the pre-sums of a, b and a + b, and LAMBDA*a^2 + b^2
  middle: the nine products of a*b and LAMBDA*a^2 + b^2 -> d
  bottom: the eighteen products of a*d^-1 and (a+b)*d^-1 -> S(x) + OUT_C

and each layer's XORs are found by Boyar and Peralta's heuristic for short
linear programs (the best of several randomised runs; it needs numpy and
takes about two minutes). d^-1 is the 27-operation
formula of soft.rs (`inv16`).

The two constants are left out of the circuit: IN_C is IN*E for the byte E
printed here (the caller XORs E into each byte of its input, i.e. into the
round key), and OUT_C is XORed in by the caller. The whole circuit is
checked against the S-box table for all 256 inputs, then printed as Rust.
"""
import contextlib
import io
import os
import random
import sys

import numpy as np

# The S-box table, the bit helpers and the tower-field maps (with their
# checks) come from derive_sbox.py; its printed constants are not wanted here.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
with contextlib.redirect_stdout(io.StringIO()):
    import derive_sbox
from derive_sbox import SB, m16, matvec, par  # noqa: E402

IN_ROWS, IN_C = derive_sbox.T1, derive_sbox.t1
OUT_ROWS, OUT_C = derive_sbox.T2, derive_sbox.t2


# The byte E with IN*E = IN_C.
E = next(e for e in range(256) if matvec(IN_ROWS, e) == IN_C)

# Linear forms over x' = x ^ E, as 8-bit masks: u_i = IN_ROWS[i] . x'.
b_forms = IN_ROWS[0:4]
a_forms = IN_ROWS[4:8]


def presums(v):
    """Karatsuba's nine operand sums of a GF(2^4) element (4 linear forms)."""
    s01, s23 = v[0] ^ v[1], v[2] ^ v[3]
    s02, s13 = v[0] ^ v[2], v[1] ^ v[3]
    return [v[0], v[1], s01, v[2], v[3], s23, s02, s13, s02 ^ s13]


def karatsuba_r():
    """R: the four product bits as XORs of the nine pre-sum products (masks)."""
    p = [1 << i for i in range(9)]
    def half(l0, l2, l1):  # (x0 + x1 X)(y0 + y1 X) from x0y0, x1y1, (x0+x1)(y0+y1)
        return [l0, l1 ^ l0 ^ l2, l2]
    lo, hi, mid = half(p[0], p[1], p[2]), half(p[3], p[4], p[5]), half(p[6], p[7], p[8])
    mid = [mid[i] ^ lo[i] ^ hi[i] for i in range(3)]
    c = [0] * 7
    for i in range(3):
        c[i] ^= lo[i]
        c[i + 2] ^= mid[i]
        c[i + 4] ^= hi[i]
    for i in (6, 5, 4):  # z^4 = z + 1
        c[i - 4] ^= c[i]
        c[i - 3] ^= c[i]
    return c[:4]


R = karatsuba_r()


# Check R: the products of the pre-sums, mapped by R, multiply.
for a in range(16):
    for b in range(16):
        pa = presums([a >> i & 1 for i in range(4)])
        pb = presums([b >> i & 1 for i in range(4)])
        prod = sum((pa[j] & pb[j]) << j for j in range(9))
        assert sum(par(R[i] & prod) << i for i in range(4)) == m16(a, b)


def distances(base, n):
    """For every vector of n bits, the fewest elements of base XORing to it."""
    dist = np.full(1 << n, 99, dtype=np.int16)
    dist[0] = 0
    frontier, level, gens = np.array([0], dtype=np.int64), 0, np.array(base, dtype=np.int64)
    while frontier.size:
        level += 1
        reached = np.unique((frontier[:, None] ^ gens[None, :]).ravel())
        reached = reached[dist[reached] == 99]
        dist[reached] = level
        frontier = reached
    return dist


def xor_program(targets, n, rng):
    """XOR gates computing every target (a mask over n inputs), by Boyar and
    Peralta's heuristic: add the XOR of two known signals that leaves the
    smallest sum of distances to the targets (ties: the largest sum of
    squares, then at random). Returns the gates as (new, i, j) signal
    indexes and each target's signal."""
    base = [1 << i for i in range(n)]
    index = {v: i for i, v in enumerate(base)}
    gates = []
    while True:
        dist = distances(base, n)
        now = [int(dist[t]) for t in targets]
        if max(now) <= 1:
            break
        best, choices = None, []
        for i in range(len(base)):
            for j in range(i + 1, len(base)):
                new = base[i] ^ base[j]
                if new in index:
                    continue
                after = [min(d, 1 + int(dist[t ^ new])) for d, t in zip(now, targets)]
                score = (sum(after), -sum(d * d for d in after))
                if best is None or score < best:
                    best, choices = score, [(i, j, new)]
                elif score == best:
                    choices.append((i, j, new))
        i, j, new = rng.choice(choices)
        gates.append((len(base), i, j))
        index[new] = len(base)
        base.append(new)
    return gates, [index[t] for t in targets]


def best_program(targets, n, tries):
    rng = random.Random(1)
    return min((xor_program(targets, n, rng) for _ in range(tries)), key=lambda g: len(g[0]))


# --- top layer: x' (8 inputs) -> pre-sums and LAMBDA*a^2 + b^2 ---
def lambda_sq_plus_sq(a, b):
    return [a[2] ^ b[0] ^ b[2], a[1] ^ a[2] ^ a[3] ^ b[2], a[1] ^ b[1] ^ b[3], a[0] ^ a[2] ^ a[3] ^ b[3]]


ab_forms = [a_forms[i] ^ b_forms[i] for i in range(4)]
top_targets = (presums(a_forms) + presums(b_forms) + presums(ab_forms)
               + lambda_sq_plus_sq(a_forms, b_forms))
top_gates, top_out = best_program(top_targets, 8, 100)

# --- middle: d = LAMBDA*a^2 + b^2 + R*p, over [p0..p8, L0..L3] ---
mid_targets = [R[i] | (1 << (9 + i)) for i in range(4)]
mid_gates, mid_out = best_program(mid_targets, 13, 20)

# --- bottom: S + OUT_C = OUT*[R*ql, R*qh], over [ql0..8, qh0..8] ---
# column j of OUT: lo bits are u-positions 0..3, hi bits 4..7.
bot_targets = []
for i in range(8):
    m = 0
    for k in range(4):
        if OUT_ROWS[i] >> k & 1:
            m ^= R[k]
        if OUT_ROWS[i] >> (4 + k) & 1:
            m ^= R[k] << 9
    bot_targets.append(m)
bot_gates, bot_out = best_program(bot_targets, 18, 4)


# --- assemble and check over all 256 inputs (bit t of a value = input t) ---
def evaluate():
    ones = (1 << 256) - 1
    xin = [sum(((t ^ E) >> k & 1) << t for t in range(256)) for k in range(8)]
    sig = list(xin)
    for n, i, j in top_gates:
        sig.append(sig[i] ^ sig[j])
    top = [sig[o] for o in top_out]
    pa, pb, pab, lam = top[0:9], top[9:18], top[18:27], top[27:31]
    sig = [pa[j] & pb[j] for j in range(9)] + lam
    for n, i, j in mid_gates:
        sig.append(sig[i] ^ sig[j])
    d = [sig[o] for o in mid_out]
    a0, a1, a2, a3 = d
    a01, a02, a03, a12, a13 = a0 & a1, a0 & a2, a0 & a3, a1 & a2, a1 & a3
    x123 = a1 ^ a2 ^ a3
    na3 = a3 ^ ones
    di = [x123 ^ a0 ^ (a2 & ((a0 | a1) ^ a13)),
          a3 ^ a12 ^ a13 ^ a02 ^ (a01 & na3),
          a2 ^ a3 ^ a01 ^ a03 ^ (a02 & na3),
          x123 ^ (a3 & (a0 ^ (a1 | a2)))]
    pdi = presums(di)
    sig = [pab[j] & pdi[j] for j in range(9)] + [pa[j] & pdi[j] for j in range(9)]
    for n, i, j in bot_gates:
        sig.append(sig[i] ^ sig[j])
    out = [sig[o] for o in bot_out]
    for t in range(256):
        got = sum((out[k] >> t & 1) << k for k in range(8))
        assert got ^ OUT_C == SB[t], t


evaluate()
n_top, n_mid, n_bot = len(top_gates), len(mid_gates), len(bot_gates)
total = n_top + 9 + n_mid + 27 + 5 + 18 + n_bot
body = []


def emit(gates, names, n_inputs, prefix):
    names = list(names)
    for n, i, j in gates:
        name = f"{prefix}{n - n_inputs}"
        body.append(f"let {name} = {names[i]} ^ {names[j]};")
        names.append(name)
    return names


names = emit(top_gates, [f"x[{k}]" for k in range(8)], 8, "t")
top_names = [names[o] for o in top_out]
body.append("let pa = [" + ", ".join(top_names[0:9]) + "];")
body.append("let pb = [" + ", ".join(top_names[9:18]) + "];")
body.append("let pab = [" + ", ".join(top_names[18:27]) + "];")
body.append("let [p0, p1, p2, p3, p4, p5, p6, p7, p8]: [T; 9] = "
            "core::array::from_fn(|j| pa[j] & pb[j]);")
names = emit(mid_gates, [f"p{j}" for j in range(9)] + top_names[27:31], 13, "m")
body.append("let pdi = presums(inv16([" + ", ".join(names[o] for o in mid_out) + "]));")
body.append("let [ql0, ql1, ql2, ql3, ql4, ql5, ql6, ql7, ql8]: [T; 9] = "
            "core::array::from_fn(|j| pab[j] & pdi[j]);")
body.append("let [qh0, qh1, qh2, qh3, qh4, qh5, qh6, qh7, qh8]: [T; 9] = "
            "core::array::from_fn(|j| pa[j] & pdi[j]);")
names = emit(bot_gates, [f"ql{j}" for j in range(9)] + [f"qh{j}" for j in range(9)], 18, "o")
body.append("[" + ", ".join(names[o] for o in bot_out) + "]")

print(f"""/// The S-box with its two constants left out: `S(x ^ 0x{E:02x}) ^ 0x{OUT_C:02x}` on
/// each byte lane (`x[k]` = bit `k`). Generated by
/// `tools/derive_soft_circuit.py`: {total} operations (XORs: {n_top} top, {n_mid} middle,
/// {n_bot} bottom; 27 ANDs; 27 for the GF(2^4) inverse, 5 for its pre-sums).
#[rustfmt::skip]
#[inline(always)]
fn sbox_core<T: Slice>(x: &[T; 8]) -> [T; 8] {{""")
for line in body:
    print("    " + line)
print("}")
