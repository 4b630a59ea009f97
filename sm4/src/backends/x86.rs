//! What the x86_64 kernels share, above the contract and the vector
//! primitives (`crate::simd::x86`), below the kernels: their entry points
//! (`x86_entry_points!`), the lane paths (`lane_paths!`), the fused CTR
//! loop (`fused_ctr!`), the `impl Kernel` hooks they have in common
//! (`mode_hooks!`, `lane_hooks!`, `fused_ctr_hook!`), and the mode
//! drivers' own work: counter blocks, XTS tweaks and the XORs, two blocks
//! per `ymm` register (AVX2: `avx`, `gfni256`) or four per `zmm` register
//! (AVX-512: `gfni`).
//!
//! Written with vector stores of the kernel's own width for a reason beyond
//! the instruction count: a kernel loads its batch with 32- or 64-byte
//! loads right after the driver filled it, and a load that spans several
//! smaller stores cannot take its data from the store buffer; it waits
//! until they reach the cache. Filled with two 8-byte stores per block, a
//! 64-block stage of XTS blocks started its kernel about a hundred cycles
//! late (`gfni`: 1.03 c/B at 4096 bytes, 0.92 with `ymm` stores).
//!
//! One body of code for both widths (`modes_body!`), over a few
//! primitives each width module defines.

use crate::block::Blk;
use crate::kernel::TweakOrder;
use crate::simd::x86::{BSWAP64, BSWAP128};

/// `ctr_fill`, `xts_whiten` and `xor_blocks` over the width module's
/// primitives: `V`, `L` (blocks per register), `splat`, `from_blocks`,
/// `load`, `store` (the first `k` blocks), `xor`, `and`, `shl`, `shr`
/// (each 64-bit half, by a run-time count), `swap_halves`, `bytes`
/// (`vpshufb`), `add64`, `half_mask`.
macro_rules! modes_body {
    ($features:literal) => {
        /// Counter blocks `c, c + 1, ...` (128-bit big-endian) into `stage`.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn ctr_fill(c: u128, stage: &mut [Blk]) {
            let n = stage.len();
            if $crate::ct::counter_carries(c, n) {
                // The low half carries inside this stage (once in 2^64
                // blocks; declassified in `ct`): one block at a time.
                for (j, b) in stage.iter_mut().enumerate() {
                    *b = c.wrapping_add(j as u128).to_be_bytes().into();
                }
                return;
            }
            // As (high, low) halves, each byte-reversed on the way out.
            let mut v = from_blocks(core::array::from_fn(|j| (c + j as u128).rotate_left(64)));
            let step = from_blocks([(L as u128) << 64; L]);
            let bswap = splat(&BSWAP64);
            let p = stage.as_mut_ptr();
            for j in (0..n).step_by(L) {
                // SAFETY: blocks j..j + min(L, n - j) are in `stage`.
                unsafe { store(p.add(j), bytes(v, bswap), (n - j).min(L)) };
                v = add64(v, step);
            }
        }

        /// `v` (tweaks as (low, high) halves of the 128-bit number) times
        /// `x^k`, `k < 57`: the number shifts by `k` bits and the bits
        /// shifted out come back multiplied by the reduction polynomial
        /// (carry-less, by shifts: no table, no branch on the secret
        /// tweak). GB/T 17964 (bit-reflected): `(t >> k) ^ (clmul(t mod
        /// 2^k, 0xe1) << (121 - k))`, that is `r ^ r >> 1 ^ r >> 2 ^ r >>
        /// 7` with `r = t << (128 - k)`; IEEE 1619: `(t << k) ^ clmul(t >>
        /// (128 - k), 0x87)`, `r ^ r << 1 ^ r << 2 ^ r << 7`.
        #[inline]
        #[target_feature(enable = $features)]
        fn mul_xk<O: TweakOrder>(v: V, k: i32) -> V {
            if O::GB {
                let r = swap_halves(shl(v, 64 - k));
                let red = xor(xor(shr(r, 1), shr(r, 2)), shr(r, 7));
                xor(xor(shr(v, k), r), and(red, half_mask(true)))
            } else {
                let r = swap_halves(shr(v, 64 - k));
                let red = xor(xor(shl(r, 1), shl(r, 2)), shl(r, 7));
                xor(xor(shl(v, k), r), and(red, half_mask(false)))
            }
        }

        /// XTS whitening of a run of blocks: `tweaks[j] = t·x^j` and
        /// `stage[j] = data[j] ^ tweaks[j]` (all three the same length; or
        /// only the tweaks if `stage` is empty), as four independent chains
        /// of `L` tweaks each that step by `x^(4L)`.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn xts_whiten<O: TweakOrder>(
            t: u128,
            data: &[Blk],
            stage: &mut [Blk],
            tweaks: &mut [Blk],
        ) {
            let n = tweaks.len();
            let whiten = !stage.is_empty();
            assert!(!whiten || (stage.len() == n && data.len() == n));
            let mut first = [t; L];
            for i in 1..L {
                first[i] = O::mul_x(first[i - 1]);
            }
            let v0 = from_blocks(first);
            let l = L as i32;
            let mut v = [
                v0,
                mul_xk::<O>(v0, l),
                mul_xk::<O>(v0, 2 * l),
                mul_xk::<O>(v0, 3 * l),
            ];
            let out = splat(&BSWAP128);
            let (d, s, w) = (data.as_ptr(), stage.as_mut_ptr(), tweaks.as_mut_ptr());
            let mut j = 0;
            while j < n {
                for vi in v.iter_mut() {
                    if j >= n {
                        break;
                    }
                    let k = (n - j).min(L);
                    let tw = if O::GB { bytes(*vi, out) } else { *vi };
                    // SAFETY: blocks j..j + k exist in `tweaks`, and in
                    // `data` and `stage` when they are used.
                    unsafe {
                        store(w.add(j), tw, k);
                        if whiten {
                            store(s.add(j), xor(load(d.add(j), k), tw), k);
                        }
                    }
                    *vi = mul_xk::<O>(*vi, 4 * l);
                    j += L;
                }
            }
        }

        /// `out[j] = a[j] ^ b[j]` for `n` blocks; `out` may be `a` itself
        /// (every block is read before its own position is written).
        ///
        /// # Safety
        /// `a` and `b` are readable and `out` writable for `n` blocks;
        /// `out` and `b` do not overlap, `out` and `a` are equal or
        /// disjoint.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn xor_blocks(a: *const Blk, b: *const Blk, out: *mut Blk, n: usize) {
            for j in (0..n).step_by(L) {
                let k = (n - j).min(L);
                // SAFETY: blocks j..j + k are in all three buffers.
                unsafe { store(out.add(j), xor(load(a.add(j), k), load(b.add(j), k)), k) };
            }
        }
    };
}

/// The mode work two blocks per AVX2 register (`avx`, `gfni256`).
pub(crate) mod ymm {
    use super::*;
    use crate::simd::x86::ymm::*;

    modes_body!("avx2");
}

/// The mode work four blocks per AVX-512 register (`gfni`), with masked
/// loads and stores for the last one to three.
pub(crate) mod zmm {
    use super::*;
    use crate::simd::x86::zmm::*;

    modes_body!("avx512f,avx512bw");
}

/// The multi-block forms of a module's single-block path: `few::<N>` (two
/// to four blocks at one block's latency) and `chain` (a serial chain of
/// single-block encryptions kept in registers from one block to the next),
/// over the module's `rounds_xmm(km, words) -> words` (the 32 rounds on the
/// state `X = M1·x`, word `i` of each lane's block in register `i`),
/// `map_xmm(x, matrix)` (a bytewise GF(2)-linear map) and `PRE` / `PRE_INV`
/// (`M1` and its inverse).
macro_rules! lane_paths {
    ($features:literal) => {
        $crate::backends::x86::few_lanes!($features);
        $crate::backends::x86::chain_paths!($features);
    };
}

/// `few::<N>` alone (two to four blocks in the lanes of `rounds_xmm`), for
/// a kernel whose chains keep their own single-block path (`avx`: its lane
/// rounds need a shuffle more per round than its broadcast single block).
macro_rules! few_lanes {
    ($features:literal) => {
        /// Two to four blocks at the single-block latency: block `b` in
        /// lane `b` of the four word registers of `rounds_xmm`.
        ///
        /// # Safety
        /// `inp` is readable and `out` writable for `N` blocks (`N <= 4`).
        #[inline]
        #[target_feature(enable = $features)]
        unsafe fn few<const N: usize>(km: &[u32; 32], inp: *const u8, out: *mut u8) {
            use $crate::simd::x86::{load_lanes, store_lanes, transpose_xmm};
            // SAFETY: `N` readable blocks.
            let z = unsafe { load_lanes::<N>(inp) };
            let x = transpose_xmm(z).map(|w| map_xmm(w, PRE));
            let [x0, x1, x2, x3] = rounds_xmm(km, x);
            let z = transpose_xmm([x3, x2, x1, x0]).map(|w| map_xmm(w, PRE_INV));
            // SAFETY: `N` writable blocks.
            unsafe { store_lanes::<N>(out, z) };
        }
    };
}

/// `crypt_values` and `chain` over `rounds_xmm` (see [`lane_paths!`]).
macro_rules! chain_paths {
    ($features:literal) => {
        /// `Kernel::crypt_values`: four blocks given as values go to the
        /// lanes in registers, not through stores that the lane path's
        /// loads could not take their data from.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn crypt_values(km: &[u32; 32], v: [u128; 4]) -> [$crate::block::Blk; 4] {
            use $crate::simd::x86::transpose_xmm;
            let z = v.map(|b| _mm_set_epi64x((b >> 64) as i64, b as i64));
            let x = transpose_xmm(z).map(|w| map_xmm(w, PRE));
            let [x0, x1, x2, x3] = rounds_xmm(km, x);
            let z = transpose_xmm([x3, x2, x1, x0]).map(|w| map_xmm(w, PRE_INV));
            let mut out = [$crate::block::Blk::default(); 4];
            for (o, v) in out.iter_mut().zip(z) {
                // SAFETY: a 16-byte store into a 16-byte block.
                unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), v) };
            }
            out
        }

        /// `Kernel::chain`: the chained block in lane 0, the side blocks in
        /// lanes 1-3.
        /// The state stays in the word registers, in the `M1` basis, from
        /// step to step, so the chain's critical path is the 32 rounds and
        /// an AND and an XOR per block: no transposition, basis change,
        /// store or load.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn chain(
            km: &[u32; 32],
            state: &mut $crate::block::Blk,
            steps: usize,
            io: &mut impl $crate::kernel::ChainIo,
        ) {
            use $crate::simd::x86::{load_lanes, transpose_xmm};
            let lane0 = _mm_setr_epi32(-1, 0, 0, 0);
            let mut cur = *state;
            // SAFETY: one readable block.
            let z = unsafe { load_lanes::<1>(cur.as_ptr()) };
            // Output word i of the last step in lane 0 of `prev[i]`.
            let mut prev = transpose_xmm(z).map(|w| map_xmm(w, PRE));
            // Step s + 1's blocks are fed and prepared before step s's
            // rounds, so that the chain finds them ready.
            let prepare = |blocks: [u128; 4]| {
                let z = blocks.map(|b| _mm_set_epi64x((b >> 64) as i64, b as i64));
                (blocks[0], transpose_xmm(z).map(|w| map_xmm(w, PRE)))
            };
            let mut next = if steps > 0 {
                prepare(io.feed(0))
            } else {
                (0, prev)
            };
            for s in 0..steps {
                let (b, w) = next;
                let input = $crate::block::xor(&cur, &b.to_ne_bytes().into());
                // Lane 0: the chain's words XOR B's; lanes 1-3: the side
                // blocks.
                let x: [__m128i; 4] =
                    core::array::from_fn(|i| _mm_xor_si128(_mm_and_si128(prev[i], lane0), w[i]));
                if s + 1 < steps {
                    next = prepare(io.feed(s + 1));
                }
                let [x0, x1, x2, x3] = rounds_xmm(km, x);
                prev = [x3, x2, x1, x0];
                let z = transpose_xmm(prev).map(|w| map_xmm(w, PRE_INV));
                let mut out = [$crate::block::Blk::default(); 4];
                for (o, v) in out.iter_mut().zip(z) {
                    // SAFETY: a 16-byte store into a 16-byte block.
                    unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), v) };
                }
                cur = out[0];
                io.emit(s, &out, &input);
            }
            *state = cur;
        }
    };
}

/// The two entry points of an x86 kernel module, written once: `crypt_block`
/// (the single-block path the modes' `encrypt_block` calls) and
/// `crypt_blocks` (full batches of `4 * group` blocks, then a tail of whole
/// groups in place, or any other tail padded into one stack batch), over
/// the module's own `one` and `groups::<G>` (G groups of `group` blocks).
macro_rules! x86_entry_points {
    (features = $features:literal, cpu = $cpu:literal, group = $group:literal) => {
        $crate::backends::x86::x86_entry_points!(
            features = $features,
            cpu = $cpu,
            group = $group,
            batch = groups::<4>
        );
    };
    (features = $features:literal, cpu = $cpu:literal, group = $group:literal,
     batch = $batch:path $(, lanes = $lanes:ident)?) => {
        /// Encrypt or decrypt one block on the single-block path (what the
        /// modes' `encrypt_block` / `decrypt_block` call), without the batch
        /// dispatch of [`crypt_blocks`].
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ".")]
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn crypt_block(rk: &[u32; 32], block: InOut<'_, '_, $crate::block::Blk>) {
            let (inp, out) = block.into_raw();
            // SAFETY: an `InOut` holds one readable and one writable block.
            unsafe { one(rk, inp.cast(), out.cast()) };
        }

        /// Encrypt (rk = encryption schedule) or decrypt (rk = reversed
        /// schedule) any number of blocks, in place or out of place.
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ".")]
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn crypt_blocks(
            rk: &[u32; 32],
            blocks: InOutBuf<'_, '_, $crate::block::Blk>,
        ) {
            const BATCH: usize = 4 * $group;
            let n = blocks.len();
            let (inp, out) = blocks.into_raw();
            let (inp, out) = (inp.cast::<u8>(), out.cast::<u8>());
            if n == 1 {
                // SAFETY: one block in and out (InOutBuf of length 1).
                unsafe { one(rk, inp, out) };
                return;
            }
            let mut done = 0;
            while n - done >= BATCH {
                // SAFETY: BATCH blocks remain at offset `done` in both
                // buffers, which InOutBuf guarantees equal or disjoint.
                unsafe { $batch(rk, inp.add(16 * done), out.add(16 * done)) };
                done += BATCH;
            }
            let rest = n - done;
            // SAFETY: `rest` blocks remain at `done` in both buffers, equal
            // or disjoint (the lane paths load every block before storing).
            unsafe {
                let (inp, out) = (inp.add(16 * done), out.add(16 * done));
                match rest {
                    0 => return,
                    1 => return one(rk, inp, out),
                    $(2 => return $lanes::<2>(rk, inp, out),
                    3 => return $lanes::<3>(rk, inp, out),
                    4 => return $lanes::<4>(rk, inp, out),)?
                    _ => {}
                }
            }
            // Whole groups run straight from the input to the output; any
            // other tail is padded into a stack batch and copied back.
            let whole = rest % $group == 0;
            let mut buf = [0u8; 16 * BATCH];
            // SAFETY: `rest` blocks remain at `done` in both buffers, equal
            // or disjoint; `buf` is a separate local buffer of BATCH blocks.
            let (src, dst) = unsafe {
                let (inp, out) = (inp.add(16 * done), out.add(16 * done));
                if whole {
                    (inp, out)
                } else {
                    core::ptr::copy_nonoverlapping(inp, buf.as_mut_ptr(), 16 * rest);
                    let p = buf.as_mut_ptr();
                    (p.cast_const(), p)
                }
            };
            // SAFETY: `src` / `dst` hold `rest` blocks rounded up to whole
            // groups (whole already, or the BATCH blocks of `buf`), equal or
            // disjoint.
            unsafe {
                match rest.div_ceil($group) {
                    1 => groups::<1>(rk, src, dst),
                    2 => groups::<2>(rk, src, dst),
                    3 => groups::<3>(rk, src, dst),
                    _ => $batch(rk, src, dst),
                }
            }
            if !whole {
                // SAFETY: `rest` blocks remain writable at `done`.
                unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), out.add(16 * done), 16 * rest) };
            }
        }

        /// Encrypt or decrypt the first `n` (1 to 4) of four blocks in
        /// place, at the single-block latency where the module has a lane
        /// path.
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ".")]
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn crypt_lanes(
            rk: &[u32; 32],
            blocks: &mut [$crate::block::Blk; 4],
            n: usize,
        ) {
            let p = blocks.as_mut_ptr().cast::<u8>();
            // SAFETY: `blocks` holds four blocks, in place.
            unsafe {
                match n {
                    1 => one(rk, p, p),
                    $(2 => $lanes::<2>(rk, p, p),
                    3 => $lanes::<3>(rk, p, p),
                    4 => $lanes::<4>(rk, p, p),)?
                    _ => crypt_blocks(rk, (&mut blocks[..n]).into()),
                }
            }
        }

        /// Encrypt or decrypt the first `n` blocks (`1..=STAGE`) of a stage
        /// in place: full batches, then the rest rounded up to whole groups
        /// (the blocks after `n` are scratch), one block on the latency path.
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ".")]
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn crypt_stage(rk: &[u32; 32], stage: &mut [$crate::block::Blk], n: usize) {
            const BATCH: usize = 4 * $group;
            // The padded last group ends within `kernel::reach(n)`, the
            // part of the stage that the wipes cover.
            const _: () = assert!($crate::kernel::SHORT.is_multiple_of($group));
            // The runs end at most at `n` rounded up to whole groups.
            assert!(n >= 1 && n.next_multiple_of($group) <= stage.len());
            let p = stage.as_mut_ptr().cast::<u8>();
            // SAFETY: (every call) a batch run ends at most at `n`, a group
            // run at most at `n` rounded up to whole groups, which the
            // stage holds (asserted above).
            unsafe {
                match n {
                    1 => return one(rk, p, p),
                    $(2 => return $lanes::<2>(rk, p, p),
                    3 => return $lanes::<3>(rk, p, p),
                    4 => return $lanes::<4>(rk, p, p),)?
                    _ => {}
                }
                let mut done = 0;
                while n - done >= BATCH {
                    $batch(rk, p.add(16 * done), p.add(16 * done));
                    done += BATCH;
                }
                let p = p.add(16 * done);
                match (n - done).div_ceil($group) {
                    0 => {}
                    1 => groups::<1>(rk, p, p),
                    2 => groups::<2>(rk, p, p),
                    3 => groups::<3>(rk, p, p),
                    _ => $batch(rk, p, p),
                }
            }
        }
    };
}

/// How many of `n` blocks a kernel with groups of `group` and batches of
/// `batch` blocks runs straight from input to output (CTR, CBC and CFB
/// decryption): all of them when they are whole groups, else the whole
/// batches only. The rest then goes to one stage call, rounded up to whole
/// groups: one latency chain, where whole groups and then the 1 to
/// `group - 1` left over were two (at 10 blocks, `Sm4Ctr` on `avx` ran
/// slower than at 8).
pub(crate) const fn direct_blocks(n: usize, group: usize, batch: usize) -> usize {
    if n.is_multiple_of(group) {
        n
    } else {
        n / batch * batch
    }
}

/// CTR on the kernel module it is expanded in (`gfni256`, `avx`: its
/// `groups_with`) over `$batches` batches of
/// 32 blocks from `$inp` to `$out`, the counters from `$c`, with `$side`
/// between the rounds (see `gfni256::groups_with`). Expanded inside an
/// `unsafe` block whose contract is: the CPU supports the module's
/// features; `$inp` is readable and `$out` writable for `32 * $batches`
/// blocks, equal or disjoint; the low 64 bits of `$c` do not carry within
/// them; `$side` does not write them.
macro_rules! fused_ctr {
    ($rk:expr, $c:expr, $inp:expr, $out:expr, $batches:expr, $side:expr) => {{
        let (inp, out): (*const u8, *mut u8) = ($inp, $out);
        let side = $side;
        for b in 0..$batches {
            let off = 16 * 32 * b;
            // Batch `b` of the blocks (the expansion is inside the caller's
            // `unsafe` block, under its contract).
            groups_with::<4, true>(
                $rk,
                inp.add(off),
                out.add(off),
                $c.wrapping_add(32 * b as u128),
                side,
            );
        }
    }};
}

/// The mode drivers' own work (`ctr_fill`, `xts_whiten`, `xor_into`) at
/// the width of a kernel's batches (`ymm` or `zmm`); inside a
/// [`kernel_token!`](crate::kernel::kernel_token)'s hooks.
macro_rules! mode_hooks {
    ($w:ident) => {
        #[inline(always)]
        fn ctr_fill(self, c: u128, stage: &mut [$crate::block::Blk]) {
            // SAFETY: the token exists only inside its backend's runner,
            // whose features include those of the width module (AVX2 for
            // `ymm`, AVX-512F/BW for `zmm`).
            unsafe { $crate::backends::x86::$w::ctr_fill(c, stage) }
        }
        #[inline(always)]
        fn xts_whiten<O: $crate::kernel::TweakOrder>(
            self,
            t: u128,
            data: &[$crate::block::Blk],
            stage: &mut [$crate::block::Blk],
            tweaks: &mut [$crate::block::Blk],
        ) {
            // SAFETY: as in `ctr_fill`.
            unsafe { $crate::backends::x86::$w::xts_whiten::<O>(t, data, stage, tweaks) }
        }
        #[inline(always)]
        fn xor_into(
            self,
            data: cipher::InOutBuf<'_, '_, $crate::block::Blk>,
            ks: &[$crate::block::Blk],
        ) {
            let n = data.len();
            assert!(ks.len() >= n);
            let (i, o) = data.into_raw();
            // SAFETY: as in `ctr_fill`; `cipher::InOutBuf` holds `n` blocks in and
            // out, equal or disjoint, and `ks` (a separate borrow) `n`.
            unsafe { $crate::backends::x86::$w::xor_blocks(i, ks.as_ptr(), o, n) }
        }
    };
}

/// `Kernel::crypt_values` and `Kernel::chain` over the module's lane paths
/// ([`lane_paths!`]); inside a `kernel_token!`'s hooks.
macro_rules! lane_hooks {
    () => {
        #[inline(always)]
        fn crypt_values(self, rk: &[u32; 32], v: [u128; 4], _n: usize) -> [$crate::block::Blk; 4] {
            // SAFETY: the token exists only inside its backend's runner.
            unsafe { crypt_values(rk, v) }
        }
        $crate::kernel::chain_hook!();
    };
}

/// `Kernel::ctr_xor` of the AVX2 kernels: the counters made in registers
/// and the XOR in the kernel's stores ([`fused_ctr!`]) for whole batches;
/// inside a `kernel_token!`'s hooks.
macro_rules! fused_ctr_hook {
    () => {
        #[inline(always)]
        fn ctr_xor(
            self,
            rk: &[u32; 32],
            c: u128,
            blocks: cipher::InOutBuf<'_, '_, $crate::block::Blk>,
            extra: &mut [(u128, $crate::block::Blk)],
            stage: &mut $crate::kernel::LazyStage,
        ) {
            const BATCH: usize = 32;
            const GROUP: usize = 8;
            let n = blocks.len();
            // Whole batches, then whole groups of eight (a 16-block message
            // skips the stage: no counter fill, copy or separate XOR); see
            // `direct_blocks` for a count that is not whole groups.
            let full = $crate::backends::x86::direct_blocks(n, GROUP, BATCH);
            if full == 0 || extra.len() > 4 || $crate::ct::counter_carries(c, full) {
                // (The low half carries once in 2^64 blocks; declassified.)
                return $crate::kernel::ctr_stages(self, rk, c, blocks, extra, stage);
            }
            let (head, rest) = blocks.split_at(full);
            let (i, o) = head.into_raw();
            // SAFETY: the token exists only inside its backend's runner;
            // `head` holds `full` blocks in and out, equal or disjoint; the
            // low half of the counter does not carry (checked above).
            unsafe {
                $crate::backends::x86::fused_ctr!(
                    rk,
                    c,
                    i.cast(),
                    o.cast(),
                    full / BATCH,
                    &mut |_| {}
                );
                let off = full / BATCH * BATCH;
                let (i, o, c) = (
                    i.cast::<u8>().add(16 * off),
                    o.cast::<u8>().add(16 * off),
                    c.wrapping_add(off as u128),
                );
                match (full - off) / GROUP {
                    1 => groups_with::<1, true>(rk, i, o, c, &mut |_| {}),
                    2 => groups_with::<2, true>(rk, i, o, c, &mut |_| {}),
                    3 => groups_with::<3, true>(rk, i, o, c, &mut |_| {}),
                    _ => {}
                }
            };
            let c = c.wrapping_add(full as u128);
            if rest.is_empty() {
                $crate::kernel::crypt_extras(self, rk, extra);
            } else {
                $crate::kernel::ctr_stages(self, rk, c, rest, extra, stage);
            }
        }
    };
}

pub(crate) use {
    chain_paths, few_lanes, fused_ctr, fused_ctr_hook, lane_hooks, lane_paths, mode_hooks,
    x86_entry_points,
};
