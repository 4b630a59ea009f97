//! The multi-message engine, generic over a vector of 32-bit lanes: lane
//! `i` of every vector belongs to message `i`. The SIMD backends implement
//! [`Lane`] with `#[inline(always)]` methods and call [`digest_many`] from
//! one `#[target_feature]` function, so the whole loop (scheduling
//! included) is compiled with their features. Built only where such a
//! backend exists (x86_64, aarch64).

use super::{Compress, Tail, finish, output};
use crate::backends::soft::{IV, T};

macro_rules! rol {
    ($x:expr, $n:literal) => {
        $x.rol::<$n, { 32 - $n }>()
    };
}

/// Most lanes of any backend.
pub(crate) const MAX: usize = 16;

/// A vector of `N` 32-bit lanes. The methods are `unsafe` because they use
/// the backend's instructions: callers must run inside a function that has
/// the backend's target features enabled and checked.
pub(crate) trait Lane: Copy {
    /// Number of lanes.
    const N: usize;
    /// Fewest busy lanes for which a step still beats the one-message code.
    const MIN_BUSY: usize;
    unsafe fn splat(x: u32) -> Self;
    /// Loads lanes `0..N` of `src`.
    unsafe fn load(src: &[u32; MAX]) -> Self;
    /// Stores lanes `0..N` into `dst`.
    unsafe fn store(self, dst: &mut [u32; MAX]);
    unsafe fn add(self, o: Self) -> Self;
    unsafe fn xor(self, o: Self) -> Self;
    unsafe fn xor3(self, b: Self, c: Self) -> Self;
    /// Bitwise majority of three.
    unsafe fn maj(self, b: Self, c: Self) -> Self;
    /// `(self & f) | (!self & g)`.
    unsafe fn choose(self, f: Self, g: Self) -> Self;
    /// Rotate left by `L` bits; `R` must be `32 - L`.
    unsafe fn rol<const L: i32, const R: i32>(self) -> Self;
    /// `P0(x) = x ^ rol9(x) ^ rol17(x)`.
    #[inline(always)]
    unsafe fn p0(self) -> Self {
        // SAFETY: forwarded from the caller's contract.
        unsafe { self.xor3(rol!(self, 9), rol!(self, 17)) }
    }
    /// `P1(x) = x ^ rol15(x) ^ rol23(x)`.
    #[inline(always)]
    unsafe fn p1(self) -> Self {
        // SAFETY: forwarded from the caller's contract.
        unsafe { self.xor3(rol!(self, 15), rol!(self, 23)) }
    }
    /// A word of the message expansion: `P1(w16 ^ w9 ^ rol15(w3)) ^
    /// rol7(w13) ^ w6`, the arguments `W[j-16]`, `W[j-9]`, `W[j-3]`,
    /// `W[j-13]` and `W[j-6]`.
    #[inline(always)]
    unsafe fn expand_word(w16: Self, w9: Self, w3: Self, w13: Self, w6: Self) -> Self {
        // SAFETY: forwarded from the caller's contract.
        unsafe { w16.xor3(w9, rol!(w3, 15)).p1().xor3(rol!(w13, 7), w6) }
    }
    /// The 16 big-endian message words of `blocks[0..N]`, transposed:
    /// vector `j` holds word `j` of every block.
    unsafe fn load_blocks(blocks: &[&[u8; 64]; MAX]) -> [Self; 16] {
        let mut t = [[0u32; MAX]; 16];
        for (i, b) in blocks.iter().enumerate().take(Self::N) {
            for (j, row) in t.iter_mut().enumerate() {
                row[i] = u32::from_be_bytes([b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]]);
            }
        }
        // SAFETY: forwarded from the caller's contract.
        t.map(|row| unsafe { Self::load(&row) })
    }
}

/// One SM3 round on every lane; same renaming scheme as `soft::round`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn round<V: Lane, const HI: bool>(
    a: V,
    b: &mut V,
    c: V,
    d: &mut V,
    e: V,
    f: &mut V,
    g: V,
    h: &mut V,
    w: V,
    w4: V,
    t: u32,
) {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        let a12 = rol!(a, 12);
        let ss1 = rol!(a12.add(V::splat(t)).add(e), 7);
        let ss2 = ss1.xor(a12);
        let (ff, gg) = if HI {
            (a.maj(*b, c), e.choose(*f, g))
        } else {
            (a.xor3(*b, c), e.xor3(*f, g))
        };
        let tt1 = ff.add(d.add(w.xor(w4))).add(ss2);
        let tt2 = gg.add(h.add(w)).add(ss1);
        *b = rol!(*b, 9);
        *f = rol!(*f, 19);
        *d = tt1;
        *h = tt2.p0();
    }
}

/// `W[j]` of the message expansion, for `j` in `16..68` (else nothing).
#[inline(always)]
unsafe fn expand<V: Lane>(w: &mut [V; 68], j: usize) {
    if (16..68).contains(&j) {
        // SAFETY: forwarded from the caller's contract.
        unsafe {
            w[j] = V::expand_word(w[j - 16], w[j - 9], w[j - 3], w[j - 13], w[j - 6]);
        }
    }
}

/// Compress one block per lane into the transposed `state`.
#[inline(always)]
unsafe fn compress_step<V: Lane>(state: &mut [[u32; MAX]; 8], blocks: &[&[u8; 64]; MAX]) {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        let mut w = [V::splat(0); 68];
        w[..16].copy_from_slice(&V::load_blocks(blocks));
        let s = state.map(|row| V::load(&row));
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = s;
        macro_rules! r4 {
            ($hi:literal, $j:expr) => {
                let j = $j;
                expand::<V>(&mut w, j + 8);
                round::<V, $hi>(
                    a,
                    &mut b,
                    c,
                    &mut d,
                    e,
                    &mut f,
                    g,
                    &mut h,
                    w[j],
                    w[j + 4],
                    T[j],
                );
                expand::<V>(&mut w, j + 9);
                round::<V, $hi>(
                    d,
                    &mut a,
                    b,
                    &mut c,
                    h,
                    &mut e,
                    f,
                    &mut g,
                    w[j + 1],
                    w[j + 5],
                    T[j + 1],
                );
                expand::<V>(&mut w, j + 10);
                round::<V, $hi>(
                    c,
                    &mut d,
                    a,
                    &mut b,
                    g,
                    &mut h,
                    e,
                    &mut f,
                    w[j + 2],
                    w[j + 6],
                    T[j + 2],
                );
                expand::<V>(&mut w, j + 11);
                round::<V, $hi>(
                    b,
                    &mut c,
                    d,
                    &mut a,
                    f,
                    &mut g,
                    h,
                    &mut e,
                    w[j + 3],
                    w[j + 7],
                    T[j + 3],
                );
            };
        }
        r4!(false, 0);
        r4!(false, 4);
        r4!(false, 8);
        r4!(false, 12);
        r4!(true, 16);
        r4!(true, 20);
        r4!(true, 24);
        r4!(true, 28);
        r4!(true, 32);
        r4!(true, 36);
        r4!(true, 40);
        r4!(true, 44);
        r4!(true, 48);
        r4!(true, 52);
        r4!(true, 56);
        r4!(true, 60);
        for (row, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h].iter().zip(s)) {
            v.0.xor(v.1).store(row);
        }
    }
}

impl Tail {
    fn block(&self, i: usize) -> &[u8; 64] {
        self.buf[64 * i..64 * i + 64]
            .try_into()
            .expect("64-byte block")
    }
}

/// One message in a lane.
#[derive(Clone, Copy)]
struct Job<'a> {
    msg: &'a [u8],
    index: usize,
    next: usize,
    full: usize,
    tail: Tail,
}

impl<'a> Job<'a> {
    fn total(&self) -> usize {
        self.full + self.tail.blocks
    }

    fn block(&self) -> &[u8; 64] {
        if self.next < self.full {
            self.msg[64 * self.next..64 * self.next + 64]
                .try_into()
                .expect("64-byte block")
        } else {
            self.tail.block(self.next - self.full)
        }
    }
}

const ZERO_BLOCK: [u8; 64] = [0; 64];

/// The lane scheduler: every lane takes the next message as soon as its own
/// ends; when fewer than `V::MIN_BUSY` messages are left, `single`
/// finishes them one at a time.
///
/// # Safety
/// The CPU must support `V`'s instructions and the caller must have them
/// enabled (`#[target_feature]`); `single` must be available.
#[inline(always)]
pub(crate) unsafe fn digest_many<V: Lane>(single: Compress, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    let mut jobs: [Option<Job<'_>>; MAX] = [None; MAX];
    let mut state = [[0u32; MAX]; 8];
    let mut queue = msgs.iter().enumerate();
    loop {
        let mut busy = 0;
        for (lane, slot) in jobs.iter_mut().enumerate().take(V::N) {
            if slot.is_none()
                && let Some((index, msg)) = queue.next()
            {
                *slot = Some(Job {
                    msg,
                    index,
                    next: 0,
                    full: msg.len() / 64,
                    tail: Tail::new(msg),
                });
                for (row, iv) in state.iter_mut().zip(IV) {
                    row[lane] = iv;
                }
            }
            busy += usize::from(slot.is_some());
        }
        if busy == 0 {
            return;
        }
        if busy < V::MIN_BUSY {
            // The queue is empty (else every lane would be busy).
            for (lane, job) in jobs.iter().enumerate().take(V::N) {
                if let Some(job) = job {
                    let h = core::array::from_fn(|k| state[k][lane]);
                    out[job.index] = finish(single, h, job.msg, &job.tail, job.next);
                }
            }
            return;
        }
        let mut blocks = [&ZERO_BLOCK; MAX];
        for (b, job) in blocks.iter_mut().zip(jobs.iter()).take(V::N) {
            if let Some(job) = job {
                *b = job.block();
            }
        }
        // SAFETY: forwarded from this function's contract.
        unsafe { compress_step::<V>(&mut state, &blocks) };
        for (lane, slot) in jobs.iter_mut().enumerate().take(V::N) {
            if let Some(job) = slot {
                job.next += 1;
                if job.next == job.total() {
                    let h = core::array::from_fn(|k| state[k][lane]);
                    out[job.index] = output(&h);
                    *slot = None;
                }
            }
        }
    }
}
