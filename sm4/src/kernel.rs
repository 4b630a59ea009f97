//! The kernel contract: what a mode driver asks of an SM4 kernel, in one
//! place. [`Kernel`] (each backend's token implements it; only that
//! backend's `#[target_feature]` runner makes a token), the [`Stage`] a
//! driver fills, [`ChainIo`] for serial chains, [`KernelClosure`] (the
//! rank-2 closure a runner calls), [`TweakOrder`] for XTS, and the
//! portable stage loops that the contract's hooks default to; and
//! `kernel_token!`, which makes a kernel's token and runners. Imports only
//! the block type; below the kernels, the dispatcher and the modes.

use crate::block::{Blk, wipe, xor};
use cipher::InOutBuf;

/// Blocks per stage of the fused mode drivers (`crate::modes`): the widest
/// batch of any kernel (`gfni`'s 64), and a whole number of every
/// kernel's batch.
pub(crate) const STAGE: usize = 64;
/// Calls of the side work per stage in [`Kernel::ctr_xor_beside`].
pub(crate) const SIDE_STEPS: usize = 4;

/// `block = E(counter)` for each of up to four `extra` pairs of
/// [`Kernel::ctr_xor`], on the kernel's lanes (one block's latency).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) fn crypt_extras<K: Kernel>(k: K, rk: &[u32; 32], extra: &mut [(u128, Blk)]) {
    if extra.is_empty() {
        return;
    }
    let mut v = [Blk::default(); 4];
    for (b, (ctr, _)) in v.iter_mut().zip(extra.iter()) {
        *b = ctr.to_be_bytes().into();
    }
    k.crypt_lanes(rk, &mut v, extra.len());
    for (b, (_, out)) in v.iter().zip(extra.iter_mut()) {
        *out = *b;
    }
}

/// The blocks a mode driver hands a kernel at once, encrypted in place.
#[repr(C, align(64))]
pub(crate) struct Stage(pub(crate) [Blk; STAGE]);

impl Stage {
    /// A zeroed stage (the kernels read the padding after the blocks in
    /// use, so it is initialised once per call).
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Stage([Blk::default(); STAGE])
    }

    /// A zeroed stage as a constant (see [`Made::FULL`]).
    const ZERO: Self = Stage([cipher::Array([0; 16]); STAGE]);

    /// Overwrite the first `used` blocks (they held keystream, plaintext
    /// or tweaks): all that the call wrote, [`reach`] of its work.
    #[inline(always)]
    pub(crate) fn wipe(&mut self, used: usize) {
        wipe_used(&mut self.0, used);
    }
}

/// The blocks from a stage's start that work of `n` blocks may write, in
/// a stage of `len`: `n` rounded up to [`SHORT`] (a kernel's padded last
/// group ends there, every kernel's group dividing `SHORT`), at most
/// `len`. What a wipe must cover: a call that used one block of a
/// 64-block stage wipes 16, not 64. A function of the lengths only.
#[inline(always)]
pub(crate) const fn reach(n: usize, len: usize) -> usize {
    let n = if n < len { n } else { len };
    let r = n.next_multiple_of(SHORT);
    if r < len { r } else { len }
}

/// Overwrite the first `used` blocks of `stage` (the rest was not written
/// since it was zeroed), in whole short stages (`used` rounded up): a wipe
/// of a fixed length is a few vector stores in place, where one of a
/// variable length is a `memset` call.
#[inline(always)]
fn wipe_used<const N: usize>(stage: &mut [Blk; N], used: usize) {
    const { assert!(N.is_multiple_of(SHORT)) };
    let (chunks, _) = stage.as_chunks_mut::<SHORT>();
    for chunk in chunks.iter_mut().take(used.div_ceil(SHORT)) {
        wipe(chunk);
    }
}

/// Blocks of a short stage: the work of a message of up to 16 blocks (the
/// widest group of any kernel, `gfni`'s, so a kernel's padded last group
/// fits).
pub(crate) const SHORT: usize = 16;

/// A stage of [`SHORT`] blocks, for short messages.
#[repr(C, align(64))]
pub(crate) struct ShortStage([Blk; SHORT]);

// Test builds with `zeroize`: a stage must read zero when it goes.
#[cfg(all(test, feature = "zeroize"))]
impl Drop for Stage {
    fn drop(&mut self) {
        wipe_check::check(&self.0);
    }
}
#[cfg(all(test, feature = "zeroize"))]
impl Drop for ShortStage {
    fn drop(&mut self) {
        wipe_check::check(&self.0);
    }
}

/// A stage made on first use and kept for a whole call (zeroing one costs
/// about as much as filling it, so drivers that work stage by stage keep
/// one), wiped when dropped. Work of up to [`SHORT`] blocks gets a short
/// stage: zeroing a whole one took 7-10% of a 128- to 256-byte CBC
/// decryption on `avx` (Zen 4), and wiping it (`zeroize`) more. With
/// `zeroize`, the stage keeps a high-water mark, the [`reach`] of the
/// longest work given to [`get`](Self::get), and only that part is wiped.
pub(crate) struct LazyStage {
    made: Made,
    /// The blocks from the stage's start that may have been written (a
    /// function of the public lengths only).
    #[cfg(feature = "zeroize")]
    used: usize,
}

/// The stage a [`LazyStage`] has made. `Full` first, so that its tag is
/// 0 (rustc numbers the variants in order) and [`FULL`](Self::FULL) is all
/// zero bytes.
// On the stack, made once per call: boxing the full stage would allocate
// (and `no_std` has no allocator).
#[allow(clippy::large_enum_variant)]
enum Made {
    Full(Stage),
    Short(ShortStage),
    None,
}

impl Made {
    /// A zeroed full stage, assigned from a constant: one aligned fill of
    /// the enum in place. `Made::Full(Stage::new())` zeroed a temporary
    /// and copied it in, and LLVM split the temporary at the tag (bytes
    /// 1 to 1087, alignment 1), so that it landed misaligned in some
    /// builds: 16 split stores and a slow copy, which took `Sm4Ctr` at 512
    /// bytes on `gfni` 8% slower with `zeroize` (Zen 4), where the stage
    /// wipe's optimisation barrier moved the temporary.
    const FULL: Self = Made::Full(Stage::ZERO);
}

impl LazyStage {
    /// No stage yet.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        LazyStage {
            made: Made::None,
            #[cfg(feature = "zeroize")]
            used: 0,
        }
    }

    /// A stage for work of `n` blocks at most (its length is [`SHORT`] or
    /// [`STAGE`]), made now if the one there is not long enough. With
    /// `zeroize`, only its first [`reach`]`(n)` blocks, which the
    /// high-water mark then covers: nothing past them can be written.
    #[inline(always)]
    pub(crate) fn get(&mut self, n: usize) -> &mut [Blk] {
        if n <= SHORT && !matches!(self.made, Made::Full(_)) {
            if !matches!(self.made, Made::Short(_)) {
                self.made = Made::Short(ShortStage([Blk::default(); SHORT]));
            }
        } else if !matches!(self.made, Made::Full(_)) {
            // The short stage there, if any, is wiped before it goes.
            self.wipe();
            self.made = Made::FULL;
        }
        let stage: &mut [Blk] = match &mut self.made {
            Made::Short(s) => &mut s.0,
            Made::Full(s) => &mut s.0,
            Made::None => &mut [],
        };
        #[cfg(feature = "zeroize")]
        let stage = {
            let r = reach(n, stage.len());
            self.used = core::cmp::max(self.used, r);
            &mut stage[..r]
        };
        stage
    }

    /// Overwrite what was written of the stage there is (it held keystream
    /// or plaintext).
    #[inline(always)]
    fn wipe(&mut self) {
        #[cfg(feature = "zeroize")]
        {
            match &mut self.made {
                Made::None => {}
                Made::Short(s) => wipe_used(&mut s.0, self.used),
                Made::Full(s) => s.wipe(self.used),
            }
            self.used = 0;
        }
    }
}

impl Drop for LazyStage {
    #[inline(always)]
    fn drop(&mut self) {
        self.wipe();
    }
}

/// Test builds with `zeroize`: every stage, short or full, checks as it is
/// dropped that it reads zero (a stage starts zeroed, so a block written
/// past the high-water mark, or a wipe left out, fails the test that ran
/// it), and counts the stages checked, per thread, for the tests that
/// must see their calls reach one.
#[cfg(all(test, feature = "zeroize"))]
pub(crate) mod wipe_check {
    extern crate std;
    use super::{Blk, SHORT, STAGE};
    use core::cell::Cell;

    std::thread_local! {
        /// Short and full stages checked on this thread.
        static CHECKED: Cell<[usize; 2]> = const { Cell::new([0; 2]) };
    }

    /// Check a stage as it goes; panics if any byte is not zero (unless
    /// the thread is already panicking: its stages were not all wiped).
    pub(crate) fn check(stage: &[Blk]) {
        if std::thread::panicking() {
            return;
        }
        let dirty = stage.iter().position(|b| b.iter().any(|&x| x != 0));
        assert!(
            dirty.is_none(),
            "a {}-block stage left block {:?} unwiped",
            stage.len(),
            dirty
        );
        let kind = match stage.len() {
            SHORT => 0,
            STAGE => 1,
            n => panic!("a stage of {n} blocks"),
        };
        CHECKED.with(|c| {
            let mut v = c.get();
            v[kind] += 1;
            c.set(v);
        });
    }

    /// The short and full stages checked on this thread since the last
    /// call.
    pub(crate) fn take() -> [usize; 2] {
        CHECKED.with(|c| c.replace([0; 2]))
    }
}

/// What the fused mode drivers need from a backend. Each backend has a
/// token type that implements it, and only that backend's
/// `#[target_feature]` runner (`backends::with_kernel`) makes one, so holding a
/// token means the CPU has the features; the drivers, generic over the
/// token and inlined into the runner, are compiled with them.
pub(crate) trait Kernel: Copy {
    /// Whether [`crypt_lanes`](Self::crypt_lanes) takes up to four blocks
    /// in the time of one, so that a chain's side lanes are free.
    const FREE_LANES: bool;

    /// Whether [`xts_run`](Self::xts_run) has a path of its own (else the
    /// XTS driver stages the blocks).
    const XTS_RUNS: bool = false;

    /// XTS over a run of whole blocks in place, the tweaks `t·x^j` (`t` in
    /// `O`'s number form); returns the tweak after the run. Only called
    /// where [`XTS_RUNS`](Self::XTS_RUNS) is set; this default takes one
    /// block at a time.
    #[inline(always)]
    fn xts_run<O: TweakOrder>(self, rk: &[u32; 32], t: u128, blocks: &mut [Blk]) -> u128 {
        let mut t = t;
        for b in blocks.iter_mut() {
            let w = O::store(t);
            let mut x = xor(b, &w);
            self.crypt_block(rk, &mut x);
            *b = xor(&x, &w);
            t = O::mul_x(t);
        }
        t
    }

    /// Encrypt (`rk` = encryption schedule) or decrypt (reversed schedule)
    /// the first `n` blocks of `stage` in place, `1 <= n <= stage.len()`,
    /// with the widest batches first; the blocks after `n` may be
    /// overwritten. `stage` is a whole [`Stage`] or [`ShortStage`]
    /// (`LazyStage::get`), so a padded last group fits.
    fn crypt_stage(self, rk: &[u32; 32], stage: &mut [Blk], n: usize);

    /// One block in place, on the backend's latency-optimised path.
    fn crypt_block(self, rk: &[u32; 32], block: &mut Blk);

    /// The mode drivers' own work, portable here; backends with vector
    /// units override it.
    ///
    /// Counter blocks `c, c + 1, ...` (128-bit big-endian) into `stage`.
    #[inline(always)]
    fn ctr_fill(self, c: u128, stage: &mut [Blk]) {
        for (j, b) in stage.iter_mut().enumerate() {
            *b = c.wrapping_add(j as u128).to_be_bytes().into();
        }
    }

    /// XTS whitening of a run of blocks: `tweaks[j] = t·x^j`,
    /// `stage[j] = data[j] ^ tweaks[j]` (the three of equal length), or
    /// only the tweaks if `stage` is empty.
    #[inline(always)]
    fn xts_whiten<O: TweakOrder>(
        self,
        t: u128,
        data: &[Blk],
        stage: &mut [Blk],
        tweaks: &mut [Blk],
    ) {
        let whiten = !stage.is_empty();
        let mut t = t;
        for (j, w) in tweaks.iter_mut().enumerate() {
            *w = O::store(t);
            if whiten {
                stage[j] = xor(&data[j], w);
            }
            t = O::mul_x(t);
        }
    }

    /// Whether [`crypt_stage_xts`](Self::crypt_stage_xts) takes every full
    /// stage (so that the driver makes only the tweaks for it).
    const XTS_FOLDS: bool = false;

    /// Up to four blocks (`n` of them) in place, at the single-block
    /// latency where the backend has such a path.
    fn crypt_lanes(self, rk: &[u32; 32], blocks: &mut [Blk; 4], n: usize);

    /// Up to four blocks given as values (each the 16 bytes read as a
    /// native-endian number, as [`ChainIo::feed`] gives them), `n` of them
    /// in use, encrypted at the single-block latency where the backend can.
    #[inline(always)]
    fn crypt_values(self, rk: &[u32; 32], v: [u128; 4], n: usize) -> [Blk; 4] {
        let mut b = v.map(|x| Blk::from(x.to_ne_bytes()));
        self.crypt_lanes(rk, &mut b, n);
        b
    }

    /// A serial chain of encryptions (CBC encryption, CBC-MAC, CFB
    /// encryption, CCM): at step `s`, `io.feed(s)` gives the block `B` and
    /// up to `lanes - 1` independent side blocks; the chained block
    /// `I = state ^ B` and the side blocks are encrypted together, `state`
    /// becomes `E(I)`, and `io.emit(s, outputs, I)` receives the outputs
    /// (`E(I)` first, then the side blocks').
    #[inline(always)]
    fn chain(
        self,
        rk: &[u32; 32],
        state: &mut Blk,
        steps: usize,
        lanes: usize,
        io: &mut impl ChainIo,
    ) {
        for s in 0..steps {
            let mut v = io.feed(s).map(|b| Blk::from(b.to_ne_bytes()));
            let input = xor(state, &v[0]);
            v[0] = input;
            self.crypt_lanes(rk, &mut v, io.blocks(s).min(lanes));
            *state = v[0];
            io.emit(s, &v, &input);
        }
    }

    /// CTR over whole blocks: the keystream `E(c), E(c + 1), ...` (128-bit
    /// big-endian counters) XORed into `blocks`; and each `extra` pair
    /// `(counter, block)` gets `block = E(counter)`, encrypted with them
    /// (a message's partial tail, GCM's `E(J0)`).
    #[inline(always)]
    fn ctr_xor(
        self,
        rk: &[u32; 32],
        c: u128,
        blocks: InOutBuf<'_, '_, Blk>,
        extra: &mut [(u128, Blk)],
        stage: &mut LazyStage,
    ) {
        ctr_stages(self, rk, c, blocks, extra, stage);
    }

    /// [`ctr_xor`](Self::ctr_xor) beside other work in [`SIDE_STEPS`]
    /// steps (GCM's GHASH of a stage): `side(s, input)` runs the next `s`
    /// steps and may read `input`, the input of the blocks of those steps,
    /// not yet overwritten. A kernel may spread the steps between the
    /// rounds of a full stage, where their dependency chains leave the
    /// vector units idle; by default all run first, in one call.
    #[inline(always)]
    fn ctr_xor_beside(
        self,
        rk: &[u32; 32],
        c: u128,
        blocks: InOutBuf<'_, '_, Blk>,
        extra: &mut [(u128, Blk)],
        stage: &mut LazyStage,
        side: &mut impl FnMut(usize, &[Blk]),
    ) {
        side(SIDE_STEPS, blocks.get_in());
        self.ctr_xor(rk, c, blocks, extra, stage);
    }

    /// CBC decryption of whole blocks (`rk` the decryption schedule), the
    /// chaining value `iv` updated.
    #[inline(always)]
    fn cbc_decrypt(
        self,
        rk: &[u32; 32],
        iv: &mut Blk,
        blocks: InOutBuf<'_, '_, Blk>,
        stage: &mut LazyStage,
    ) {
        cbc_stages(self, rk, iv, blocks, stage);
    }

    /// CFB decryption of whole blocks, the chaining value `iv` updated;
    /// `tail`, if given, receives the keystream block after them.
    #[inline(always)]
    fn cfb_decrypt(
        self,
        rk: &[u32; 32],
        iv: &mut Blk,
        blocks: InOutBuf<'_, '_, Blk>,
        tail: Option<&mut Blk>,
        stage: &mut LazyStage,
    ) {
        cfb_stages(self, rk, iv, blocks, tail, stage);
    }

    /// A full stage encrypted with its keystream XORed straight into
    /// `data` (`out = in ^ E(stage)`, 64 blocks), where the kernel can fold
    /// the XOR into its stores; `false` (nothing done) where it cannot.
    #[inline(always)]
    fn crypt_stage_xor(
        self,
        _rk: &[u32; 32],
        _stage: &[Blk],
        _data: InOutBuf<'_, '_, Blk>,
    ) -> bool {
        false
    }

    /// A full stage of XTS in place, `data = E(data ^ T) ^ T` with the
    /// tweaks `T` in `tweaks` (64 blocks), where the kernel can fold both
    /// XORs into its loads and stores; `false` (nothing done) where it
    /// cannot.
    #[inline(always)]
    fn crypt_stage_xts(self, _rk: &[u32; 32], _tweaks: &Stage, _data: &mut [Blk]) -> bool {
        false
    }

    /// `out = in ^ ks`, block by block (`ks` at least as long).
    #[inline(always)]
    fn xor_into(self, mut data: InOutBuf<'_, '_, Blk>, ks: &[Blk]) {
        for (j, k) in ks.iter().enumerate().take(data.len()) {
            let mut b = data.get(j);
            let v = xor(b.get_in(), k);
            *b.get_out() = v;
        }
    }
}

/// The two ends of [`Kernel::chain`]: what goes into each step and where
/// its outputs go.
pub(crate) trait ChainIo {
    /// Step `s`'s block to chain and its side blocks, each as the 16 bytes
    /// read as a native-endian number (`u128::from_ne_bytes`): values, so
    /// that a block built from parts (a counter) goes to the kernel in
    /// registers, not through partial stores that its loads could not take
    /// their data from.
    fn feed(&mut self, s: usize) -> [u128; 4];
    /// How many of step `s`'s four blocks are in use (after `feed(s)`); a
    /// kernel whose lanes cost work encrypts only those.
    fn blocks(&self, _s: usize) -> usize {
        1
    }
    /// Step `s`'s outputs (the chained block's first) and chained input.
    /// (`feed(s + 1)` may come before `emit(s)`: a kernel may prepare the
    /// next step's blocks while the chain runs.)
    fn emit(&mut self, s: usize, out: &[Blk; 4], input: &Blk);
}

/// A computation to run with a backend's kernel (a rank-2 closure: the
/// body is generic over the token type).
pub(crate) trait KernelClosure {
    /// What the computation returns.
    type Output;
    /// Run it with kernel `k`.
    fn call<K: Kernel>(self, k: K) -> Self::Output;
}

/// The tweak's representation and its multiplication by `x`, per standard
/// (the tweak held as a `u128` in the byte order that makes the
/// multiplication one shift).
pub(crate) trait TweakOrder {
    /// GB/T 17964's order (else IEEE 1619's); the vector tweak code uses it.
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(dead_code)
    )]
    const GB: bool;
    /// The tweak block as the number.
    fn load(b: &Blk) -> u128;
    /// The number as the tweak block.
    fn store(t: u128) -> Blk;
    /// Multiplication by `x`.
    fn mul_x(t: u128) -> u128;
}

/// IEEE 1619: little-endian, shift left, reduce with `0x87`.
pub(crate) struct Ieee;
/// GB/T 17964: big-endian (GHASH's order), shift right, reduce with `0xE1`
/// in the top byte.
pub(crate) struct Gb;

impl TweakOrder for Ieee {
    const GB: bool = false;
    #[inline(always)]
    fn load(b: &Blk) -> u128 {
        u128::from_le_bytes(b.0)
    }
    #[inline(always)]
    fn store(t: u128) -> Blk {
        t.to_le_bytes().into()
    }
    #[inline(always)]
    fn mul_x(t: u128) -> u128 {
        // The carry is secret: a mask, not a branch.
        (t << 1) ^ (0x87 & 0u128.wrapping_sub(t >> 127))
    }
}

impl TweakOrder for Gb {
    const GB: bool = true;
    #[inline(always)]
    fn load(b: &Blk) -> u128 {
        u128::from_be_bytes(b.0)
    }
    #[inline(always)]
    fn store(t: u128) -> Blk {
        t.to_be_bytes().into()
    }
    #[inline(always)]
    fn mul_x(t: u128) -> u128 {
        (t >> 1) ^ ((0xe1 << 120) & 0u128.wrapping_sub(t & 1))
    }
}

/// `Kernel::cbc_decrypt` through stages.
#[inline(always)]
pub(crate) fn cbc_stages<K: Kernel>(
    k: K,
    rk: &[u32; 32],
    iv: &mut Blk,
    mut blocks: InOutBuf<'_, '_, Blk>,
    stage: &mut LazyStage,
) {
    let n = blocks.len();
    let stage = stage.get(n);
    let mut done = 0;
    while done < n {
        let m = core::cmp::min(stage.len(), n - done);
        let (mut chunk, rest) = blocks.split_at(m);
        blocks = rest;
        stage[..m].copy_from_slice(chunk.get_in());
        k.crypt_stage(rk, stage, m);
        let last = chunk.get_in()[m - 1];
        for j in (1..m).rev() {
            let prev = chunk.get_in()[j - 1];
            chunk.get_out()[j] = xor(&stage[j], &prev);
        }
        chunk.get_out()[0] = xor(&stage[0], iv);
        *iv = last;
        done += m;
    }
}

/// `Kernel::ctr_xor` through stages: counter blocks `c, c + 1, ...` filled
/// in, the stage encrypted, the keystream XORed into `blocks`; the `extra`
/// counters ride in the last stage.
#[inline(always)]
pub(crate) fn ctr_stages<K: Kernel>(
    k: K,
    rk: &[u32; 32],
    c: u128,
    mut blocks: InOutBuf<'_, '_, Blk>,
    extra: &mut [(u128, Blk)],
    stage: &mut LazyStage,
) {
    let n = blocks.len();
    let total = n + extra.len();
    let stage = stage.get(total);
    let mut done = 0;
    while done < total {
        let m = core::cmp::min(stage.len(), total - done);
        let full = core::cmp::min(m, n.saturating_sub(done));
        k.ctr_fill(c.wrapping_add(done as u128), &mut stage[..full]);
        // A full stage of data: the XOR in the kernel's stores where it can.
        if full == STAGE && k.crypt_stage_xor(rk, stage, blocks.reborrow().split_at(full).0) {
            blocks = blocks.split_at(full).1;
            done += m;
            continue;
        }
        // Extras `done + full - n ..` in the stage's other places.
        let first = (done + full).saturating_sub(n);
        for (b, (ctr, _)) in stage[full..m].iter_mut().zip(&extra[first..]) {
            *b = ctr.to_be_bytes().into();
        }
        k.crypt_stage(rk, stage, m);
        let (chunk, rest) = blocks.split_at(full);
        blocks = rest;
        k.xor_into(chunk, &stage[..full]);
        for (b, (_, out)) in stage[full..m].iter().zip(&mut extra[first..]) {
            *out = *b;
        }
        done += m;
    }
}

/// `Kernel::cfb_decrypt` through stages: the IV and the ciphertext blocks
/// but the last into a stage, encrypted, XORed into the ciphertext; `tail`,
/// if given, receives the keystream block after them (in the last stage).
#[inline(always)]
pub(crate) fn cfb_stages<K: Kernel>(
    k: K,
    rk: &[u32; 32],
    iv: &mut Blk,
    mut blocks: InOutBuf<'_, '_, Blk>,
    mut tail: Option<&mut Blk>,
    stage: &mut LazyStage,
) {
    let total = blocks.len() + usize::from(tail.is_some());
    let stage = stage.get(total);
    let mut done = 0;
    while done < total {
        let m = core::cmp::min(stage.len(), total - done);
        let full = core::cmp::min(m, blocks.len());
        let (chunk, rest) = blocks.split_at(full);
        blocks = rest;
        stage[0] = *iv;
        stage[1..m].copy_from_slice(&chunk.get_in()[..m - 1]);
        k.crypt_stage(rk, stage, m);
        if full > 0 {
            *iv = chunk.get_in()[full - 1];
        }
        k.xor_into(chunk, &stage[..full]);
        if let Some(t) = tail.as_deref_mut().filter(|_| full < m) {
            *t = stage[full];
        }
        done += m;
    }
}

/// Realign the calling frame to 64 bytes. The mode crates (`ctr`, `cbc`,
/// `cfb-mode` through `cipher`) keep their batch buffers on the stack, in
/// the closure that the runners below call, so where those buffers fall
/// against cache lines followed the caller's stack offset: with ASLR off
/// and the stack moved through the environment, `gfni` CTR at 4096 bytes
/// read 1.01 c/B at one 16-byte offset in four and 1.12-1.18 at the
/// others (the kernel alone does not care: 0.720-0.723 c/B at every
/// offset of its buffer). From a 64-byte-aligned frame it reads 1.01-1.02
/// at every offset, and CBC decryption 0.81-0.84 instead of 0.84-0.90.
/// (Measured on x86_64 only; a no-op on aarch64, the other SIMD target.)
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) fn align_frame_to_cache_line() {
    #[cfg(target_arch = "x86_64")]
    {
        #[repr(align(64))]
        #[allow(dead_code)] // only its alignment matters
        struct CacheLine(u8);
        let line = CacheLine(0);
        // Keeps the aligned slot, and with it the realignment, in the frame.
        core::hint::black_box(&line);
    }
}

/// Make a SIMD kernel module's token and runners, inside that module:
/// `CipherBackend` (the module as a `cipher` backend), the
/// `#[target_feature]` runners `encrypt_with` / `decrypt_with` (a `cipher`
/// closure) and `with_token` (a [`KernelClosure`]), and `Token`, the
/// module's [`Kernel`]: only the runners (and the dispatcher's GCM
/// runners, which share their features) make one. The impl gets
/// `crypt_stage`, `crypt_block` and `crypt_lanes` over the module's entry
/// points (`crypt_stage`, `crypt_blocks`, `crypt_lanes`, and `single`, its
/// single-block path, where it has one) and then the module's own hooks,
/// given after the `;`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! kernel_token {
    // Single blocks through the batch entry point.
    (@one $rk:expr, $block:expr) => {
        crypt_blocks($rk, $crate::block::one($block))
    };
    // Single blocks straight to the module's own single-block entry point
    // (no batch dispatch, no stack frame for the tail buffer).
    (@one $rk:expr, $block:expr, $single:ident) => {
        $single($rk, $block)
    };
    (features = $feat:literal $(, single = $single:ident)?; $($hooks:tt)*) => {
        /// The module as a `cipher` backend. Only the runners below make
        /// one, after feature detection.
        pub(crate) struct CipherBackend<'a>(&'a [u32; 32]);

        impl cipher::BlockSizeUser for CipherBackend<'_> {
            type BlockSize = cipher::consts::U16;
        }
        impl cipher::ParBlocksSizeUser for CipherBackend<'_> {
            type ParBlocksSize = ParBlocks;
        }
        impl cipher::BlockCipherEncBackend for CipherBackend<'_> {
            #[inline(always)]
            fn encrypt_block(&self, block: cipher::InOut<'_, '_, $crate::block::Blk>) {
                // SAFETY: this type only exists inside the runner, which is
                // entered only after the CPU was found to have the features.
                unsafe { $crate::kernel::kernel_token!(@one self.0, block $(, $single)?) }
            }
            #[inline(always)]
            fn encrypt_par_blocks(&self, blocks: cipher::InOut<'_, '_, cipher::ParBlocks<Self>>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { crypt_blocks(self.0, blocks.into_buf()) }
            }
            #[inline(always)]
            fn encrypt_tail_blocks(&self, blocks: cipher::InOutBuf<'_, '_, $crate::block::Blk>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { crypt_blocks(self.0, blocks) }
            }
        }
        impl cipher::BlockCipherDecBackend for CipherBackend<'_> {
            #[inline(always)]
            fn decrypt_block(&self, block: cipher::InOut<'_, '_, $crate::block::Blk>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { $crate::kernel::kernel_token!(@one self.0, block $(, $single)?) }
            }
            #[inline(always)]
            fn decrypt_par_blocks(&self, blocks: cipher::InOut<'_, '_, cipher::ParBlocks<Self>>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { crypt_blocks(self.0, blocks.into_buf()) }
            }
            #[inline(always)]
            fn decrypt_tail_blocks(&self, blocks: cipher::InOutBuf<'_, '_, $crate::block::Blk>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { crypt_blocks(self.0, blocks) }
            }
        }

        /// Run an encryption closure with the features on.
        /// # Safety
        /// The CPU supports the features.
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn encrypt_with(
            rk: &[u32; 32],
            f: impl cipher::BlockCipherEncClosure<BlockSize = cipher::consts::U16>,
        ) {
            $crate::kernel::align_frame_to_cache_line();
            f.call(&CipherBackend(rk));
        }

        /// Run a decryption closure with the features on.
        /// # Safety
        /// The CPU supports the features.
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn decrypt_with(
            rk: &[u32; 32],
            f: impl cipher::BlockCipherDecClosure<BlockSize = cipher::consts::U16>,
        ) {
            $crate::kernel::align_frame_to_cache_line();
            f.call(&CipherBackend(rk));
        }

        /// The module's [`Kernel`]($crate::kernel::Kernel) token; only its
        /// runners make one.
        #[derive(Clone, Copy)]
        pub(crate) struct Token(pub(in crate::backends) ());

        impl $crate::kernel::Kernel for Token {
            #[inline(always)]
            fn crypt_stage(self, rk: &[u32; 32], stage: &mut [$crate::block::Blk], n: usize) {
                // SAFETY: the token exists only inside the runner, which is
                // entered only after the CPU was found to have the features.
                unsafe { crypt_stage(rk, stage, n) }
            }
            #[inline(always)]
            fn crypt_block(self, rk: &[u32; 32], block: &mut $crate::block::Blk) {
                // SAFETY: as in `crypt_stage`.
                unsafe { $crate::kernel::kernel_token!(@one rk, block.into() $(, $single)?) }
            }
            #[inline(always)]
            fn crypt_lanes(self, rk: &[u32; 32], blocks: &mut [$crate::block::Blk; 4], n: usize) {
                if n == 1 {
                    // The single-block entry point, inlined where the lane
                    // dispatch is not.
                    return self.crypt_block(rk, &mut blocks[0]);
                }
                // SAFETY: as in `crypt_stage`.
                unsafe { crypt_lanes(rk, blocks, n) }
            }

            $($hooks)*
        }

        /// Run a mode driver with the features on.
        /// # Safety
        /// The CPU supports the features.
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn with_token<F: $crate::kernel::KernelClosure>(f: F) -> F::Output {
            f.call(Token(()))
        }
    };
}
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) use kernel_token;

/// [`Kernel::chain`] through the module's own `chain` (a chain kept in
/// registers, with the kernel's constants loaded once); inside a
/// [`kernel_token!`]'s hooks.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! chain_hook {
    () => {
        #[inline(always)]
        fn chain(
            self,
            rk: &[u32; 32],
            state: &mut $crate::block::Blk,
            steps: usize,
            _lanes: usize,
            io: &mut impl $crate::kernel::ChainIo,
        ) {
            // SAFETY: the token exists only inside its backend's runner.
            unsafe { chain(rk, state, steps, io) }
        }
    };
}
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) use chain_hook;

#[cfg(test)]
mod tests {
    use super::{SHORT, STAGE, reach};

    /// The high-water mark: the work's blocks rounded up to whole short
    /// stages (a kernel's padded last group), within the stage.
    #[test]
    fn reach_rounds_up_within_the_stage() {
        for (n, len, r) in [
            (0, STAGE, 0),
            (1, STAGE, 16),
            (16, STAGE, 16),
            (17, STAGE, 32),
            (33, STAGE, 48),
            (49, STAGE, 64),
            (64, STAGE, 64),
            (1000, STAGE, 64),
            (usize::MAX, STAGE, 64),
            (1, SHORT, 16),
            (16, SHORT, 16),
        ] {
            assert_eq!(reach(n, len), r, "reach({n}, {len})");
        }
    }

    /// With `zeroize`, a lazy stage hands out only its high-water mark's
    /// blocks, wipes a short stage as a full one replaces it, and keeps
    /// the mark of its longest work (each stage checked as it goes, by
    /// `wipe_check`).
    #[cfg(feature = "zeroize")]
    #[test]
    fn lazy_stage_wipes_its_longest_work() {
        use super::{Blk, LazyStage, wipe_check};
        let secret = Blk::from([0xa5; 16]);
        wipe_check::take();
        let mut stage = LazyStage::new();
        let s = stage.get(5);
        assert_eq!(s.len(), SHORT);
        s.fill(secret);
        // Longer work: a full stage; the short one is wiped as it goes.
        let s = stage.get(40);
        assert_eq!(s.len(), 48);
        s.fill(secret);
        assert_eq!(wipe_check::take(), [1, 0]);
        // Shorter work again: the same stage, the mark kept at 48.
        assert_eq!(stage.get(3).len(), 16);
        drop(stage);
        assert_eq!(wipe_check::take(), [0, 1]);
    }
}
