//! What the SIMD GHASH engines share, written once: the token type and its
//! `Ghash` impl (`ghash_token!`), the group loop of the 128-bit engines
//! `clmul` and `pmull` (`ghash_narrow_body!`) and that of the multi-lane
//! x86 engines `vpclmul` and `vpclmul256` (`ghash_wide_body!`), over the
//! primitives each module defines.

/// The engine's token `$name`, made only through `new` (unsafe: the CPU
/// must have `$cpu`), whose `Ghash::update` calls the module's `update`.
macro_rules! ghash_token {
    ($name:ident, $cpu:literal) => {
        #[doc = concat!("The engine's token: only runners whose features include ", $cpu,
                                                ", entered after detection found them, make one.")]
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name(());

        impl $name {
            /// The token.
            ///
            /// # Safety
            #[doc = concat!("The CPU supports ", $cpu, ".")]
            #[inline(always)]
            pub(crate) unsafe fn new() -> Self {
                $name(())
            }
        }

        impl crate::ghash::Ghash for $name {
            #[inline(always)]
            fn update(self, key: &GhashKey, state: &mut [u8; 16], blocks: &[Blk]) {
                // SAFETY: the token exists only after the CPU was found to
                // support the features (`new`'s contract).
                unsafe { update(key, state, blocks) }
            }
        }
    };
}

/// `update` for a one-block-per-register engine: groups of `$agg` blocks
/// with H^agg..H^1, then one group of the rest with the last powers, one
/// reduction per group. Over the module's `V`, `Acc { lo, mid, hi }`,
/// `zero`, `xor`, `load_state`, `store_state`, `load_block`,
/// `load_power`, `mul_add` (set when `first`, else add) and `reduce`.
macro_rules! ghash_narrow_body {
    (features = $features:literal, agg = $agg:literal) => {
        /// Blocks per reduction.
        const AGG: usize = $agg;

        /// The engine.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn update(key: &GhashKey, state: &mut [u8; 16], blocks: &[Blk]) {
            let mut y = load_state(state);
            let n = blocks.len();
            let mut acc = Acc {
                lo: zero(),
                mid: zero(),
                hi: zero(),
            };
            let mut done = 0;
            if n >= AGG {
                let pow: [V; AGG] =
                    core::array::from_fn(|j| load_power(key, crate::ghash::POWERS - AGG + j));
                while n - done >= AGG {
                    let g: &[Blk; AGG] = blocks[done..done + AGG].try_into().unwrap();
                    // The blocks without the state first, so that the
                    // product that waits for the state is the last term of
                    // the sums (the chain from one group's state to the
                    // next: one multiply, one XOR, the reduction). Index
                    // loops: they unroll, where LLVM left the iterator
                    // adapters' `next` out of line (a call per block, the
                    // sums spilled).
                    mul_add(&mut acc, load_block(&g[AGG - 1]), pow[AGG - 1], true);
                    #[allow(clippy::needless_range_loop)]
                    for j in (1..AGG - 1).rev() {
                        mul_add(&mut acc, load_block(&g[j]), pow[j], false);
                    }
                    mul_add(&mut acc, xor(load_block(&g[0]), y), pow[0], false);
                    y = reduce(acc);
                    done += AGG;
                }
            }
            let g = &blocks[done..];
            if !g.is_empty() {
                // Block `j` of the rest times H^(rest - j).
                let first = crate::ghash::POWERS - g.len();
                mul_add(
                    &mut acc,
                    xor(load_block(&g[0]), y),
                    load_power(key, first),
                    true,
                );
                #[allow(clippy::needless_range_loop)]
                for j in 1..g.len() {
                    mul_add(
                        &mut acc,
                        load_block(&g[j]),
                        load_power(key, first + j),
                        false,
                    );
                }
                y = reduce(acc);
            }
            store_state(state, y);
        }
    };
}

/// `update` for an x86 engine of `$lanes` blocks per register: groups of
/// `$agg` blocks with H^agg..H^1, then one group of the rest (registers
/// of `$lanes` blocks, the last one partial) with the last powers, one
/// reduction and one lane sum per group; fewer than `$narrow` blocks go to
/// `clmul`'s shorter chain (no lanes to sum). Over the module's `V`,
/// `Acc { lo, mid, hi }`, `zero`, `xor`, `widen` (an `xmm` value in lane
/// 0, zero above), `bswap` (the per-lane byte reversal index),
/// `load_blocks(blocks, i, k, bswap)` and `load_powers(key, i, k)` (`k`
/// lanes, zero above), `mul_add`, `reduce` and `fold` (the sum of the
/// lanes).
#[cfg(target_arch = "x86_64")]
macro_rules! ghash_wide_body {
    (features = $features:literal, lanes = $lanes:literal, agg = $agg:literal,
     narrow = $narrow:literal) => {
        /// Blocks per register.
        const L: usize = $lanes;
        /// Blocks per reduction.
        const AGG: usize = $agg;
        const _: () = assert!(AGG % L == 0 && AGG <= crate::ghash::POWERS);

        /// The engine.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn update(key: &GhashKey, state: &mut [u8; 16], blocks: &[Blk]) {
            use super::clmul;
            if blocks.len() < $narrow {
                return clmul::update(key, state, blocks);
            }
            let bswap = bswap();
            let mut y = clmul::load_state(state);
            let n = blocks.len();
            let mut acc = Acc {
                lo: zero(),
                mid: zero(),
                hi: zero(),
            };
            let mut done = 0;
            if n >= AGG {
                const R: usize = AGG / L;
                let pow: [V; R] = core::array::from_fn(|j| {
                    load_powers(key, crate::ghash::POWERS - AGG + L * j, L)
                });
                while n - done >= AGG {
                    // The blocks without the state first, so that the
                    // product that waits for the state is the last term of
                    // the sums: the serial chain from one group's state to
                    // the next is one multiply, one XOR, the reduction and
                    // the sum of the lanes.
                    let x = load_blocks(blocks, done + L * (R - 1), L, bswap);
                    mul_add(&mut acc, x, pow[R - 1], true);
                    #[allow(clippy::needless_range_loop)]
                    for j in (1..R - 1).rev() {
                        let x = load_blocks(blocks, done + L * j, L, bswap);
                        mul_add(&mut acc, x, pow[j], false);
                    }
                    let x = xor(load_blocks(blocks, done, L, bswap), widen(y));
                    mul_add(&mut acc, x, pow[0], false);
                    y = fold(reduce(acc));
                    done += AGG;
                }
            }
            let r = n - done;
            if r > 0 {
                // Block `done + j` times H^(r - j), that is
                // `pow[POWERS - r + j]`.
                let first = crate::ghash::POWERS - r;
                let k = r.min(L);
                let x = xor(load_blocks(blocks, done, k, bswap), widen(y));
                mul_add(&mut acc, x, load_powers(key, first, k), true);
                let mut j = k;
                while j < r {
                    let k = (r - j).min(L);
                    let x = load_blocks(blocks, done + j, k, bswap);
                    mul_add(&mut acc, x, load_powers(key, first + j, k), false);
                    j += k;
                }
                y = fold(reduce(acc));
            }
            clmul::store_state(state, y);
        }
    };
}

/// `Acc`, `mul_add` and `reduce` of an x86 engine whose sums are two-input
/// XORs (`clmul` on `xmm`, `vpclmul256` on `ymm`), from the intrinsics of
/// its width, over the module's `V`, `xor` and `REDUCE`: schoolbook
/// products, lane by lane.
#[cfg(target_arch = "x86_64")]
macro_rules! ghash_schoolbook {
    (features = $features:literal, clmul = $clmul:ident, shuffle = $shuffle:ident,
     set1 = $set1:ident) => {
        /// The unreduced sum of a group's products, per lane.
        #[derive(Clone, Copy)]
        struct Acc {
            lo: V,
            mid: V,
            hi: V,
        }

        /// `acc += x·h` lane by lane, or `acc = x·h` when `first`.
        #[inline]
        #[target_feature(enable = $features)]
        fn mul_add(acc: &mut Acc, x: V, h: V, first: bool) {
            let lo = $clmul::<0x00>(x, h);
            let hi = $clmul::<0x11>(x, h);
            let mid = xor($clmul::<0x01>(x, h), $clmul::<0x10>(x, h));
            if first {
                *acc = Acc { lo, mid, hi };
            } else {
                acc.lo = xor(acc.lo, lo);
                acc.mid = xor(acc.mid, mid);
                acc.hi = xor(acc.hi, hi);
            }
        }

        /// Each lane's sum times `x^-128`, reduced: fold the low 64 bits
        /// into the middle (`lo.lo·REDUCE` plus the swapped halves of
        /// `lo`), then the middle's low 64 bits into the high part the same
        /// way.
        #[inline]
        #[target_feature(enable = $features)]
        fn reduce(acc: Acc) -> V {
            let c = $set1(REDUCE as i64);
            let t = $clmul::<0x00>(acc.lo, c);
            let mid = xor(xor(acc.mid, t), $shuffle::<0x4e>(acc.lo));
            let t = $clmul::<0x00>(mid, c);
            xor(xor(acc.hi, t), $shuffle::<0x4e>(mid))
        }
    };
}
