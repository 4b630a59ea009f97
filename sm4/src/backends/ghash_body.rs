//! What the SIMD GHASH engines share, written once: the token type and its
//! `Ghash` impl (`ghash_token!`), and the group loop of the 128-bit
//! engines `clmul` and `pmull` (`ghash_narrow_body!`) over the
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
